"""Which model runner each vLLM release starts (calculators/model_runner.py), read in the PyPI
sdists' vllm/config/vllm.py `use_v2_model_runner`, at every release boundary from 0.25 to 0.34."""

from dataclasses import replace

import pytest
from catalog_gpus import traits

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import InputError
from infermeter.calculators.model_runner import model_runner
from infermeter.calculators.vllm_plan import plan_vllm
from infermeter.calculators.vllm_settings import GIB, VllmSettings
from infermeter.registry.catalog import load_models

ARCHS = {model_id: parse_config(entry.config) for model_id, entry in load_models().items()}


def _v2(model_id: str, version: tuple[int, int], gpu: str = "h100-sxm", **arch: object) -> bool:
    settings = VllmSettings(gpu_memory_bytes=80 * GIB, gpu=traits(gpu))
    return model_runner(replace(ARCHS[model_id], **arch), settings, version).v2  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("model_id", "version", "v2"),
    [
        # Before 0.25 the plan keeps V1's terms (0.22-0.24 start V2 for listed architectures
        # only, and no term of their plans depends on the runner).
        ("llama-3.1-8b-instruct", (0, 24), False),
        # 0.25-0.28: dense attention models and the listed architectures.
        ("llama-3.1-8b-instruct", (0, 25), True),
        ("gemma-2-9b-it", (0, 26), True),
        ("qwen3-30b-a3b", (0, 25), False),
        ("nemotron-nano-9b-v2", (0, 26), False),
        ("llama-3.1-8b-instruct", (0, 27), True),
        ("gemma-3-27b-it", (0, 28), True),
        ("qwen3-30b-a3b", (0, 27), False),  # an unlisted mixture of experts
        ("gpt-oss-20b", (0, 28), False),
        ("nemotron-nano-9b-v2", (0, 27), False),  # dense, but hybrid (Mamba-2 layers)
        ("qwen3-next-80b-a3b-instruct", (0, 28), False),
        ("deepseek-v3", (0, 28), False),  # DeepseekV3ForCausalLM is not on the list
        # 0.29-0.33: V2 wherever it is supported, hybrids and mixtures of experts included.
        ("qwen3-30b-a3b", (0, 29), True),
        ("nemotron-nano-9b-v2", (0, 29), True),
        ("deepseek-v3", (0, 33), True),
        # 0.34: V2 only.
        ("gpt-oss-20b", (0, 34), True),
    ],
)
def test_the_runner_each_release_starts(model_id: str, version: tuple[int, int], v2: bool) -> None:
    assert _v2(model_id, version) is v2


@pytest.mark.parametrize(
    ("model_type", "version", "v2"),
    [
        ("qwen2_moe", (0, 25), True),
        ("deepseek_v2", (0, 25), True),
        ("longcat_flash_ngram", (0, 25), False),  # LongcatFlashNgramForCausalLM joins in 0.26.0
        ("longcat_flash_ngram", (0, 26), True),
        ("inkling_model", (0, 26), True),
        ("qwen2_moe", (0, 27), True),
        ("deepseek_v2", (0, 28), True),
        ("granitemoe", (0, 27), True),
        ("longcat_flash_ngram", (0, 28), True),
        ("deepseek_v4", (0, 27), False),  # DeepseekV4ForCausalLM joins the list in 0.28.0
        ("deepseek_v4", (0, 28), True),
        ("qwen3_moe", (0, 28), False),
    ],
)
def test_0_25_to_0_28_start_v2_for_the_listed_mixtures_of_experts(
    model_type: str, version: tuple[int, int], v2: bool
) -> None:
    # DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES by model type, on a mixture of experts (Qwen3-30B-A3B's
    # shape); off the list it stays on V1.
    assert _v2("qwen3-30b-a3b", version, model_type=model_type) is v2


@pytest.mark.parametrize(
    ("model_id", "version", "v2"),
    [
        ("deepseek-v3.2", (0, 29), False),  # ROCM_DEFAULT_MRV1_ARCHITECTURES
        ("glm-5", (0, 29), True),  # GlmMoeDsaForCausalLM joins that list in 0.30.0
        ("glm-5", (0, 30), False),
        ("glm-5", (0, 31), False),
        ("deepseek-v3.2", (0, 32), True),  # 0.32.0 has no ROCm list
        ("llama-3.1-8b-instruct", (0, 29), True),
    ],
)
def test_rocm_keeps_v1_for_the_architectures_it_names(
    model_id: str, version: tuple[int, int], v2: bool
) -> None:
    assert _v2(model_id, version, gpu="mi300x") is v2
    assert _v2(model_id, version)  # on CUDA from 0.29 they all start V2


def test_rocm_0_28_takes_deepseek_v4_off_the_v2_list() -> None:
    assert _v2("qwen3-30b-a3b", (0, 28), model_type="deepseek_v4")
    assert not _v2("qwen3-30b-a3b", (0, 28), gpu="mi300x", model_type="deepseek_v4")


def test_the_plan_names_the_runner_it_assumed_and_applies_its_buffers() -> None:
    arch = ARCHS["qwen3-30b-a3b"]

    def plan(version: str):  # type: ignore[no-untyped-def]
        settings = VllmSettings(
            gpu_memory_bytes=80 * GIB, max_model_len=8192, max_num_seqs=256, vllm_version=version
        )
        return plan_vllm(arch, settings)

    v1, v2 = plan("0.28.0"), plan("0.29.0")
    (note,) = [note for note in v1.notes if "model runner" in note]
    assert "V1 model runner (vllm/v1/worker/gpu_model_runner.py)" in note
    assert "unlisted mixture of experts" in note
    (note,) = [note for note in v2.notes if "model runner" in note]
    assert "V2 model runner (vllm/v1/worker/gpu/model_runner.py)" in note
    # V1: 8192 tokens x (2048 x 2 + 37) bytes and a 16-token block table; V2: 13 bytes a token
    # and the sampler's 151,936 logits of counts, a prompt bit mask and 4,481 token-id slots.
    assert v1.runner_buffer_bytes == 8192 * (2048 * 2 + 37) + 256 * 512 * 4
    sampler = 151936 * 4 + -(-151936 // 32) * 4 + 4 * 4481
    assert v2.runner_buffer_bytes == 8192 * 13 + 256 * sampler
    assert v1.kv_cache_bytes - v2.kv_cache_bytes == v2.runner_buffer_bytes - v1.runner_buffer_bytes


def test_vllm_use_v2_model_runner_decides_when_given() -> None:
    """The env var wins over the release's choice (use_v2_model_runner reads it first)."""
    settings = VllmSettings(gpu_memory_bytes=80 * GIB, use_v2_model_runner=False)
    assert not model_runner(ARCHS["llama-3.1-8b-instruct"], settings, (0, 29)).v2
    stated = replace(settings, use_v2_model_runner=True)
    assert model_runner(ARCHS["gpt-oss-20b"], stated, (0, 28)).v2
    assert model_runner(ARCHS["llama-3.1-8b-instruct"], stated, (0, 24)).v2
    with pytest.raises(InputError, match="use_v2_model_runner"):
        model_runner(ARCHS["gpt-oss-20b"], settings, (0, 34))


def test_0_26_keeps_one_more_batch_in_flight_under_pipeline_parallelism_with_v2() -> None:
    """Gemma-2-9B (dense, so V2 by default from 0.25) at PP 2 on 0.26: the V2 runner keeps
    stages + 1 = 3 batches in flight (0.26's max_concurrent_batches), V1 (stated) 2, so each of
    its 21 sliding-window layers (of 42, over 2 stages: 11 on the sized stage) holds one more
    batch of blocks; at 0.25 every runner reserves one batch (max_num_batched_tokens)."""
    arch = ARCHS["gemma-2-9b-it"]
    common = {"gpu_memory_bytes": 80 * GIB, "max_model_len": 32768, "pipeline_parallel_size": 2}
    common |= {"max_num_batched_tokens": 4096, "block_size": 16}

    def plan(version: str, v2: bool | None = None):  # type: ignore[no-untyped-def]
        settings = VllmSettings(**common, vllm_version=version, use_v2_model_runner=v2)  # type: ignore[arg-type]
        return plan_vllm(arch, settings)

    default, v1 = plan("0.26"), plan("0.26", v2=False)
    page = 16 * default.kv_cache_bytes_per_token_per_layer
    extra_blocks = 4096 // 16
    assert default.request_bytes_at_max_model_len - v1.request_bytes_at_max_model_len == (
        extra_blocks * 11 * page
    )
    (note,) = [note for note in default.notes if "model runner" in note]
    assert "0.26 starts V2 for dense attention models" in note
    assert "its buffers count from 0.27" in note
    assert any("VLLM_USE_V2_MODEL_RUNNER=0" in note for note in v1.notes)
    before, before_v1 = plan("0.25"), plan("0.25", v2=False)
    assert before.request_bytes_at_max_model_len == before_v1.request_bytes_at_max_model_len
