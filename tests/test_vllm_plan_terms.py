"""The plan's overhead terms: which vLLM release counts what, and that every plan says which of
its figures are estimates.

CUDA graphs: vLLM takes its graph estimate off the KV budget when
VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS is on (PR https://github.com/vllm-project/vllm/pull/30515,
opt-in at first). vllm/envs.py defaults it to "0" in the v0.19.1 release (build b1388b1fb) and to
"1" in v0.20.0 (b8160878f), v0.22.0, v0.30.0, v0.31.0 and v0.33.0 (4ba787ec9), though the log line
says "default since v0.21.0". Before, the graphs were captured after the KV cache was sized and took
memory outside gpu_memory_utilization.
"""

import dataclasses
from pathlib import Path

import pytest
import yaml
from catalog_gpus import traits

import infermeter.calculators.vllm_overheads as overheads
from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.vllm_overheads import ESTIMATED_TERMS
from infermeter.calculators.vllm_plan import plan_vllm
from infermeter.calculators.vllm_settings import GIB, VllmSettings
from infermeter.registry.catalog import load_models

MODELS = load_models()
CASES_FILE = Path(__file__).parent / "data" / "vllm_startup_logs.yaml"


def _plan(model_id: str, version: str, **settings: object):  # type: ignore[no-untyped-def]
    arch = parse_config(MODELS[model_id].config)
    return plan_vllm(
        arch,
        VllmSettings(
            gpu_memory_bytes=80 * GIB,
            gpu_memory_utilization=0.9,
            max_model_len=8192,
            vllm_version=version,
            **settings,  # type: ignore[arg-type]
        ),
    )


def test_cuda_graphs_enter_the_kv_budget_in_0_20_not_0_19() -> None:
    before = _plan("llama-3.1-8b-instruct", "0.19.1")
    after = _plan("llama-3.1-8b-instruct", "0.20.0")
    assert not before.cuda_graph_in_budget
    assert after.cuda_graph_in_budget
    assert after.cuda_graph_bytes > 0
    assert before.kv_cache_bytes - after.kv_cache_bytes == after.cuda_graph_bytes
    assert any("CUDA graphs are captured after" in note for note in before.notes)
    assert _plan("llama-3.1-8b-instruct", "0.31.0").cuda_graph_in_budget


@pytest.mark.parametrize(
    ("version", "flag", "in_budget"),
    [("0.31.0", False, False), ("0.19.1", True, True), ("0.22.0", None, True)],
)
def test_the_env_flag_overrides_the_release_default(
    version: str, flag: bool | None, in_budget: bool
) -> None:
    # VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 on 0.31 leaves the graphs outside the budget;
    # =1 on 0.19 (opt-in there) puts them in.
    plan = _plan("llama-3.1-8b-instruct", version, estimate_cudagraphs=flag)
    assert plan.cuda_graph_in_budget is in_budget


def test_a_0_21_log_is_reproduced_only_with_its_graph_estimate_in_the_budget() -> None:
    # LMCache #3430 (Qwen3-8B, RTX A5000, vLLM 0.21.0): with the logged 0.52 GiB estimate in the
    # budget the plan gives the logged 6.37 GiB of KV cache; outside it, 0.52 GiB more.
    cases = yaml.safe_load(CASES_FILE.read_text())["cases"]
    case = next(c for c in cases if c["id"] == "qwen3-8b-rtx-a5000-v0.21-lmcache-len16k")
    observed, flags = case["observed"], case["flags"]
    estimate = int(observed["cuda_graph_estimate_gib"] * GIB)
    logged = observed["available_kv_cache_gib"] * GIB
    plan = plan_vllm(
        parse_config(MODELS[case["model"]].config),
        VllmSettings(
            gpu_memory_bytes=int(case["total_gpu_memory_gib"] * GIB),
            gpu_memory_utilization=flags["gpu_memory_utilization"],
            max_model_len=flags["max_model_len"],
            vllm_version=case["vllm_version"],
        ),
    )
    kv_with_logged_graphs = plan.kv_cache_bytes + plan.cuda_graph_bytes - estimate
    assert plan.cuda_graph_in_budget
    assert abs(kv_with_logged_graphs / logged - 1) < 0.01
    assert abs((kv_with_logged_graphs + estimate) / logged - 1) > 0.05


def test_enforce_eager_has_no_cuda_graphs() -> None:
    plan = _plan("llama-3.1-8b-instruct", "0.21", enforce_eager=True)
    assert plan.cuda_graph_bytes == 0
    assert not plan.cuda_graph_in_budget


def test_every_plan_names_its_estimated_terms() -> None:
    plan = _plan("llama-3.1-8b-instruct", "0.19")
    names = plan.as_dict()["estimated_terms"]
    assert set(ESTIMATED_TERMS) <= set(names)
    for name in names:
        assert name in plan.as_dict()  # each names a figure the plan prints


def test_indexer_kv_layout_is_flagged_as_an_estimate() -> None:
    plan = _plan("deepseek-v3.2", "0.19", tensor_parallel_size=8)
    assert "kv_cache_bytes_per_token_per_layer" in plan.estimated_terms


@pytest.mark.parametrize(
    ("model_id", "needle"),
    [
        ("llama-4-scout-17b-16e-instruct", "chunked-attention layers are counted as full"),
        ("deepseek-v3", "multi-token-prediction layer(s)"),
    ],
)
def test_plan_notes_say_what_is_left_out_or_simplified(model_id: str, needle: str) -> None:
    plan = _plan(model_id, "0.19", tensor_parallel_size=8)
    assert any(needle in note for note in plan.notes)


def test_a_0_10_plan_names_the_sampler_warm_up_of_a_build_without_flashinfer() -> None:
    arch = parse_config(dict(load_models()["qwen3-32b"].config))
    settings = VllmSettings(gpu_memory_bytes=80 * GIB, max_model_len=16000, vllm_version="0.10")
    plan = plan_vllm(arch, settings)
    # 1024 sequences x 151936 logits x (38 - 15) bytes.
    assert any("3.33 GiB more" in note for note in plan.notes)
    later = plan_vllm(arch, dataclasses.replace(settings, vllm_version="0.19"))
    assert not any("sampler up" in note for note in later.notes)
    assert later.kv_cache_bytes == plan.kv_cache_bytes  # a note, not a changed figure
    told = plan_vllm(arch, dataclasses.replace(settings, flashinfer_sampler=False))
    assert not any("sampler up" in note for note in told.notes)
    assert plan.kv_cache_bytes - told.kv_cache_bytes == 1024 * 151936 * (38 - 15)


@pytest.mark.parametrize(
    ("release", "flashinfer", "rows", "sorts"),
    [
        ("0.10.1.1", None, 256, False),  # FlashInfer whenever installed (taken as installed)
        ("0.11.0", False, 256, True),  # "FlashInfer is not available"
        ("0.11.1", None, 256, True),  # opt-in from 0.11.1: the sort path, installed or not
        ("0.16", None, 1024, True),
        ("0.16", True, 1024, False),  # VLLM_USE_FLASHINFER_SAMPLER=1
        ("0.17", None, 1024, False),  # the Triton top-k/top-p kernel from 8 rows
        ("0.17", None, 4, True),
        ("0.24", None, 4, False),  # FlashInfer on by default again
        ("0.24", False, 4, True),
    ],
)
def test_the_sampler_warm_up_sorts_the_vocabulary_on_the_releases_whose_code_does(
    release: str, flashinfer: bool | None, rows: int, sorts: bool
) -> None:
    settings = VllmSettings(
        gpu_memory_bytes=80 * GIB, vllm_version=release, flashinfer_sampler=flashinfer
    )
    assert overheads.sampler_sorts(settings, rows) is sorts
    expected = 15 if not sorts else (38 if rows >= 128 else 50)
    assert overheads.sampler_bytes_per_logit(settings, rows) == expected


@pytest.mark.parametrize(
    ("release", "rows", "sorts"),
    [("0.10", 1024, True), ("0.16", 256, True), ("0.17", 256, False), ("0.17", 4, True)],
)
def test_on_rocm_the_sampler_sorts_until_the_triton_kernel(
    release: str, rows: int, sorts: bool
) -> None:
    # No FlashInfer on ROCm: the sort path before 0.17 (aiter's sampler is opt-in), then Triton.
    settings = VllmSettings(gpu_memory_bytes=192 * GIB, vllm_version=release, gpu=traits("mi300x"))
    assert overheads.sampler_sorts(settings, rows) is sorts
    expected = 15 if not sorts else (38 if rows >= 128 else 50)
    assert overheads.sampler_bytes_per_logit(settings, rows) == expected


def test_nccl_nvls_buffers_follow_the_release_that_turned_nccls_cumem_allocator_on() -> None:
    # vLLM 0.10's env_override.py sets NCCL_CUMEM_ENABLE=0 (no NVLS buffers) except on
    # multi-node NVLink racks; 0.11.0 drops the override (calculators.vllm_overheads).
    arch = parse_config(dict(load_models()["qwen3-32b"].config))
    settings = VllmSettings(
        gpu_memory_bytes=80 * GIB,
        max_model_len=16000,
        vllm_version="0.10",
        tensor_parallel_size=2,
        gpu=traits("h100-sxm"),
    )
    base = overheads.NON_TORCH_BYTES + overheads.NON_TORCH_TP_BYTES
    assert plan_vllm(arch, settings).non_torch_bytes == base
    later = plan_vllm(arch, dataclasses.replace(settings, vllm_version="0.11"))
    assert later.non_torch_bytes == base + overheads.NON_TORCH_NVLS_BYTES
    assert later.kv_cache_bytes < plan_vllm(arch, settings).kv_cache_bytes
    rack = dataclasses.replace(settings, gpu=traits("gb200"), gpu_memory_bytes=180 * GIB)
    assert plan_vllm(arch, rack).non_torch_bytes == base + overheads.NON_TORCH_NVLS_BYTES
    a100 = dataclasses.replace(settings, gpu=traits("a100-80gb-sxm"), vllm_version="0.11")
    assert plan_vllm(arch, a100).non_torch_bytes == base


def _v2_sampler_bytes(vocab: int) -> int:
    """Per sequence, the V2 runner's sampler states (gpu/sample/): output_bin_counts (int32 per
    vocabulary entry), prompt_bin_mask (a bit per entry in int32 words) and 4,481 4-byte entries of
    allowed, logit-bias, stop, bad-word and logprob token ids."""
    return vocab * 4 + -(-vocab // 32) * 4 + 4 * 4481


def test_the_runner_input_buffers_come_off_the_kv_budget_from_0_27_not_0_26() -> None:
    """vLLM 0.27.0's memory_profiling charges the free-memory drop since the worker's snapshot,
    which holds the model runner's buffers; 0.20-0.26 charged them nowhere. 0.27.0 starts the V1
    runner for an unlisted mixture of experts (Qwen3-30B-A3B), the V2 runner for a dense model."""
    kwargs = {"max_num_batched_tokens": 8192, "max_num_seqs": 256}
    before = _plan("qwen3-30b-a3b", "0.26.0", **kwargs)
    after = _plan("qwen3-30b-a3b", "0.27.0", **kwargs)
    assert before.runner_buffer_bytes == 0
    # V1: 8192 tokens x (2048 x 2 bytes of inputs_embeds + 37 bytes of ids, positions, indices,
    # mask and slot mapping) + 256 sequences x 8192 / 16 blocks x 4 bytes of block table
    assert after.runner_buffer_bytes == 8192 * (2048 * 2 + 37) + 256 * 512 * 4
    assert before.kv_cache_bytes - after.kv_cache_bytes == after.runner_buffer_bytes
    assert after.as_dict()["runner_buffer_bytes"] == after.runner_buffer_bytes
    assert any("V1 model runner" in note for note in after.notes)
    (note,) = [note for note in before.notes if "model runner" in note]
    assert "V1 model runner" in note
    assert "its buffers count from 0.27" in note
    # V2 (Llama 3.1 8B): 8192 tokens x 13 bytes of InputBuffers and 256 sequences of sampler
    # states over 128,256 logits; its block tables come after the cache is sized.
    dense = _plan("llama-3.1-8b-instruct", "0.27.0", **kwargs)
    assert dense.runner_buffer_bytes == 8192 * 13 + 256 * _v2_sampler_bytes(128256)
    assert any("V2 model runner" in note for note in dense.notes)
    fp32 = _plan("qwen3-30b-a3b", "0.28.0", max_num_batched_tokens=2048, dtype="float32")
    assert fp32.runner_buffer_bytes == 2048 * (2048 * 4 + 37) + fp32.max_num_seqs * 512 * 4


@pytest.mark.parametrize("version", ["0.30.0", "0.31.0", "0.32.0", "0.33.0"])
def test_0_30_to_0_33_plan_as_0_29_does(version: str) -> None:
    """Nothing the plan counts changed between 0.29.0 and 0.33.0 (gpu_worker.py's
    determine_available_memory, mem_utils.py's memory_profiling and profile_cudagraph_memory,
    diffed in the PyPI sdists): the same KV budget, term by term."""
    base = _plan("llama-3.1-8b-instruct", "0.29.0").as_dict()
    plan = _plan("llama-3.1-8b-instruct", version).as_dict()
    named = ("vllm_version", "notes")  # the notes name the release
    assert {k: v for k, v in plan.items() if k not in named} == {
        k: v for k, v in base.items() if k not in named
    }
    assert plan["extensible_reserve_bytes"] == 0


def test_0_34_keeps_its_graphs_and_a_margin_out_of_the_kv_cache_at_the_given_utilization() -> None:
    """vLLM 0.34.0's extensible KV cache (extensible_kv_cache.py measure_kv_cache_bytes): at
    gpu_memory_utilization 0.9 on 80 GiB the 8 GiB left free exceeds the margin, so only the
    captured graphs, resident after warmup, come off beside the estimate 0.33 already took."""
    before = _plan("llama-3.1-8b-instruct", "0.33.0", block_size=16)
    after = _plan("llama-3.1-8b-instruct", "0.34.0", block_size=16)
    assert before.extensible_reserve_bytes == 0
    assert after.extensible_reserve_bytes == after.cuda_graph_bytes > 0
    runner = before.runner_buffer_bytes - after.runner_buffer_bytes  # 0.34's block tables
    assert before.kv_cache_bytes - after.kv_cache_bytes == after.cuda_graph_bytes - runner


def test_0_34_defaults_to_all_memory_less_its_margin() -> None:
    """Unset, gpu_memory_utilization reads 1.0 with the extensible KV cache (0.34.0
    CacheConfig.resolved_gpu_memory_utilization); the margin is then max(1 GiB, 0.75 x the
    profiled peak and graph estimate), kept on top of that peak."""
    arch = parse_config(MODELS["llama-3.1-8b-instruct"].config)

    def plan(version: str, gpu: str = "h100-sxm"):  # type: ignore[no-untyped-def]
        settings = VllmSettings(
            gpu_memory_bytes=80 * GIB,
            max_model_len=8192,
            vllm_version=version,
            gpu=traits(gpu),
            block_size=16,
        )
        return plan_vllm(arch, settings)

    old, new = plan("0.33.0"), plan("0.34.0")
    assert old.gpu_memory_utilization == 0.92
    assert new.gpu_memory_utilization == 1.0
    transient = new.activation_peak_bytes + new.cuda_graph_bytes
    margin = max(GIB, int(transient * 0.75))
    assert new.extensible_reserve_bytes == new.cuda_graph_bytes + margin
    runner = old.runner_buffer_bytes - new.runner_buffer_bytes
    gained = 80 * GIB - int(80 * GIB * 0.92) - new.cuda_graph_bytes - margin + runner
    assert new.kv_cache_bytes - old.kv_cache_bytes == gained
    # ROCm keeps a 3 GiB floor.
    rocm = plan("0.34.0", "mi300x")
    assert rocm.extensible_reserve_bytes >= rocm.cuda_graph_bytes + 3 * GIB


def test_the_default_block_size_is_64_tokens_from_0_34_not_0_33() -> None:
    """vllm/config/cache.py `CacheConfig.DEFAULT_BLOCK_SIZE`: 16 in 0.33.0, 64 in 0.34.0, where
    the V2 model runner's buffers replace the V1 runner's; --block-size still wins."""
    kwargs = {"max_num_batched_tokens": 8192, "max_num_seqs": 256}
    before = _plan("llama-3.1-8b-instruct", "0.33.0", **kwargs)
    after = _plan("llama-3.1-8b-instruct", "0.34.0", **kwargs)
    assert (before.block_size, after.block_size) == (16, 64)
    # 0.33 and 0.34 both start the V2 runner; 0.34 sizes its cache with the block tables
    # resident (8192 x 8 bytes of slot mapping and two tables of 64-token blocks).
    sampler = 256 * _v2_sampler_bytes(128256)
    assert before.runner_buffer_bytes == 8192 * 13 + sampler
    assert after.runner_buffer_bytes == 8192 * 21 + 2 * 256 * (8192 // 64) * 4 + sampler
    assert _plan("llama-3.1-8b-instruct", "0.34.0", block_size=16).block_size == 16
    assert after.kv_cache_tokens % 64 == 0


# GLM-5.2 at TP 8, per token: 78 latents and 21 indexer keys (128 FP8 values and a float32 scale).
GLM52_FP8_KV = 78 * 656 + 21 * 132  # latents in the fp8_ds_mla layout (FlashMLA's sparse cache)
GLM52_BF16_KV = 78 * 576 * 2 + 21 * 132


@pytest.mark.parametrize(
    ("model_id", "gpu", "version", "kv_cache_dtype", "bytes_per_token"),
    [
        ("glm-5.2", "b200", "0.32", None, GLM52_FP8_KV),
        ("glm-5.2", "gb300", "0.34", "auto", GLM52_FP8_KV),
        ("glm-5.2", "b200", "0.31", None, GLM52_BF16_KV),  # before GlmMoeDsa's rule
        ("glm-5.2", "h200-sxm", "0.34", None, GLM52_BF16_KV),  # SM90
        ("glm-5.2", "rtx-pro-6000", "0.34", None, GLM52_BF16_KV),  # SM120
        ("glm-5.2", "b200", "0.34", "bfloat16", GLM52_BF16_KV),  # asked for
        ("deepseek-v3.2", "b200", "0.34", None, 61 * (576 * 2 + 132)),  # V3.2's rule keeps auto
    ],
)
def test_glm5_auto_kv_cache_is_fp8_on_sm10x_from_032(
    model_id: str, gpu: str, version: str, kv_cache_dtype: str | None, bytes_per_token: int
) -> None:
    plan = plan_vllm(
        parse_config(MODELS[model_id].config),
        VllmSettings(
            gpu_memory_bytes=180 * GIB, tensor_parallel_size=8, max_model_len=8192,
            quantization="fp8", kv_cache_dtype=kv_cache_dtype, gpu=traits(gpu),
            vllm_version=version,
        ),
    )  # fmt: skip
    assert plan.kv_cache_bytes_per_token == bytes_per_token
    turned = bytes_per_token == GLM52_FP8_KV
    assert (
        any(note.startswith("GLM-5 (GlmMoeDsaForCausalLM) on an SM10x") for note in plan.notes)
        == turned
    )
