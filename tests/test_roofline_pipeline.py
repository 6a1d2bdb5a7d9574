"""The decode bound under pipeline parallelism (`calculators.pipeline_stages`): each stage reads
its own layers' weights and KV cache, the pipelined step takes the slowest stage's time, and one
stream still passes every stage in turn; worked out by hand for Llama 3.1 8B on two H100 stages."""

import dataclasses

import pytest
from catalog_models import catalog_arch

from infermeter.calculators.decode_batch import DecodeBatch
from infermeter.calculators.decode_reads import (
    bytes_per_touched_param,
    decode_weight_bytes_per_step,
)
from infermeter.calculators.errors import InputError
from infermeter.calculators.interconnect import Link
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.parallel import ParallelLayout
from infermeter.calculators.pipeline_stages import pipeline_step
from infermeter.calculators.quantization import weight_format
from infermeter.calculators.roofline import decode_tokens_per_second_bound, plan_throughput_bound
from infermeter.calculators.vllm_settings import VllmSettings

H100 = 3350e9
# Llama 3.1 8B in bf16, per layer: attention 4096 × (4096 + 2 × 1024) + 4096 × 4096, MLP
# 3 × 4096 × 14336, two RMSNorms of 4096: 218,112,000 parameters, 436,224,000 bytes.
LAYER_WEIGHTS = 436_224_000
# The last stage's own: lm_head 128,256 × 4096 and the final norm, in bf16.
END_WEIGHTS = 2 * (128_256 * 4096 + 4096)
# KV: 2 × 8 heads × 128 × 2 bytes a token and layer; 16 sequences of 1,024 tokens.
LAYER_KV = 16 * 1024 * 2 * 8 * 128 * 2
SIXTEEN = DecodeBatch(context_tokens=1024, batch=16)
SIXTEEN_ON_TWO_STAGES = DecodeBatch(ParallelLayout(pipeline_parallel_size=2), 1024, 16)


def test_pipeline_llama_8b_pp2_slowest_stage_is_the_hand_worked_split() -> None:
    arch = catalog_arch("llama-3.1-8b-instruct")
    fmt = weight_format(arch)
    assert decode_weight_bytes_per_step(arch, fmt) == 32 * LAYER_WEIGHTS + END_WEIGHTS
    one = decode_tokens_per_second_bound(arch, fmt, H100, SIXTEEN)
    two = decode_tokens_per_second_bound(arch, fmt, H100, SIXTEEN_ON_TWO_STAGES)
    # 17 layers | 15 layers + lm_head: 8.56 GB | 8.60 GB; 18 | 14 would be 9.06 GB | 8.10 GB
    assert two.weight_bytes_per_step == 15 * LAYER_WEIGHTS + END_WEIGHTS
    assert two.kv_cache_bytes_per_step == 15 * LAYER_KV
    assert two.tokens_per_second == pytest.approx(16 * H100 / 8_600_674_304)  # 6,232 tok/s
    assert one.tokens_per_second == pytest.approx(16 * H100 / 17_157_332_992)  # 3,124 tok/s
    # one stream passes both stages for every token: all 32 layers at one sequence
    chain = (32 * LAYER_WEIGHTS + END_WEIGHTS + 32 * LAYER_KV / 16) / H100
    assert two.tokens_per_second_per_stream == pytest.approx(1 / chain)
    lone = decode_tokens_per_second_bound(arch, fmt, H100, DecodeBatch(context_tokens=1024))
    assert two.tokens_per_second_per_stream == pytest.approx(lone.tokens_per_second_per_stream)


def test_pipeline_stage_kv_counts_in_the_bound() -> None:
    arch = catalog_arch("llama-3.1-8b-instruct")
    fmt = weight_format(arch)
    kv = kv_cache_shape(arch)
    doubled = dataclasses.replace(kv, bytes_per_token_per_layer=2 * kv.bytes_per_token_per_layer)

    def slowest(shape):  # type: ignore[no-untyped-def]
        return pipeline_step(
            arch,
            bytes_per_touched_param(arch, fmt),
            decode_weight_bytes_per_step(arch, fmt),
            shape,
            SIXTEEN_ON_TWO_STAGES,
            memory_bandwidth_bytes_per_s=H100,
            activation_bytes=2,
            link=None,
        ).slowest

    base, heavy = slowest(kv), slowest(doubled)
    assert base.kv_cache_bytes == 15 * LAYER_KV
    assert heavy.kv_cache_bytes > base.kv_cache_bytes
    assert heavy.seconds > base.seconds


@pytest.mark.parametrize(
    ("model_id", "pipeline", "link"),
    [
        ("llama-3.1-70b-instruct", 4, Link("NVLink 4", 450.0)),
        ("gemma-2-27b-it", 2, None),  # sliding and full layers alternate
        ("deepseek-v3", 4, None),  # three dense layers, then MoE layers
    ],
)
def test_pipeline_stages_read_the_whole_model_between_them(
    model_id: str, pipeline: int, link: Link | None
) -> None:
    arch = catalog_arch(model_id)
    fmt = weight_format(arch)
    alone = decode_tokens_per_second_bound(arch, fmt, H100, DecodeBatch(ParallelLayout(2), 4096, 8))
    staged_batch = DecodeBatch(ParallelLayout(2, pipeline), 4096, 8)
    step = pipeline_step(
        arch,
        bytes_per_touched_param(arch, fmt, 2),
        alone.weight_bytes_per_step,
        kv_cache_shape(arch, tensor_parallel_size=2, model_dtype_bytes=2),
        staged_batch,
        memory_bandwidth_bytes_per_s=H100,
        activation_bytes=2,
        link=link,
    )
    assert len(step.stages) == pipeline
    assert sum(stage.layers for stage in step.stages) == arch.num_layers
    weights = sum(stage.weight_bytes for stage in step.stages)
    kv = sum(stage.kv_cache_bytes for stage in step.stages)
    assert weights == pytest.approx(alone.weight_bytes_per_step, abs=pipeline)
    assert kv == pytest.approx(alone.kv_cache_bytes_per_step, abs=pipeline)
    # the slowest stage is at least the mean and at most the mean plus one layer's share
    mean = sum(stage.seconds for stage in step.stages) / pipeline
    assert mean <= step.slowest.seconds < mean + sum(s.seconds for s in step.stages) / 8
    staged = decode_tokens_per_second_bound(arch, fmt, H100, staged_batch, link=link)
    assert staged.tokens_per_second > alone.tokens_per_second * (pipeline - 0.5)


def test_pipeline_plan_bound_takes_the_stages_of_the_plan() -> None:
    arch = catalog_arch("llama-3.1-8b-instruct")
    rates = {"bf16": 989.0, "fp16": 989.0}

    def bound(pipeline: int):  # type: ignore[no-untyped-def]
        settings = VllmSettings(gpu_memory_bytes=80 * 1024**3, pipeline_parallel_size=pipeline)
        return plan_throughput_bound(arch, settings, 3350.0, rates, 1024, 16)

    assert bound(2).gpu_count == 2
    assert bound(2).bandwidth_tokens_per_second == pytest.approx(16 * H100 / 8_600_674_304)
    assert bound(1).bandwidth_tokens_per_second == pytest.approx(16 * H100 / 17_157_332_992)


def test_pipeline_layer_indexed_quantization_takes_equal_shares() -> None:
    arch = catalog_arch("llama-3.1-8b-instruct")
    fmt = dataclasses.replace(weight_format(arch, "fp8"), unquantized_layers=(("attention", 3),))
    one = decode_tokens_per_second_bound(arch, fmt, H100, SIXTEEN)
    two = decode_tokens_per_second_bound(arch, fmt, H100, SIXTEEN_ON_TWO_STAGES)
    assert two.weight_bytes_per_step == one.weight_bytes_per_step // 2
    assert two.kv_cache_bytes_per_step == one.kv_cache_bytes_per_step // 2


def test_pipeline_needs_a_layer_per_stage() -> None:
    arch = catalog_arch("llama-3.1-8b-instruct")
    with pytest.raises(InputError, match="pipeline_parallel_size"):
        decode_tokens_per_second_bound(
            arch, weight_format(arch), H100, DecodeBatch(ParallelLayout(pipeline_parallel_size=33))
        )
