"""How many tokens vLLM's fused-MoE caches are sized for in the profiling run
(calculators/moe_workspace.py): VLLM_FUSED_MOE_CHUNK_SIZE by release (envs.py of the PyPI sdists
0.8.5-0.17.0, gone from 0.18.0), and the Marlin path of group-wise 4-bit MoE that never chunks."""

from dataclasses import replace

import pytest

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.moe_workspace import moe_cache_token_cap
from infermeter.calculators.quantization import weight_format
from infermeter.calculators.vllm_overheads import FORWARD_PEAK_FACTOR
from infermeter.calculators.vllm_plan import plan_vllm
from infermeter.calculators.vllm_settings import GIB, VllmSettings
from infermeter.registry.catalog import load_models

ARCH = parse_config(load_models()["qwen3-30b-a3b"].config)
# Qwen3-30B-A3B: hidden 2048 (K), 768 per expert (N), top-8; a cache row is max(2N, K) + N wide.
ROW = max(2 * 768, 2048) + 768


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
    # Its config's dense intermediate_size (6144, no dense layer uses it) would set the peak.
    return plan_vllm(replace(ARCH, intermediate_size=768), settings).forward_peak_bytes


def test_the_marlin_moe_sizes_its_caches_for_every_dummy_token() -> None:
    """At 64,000 batched tokens on 0.11.1 the AWQ model's caches hold 64,000 x 8 rows of bf16,
    the unquantized model's a 32,768-token chunk: the peaks differ by the rest, times the
    forward-peak factor."""
    awq, bf16 = _forward_peak("0.11.1", 64000, "awq"), _forward_peak("0.11.1", 64000)
    extra = (64000 - 32768) * 8 * ROW * 2
    assert abs((awq - bf16) - extra * FORWARD_PEAK_FACTOR) < 2


def test_the_triton_chunk_halves_in_0_12_and_goes_in_0_18() -> None:
    peaks = [_forward_peak(version, 40000) for version in ("0.11.1", "0.12.0", "0.18.0")]
    rows = [32768, 16384, 40000]
    for peak, next_peak, chunk, next_chunk in zip(peaks, peaks[1:], rows, rows[1:], strict=False):
        delta = (next_chunk - chunk) * 8 * ROW * 2
        assert abs((next_peak - peak) - delta * FORWARD_PEAK_FACTOR) < 2
