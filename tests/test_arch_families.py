"""The model families vLLM serves that the calculators read through another family's layout or
generically: Qwen3.5 and Qwen3-VL (with their vision towers), Qwen2.5-VL, GLM-5 (MLA with the
sparse indexer), MiniMax-M2, Pixtral-based Mistral models, and an unknown model type.

Published totals are the model pages' counts: Qwen2.5-VL-7B-Instruct 8.29B (its config's text and
vision shapes are written out below), Mistral-Small-3.1-24B 24.0B.
"""

from typing import Any

import pytest

from calculators.arch import param_counts, parse_config
from calculators.kv_cache import kv_cache_shape
from calculators.quantization import weight_bytes, weight_format
from registry.catalog import load_models

MODELS = load_models()

QWEN2_5_VL_7B: dict[str, Any] = {
    "model_type": "qwen2_5_vl",
    "hidden_size": 3584,
    "intermediate_size": 18944,
    "num_hidden_layers": 28,
    "num_attention_heads": 28,
    "num_key_value_heads": 4,
    "vocab_size": 152064,
    "tie_word_embeddings": False,
    "max_position_embeddings": 128000,
    "vision_config": {
        "depth": 32,
        "hidden_size": 1280,
        "intermediate_size": 3420,
        "out_hidden_size": 3584,
        "patch_size": 14,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "in_chans": 3,
    },
}
MISTRAL_SMALL_3_1: dict[str, Any] = {
    "model_type": "mistral3",
    "spatial_merge_size": 2,
    "text_config": {
        "model_type": "mistral",
        "hidden_size": 5120,
        "intermediate_size": 32768,
        "num_hidden_layers": 40,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "vocab_size": 131072,
        "max_position_embeddings": 131072,
    },
    "vision_config": {
        "model_type": "pixtral",
        "hidden_size": 1024,
        "intermediate_size": 4096,
        "num_hidden_layers": 24,
        "patch_size": 14,
        "num_channels": 3,
    },
}


def test_qwen2_5_vl_top_level_text_with_its_vision_tower_is_8_29b() -> None:
    counts = param_counts(parse_config(QWEN2_5_VL_7B))
    assert counts.total == pytest.approx(8.29e9, rel=0.005)
    assert 0.6e9 < counts.vision < 0.75e9


def test_mistral_small_3_1_pixtral_tower_and_projector_make_24b() -> None:
    counts = param_counts(parse_config(MISTRAL_SMALL_3_1))
    assert counts.total == pytest.approx(24.0e9, rel=0.01)
    assert 0.35e9 < counts.vision < 0.5e9


@pytest.mark.parametrize("model_id", ["qwen3.5-397b-a17b", "qwen3-vl-235b-a22b-thinking"])
def test_qwen_vision_towers_are_counted_and_kept_unquantized(model_id: str) -> None:
    arch = parse_config(dict(MODELS[model_id].config))
    assert arch.vision_params > 0.4e9
    fp8 = weight_format(arch, "fp8")
    assert "vision" not in fp8.quantized_roles
    assert weight_bytes(arch, fp8).by_role["vision"] == 2 * arch.vision_params


def test_qwen3_vl_deepstack_mergers_take_the_transformers_default() -> None:
    config = dict(MODELS["qwen3-vl-235b-a22b-thinking"].config)
    vision = {**config["vision_config"], "deepstack_visual_indexes": []}
    with_none = {**config, "vision_config": vision}
    assert parse_config(config).vision_params > parse_config(with_none).vision_params


def test_qwen3_5_is_a_gated_delta_net_hybrid_with_a_state_per_sequence() -> None:
    arch = parse_config(dict(MODELS["qwen3.5-397b-a17b"].config))
    assert arch.num_full_layers == 15
    assert arch.num_state_layers == 45
    assert arch.attention_output_gate
    kv = kv_cache_shape(arch)
    assert kv.full_layers == 15
    assert kv.state_layers == 45
    # Two KV heads of 256 in bf16 for K and V.
    assert kv.bytes_per_token_per_layer == 2 * 2 * 256 * 2


def test_glm_5_reads_as_mla_with_the_sparse_indexer() -> None:
    arch = parse_config(dict(MODELS["glm-5"].config))
    assert arch.mla is not None
    assert arch.indexer is not None
    assert arch.indexer.num_heads == 32
    # (512 + 64) bf16 latent + the indexer's 128 fp8 keys and one float32 scale.
    assert kv_cache_shape(arch).bytes_per_token_per_layer == 576 * 2 + 128 + 4


def test_minimax_m2_experts_take_intermediate_size_and_the_router_stays_bf16() -> None:
    arch = parse_config(dict(MODELS["minimax-m2"].config))
    assert arch.moe is not None
    assert arch.moe.expert_intermediate_size == 1536
    assert arch.qk_norm
    assert arch.mtp_layers == 3
    fmt = weight_format(arch)
    assert fmt.method == "fp8"
    assert "router" not in fmt.quantized_roles
