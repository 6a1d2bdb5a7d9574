"""Architectures beyond plain attention: Mamba hybrids (Jamba), linear-attention hybrids
(Qwen3-Next), Llama 4's interleaved MoE and chunked attention, DeepSeek-V3.2's indexer, MTP
layers vLLM does not load, and the refusal of configs the calculators cannot read.

tests/data/configs/jamba-1.5-mini.json is ai21labs/AI21-Jamba-1.5-Mini's config.json
(https://huggingface.co/ai21labs/AI21-Jamba-1.5-Mini/blob/main/config.json) as transcribed in a
public model-test helper (sdpython's onnx-diagnostic `get_ai21_jamba_15_mini`); AI21 publishes
52B total / 12B active parameters for it (Jamba v0.1, same shapes: 51.6B). Qwen3-Next's exact
totals (79,674,391,296 / 3,874,929,408 without the MTP layer) are the checkpoint's
safetensors-header counts as quoted by a public parameter-count test.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from tiny_config import tiny_llama

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.kv_blocks import hybrid_block_size
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.mixers import LINEAR_ATTENTION, MAMBA
from infermeter.calculators.model_arch import CHUNKED, FULL, ModelArch
from infermeter.calculators.param_count import param_counts
from infermeter.calculators.vllm_plan import plan_vllm
from infermeter.calculators.vllm_settings import GIB, VllmSettings
from infermeter.registry.catalog import load_models

CONFIGS = Path(__file__).parent / "data" / "configs"
MODELS = load_models()


def _catalog(model_id: str) -> dict[str, Any]:
    return dict(MODELS[model_id].config)


def _jamba() -> dict[str, Any]:
    config: dict[str, Any] = json.loads((CONFIGS / "jamba-1.5-mini.json").read_text())
    return config


def _arch(model_id: str) -> ModelArch:
    return parse_config(_catalog(model_id))


# --- Jamba: Mamba layers are not attention -------------------------------------------------------


def test_jamba_params_match_published_52b_total_12b_active() -> None:
    counts = param_counts(parse_config(_jamba()))
    assert counts.total == pytest.approx(52e9, rel=0.02)  # not 92B: Mamba layers are not attention
    assert counts.active == pytest.approx(12e9, rel=0.02)


def test_jamba_layer_pattern_attention_every_eighth_moe_every_second() -> None:
    arch = parse_config(_jamba())
    assert [i for i, kind in enumerate(arch.layer_kinds) if kind == FULL] == [4, 12, 20, 28]
    assert arch.layer_kinds.count(MAMBA) == 28
    assert arch.moe is not None
    assert arch.moe.moe_layers == tuple(range(1, 32, 2))


def test_jamba_kv_cache_only_attention_layers_and_one_state_per_sequence() -> None:
    arch = parse_config(_jamba())
    kv = kv_cache_shape(arch, tensor_parallel_size=1)
    assert kv.full_layers == 4
    assert kv.state_layers == 28
    # conv window (d_conv - 1) x d_inner + SSM state d_inner x d_state, bf16.
    assert kv.state_bytes_per_sequence_per_layer == (3 * 8192 + 8192 * 16) * 2
    # The state does not grow with the context; the KV part does.
    assert kv.bytes_for_sequence(2000) - kv.bytes_for_sequence(1000) == 1000 * 4 * 2 * 8 * 128 * 2


# --- Qwen3-Next: only the full-attention layers have KV ------------------------------------------


def test_qwen3_next_params_equal_the_checkpoint_count() -> None:
    counts = param_counts(_arch("qwen3-next-80b-a3b-instruct"))
    assert counts.total == 79_674_391_296
    assert counts.active == 3_874_929_408


def test_qwen3_next_kv_cache_has_12_attention_layers_and_36_recurrent_states() -> None:
    arch = _arch("qwen3-next-80b-a3b-instruct")
    assert arch.layer_kinds.count(LINEAR_ATTENTION) == 36
    kv = kv_cache_shape(arch, tensor_parallel_size=1)
    assert kv.full_layers == 12
    assert kv.bytes_per_token_per_layer == 2 * 2 * 256 * 2
    conv = (2 * 16 * 128 + 32 * 128) * 3 * 2
    temporal = 32 * 128 * 128 * 2
    assert kv.state_bytes_per_sequence_per_layer == conv + temporal


def test_qwen3_next_attention_block_grows_to_hold_one_recurrent_state() -> None:
    # vLLM raises the attention block size until one block's page holds a layer's state:
    # at TP 4 a state is 274,432 bytes and a token's KV 1,024, so 17 blocks of 16 = 272 tokens.
    arch = _arch("qwen3-next-80b-a3b-instruct")
    kv = kv_cache_shape(arch, tensor_parallel_size=4)
    assert hybrid_block_size(kv, 16) == 272


def test_qwen3_next_plan_counts_state_per_sequence_not_per_token() -> None:
    arch = _arch("qwen3-next-80b-a3b-instruct")
    short = plan_vllm(arch, VllmSettings(80 * GIB, tensor_parallel_size=4, max_model_len=4096))
    long = plan_vllm(arch, VllmSettings(80 * GIB, tensor_parallel_size=4, max_model_len=65536))
    assert short.kv_cache_groups == long.kv_cache_groups == 4  # 1 attention + 3 state groups
    assert short.state_bytes_per_sequence == 36 * 274_432
    # Each request holds 3 state pages whatever its length, so concurrency falls less than 16x.
    assert 1 < short.max_concurrency / long.max_concurrency < 16


# --- Llama 4: interleaved MoE, shared expert, chunked attention ----------------------------------


def test_llama4_maverick_moe_every_second_layer_not_779b() -> None:
    arch = _arch("llama-4-maverick-17b-128e-instruct")
    assert arch.moe is not None
    assert arch.moe.moe_layers == tuple(range(1, 48, 2))
    assert arch.intermediate_size == 16384  # dense layers use intermediate_size_mlp
    assert param_counts(arch).total == pytest.approx(400e9, rel=0.02)


def test_llama4_scout_has_one_shared_expert_per_layer() -> None:
    arch = _arch("llama-4-scout-17b-16e-instruct")
    assert arch.moe is not None
    assert arch.moe.shared_intermediate_size == 8192
    counts = param_counts(arch)
    assert counts.shared_experts == 48 * 3 * 5120 * 8192
    assert counts.active == pytest.approx(17e9, rel=0.02)


def test_llama4_chunked_layers_count_as_full_in_the_kv_cache() -> None:
    arch = _arch("llama-4-scout-17b-16e-instruct")
    assert arch.layer_kinds.count(CHUNKED) == 36
    assert [i for i, kind in enumerate(arch.layer_kinds) if kind == FULL][:3] == [3, 7, 11]
    assert arch.attention_chunk_size == 8192
    assert kv_cache_shape(arch).full_layers == 48


# --- DeepSeek-V3.2's indexer, MTP layers ---------------------------------------------------------


def test_deepseek_v32_indexer_params_and_kv_bytes() -> None:
    v32 = _arch("deepseek-v3.2")
    v31 = _arch("deepseek-v3.1")
    assert v32.indexer is not None
    assert v31.indexer is None
    per_layer = 1536 * 64 * 128 + 7168 * 128 + 7168 * 64 + 2 * 128
    assert param_counts(v32).total - param_counts(v31).total == 61 * per_layer
    assert kv_cache_shape(v32).bytes_per_token_per_layer == 576 * 2 + 128 + 4
    assert kv_cache_shape(v32, "fp8").bytes_per_token_per_layer == 656 + 128 + 4
    assert kv_cache_shape(v31).bytes_per_token_per_layer == 576 * 2


def test_mtp_layers_are_recorded_but_not_counted() -> None:
    config = _catalog("deepseek-v3")
    arch = parse_config(config)
    assert arch.mtp_layers == 1
    without = parse_config({k: v for k, v in config.items() if k != "num_nextn_predict_layers"})
    assert param_counts(arch).total == param_counts(without).total


# --- configs the calculators cannot read are refused ---------------------------------------------


def test_unknown_model_type_is_read_generically_and_the_plan_says_so() -> None:
    arch = parse_config(tiny_llama(model_type="falcon_h9"))
    known = parse_config(tiny_llama())
    assert param_counts(arch).total == param_counts(known).total
    assert arch.reading_notes
    assert "'falcon_h9' is not one the calculators know" in (arch.reading_notes[0])
    plan = plan_vllm(arch, VllmSettings(gpu_memory_bytes=24 * GIB, max_model_len=4096))
    assert plan.notes[0] == arch.reading_notes[0]
    assert not parse_config(tiny_llama()).reading_notes


@pytest.mark.parametrize(
    "key", ["hybrid_override_pattern", "mamba_d_state", "ssm_state_size", "num_kv_shared_layers"]
)
def test_unknown_model_type_with_an_unmodelled_mechanism_is_refused_naming_it(key: str) -> None:
    with pytest.raises(ConfigError, match=rf"^{key}: model_type 'falcon_h9' is not one"):
        parse_config(tiny_llama(model_type="falcon_h9", **{key: 4}))


def test_deepseek_v4_is_read_through_its_own_fields_never_as_mla() -> None:
    # DeepSeek-V4's compressed sparse attention (compress_ratios per layer, hc_mult, o_lora_rank)
    # is read by calculators.deepseek_v4: a config without the fields it needs is refused naming
    # the first missing one, never planned as plain attention or MLA.
    config = tiny_llama(
        model_type="deepseek_v4", compress_ratios=[0, 0, 4, 128], hc_mult=4, o_lora_rank=1024
    )
    with pytest.raises(ConfigError, match=r"^n_routed_experts: required field missing"):
        parse_config(config)


def test_missing_model_type_is_an_error() -> None:
    with pytest.raises(ConfigError, match=r"^model_type: required field missing"):
        parse_config(tiny_llama(model_type=None))


def test_unknown_model_type_inside_text_config_names_the_path() -> None:
    text = tiny_llama(model_type="mystery_text", mamba_expand=2)
    with pytest.raises(ConfigError, match=r"^text_config\.mamba_expand: model_type 'mystery_text'"):
        parse_config({"model_type": "wrapper", "text_config": text})


@pytest.mark.parametrize("key", ["num_experts_per_group", "moe_shared_width", "router_hidden_size"])
def test_unread_moe_key_is_an_error_naming_it(key: str) -> None:
    with pytest.raises(ConfigError, match=rf"^{key}: a mixture-of-experts setting"):
        parse_config(tiny_llama(num_local_experts=8, num_experts_per_tok=2, **{key: 4}))


def test_unknown_layer_kind_is_an_error_naming_its_index() -> None:
    kinds = ["full_attention", "full_attention", "retention", "full_attention"]
    with pytest.raises(ConfigError, match=r"^layer_types\[2\]: unknown layer kind 'retention'"):
        parse_config(tiny_llama(layer_types=kinds, sliding_window=128))


def test_jamba_bad_attention_offset_is_an_error() -> None:
    with pytest.raises(ConfigError, match="attn_layer_offset"):
        parse_config({**_jamba(), "attn_layer_offset": 9})
