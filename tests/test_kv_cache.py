"""Tests of calculators.kv_cache: bytes per token per layer (GQA, MLA), fp8, tensor parallelism
and the sliding-window cap."""

import pytest
from catalog_models import catalog_arch
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from infermeter.calculators.errors import InputError
from infermeter.calculators.kv_cache import KV_CACHE_DTYPES, kv_cache_shape, kv_dtype_bytes
from infermeter.registry.models import ModelIdentity

LLAMA_8B = catalog_arch("llama-3.1-8b-instruct")
DEEPSEEK = catalog_arch("deepseek-v3")
GPT_OSS = catalog_arch("gpt-oss-20b")


def test_kv_cache_shape_llama_3_1_8b_bf16() -> None:
    kv = kv_cache_shape(LLAMA_8B)
    assert kv.bytes_per_token_per_layer == 2 * 8 * 128 * 2 == 4096
    assert kv.bytes_per_token == 4096 * 32 == 131072
    assert (kv.full_layers, kv.sliding_layers, kv.sliding_window) == (32, 0, None)


def test_a_result_says_only_a_kv_cache_dtype_the_memory_plan_knows() -> None:
    # Declared once (`KvCacheDtype`): a name `calc vram` takes a result may carry, and one it
    # refuses ('kv_cache_dtype: expected one of auto, fp8, …') a result may not, such as float32.
    model = {"id": "llama-3.1-8b-instruct", "hf_repo": "meta-llama/Llama-3.1-8B-Instruct"}
    for dtype in KV_CACHE_DTYPES:
        identity = ModelIdentity.model_validate({**model, "kv_cache_dtype": dtype})
        assert identity.kv_cache_dtype == dtype
    with pytest.raises(InputError, match="expected one of"):
        kv_dtype_bytes("float32", 2)
    with pytest.raises(ValidationError, match="kv_cache_dtype"):
        ModelIdentity.model_validate({**model, "kv_cache_dtype": "float32"})


@pytest.mark.parametrize("dtype", ["fp8", "fp8_e4m3", "fp8_e5m2"])
def test_kv_cache_shape_fp8_halves_it(dtype: str) -> None:
    assert kv_cache_shape(LLAMA_8B, dtype).bytes_per_token_per_layer == 2048


@pytest.mark.parametrize(("tp", "per_layer"), [(1, 4096), (2, 2048), (4, 1024), (8, 512)])
def test_kv_cache_shape_tensor_parallel_splits_kv_heads(tp: int, per_layer: int) -> None:
    assert kv_cache_shape(LLAMA_8B, tensor_parallel_size=tp).bytes_per_token_per_layer == per_layer


def test_kv_cache_shape_more_ranks_than_kv_heads_keep_one_head() -> None:
    # 8 KV heads on 16 GPUs: each GPU still stores one head (vLLM replicates it).
    kv = kv_cache_shape(LLAMA_8B, tensor_parallel_size=16)
    assert kv.bytes_per_token_per_layer == 2 * 1 * 128 * 2


@pytest.mark.parametrize("model_id", ["deepseek-v3", "deepseek-r1"])
@pytest.mark.parametrize("tp", [1, 2, 8, 16])
def test_kv_cache_shape_mla_is_compressed_and_replicated(model_id: str, tp: int) -> None:
    kv = kv_cache_shape(catalog_arch(model_id), tensor_parallel_size=tp)
    assert kv.bytes_per_token_per_layer == (512 + 64) * 2 == 1152
    assert kv.bytes_per_token == 1152 * 61


def test_kv_cache_shape_mla_fp8() -> None:
    assert kv_cache_shape(DEEPSEEK, "fp8").bytes_per_token_per_layer == 576


def test_kv_cache_shape_follows_model_dtype_when_auto() -> None:
    assert kv_cache_shape(LLAMA_8B, "auto", model_dtype_bytes=4).bytes_per_token_per_layer == 8192
    assert kv_cache_shape(LLAMA_8B, "bfloat16", model_dtype_bytes=4).dtype_bytes == 2


def test_kv_cache_shape_gpt_oss_layer_groups() -> None:
    kv = kv_cache_shape(GPT_OSS)
    assert kv.bytes_per_token_per_layer == 2 * 8 * 64 * 2
    assert (kv.full_layers, kv.sliding_layers, kv.sliding_window) == (12, 12, 128)
    assert kv.full_attention_bytes_per_token == 12 * 2048


def test_kv_cache_bytes_for_sequence_caps_sliding_layers_at_window() -> None:
    kv = kv_cache_shape(GPT_OSS)
    assert kv.bytes_for_sequence(100) == 2048 * 24 * 100
    assert kv.bytes_for_sequence(10_000) == 2048 * (12 * 10_000 + 12 * 128)


def test_kv_cache_bytes_for_sequence_all_sliding_mistral() -> None:
    kv = kv_cache_shape(catalog_arch("mistral-7b-v0.1"))
    assert kv.bytes_for_sequence(32_768) == kv.bytes_for_sequence(4096) == 4096 * 32 * 4096


def test_kv_cache_bytes_for_sequence_full_attention_is_linear() -> None:
    kv = kv_cache_shape(LLAMA_8B)
    assert kv.bytes_for_sequence(8192) == 8192 * 131072


@settings(max_examples=50, deadline=None)
@given(
    model_id=st.sampled_from(
        ["llama-3.1-8b-instruct", "gpt-oss-20b", "gemma-3-12b-it", "mistral-7b-v0.1", "deepseek-v3"]
    ),
    shorter=st.integers(min_value=0, max_value=200_000),
    extra=st.integers(min_value=0, max_value=200_000),
)
def test_kv_cache_bytes_for_sequence_monotone_and_bounded(
    model_id: str, shorter: int, extra: int
) -> None:
    kv = kv_cache_shape(catalog_arch(model_id))
    longer = shorter + extra
    assert kv.bytes_for_sequence(shorter) <= kv.bytes_for_sequence(longer)
    assert kv.bytes_for_sequence(longer) <= kv.bytes_per_token * longer


@pytest.mark.parametrize("dtype", ["int8", "fp4", "float32"])
def test_kv_dtype_bytes_unknown_dtype_names_it(dtype: str) -> None:
    with pytest.raises(InputError, match=repr(dtype)):
        kv_dtype_bytes(dtype, 2)


@pytest.mark.parametrize("dtype", KV_CACHE_DTYPES)
def test_kv_dtype_bytes_every_choice_is_understood(dtype: str) -> None:
    assert kv_dtype_bytes(dtype, 2) in (1, 2)


@pytest.mark.parametrize("tp", [0, -2])
def test_kv_cache_shape_rejects_non_positive_tensor_parallel(tp: int) -> None:
    with pytest.raises(InputError, match="tensor_parallel_size"):
        kv_cache_shape(LLAMA_8B, tensor_parallel_size=tp)
