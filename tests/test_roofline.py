"""Roofline bounds: Llama 3.1 8B on an H100 as published figures put it, and their invariants."""

from collections.abc import Callable

import pytest
from catalog_models import catalog_arch
from hypothesis import given
from hypothesis import strategies as st

from infermeter.calculators.decode_batch import DecodeBatch
from infermeter.calculators.decode_reads import decode_weight_bytes_per_step
from infermeter.calculators.errors import InputError
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.quantization import WeightFormat, weight_format
from infermeter.calculators.roofline import (
    attention_flops_per_token,
    decode_tokens_per_second_bound,
    dense_tflops_for,
    flops_per_output_token,
    output_tokens_per_second_per_gpu_bound,
    plan_throughput_bound,
)
from infermeter.calculators.vllm_settings import VllmSettings

H100_BANDWIDTH_BYTES_PER_S = 3350e9


def test_roofline_llama_8b_bf16_on_h100_decodes_about_210_tokens_per_second() -> None:
    arch = catalog_arch("llama-3.1-8b-instruct")
    bound = decode_tokens_per_second_bound(arch, weight_format(arch), H100_BANDWIDTH_BYTES_PER_S)
    # 16.1 GB of bf16 weights, less the embedding table of which a step reads one row.
    assert 14.9e9 < bound.bytes_per_step < 16.1e9
    assert 205 < bound.tokens_per_second_per_stream < 226
    assert bound.tokens_per_second == bound.tokens_per_second_per_stream


def test_roofline_fp8_roughly_doubles_the_decode_bound() -> None:
    arch = catalog_arch("llama-3.1-8b-instruct")
    bf16 = decode_tokens_per_second_bound(arch, weight_format(arch), H100_BANDWIDTH_BYTES_PER_S)
    fp8 = decode_tokens_per_second_bound(
        arch, weight_format(arch, "fp8"), H100_BANDWIDTH_BYTES_PER_S
    )
    ratio = fp8.tokens_per_second_per_stream / bf16.tokens_per_second_per_stream
    assert 1.7 < ratio < 2.0  # the lm_head stays in bf16


def test_roofline_tensor_parallel_splits_the_bytes_per_gpu() -> None:
    arch = catalog_arch("llama-3.1-70b-instruct")
    fmt = weight_format(arch)
    one = decode_weight_bytes_per_step(arch, fmt, 1)
    four = decode_weight_bytes_per_step(arch, fmt, 4)
    assert four == pytest.approx(one / 4, rel=0.01)


def test_roofline_moe_reads_only_active_experts() -> None:
    arch = catalog_arch("qwen3-30b-a3b")
    read = decode_weight_bytes_per_step(arch, weight_format(arch))
    # About 3.3 B active parameters of 30.5 B, in bf16.
    assert 5.5e9 < read < 7e9


def test_roofline_kv_cache_adds_per_sequence() -> None:
    arch = catalog_arch("llama-3.1-8b-instruct")
    fmt = weight_format(arch)
    alone = decode_tokens_per_second_bound(arch, fmt, H100_BANDWIDTH_BYTES_PER_S)
    batch = decode_tokens_per_second_bound(
        arch, fmt, H100_BANDWIDTH_BYTES_PER_S, DecodeBatch(context_tokens=1000, batch=8)
    )
    # 128 KiB of bf16 KV cache per token (32 layers × 8 heads × 128 × 2 × 2 bytes).
    assert batch.kv_cache_bytes_per_step == 8 * 1000 * 131072
    assert batch.tokens_per_second_per_stream < alone.tokens_per_second_per_stream
    assert batch.tokens_per_second > alone.tokens_per_second


def test_roofline_compute_bound_llama_8b_on_h100() -> None:
    arch = catalog_arch("llama-3.1-8b-instruct")
    assert flops_per_output_token(arch) == pytest.approx(2 * 7.5e9, rel=0.01)
    bound = output_tokens_per_second_per_gpu_bound(arch, 989.4)
    assert bound.tokens_per_second_per_gpu == pytest.approx(989.4e12 / 15.0e9, rel=0.01)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda arch, fmt: decode_tokens_per_second_bound(arch, fmt, 0), "bandwidth"),
        (
            lambda arch, fmt: decode_tokens_per_second_bound(arch, fmt, 1e12, DecodeBatch(batch=0)),
            "batch",
        ),
        (
            lambda arch, fmt: decode_tokens_per_second_bound(
                arch, fmt, 1e12, DecodeBatch(context_tokens=-1)
            ),
            "context_tokens",
        ),
        (lambda arch, fmt: output_tokens_per_second_per_gpu_bound(arch, -1), "dense_tflops"),
    ],
)
def test_roofline_rejects_inputs_outside_their_domain(
    call: Callable[[ModelArch, WeightFormat], object], message: str
) -> None:
    arch = catalog_arch("llama-3.2-1b-instruct")
    with pytest.raises(InputError, match=message):
        call(arch, weight_format(arch))


@given(
    context=st.integers(min_value=0, max_value=131072),
    batch=st.integers(min_value=1, max_value=512),
    bandwidth=st.floats(min_value=1e11, max_value=1e13),
)
def test_roofline_decode_bound_falls_with_context_and_batch(
    context: int, batch: int, bandwidth: float
) -> None:
    arch = catalog_arch("llama-3.2-1b-instruct")
    fmt = weight_format(arch)
    base = decode_tokens_per_second_bound(arch, fmt, bandwidth)
    loaded = decode_tokens_per_second_bound(
        arch, fmt, bandwidth, DecodeBatch(context_tokens=context, batch=batch)
    )
    assert loaded.tokens_per_second_per_stream <= base.tokens_per_second_per_stream
    assert loaded.tokens_per_second_per_stream == pytest.approx(bandwidth / loaded.bytes_per_step)


def test_roofline_attention_flops_of_llama_8b_at_1000_tokens() -> None:
    # 32 layers × 32 query heads × (128 + 128) multiply-adds per attended token × 2 FLOPs.
    arch = catalog_arch("llama-3.1-8b-instruct")
    assert attention_flops_per_token(arch, 1000) == 32 * 32 * 256 * 2 * 1000
    assert attention_flops_per_token(arch, 0) == 0
    assert flops_per_output_token(arch, 1000) == flops_per_output_token(arch) + 524_288_000


def test_roofline_attention_of_a_sliding_layer_stops_at_its_window() -> None:
    # gpt-oss-20b: 24 layers alternate full and 128-token sliding attention, 64 heads of 64.
    arch = catalog_arch("gpt-oss-20b")
    per_token = 2 * 64 * (64 + 64)
    assert attention_flops_per_token(arch, 100) == per_token * 24 * 100
    assert attention_flops_per_token(arch, 10_000) == per_token * (12 * 10_000 + 12 * 128)


def test_roofline_attention_of_mla_takes_the_cheaper_head_size() -> None:
    # DeepSeek-V3: 128 heads; qk = 64 rope + min(128 nope, 512 latent), v = min(128, 512).
    arch = catalog_arch("deepseek-v3")
    assert attention_flops_per_token(arch, 1000) == 2 * 128 * (64 + 128 + 128) * 61 * 1000


def test_roofline_compute_bound_falls_with_the_context() -> None:
    arch = catalog_arch("llama-3.1-8b-instruct")
    short = output_tokens_per_second_per_gpu_bound(arch, 989.4, context_tokens=0)
    long = output_tokens_per_second_per_gpu_bound(arch, 989.4, context_tokens=100_000)
    # At 100k tokens attention (52 GFLOP) outweighs the weights (15 GFLOP).
    assert long.tokens_per_second_per_gpu < short.tokens_per_second_per_gpu / 4


# --- the deployment bound beside a memory plan -------------------------------------------------

H100_DENSE = {"bf16": 989.0, "fp16": 989.0, "fp8": 1979.0, "int8": 1979.0, "fp4": None}


def test_roofline_plan_bound_batch_1_is_the_per_stream_decode_bound() -> None:
    arch = catalog_arch("llama-3.1-8b-instruct")
    settings = VllmSettings(gpu_memory_bytes=80 * 1024**3)
    bound = plan_throughput_bound(arch, settings, 3350.0, H100_DENSE, 1024, 1)
    assert bound.limited_by == "bandwidth"
    assert 195 < bound.tokens_per_second < 226
    assert bound.tokens_per_second == bound.bandwidth_tokens_per_second_per_stream
    # compute: 989 TFLOPS / (2 × 7.5 B params a token passes, plus attention over 1,024) ≈ 64k
    flops = flops_per_output_token(arch, 1024)
    assert bound.compute_tokens_per_second == pytest.approx(989e12 / flops)
    assert 60_000 < (bound.compute_tokens_per_second or 0) < 70_000


def test_roofline_plan_bound_follows_bandwidth_batch_and_compute() -> None:
    arch = catalog_arch("llama-3.1-8b-instruct")
    settings = VllmSettings(gpu_memory_bytes=80 * 1024**3)
    base = plan_throughput_bound(arch, settings, 3350.0, H100_DENSE, 0, 8)
    doubled = plan_throughput_bound(arch, settings, 6700.0, H100_DENSE, 0, 8)
    assert doubled.tokens_per_second == pytest.approx(2 * base.tokens_per_second)
    # a huge batch at no context reads the weights once: compute becomes the limit
    huge = plan_throughput_bound(arch, settings, 3350.0, H100_DENSE, 0, 100_000)
    assert huge.limited_by == "compute"
    assert huge.tokens_per_second == huge.compute_tokens_per_second
    # two tensor-parallel GPUs: twice the compute, a shard each to read
    tp2 = plan_throughput_bound(
        arch,
        VllmSettings(gpu_memory_bytes=80 * 1024**3, tensor_parallel_size=2),
        3350.0,
        H100_DENSE,
        0,
        100_000,
    )
    assert tp2.gpu_count == 2
    assert tp2.compute_tokens_per_second == pytest.approx(2 * (huge.compute_tokens_per_second or 0))


def test_roofline_dense_tflops_for_uses_the_formats_fastest_rate() -> None:
    arch = catalog_arch("llama-3.1-8b-instruct")
    assert dense_tflops_for(weight_format(arch), H100_DENSE) == 989.0
    assert dense_tflops_for(weight_format(arch, "fp8"), H100_DENSE) == 1979.0
    assert dense_tflops_for(weight_format(arch), {"bf16": None, "fp16": None}) is None
