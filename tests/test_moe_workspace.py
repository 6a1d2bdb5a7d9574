"""How many tokens vLLM's fused-MoE caches are sized for in the profiling run
(calculators/moe_workspace.py): VLLM_FUSED_MOE_CHUNK_SIZE by release (envs.py of the PyPI sdists
0.8.5-0.17.0, gone from 0.18.0), and the Marlin path of group-wise 4-bit MoE that never chunks."""

from dataclasses import replace

import pytest
from catalog_gpus import traits

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.moe_workspace import (
    FLASHINFER,
    FP8,
    KERNEL_NOTES,
    TRITON,
    moe_cache_token_cap,
    moe_caches,
)
from infermeter.calculators.quantization import weight_format
from infermeter.calculators.vllm_overheads import FORWARD_PEAK_FACTOR
from infermeter.calculators.vllm_plan import plan_vllm
from infermeter.calculators.vllm_settings import GIB, VllmSettings
from infermeter.registry.catalog import load_models

ARCH = parse_config(load_models()["qwen3-30b-a3b"].config)
# Qwen3-30B-A3B: hidden 2048 (K), 768 per expert (N), top-8; a cache row is max(2N, K) + N wide,
# TritonExperts' (the modular kernel, unquantized from 0.14) max(N, K) + max(2N, K).
ROW = max(2 * 768, 2048) + 768
MODULAR_ROW = max(768, 2048) + max(2 * 768, 2048)


@pytest.mark.parametrize(
    ("quantization", "version", "rocm", "cap"),
    [
        (None, (0, 8), False, 32768),  # 0.8.5-0.11.1: VLLM_FUSED_MOE_CHUNK_SIZE 32768
        (None, (0, 11), False, 32768),
        (None, (0, 12), False, 16384),  # 0.12.0-0.17.0: 16 x 1024
        ("fp8", (0, 17), False, 16384),
        (None, (0, 18), False, None),  # 0.18.0 removes the chunking
        ("fp8", (0, 34), False, None),
        ("awq", (0, 11), False, None),  # fused_marlin_moe: all the tokens in every release
        ("gptq", (0, 14), False, None),
        ("awq", (0, 11), True, 32768),  # ROCm runs the Triton WNA16 method
    ],
)
def test_moe_cache_token_cap_by_release_and_path(
    quantization: str | None, version: tuple[int, int], rocm: bool, cap: int | None
) -> None:
    assert moe_cache_token_cap(version, weight_format(ARCH, quantization), rocm) == cap


def test_a_compressed_tensors_w4a16_moe_takes_the_marlin_path() -> None:
    config = {
        "quant_method": "compressed-tensors",
        "config_groups": {"g": {"weights": {"num_bits": 4, "type": "int", "group_size": 32}}},
    }
    fmt = weight_format(replace(ARCH, quantization_config=config))
    assert moe_cache_token_cap((0, 11), fmt, rocm=False) is None
    assert moe_cache_token_cap((0, 11), fmt, rocm=True) == 32768


def _forward_peak(version: str, tokens: int, quantization: str | None = None) -> int:
    settings = VllmSettings(
        gpu_memory_bytes=80 * GIB,
        max_model_len=tokens,
        max_num_batched_tokens=tokens,
        max_num_seqs=8,
        vllm_version=version,
        quantization=quantization,
    )
    return plan_vllm(ARCH, settings).forward_peak_bytes


def test_the_marlin_moe_sizes_its_caches_for_every_dummy_token() -> None:
    """At 64,000 batched tokens on 0.11.1 the AWQ model's caches hold 64,000 x 8 rows of bf16,
    the unquantized model's a 32,768-token chunk: the peaks differ by the rest, times the
    forward-peak factor."""
    awq, bf16 = _forward_peak("0.11.1", 64000, "awq"), _forward_peak("0.11.1", 64000)
    extra = (64000 - 32768) * 8 * ROW * 2
    assert abs((awq - bf16) - extra * FORWARD_PEAK_FACTOR) < 2


def test_the_triton_chunk_halves_in_0_12_and_goes_in_0_18() -> None:
    old, halved = _forward_peak("0.11.1", 40000), _forward_peak("0.12.0", 40000)
    assert abs((halved - old) - (16384 - 32768) * 8 * ROW * 2 * FORWARD_PEAK_FACTOR) < 2
    # The modular kernel, chunking, keeps the whole 40,000 x 2048 output apart; 0.18 does not.
    chunked, whole = _forward_peak("0.17.0", 40000), _forward_peak("0.18.0", 40000)
    delta = (40000 - 16384) * 8 * MODULAR_ROW * 2 - 40000 * 2048 * 2
    assert abs((whole - chunked) - delta * FORWARD_PEAK_FACTOR) < 2


def test_unquantized_experts_take_the_modular_workspace_from_0_14() -> None:
    """0.13.0 calls fused_experts (cache1 and cache3 share one buffer); 0.14.1 builds a
    FusedMoEModularKernel over TritonExperts, whose workspace13 and workspace2 are held at once.
    FP8 experts keep the earlier shapes (MODULAR_TRITON_METHODS)."""
    before, after = _forward_peak("0.13.0", 8192), _forward_peak("0.14.1", 8192)
    delta = 8192 * 8 * (MODULAR_ROW - ROW) * 2
    assert abs((after - before) - delta * FORWARD_PEAK_FACTOR) < 2
    assert moe_caches((0, 14), weight_format(ARCH, None), True, traits("mi300x")).modular
    assert not moe_caches((0, 13), weight_format(ARCH, None), False, traits("h100-sxm")).modular
    assert not moe_caches((0, 14), weight_format(ARCH, "fp8"), False, traits("h100-sxm")).modular
    assert not moe_caches((0, 14), weight_format(ARCH, "awq"), False, traits("h100-sxm")).modular


@pytest.mark.parametrize(
    ("gpu", "version", "kernel"),
    [
        ("b200", (0, 19), TRITON),  # 0.19.1: FlashInfer only on VLLM_USE_FLASHINFER_MOE_FP16=1
        ("b200", (0, 22), FLASHINFER),  # 0.22.0: FlashInfer TRT-LLM, then CUTLASS, first
        ("rtx-pro-6000", (0, 34), FLASHINFER),  # FlashInfer CUTLASS on SM 12.x
        ("h100-sxm", (0, 22), FLASHINFER),
        ("h200-sxm", (0, 23), TRITON),  # 0.23.0 moves FlashInfer behind Triton on Hopper
        ("a100-80gb-sxm", (0, 34), TRITON),  # below SM 9.0 FlashInfer's CUTLASS MoE does not run
        ("l40s", (0, 29), TRITON),
        ("", (0, 29), TRITON),  # no GPU named: Triton assumed, the note says so
    ],
)
def test_the_unquantized_moe_kernel_by_gpu_and_release(
    gpu: str, version: tuple[int, int], kernel: str
) -> None:
    caches = moe_caches(version, weight_format(ARCH, None), False, traits(gpu))
    assert caches.modular == (kernel == TRITON)
    assert caches.note == KERNEL_NOTES[kernel]


def test_the_plan_names_the_moe_kernel_it_assumed() -> None:
    settings = VllmSettings(gpu_memory_bytes=80 * GIB, vllm_version="0.19.1")
    assert KERNEL_NOTES[TRITON] in plan_vllm(ARCH, settings).notes
    blackwell = replace(settings, vllm_version="0.34.0", gpu=traits("b200"))
    assert KERNEL_NOTES[FLASHINFER] in plan_vllm(ARCH, blackwell).notes
    fp8 = replace(settings, quantization="fp8")
    assert KERNEL_NOTES[FP8] in plan_vllm(ARCH, fp8).notes
    older = plan_vllm(ARCH, replace(settings, vllm_version="0.13.0")).notes
    assert not any(note.startswith("MoE workspace") for note in older)


def test_a_dense_width_no_layer_uses_sets_no_peak() -> None:
    """Qwen3-30B-A3B's config names intermediate_size 6,144, but every layer is MoE (qwen3_moe.py
    builds Qwen3MoeMLP only for mlp_only_layers): at 40,000 tokens on 0.12 a 6,144-wide MLP would
    outweigh the 16,384-token expert chunk. With one dense layer it does set the peak."""
    settings = VllmSettings(
        gpu_memory_bytes=80 * GIB,
        max_model_len=40000,
        max_num_batched_tokens=40000,
        max_num_seqs=8,
        vllm_version="0.12.0",
    )
    peak = plan_vllm(ARCH, settings).forward_peak_bytes
    assert peak == plan_vllm(replace(ARCH, intermediate_size=0), settings).forward_peak_bytes
    assert ARCH.moe is not None
    one_dense = replace(ARCH, moe=replace(ARCH.moe, moe_layers=ARCH.moe.moe_layers[1:]))
    dense = 40000 * 3 * 6144 * 2 + 2 * 40000 * 2048 * 2  # the MLP's tensors and the residual
    assert abs(plan_vllm(one_dense, settings).forward_peak_bytes - dense * FORWARD_PEAK_FACTOR) < 2
