"""The model families vLLM serves that the calculators read through another family's layout or
generically: Qwen3.5 and Qwen3-VL (with their vision towers), Qwen2.5-VL, GLM-5 (MLA with the
sparse indexer), MiniMax-M2, Pixtral-based Mistral models, and an unknown model type.

Published totals are the model pages' counts: Qwen2.5-VL-7B-Instruct 8.29B (its config's text and
vision shapes are written out below), Mistral-Small-3.1-24B 24.0B.
"""

from typing import Any

import pytest

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.param_count import param_counts
from infermeter.calculators.quantization import weight_bytes, weight_format
from infermeter.calculators.vllm_plan import plan_vllm
from infermeter.calculators.vllm_settings import GIB, VllmSettings
from infermeter.registry.catalog import load_models

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


# Qwen2-VL's vision_config names its width embed_dim and its MLP mlp_ratio; hidden_size is the
# merger's output (the text width). The 7B's tower as a printed module tree shows it
# (https://github.com/zhenhua32/Qwen2-VL/blob/main/READ.md): 32 LayerNorm blocks of 1280, qkv 3840
# and proj with biases, fc1 5120 / fc2 with biases, a bias-free Conv3d (3 x 2 x 14 x 14), a
# LayerNorm merger 5120 -> 5120 -> 3584.
QWEN2_VL_VISION = {
    "depth": 32,
    "embed_dim": 1280,
    "mlp_ratio": 4,
    "num_heads": 16,
    "in_chans": 3,
    "hidden_size": 3584,
    "patch_size": 14,
    "spatial_merge_size": 2,
    "temporal_patch_size": 2,
}
QWEN2_VL_2B: dict[str, Any] = {
    "model_type": "qwen2_vl",
    "hidden_size": 1536,
    "intermediate_size": 8960,
    "num_hidden_layers": 28,
    "num_attention_heads": 12,
    "num_key_value_heads": 2,
    "vocab_size": 151936,
    "tie_word_embeddings": True,
    "max_position_embeddings": 32768,
    "vision_config": {**QWEN2_VL_VISION, "hidden_size": 1536},
}


def test_qwen2_vl_tower_is_read_from_embed_dim_and_mlp_ratio() -> None:
    seven_b = {**QWEN2_5_VL_7B, "model_type": "qwen2_vl", "vision_config": QWEN2_VL_VISION}
    attention = 3 * 1280 * 1280 + 3 * 1280 + 1280 * 1280 + 1280
    block = 4 * 1280 + attention + 2 * 1280 * 5120 + 5120 + 1280
    merger = 2 * 1280 + 5120 * 5120 + 5120 + 5120 * 3584 + 3584
    assert parse_config(seven_b).vision_params == 32 * block + 3 * 2 * 14 * 14 * 1280 + merger
    with pytest.raises(ConfigError, match=r"vision_config\.mlp_ratio"):
        parse_config({**seven_b, "vision_config": {**QWEN2_VL_VISION, "mlp_ratio": "4"}})


def test_qwen2_vl_2b_weights_match_a_vllm_0_10_2_log() -> None:
    # https://github.com/mrpid12org/imageworks/blob/229b9475de9abcc7caf5d28739f1852657a8226b/vllm_server.log:
    # Qwen2-VL-2B-Instruct (BF16), vLLM 0.10.2, "Model loading took 4.1513 GiB".
    settings = VllmSettings(int(15.99 * GIB), vllm_version="0.10.2")
    plan = plan_vllm(parse_config(QWEN2_VL_2B), settings)
    assert plan.weights_bytes / GIB == pytest.approx(4.1513, rel=0.03)


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


# --- Mamba-2 hybrids: Nemotron-H and Granite 4.0-H ------------------------------------------------

# NVIDIA-Nemotron-Nano-9B-v2's shapes (its model page counts 8.89B parameters).
NEMOTRON_NANO_9B_V2: dict[str, Any] = {
    "model_type": "nemotron_h",
    "num_hidden_layers": 56,
    "hidden_size": 4480,
    "intermediate_size": 15680,
    "num_attention_heads": 40,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "vocab_size": 131072,
    "hybrid_override_pattern": "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-",
    "ssm_state_size": 128,
    "conv_kernel": 4,
    "n_groups": 8,
    "mamba_num_heads": 128,
    "mamba_head_dim": 80,
    "tie_word_embeddings": False,
    "max_position_embeddings": 131072,
}


def test_nemotron_h_single_purpose_layers_make_8_89b() -> None:
    arch = parse_config(NEMOTRON_NANO_9B_V2)
    assert param_counts(arch).total == pytest.approx(8.89e9, rel=0.005)
    assert arch.layer_kinds.count("mamba2") == 27
    assert arch.layer_kinds.count("full") == 4
    assert arch.layer_kinds.count("mlp") == 25


def test_nemotron_h_keeps_kv_in_4_layers_and_a_mamba2_state_in_27() -> None:
    kv = kv_cache_shape(parse_config(NEMOTRON_NANO_9B_V2))
    assert kv.full_layers == 4
    assert kv.state_layers == 27
    # conv window: (10240 inner + 2 x 8 groups x 128) x 3 steps; SSM: 128 heads x 80 x 128; bf16.
    assert kv.state_bytes_per_sequence_per_layer == ((10240 + 2048) * 3 + 128 * 80 * 128) * 2


def test_nemotron_h_unknown_layer_letter_is_refused_naming_its_index() -> None:
    pattern = "X" + NEMOTRON_NANO_9B_V2["hybrid_override_pattern"][1:]
    with pytest.raises(ConfigError, match=r"^hybrid_override_pattern\[0\]: layer kind 'X'"):
        parse_config({**NEMOTRON_NANO_9B_V2, "hybrid_override_pattern": pattern})


# A Nemotron-H MoE layout (the keys vLLM's NemotronHMoE reads; sizes chosen for the arithmetic):
# E layers are a router, squared-ReLU experts of up and down only, and shared experts.
NEMOTRON_H_MOE: dict[str, Any] = {
    **NEMOTRON_NANO_9B_V2,
    "num_hidden_layers": 6,
    "hybrid_override_pattern": "ME*EME",
    "n_routed_experts": 16,
    "num_experts_per_tok": 4,
    "moe_intermediate_size": 512,
    "n_shared_experts": 2,
    "moe_shared_expert_intermediate_size": 1024,
}


def test_nemotron_h_moe_layers_hold_two_matrix_experts_and_no_kv_or_state() -> None:
    arch = parse_config(NEMOTRON_H_MOE)
    assert arch.layer_kinds == ("mamba2", "mlp", "full", "mlp", "mamba2", "mlp")
    assert arch.moe is not None
    assert arch.moe.moe_layers == (1, 3, 5)
    assert arch.moe.shared_intermediate_size == 2 * 1024
    counts = param_counts(arch)
    hidden = NEMOTRON_H_MOE["hidden_size"]
    # vLLM's FusedMoE with activation_without_mul: up (hidden x 512) and down per expert.
    assert counts.experts == 3 * 16 * 2 * hidden * 512
    assert counts.experts_active == 3 * 4 * 2 * hidden * 512
    assert counts.shared_experts == 3 * 2 * hidden * 2048
    kv = kv_cache_shape(arch)
    assert kv.full_layers == 1
    assert kv.state_layers == 2


def test_nemotron_h_latent_moe_experts_work_in_the_latent_width() -> None:
    arch = parse_config({**NEMOTRON_H_MOE, "moe_latent_size": 256})
    counts = param_counts(arch)
    hidden = NEMOTRON_H_MOE["hidden_size"]
    assert counts.experts == 3 * 16 * 2 * 256 * 512
    # The shared experts stay at the hidden width; the two latent projections are replicated.
    assert counts.shared_experts == 3 * (2 * hidden * 2048 + 2 * hidden * 256)


def test_granite_4_h_mamba_layers_are_mamba2_and_its_mlp_is_the_shared_one() -> None:
    config: dict[str, Any] = {
        "model_type": "granitemoehybrid",
        "num_hidden_layers": 4,
        "hidden_size": 1024,
        "intermediate_size": 512,
        "shared_intermediate_size": 2048,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "vocab_size": 1000,
        "num_local_experts": 0,
        "layer_types": ["mamba", "mamba", "mamba", "attention"],
        "mamba_n_heads": 32,
        "mamba_d_head": 64,
        "mamba_n_groups": 1,
        "mamba_d_state": 128,
        "mamba_d_conv": 4,
    }
    arch = parse_config(config)
    assert arch.layer_kinds == ("mamba2", "mamba2", "mamba2", "full")
    assert arch.intermediate_size == 2048
    assert param_counts(arch).dense_mlp == 4 * 3 * 1024 * 2048
    moe = parse_config({**config, "num_local_experts": 8, "num_experts_per_tok": 2}).moe
    assert moe is not None
    assert moe.expert_intermediate_size == 512
    assert moe.shared_intermediate_size == 2048


# Falcon-H1-1.5B's shapes (its model page counts 1.55B parameters).
FALCON_H1_1_5B: dict[str, Any] = {
    "model_type": "falcon_h1",
    "num_hidden_layers": 24,
    "hidden_size": 2048,
    "intermediate_size": 4608,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "head_dim": 128,
    "vocab_size": 65537,
    "mamba_d_state": 256,
    "mamba_d_conv": 4,
    "mamba_n_groups": 1,
    "mamba_n_heads": 48,
    "mamba_d_head": 64,
    "mamba_d_ssm": 3072,
    "tie_word_embeddings": False,
    "max_position_embeddings": 131072,
}


def test_falcon_h1_runs_attention_and_mamba2_in_every_layer() -> None:
    arch = parse_config(FALCON_H1_1_5B)
    assert param_counts(arch).total == pytest.approx(1.55e9, rel=0.01)
    kv = kv_cache_shape(arch)
    assert kv.full_layers == 24
    assert kv.state_layers == 24


# Gemma 4 26B-A4B's text shapes as its config states them (Google counts 25.2B parameters, 3.8B
# active, for the language model).
GEMMA4_26B_A4B: dict[str, Any] = {
    "model_type": "gemma4_text",
    "hidden_size": 2816,
    "num_hidden_layers": 30,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "num_global_key_value_heads": 2,
    "attention_k_eq_v": True,
    "head_dim": 256,
    "global_head_dim": 512,
    "intermediate_size": 2112,
    "enable_moe_block": True,
    "moe_intermediate_size": 704,
    "num_experts": 128,
    "top_k_experts": 8,
    "sliding_window": 1024,
    "vocab_size": 262144,
    "max_position_embeddings": 262144,
    "layer_types": (["sliding_attention"] * 5 + ["full_attention"]) * 5,
    "hidden_activation": "gelu_pytorch_tanh",
}


def test_gemma4_moe_block_beside_the_dense_mlp_makes_25_2b_and_3_8b_active() -> None:
    counts = param_counts(parse_config(GEMMA4_26B_A4B))
    assert counts.total == pytest.approx(25.2e9, rel=0.01)
    assert counts.active == pytest.approx(3.8e9, rel=0.02)
    assert counts.dense_mlp == 30 * 3 * 2816 * 2112


def test_gemma4_full_layers_store_their_own_head_size_and_take_larger_blocks() -> None:
    arch = parse_config(GEMMA4_26B_A4B)
    kv = kv_cache_shape(arch)
    assert kv.bytes_per_token_per_layer == 2 * 8 * 256 * 2  # sliding: 8 KV heads of 256
    assert kv.full_bytes_per_token_per_layer == 2 * 2 * 512 * 2  # full: K = V, 2 heads of 512
    plan = plan_vllm(
        arch,
        VllmSettings(gpu_memory_bytes=80 * GIB, max_model_len=131072, max_num_batched_tokens=8192),
    )
    # One page (16 sliding tokens x 8 KiB) for both kinds: a full-attention block holds 32
    # tokens (vLLM's unify_kv_cache_spec_page_size), so a request takes 131072 / 32 full blocks;
    # 5 layers per group: 1 full group, 5 sliding groups of (1023 + 8192) / 16 + 1 blocks.
    full_blocks = 131072 // 32
    sliding_blocks = 5 * (-(-(1023 + 8192) // 16) + 1)
    page = 16 * 8192
    assert plan.request_bytes_at_max_model_len == (full_blocks + sliding_blocks) * 5 * page


def test_gemma4_kv_shared_layers_hold_no_cache_and_per_layer_embeddings_count() -> None:
    small = {
        **GEMMA4_26B_A4B,
        "enable_moe_block": False,
        "num_kv_shared_layers": 12,
        "hidden_size_per_layer_input": 256,
        "vocab_size_per_layer_input": 262144,
    }
    arch = parse_config(small)
    kv = kv_cache_shape(arch)
    assert kv.full_layers + kv.sliding_layers == 18
    with_ple = param_counts(arch).embedding
    assert with_ple == 262144 * 2816 + 262144 * 30 * 256


# Kimi K2.5 (aiconfigurator's copy of moonshotai/Kimi-K2.5's config: Kimi K2's language model and a
# MoonViT tower whose fields are spelled vt_*): about 1T parameters, 32B active, as published.
KIMI_K25_VISION = {
    "vt_num_hidden_layers": 27,
    "vt_hidden_size": 1152,
    "vt_intermediate_size": 4304,
    "patch_size": 14,
}


def test_kimi_k25_reads_as_kimi_k2_and_counts_its_vt_spelled_vision_tower() -> None:
    config = {**dict(MODELS["kimi-k2-instruct"].config), "model_type": "kimi_k25"}
    without = parse_config(config)
    arch = parse_config({**config, "vision_config": KIMI_K25_VISION})
    assert without.mla is not None
    assert not without.reading_notes  # a known type, not read generically
    assert 0.3e9 < arch.vision_params < 0.5e9
    assert "generic ViT" in arch.reading_notes[0]


def test_a_vision_config_with_no_readable_shape_is_not_counted_and_the_plan_says_so() -> None:
    config = {**dict(MODELS["kimi-k2-instruct"].config), "vision_config": {"patch_size": 14}}
    arch = parse_config(config)
    assert arch.vision_params == 0
    assert "is not counted" in arch.reading_notes[0]


def test_step_3_shared_expert_width_is_read_not_refused() -> None:
    config = {
        "model_type": "step3p7",
        "hidden_size": 1024,
        "num_hidden_layers": 4,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "head_dim": 128,
        "intermediate_size": 4096,
        "vocab_size": 1000,
        "num_experts": 16,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 512,
        "share_expert_dim": 512,
    }
    moe = parse_config(config).moe
    assert moe is not None
    assert moe.shared_intermediate_size == 512
