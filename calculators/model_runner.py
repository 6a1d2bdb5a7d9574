"""Which model runner a vLLM release starts for a configuration: the V1 runner
(vllm/v1/worker/gpu_model_runner.py) or the V2 runner (vllm/v1/worker/gpu/model_runner.py). Their
persistent buffers (`calculators.vllm_overheads.runner_buffer_bytes`) and, under pipeline
parallelism, the batches in flight (`calculators.kv_blocks.in_flight_tokens`) differ.

Read in the PyPI sdists, `VllmConfig.use_v2_model_runner` (vllm/config/vllm.py):
  - VLLM_USE_V2_MODEL_RUNNER decides when set (`use_v2_model_runner`); 0.34.0 refuses 0
    (platforms/interface.py `validate_environ`: "Model Runner V1 has been removed").
  - 0.25.0-0.28.0: V2 for a generation model in DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES
    (`_is_default_v2_model_runner_model`) or one that is neither a mixture of experts, nor hybrid
    (`ModelConfig.is_hybrid`: per-sequence state layers beside attention), nor attention-free; the
    list grows by release (below); on ROCm 0.28.0 drops DeepseekV4ForCausalLM from it (0.27.0
    drops only Kimi K3; 0.25.0 and 0.26.0 have no ROCm list).
  - 0.29.0-0.33.0: V2 for every configuration it supports; on ROCm
    ROCM_DEFAULT_MRV1_ARCHITECTURES keep V1 (DeepSeek-V3.2 and V4 in 0.29.0, GLM-5 added in
    0.30.0 and 0.31.0; 0.32.0 has no such list).
  - 0.34.0: the V2 runner only (gpu_model_runner.py is gone).
What V2 does not support falls back to V1 (`_get_v2_model_runner_unsupported_features`:
speculative methods such as ngram, prefill context parallelism before 0.29, dual batch
overlap, stock torch.compile, sequence parallelism under TP); the plan models none of these, nor
speculative decoding, so they do not arise.

The runner buffers come off the KV budget only from 0.27.0 (`calculators.vllm_overheads`), so at
0.25-0.26 the choice moves the plan only through the batches in flight under pipeline parallelism
from 0.26.0 (`VllmConfig.max_concurrent_batches`: stages + 1 with V2, stages with V1). 0.22.0-0.24.0
start V2 for listed architectures only (Qwen3ForCausalLM, LlamaForCausalLM, ...); no term of the
plan of those releases depends on the runner, and the plan keeps V1's terms for them.
"""

from dataclasses import dataclass

from infermeter.calculators.errors import InputError
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.vllm_overheads import RUNNER_BUFFERS_IN_BUDGET_SINCE, runs_on_rocm
from infermeter.calculators.vllm_settings import VllmSettings

RUNNER_CHOICE_SINCE = (0, 25)
V2_WHERE_SUPPORTED_SINCE = (0, 29)
V2_ONLY_SINCE = (0, 34)
# DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES by the model types whose configs name them:
# DeepseekV2ForCausalLM, GraniteMoeForCausalLM and Qwen2MoeForCausalLM (0.25.0); InklingForCausalLM,
# InklingForConditionalGeneration and LongcatFlashNgramForCausalLM join in 0.26.0 (0.27.0 adds
# KimiK3ForConditionalGeneration, not a model type the calculators read), and
# DeepseekV4ForCausalLM in 0.28.0.
_DEFAULT_V2_TYPES_0_25 = ("deepseek_v2", "granitemoe", "qwen2_moe")
_DEFAULT_V2_TYPES = (*_DEFAULT_V2_TYPES_0_25, "inkling_model", "longcat_flash_ngram")
_DEFAULT_V2_TYPES_BY_RELEASE = {
    (0, 25): _DEFAULT_V2_TYPES_0_25,
    (0, 26): _DEFAULT_V2_TYPES,
    (0, 27): _DEFAULT_V2_TYPES,
    (0, 28): (*_DEFAULT_V2_TYPES, "deepseek_v4"),
}
# ROCm's V1 defaults by release: 0.28.0 leaves DeepSeek-V4 off the V2 list, 0.29.0-0.31.0 name
# ROCM_DEFAULT_MRV1_ARCHITECTURES (DeepseekV32ForCausalLM, DeepseekV4ForCausalLM,
# GlmMoeDsaForCausalLM from 0.30.0).
_ROCM_V1_TYPES = {
    (0, 28): ("deepseek_v4",),
    (0, 29): ("deepseek_v32", "deepseek_v4"),
    (0, 30): ("deepseek_v32", "deepseek_v4", "glm_moe_dsa"),
    (0, 31): ("deepseek_v32", "deepseek_v4", "glm_moe_dsa"),
}


@dataclass(frozen=True)
class RunnerChoice:
    """The runner the plan assumes and why, in the words of the plan's note."""

    v2: bool
    reason: str

    @property
    def name(self) -> str:
        return "V2" if self.v2 else "V1"


def _default_list_choice(arch: ModelArch, version: tuple[int, int], rocm: bool) -> RunnerChoice:
    """0.25-0.28: V2 for the listed architectures or a dense attention-only model."""
    release = f"{version[0]}.{version[1]}"
    listed = arch.model_type in _DEFAULT_V2_TYPES_BY_RELEASE[version]
    if listed and rocm and arch.model_type in _ROCM_V1_TYPES.get(version, ()):
        return RunnerChoice(False, f"{arch.model_type} is off {release}'s V2 list on ROCm")
    if listed:
        return RunnerChoice(True, f"{arch.model_type} is on {release}'s V2 list")
    rule = f"{release} starts V2 for listed architectures and dense attention models only"
    if arch.num_state_layers:
        return RunnerChoice(False, f"{rule}, and this model has state layers")
    if arch.moe is not None:
        return RunnerChoice(False, f"{rule}, and this is an unlisted mixture of experts")
    return RunnerChoice(True, f"{release} starts V2 for dense attention models")


def model_runner(arch: ModelArch, settings: VllmSettings, version: tuple[int, int]) -> RunnerChoice:
    """The runner vLLM `version` starts for `arch` with `settings` (see above)."""
    stated = settings.use_v2_model_runner
    if stated is False and version >= V2_ONLY_SINCE:
        raise InputError(
            "use_v2_model_runner: VLLM_USE_V2_MODEL_RUNNER=0 is refused by vLLM 0.34, which has "
            "no V1 model runner; expected 1 or unset"
        )
    if stated is not None:
        return RunnerChoice(stated, f"VLLM_USE_V2_MODEL_RUNNER={int(stated)}")
    if version < RUNNER_CHOICE_SINCE:
        return RunnerChoice(False, "before 0.25 the plan keeps the V1 runner's terms")
    if version >= V2_ONLY_SINCE:
        return RunnerChoice(True, "0.34 has no V1 runner")
    rocm = runs_on_rocm(settings)
    if version < V2_WHERE_SUPPORTED_SINCE:
        return _default_list_choice(arch, version, rocm)
    if rocm and arch.model_type in _ROCM_V1_TYPES.get(version, ()):
        return RunnerChoice(False, f"{arch.model_type} keeps V1 on ROCm in this release")
    return RunnerChoice(True, "from 0.29 V2 is the default wherever it is supported")


def runner_note(
    choice: RunnerChoice, version: tuple[int, int], settings: VllmSettings
) -> list[str]:
    """The plan's note on the runner it assumed (none before 0.25 unless the runner is given)."""
    if version < RUNNER_CHOICE_SINCE and settings.use_v2_model_runner is None:
        return []
    source = "gpu/model_runner.py" if choice.v2 else "gpu_model_runner.py"
    planned = "its buffers and batches in flight are the ones planned"
    if version < RUNNER_BUFFERS_IN_BUDGET_SINCE:
        planned = "its batches in flight are the ones planned (its buffers count from 0.27)"
    return [
        f"vLLM {version[0]}.{version[1]} starts the {choice.name} model runner "
        f"(vllm/v1/worker/{source}) here: {choice.reason} (config/vllm.py "
        f"use_v2_model_runner; no speculative decoding planned); {planned}"
    ]
