"""Families vLLM serves whose configs name their shape differently (GPT-2, BLOOM, TeleChat2, DBRX)
or whose mixture of experts has its own keys (ERNIE 4.5, HY-V3, LongCat-Flash, Step 3, Ling,
Sarvam, Param2, Cohere2-MoE): read by name (calculators.config_aliases), counted as vLLM 0.29.0's
modules hold them, and held to the stated sizes where a public config gives the shape.

Configs: the defaults of transformers 5.24.0's config classes, whose docstrings name a checkpoint
(GPT2Config: openai-community/gpt2; LongcatFlashConfig: meituan-longcat/LongCat-Flash-Chat;
Ernie4_5_MoeConfig: baidu/ERNIE-4.5-21B-A3B-PT; SarvamMLAConfig: sarvamai/sarvam-105b), and of
vLLM 0.29.0's HYV3Config (vllm/transformers_utils/configs/hy_v3.py) and Step3TextConfig
(step3_vl.py). A config class's defaults are not always its checkpoint's config.json (Gemma 4's
and Falcon-H1's are not), so they stand for it only where the count meets the stated size;
Hy3-preview's and Step 3's sizes were not found, so theirs are pinned, not checked. Also
bigscience/bloom-560m's config.json, and mlx-community/dbrx-instruct-4bit's as a public test
reproduces it. Stated sizes: GPT-2 "124M" (openai/gpt-2's model
names; 124,439,808 as transformers counts it), BLOOM-560m 559,214,592 (transformers' count, as
public runs print it, e.g. PEFT's "all params"), DBRX 132B total / 36B active (databricks/dbrx
MODEL_CARD_dbrx_instruct.md at 0edd966), LongCat-Flash 560B (its model card), ERNIE 4.5 21B-A3B
and Sarvam 105B (the names).
"""

from typing import Any

import pytest

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.decode_batch import DecodeBatch
from infermeter.calculators.decode_reads import bytes_per_touched_param
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.parallel import ParallelLayout
from infermeter.calculators.param_count import param_counts
from infermeter.calculators.pipeline_stages import pipeline_step
from infermeter.calculators.quantization import weight_bytes, weight_format
from infermeter.calculators.roofline import decode_tokens_per_second_bound
from infermeter.calculators.vllm_plan import plan_vllm
from infermeter.calculators.vllm_settings import GIB, VllmSettings

GPT2: dict[str, Any] = {
    "model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "n_positions": 1024,
    "n_ctx": 1024, "n_inner": None, "vocab_size": 50257, "activation_function": "gelu_new",
}  # fmt: skip
BLOOM_560M: dict[str, Any] = {
    "model_type": "bloom", "hidden_size": 1024, "n_head": 16, "n_layer": 24, "n_inner": None,
    "vocab_size": 250880, "layer_norm_epsilon": 1e-05,
    "apply_residual_connection_post_layernorm": False,
}  # fmt: skip
DBRX_INSTRUCT: dict[str, Any] = {
    "model_type": "dbrx", "d_model": 6144, "n_heads": 48, "n_layers": 40, "max_seq_len": 32768,
    "vocab_size": 100352, "tie_word_embeddings": False, "output_router_logits": False,
    "router_aux_loss_coef": 0.05,
    "attn_config": {"clip_qkv": 8, "kv_n_heads": 8, "rope_theta": 500000},
    "ffn_config": {"ffn_hidden_size": 10752, "moe_num_experts": 16, "moe_top_k": 4,
                   "moe_jitter_eps": 0, "moe_loss_weight": 0.05},
}  # fmt: skip
LONGCAT_FLASH: dict[str, Any] = {
    "model_type": "longcat_flash", "hidden_size": 6144, "num_layers": 28,
    "num_attention_heads": 64, "vocab_size": 131072, "max_position_embeddings": 131072,
    "ffn_hidden_size": 12288, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64, "v_head_dim": 128, "moe_topk": 12, "n_routed_experts": 512,
    "zero_expert_num": 256, "expert_ffn_hidden_size": 2048, "routed_scaling_factor": 6.0,
}  # fmt: skip
ERNIE_4_5_21B: dict[str, Any] = {
    "model_type": "ernie4_5_moe", "hidden_size": 2560, "intermediate_size": 12288,
    "num_hidden_layers": 28, "num_attention_heads": 20, "num_key_value_heads": 4,
    "vocab_size": 103424, "max_position_embeddings": 131072, "moe_intermediate_size": 1536,
    "moe_k": 6, "moe_num_experts": 64, "moe_num_shared_experts": 2, "moe_layer_start_index": 1,
    "moe_layer_end_index": -1, "moe_layer_interval": 1, "moe_norm_min": 1e-12,
}  # fmt: skip
SARVAM_105B: dict[str, Any] = {
    "model_type": "sarvam_mla", "hidden_size": 4096, "intermediate_size": 16384,
    "moe_intermediate_size": 2048, "num_hidden_layers": 32, "num_attention_heads": 64,
    "n_shared_experts": 1, "n_routed_experts": 128, "num_experts_per_tok": 8,
    "kv_lora_rank": 512, "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128,
    "first_k_dense_replace": 1, "vocab_size": 262144, "max_position_embeddings": 4096,
}  # fmt: skip
HY3_PREVIEW: dict[str, Any] = {
    "model_type": "hy_v3", "vocab_size": 120832, "hidden_size": 4096, "intermediate_size": 13312,
    "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8,
    "head_dim": 128, "num_experts": 192, "num_experts_per_tok": 8, "num_shared_experts": 1,
    "expert_hidden_dim": 1536, "first_k_dense_replace": 1, "qk_norm": True,
    "moe_router_enable_expert_bias": True, "route_norm": True,
}  # fmt: skip
STEP3: dict[str, Any] = {
    "model_type": "step3_text", "hidden_size": 7168, "intermediate_size": 18432,
    "num_attention_heads": 64, "num_attention_groups": 1, "num_hidden_layers": 61,
    "max_seq_len": 65536, "max_position_embedding": 65536, "vocab_size": 128815,
    "moe_intermediate_size": 5120, "moe_num_experts": 48, "moe_top_k": 3,
    "share_expert_dim": 5120, "share_q_dim": 2048, "head_dim": 256, "norm_expert_weight": False,
    "moe_layers_enum": ",".join(str(i) for i in range(4, 60)),
}  # fmt: skip


def _counts(config: dict[str, Any]) -> tuple[float, float]:
    counts = param_counts(parse_config(config))
    return counts.total / 1e9, counts.active / 1e9


def test_gpt2_reads_n_embd_and_counts_learned_positions_exactly() -> None:
    arch = parse_config(GPT2)
    assert (arch.hidden_size, arch.num_layers, arch.intermediate_size) == (768, 12, 3072)
    assert param_counts(arch).total == 124_439_808
    # The learned positions are replicated on every rank: a TP-2 shard holds all 1,024 rows.
    assert param_counts(arch, 2).embedding == -(-50257 // 2) * 768 + 1024 * 768
    # No rotary embedding, so no cos/sin cache beside the weights (gpt2.py builds none).
    assert weight_bytes(arch, weight_format(arch)).rotary_cache_bytes == 0


def test_bloom_560m_counts_its_embedding_layernorm_and_biases_exactly() -> None:
    assert param_counts(parse_config(BLOOM_560M)).total == 559_214_592


def test_telechat2_keeps_o_proj_and_down_proj_biases_only() -> None:
    config = {
        "model_type": "telechat", "hidden_size": 1024, "n_layer": 2, "n_head": 8,
        "ffn_hidden_size": 4096, "vocab_size": 1000, "tie_word_embeddings": False,
    }  # fmt: skip
    arch = parse_config(config)
    assert (arch.num_layers, arch.num_attention_heads, arch.intermediate_size) == (2, 8, 4096)
    llama = {**config, "model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 8,
             "intermediate_size": 4096}  # fmt: skip
    plain = param_counts(parse_config(llama))
    assert param_counts(arch).small - plain.small == 2 * (1024 + 1024)


def test_dbrx_reads_its_nested_blocks_and_makes_132b_with_36b_active() -> None:
    arch = parse_config(DBRX_INSTRUCT)
    assert (arch.hidden_size, arch.num_kv_heads, arch.max_position_embeddings) == (6144, 8, 32768)
    total, active = _counts(DBRX_INSTRUCT)
    assert total == pytest.approx(132, rel=0.01)
    assert active == pytest.approx(36, rel=0.02)


def test_longcat_flash_two_attention_blocks_per_layer_and_zero_experts_make_560b() -> None:
    arch = parse_config(LONGCAT_FLASH)
    assert arch.num_layers == 56
    assert arch.mla is not None
    assert arch.moe is not None
    assert arch.moe.zero_experts == 256
    assert len(arch.moe.moe_layers) == 28
    # 56 MLA caches (one per attention block): 576 values a token each.
    assert kv_cache_shape(arch).bytes_per_token == 56 * 576 * 2
    total, _active = _counts(LONGCAT_FLASH)
    assert total == pytest.approx(560, rel=0.005)
    assert "two attention blocks" in arch.reading_notes[0]


def test_ernie_4_5_moe_layers_from_start_end_interval_make_21b_a3b() -> None:
    arch = parse_config(ERNIE_4_5_21B)
    assert arch.moe is not None
    assert arch.moe.moe_layers == tuple(range(1, 28))
    assert arch.moe.shared_intermediate_size == 2 * 1536
    assert arch.tie_word_embeddings  # Ernie4_5_MoeConfig's default
    total, active = _counts(ERNIE_4_5_21B)
    assert total == pytest.approx(21, rel=0.05)
    assert active == pytest.approx(3, rel=0.15)


def test_sarvam_105b_is_mla_with_a_dense_first_layer() -> None:
    arch = parse_config(SARVAM_105B)
    assert arch.moe is not None
    assert arch.moe.moe_layers == tuple(range(1, 32))
    total, _active = _counts(SARVAM_105B)
    assert total == pytest.approx(105, rel=0.015)


def test_hy_v3_experts_take_expert_hidden_dim_and_qk_norm() -> None:
    arch = parse_config(HY3_PREVIEW)
    assert arch.moe is not None
    assert arch.moe.expert_intermediate_size == 1536
    assert arch.qk_norm
    assert arch.moe.router_bias
    total, active = _counts(HY3_PREVIEW)
    assert (round(total, 1), round(active, 1)) == (295.0, 20.7)


def test_step3_shared_query_attention_and_listed_moe_layers() -> None:
    arch = parse_config(STEP3)
    assert arch.moe is not None
    assert arch.moe.moe_layers == tuple(range(4, 60))
    assert (arch.num_kv_heads, arch.head_dim, arch.shared_q_dim) == (1, 256, 2048)
    assert not arch.tie_word_embeddings
    assert kv_cache_shape(arch).bytes_per_token == 61 * 2 * 256 * 2
    attention = param_counts(arch).attention // 61
    assert attention == 7168 * (2048 + 512) + 2048 * 64 * 256 + 64 * 256 * 7168
    with pytest.raises(ConfigError, match=r"^moe_layers_enum: expected comma-separated"):
        parse_config({**STEP3, "moe_layers_enum": "4,five"})


_LING: dict[str, Any] = {
    "model_type": "bailing_moe_v2", "hidden_size": 1024, "intermediate_size": 4096,
    "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128,
    "vocab_size": 1000, "num_experts": 16, "num_experts_per_tok": 4, "num_shared_experts": 2,
    "moe_intermediate_size": 256, "moe_shared_expert_intermediate_size": 512,
    "first_k_dense_replace": 1, "use_qk_norm": True, "moe_router_enable_expert_bias": True,
}  # fmt: skip


@pytest.mark.parametrize(
    ("model_type", "shared"),
    [("bailing_moe_v2", 2 * 512), ("sarvam_moe", 2 * 512), ("param2moe", 512)],
)
def test_shared_expert_width_as_each_module_builds_it(model_type: str, shared: int) -> None:
    # bailing_moe.py and sarvam.py multiply by num_shared_experts; param2moe.py's width is the
    # total already.
    arch = parse_config({**_LING, "model_type": model_type})
    assert arch.moe is not None
    assert arch.moe.shared_intermediate_size == shared
    assert arch.moe.moe_layers == (1, 2, 3)


def test_cohere2_moe_dense_prefix_sliding_layers_and_shared_experts() -> None:
    config = {
        "model_type": "cohere2_moe", "hidden_size": 1024, "intermediate_size": 512,
        "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2,
        "head_dim": 128, "vocab_size": 1000, "num_experts": 8, "num_experts_per_tok": 2,
        "num_shared_experts": 2, "shared_expert_combination_strategy": "average",
        "mlp_layer_types": ["dense", "sparse", "sparse", "sparse"],
        "prefix_dense_intermediate_size": 2048, "sliding_window": 4096,
        "layer_types": ["sliding_attention"] * 3 + ["full_attention"],
    }  # fmt: skip
    arch = parse_config(config)
    assert arch.moe is not None
    assert arch.moe.moe_layers == (1, 2, 3)
    assert arch.moe.shared_intermediate_size == 2 * 512
    assert arch.intermediate_size == 2048
    assert arch.norms_per_layer == 1
    assert arch.num_sliding_layers == 3
    assert arch.tie_word_embeddings


def test_step3p5_sliding_layers_take_their_own_heads_and_a_gate_per_head() -> None:
    config = {
        "model_type": "step3p5", "hidden_size": 1024, "num_hidden_layers": 4,
        "num_attention_heads": 8, "num_attention_groups": 2, "head_dim": 128,
        "intermediate_size": 4096, "vocab_size": 1000, "moe_num_experts": 8, "moe_top_k": 2,
        "moe_intermediate_size": 256, "moe_layers_enum": "2,3", "use_head_wise_attn_gate": True,
        "sliding_window": 512, "use_moe": True, "moe_every_n_layer": 1,
        # Longer than num_hidden_layers, as the checkpoint's (an MTP layer's entry).
        "layer_types": ["full_attention", "sliding_attention"] * 2 + ["full_attention"],
        "attention_other_setting": {
            "attention_type": "sliding_attention", "num_attention_heads": 16,
            "num_attention_groups": 4, "head_dim": 128,
        },
    }  # fmt: skip
    arch = parse_config(config)
    assert arch.num_sliding_layers == 2
    assert arch.moe is not None
    assert arch.moe.moe_layers == (2, 3)
    assert arch.moe.shared_intermediate_size == 256 * 2  # Step3p5Config: moe width × top-k
    assert arch.qk_norm
    full = 1024 * (8 * 128 + 8 + 2 * 2 * 128) + 8 * 128 * 1024
    sliding = 1024 * (16 * 128 + 16 + 2 * 4 * 128) + 16 * 128 * 1024
    assert param_counts(arch).attention == 2 * full + 2 * sliding
    # Without a window every layer attends fully (Step3p5Attention).
    assert parse_config({**config, "sliding_window": None}).num_sliding_layers == 0


_LING_2_5: dict[str, Any] = {
    "model_type": "bailing_moe_linear", "hidden_size": 1024, "intermediate_size": 4096,
    "num_hidden_layers": 8, "num_attention_heads": 8, "head_dim": 128, "vocab_size": 1000,
    "num_experts": 16, "num_experts_per_tok": 4, "num_shared_experts": 1,
    "moe_intermediate_size": 256, "moe_shared_expert_intermediate_size": 256,
    "first_k_dense_replace": 1, "layer_group_size": 4, "kv_lora_rank": 512,
    "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "use_qk_norm": True,
}  # fmt: skip


def test_ling_2_5_lightning_layers_keep_a_head_by_head_state_and_mla_the_rest() -> None:
    arch = parse_config(_LING_2_5)
    # bailing_moe_linear.py: every layer_group_size-th layer is MLA, the others linear.
    assert arch.layer_kinds.count("full") == 2
    assert arch.mla is not None
    kv = kv_cache_shape(arch, tensor_parallel_size=2)
    assert kv.full_layers == 2
    assert kv.bytes_per_token_per_layer == (512 + 64) * 2  # MLA's latent, replicated
    # 8 heads of 128 x 128 values, split over 2 ranks, in bf16.
    assert (kv.state_layers, kv.state_bytes_per_sequence_per_layer) == (6, 4 * 128 * 128 * 2)
    linear = param_counts(arch).attention - 2 * param_counts(parse_config(
        {**_LING_2_5, "layer_group_size": 1})).attention // 8  # fmt: skip
    assert linear == 6 * (1024 * 4 * 1024 + 1024 * 1024)  # q, k, v, g_proj; dense


@pytest.mark.parametrize(
    ("config", "tp", "pp"),
    [(GPT2, 4, 1), (BLOOM_560M, 4, 1), (DBRX_INSTRUCT, 8, 1), (LONGCAT_FLASH, 8, 2),
     (ERNIE_4_5_21B, 4, 1), (SARVAM_105B, 8, 1), (HY3_PREVIEW, 8, 1), (STEP3, 8, 1),
     (_LING, 4, 1), (_LING_2_5, 4, 1)],
    ids=lambda value: str(value["model_type"]) if isinstance(value, dict) else str(value),
)  # fmt: skip
def test_every_family_here_gets_a_vllm_plan(config: dict[str, Any], tp: int, pp: int) -> None:
    # One H200 (141 GiB) per rank; LongCat-Flash's 1.1 TB of bf16 weights take two nodes.
    settings = VllmSettings(
        gpu_memory_bytes=141 * GIB,
        tensor_parallel_size=tp,
        pipeline_parallel_size=pp,
        max_model_len=4096,
    )
    plan = plan_vllm(parse_config(config), settings)
    assert plan.kv_cache_bytes > 0


# Ungated MLPs that the generic reading would have taken as gated (a third more MLP weights):
# counted as transformers counts them, which public runs print (Pythia-410M 405,334,016;
# OPT-125m 125,239,296; Phi-2 2,779,683,840, the Hub's figure). Configs: EleutherAI/pythia-410m,
# facebook/opt-125m, microsoft/phi-2 (their shapes; GPTNeoXConfig/OPTConfig/PhiConfig defaults
# for the rest).
PYTHIA_410M: dict[str, Any] = {
    "model_type": "gpt_neox", "hidden_size": 1024, "num_hidden_layers": 24,
    "num_attention_heads": 16, "intermediate_size": 4096, "vocab_size": 50304,
    "max_position_embeddings": 2048, "rotary_pct": 0.25, "use_parallel_residual": True,
}  # fmt: skip
OPT_125M: dict[str, Any] = {
    "model_type": "opt", "hidden_size": 768, "ffn_dim": 3072, "num_hidden_layers": 12,
    "num_attention_heads": 12, "vocab_size": 50272, "max_position_embeddings": 2048,
    "word_embed_proj_dim": 768, "enable_bias": True, "do_layer_norm_before": True,
}  # fmt: skip
PHI_2: dict[str, Any] = {
    "model_type": "phi", "hidden_size": 2560, "intermediate_size": 10240,
    "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 51200,
    "max_position_embeddings": 2048, "partial_rotary_factor": 0.4,
}  # fmt: skip


@pytest.mark.parametrize(
    ("config", "total"),
    [(PYTHIA_410M, 405_334_016), (OPT_125M, 125_239_296), (PHI_2, 2_779_683_840)],
    ids=["pythia-410m", "opt-125m", "phi-2"],
)
def test_ungated_mlp_families_count_exactly(config: dict[str, Any], total: int) -> None:
    arch = parse_config(config)
    assert not arch.gated_mlp
    assert param_counts(arch).total == total


def test_opt_learned_positions_carry_its_offset_and_narrow_embeddings_are_refused() -> None:
    # OPTLearnedPositionalEmbedding: max_position_embeddings + 2 rows, replicated.
    assert parse_config(OPT_125M).position_embeddings == 2050
    with pytest.raises(ConfigError, match=r"^word_embed_proj_dim: embeddings narrower"):
        parse_config({**OPT_125M, "hidden_size": 1024, "word_embed_proj_dim": 512})


def test_nemotron_4_mlp_is_up_and_down_with_layernorm_biases() -> None:
    config = {
        "model_type": "nemotron", "hidden_size": 1024, "intermediate_size": 4096,
        "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 2,
        "head_dim": 128, "vocab_size": 1000,
    }  # fmt: skip
    counts = param_counts(parse_config(config))
    assert counts.dense_mlp == 2 * 2 * 1024 * 4096
    assert counts.small == 2 * 2 * 2 * 1024 + 2 * 1024  # LayerNorm1P weight + bias


# THUDM/glm-4-9b-chat's config.json (as a public fine-tuning log prints it; the HF page says
# 9.4B) and tiiuae/falcon-7b's shape (FalconConfig's defaults are Falcon-7B's; "7B").
GLM_4_9B_CHAT: dict[str, Any] = {
    "model_type": "chatglm", "add_bias_linear": False, "add_qkv_bias": True,
    "ffn_hidden_size": 13696, "hidden_size": 4096, "kv_channels": 128,
    "multi_query_attention": True, "multi_query_group_num": 2, "num_attention_heads": 32,
    "num_layers": 40, "padded_vocab_size": 151552, "post_layer_norm": True, "rmsnorm": True,
    "seq_length": 131072, "tie_word_embeddings": False, "original_rope": True, "rope_ratio": 500,
}  # fmt: skip
FALCON_7B: dict[str, Any] = {
    "model_type": "falcon", "hidden_size": 4544, "num_hidden_layers": 32,
    "num_attention_heads": 71, "vocab_size": 65024, "multi_query": True, "parallel_attn": True,
    "bias": False, "alibi": False, "new_decoder_architecture": False,
    "max_position_embeddings": 2048,
}  # fmt: skip


def test_chatglm_reads_its_megatron_names_and_grouped_kv_heads() -> None:
    arch = parse_config(GLM_4_9B_CHAT)
    assert (arch.num_layers, arch.num_kv_heads, arch.intermediate_size) == (40, 2, 13696)
    assert (arch.vocab_size, arch.max_position_embeddings) == (151552, 131072)
    assert arch.qkv_bias
    assert not arch.o_bias
    assert kv_cache_shape(arch).bytes_per_token == 40 * 2 * 2 * 128 * 2
    assert param_counts(arch).total == pytest.approx(9.4e9, rel=0.005)


def test_falcon_multi_query_parallel_block_and_a_4x_mlp() -> None:
    arch = parse_config(FALCON_7B)
    assert (arch.num_kv_heads, arch.norms_per_layer, arch.intermediate_size) == (1, 1, 4 * 4544)
    assert param_counts(arch).total == 6_921_720_704
    assert param_counts(arch).total == pytest.approx(7e9, rel=0.02)
    # The new decoder architecture (Falcon-40B/180B): num_kv_heads, ln_attn and ln_mlp.
    new = parse_config({**FALCON_7B, "new_decoder_architecture": True, "num_kv_heads": 71})
    assert (new.num_kv_heads, new.norms_per_layer) == (71, 2)


def test_longcat_flash_ngram_counts_its_hashed_ngram_tables() -> None:
    # Its config's num_hidden_layers counts attention blocks; vLLM builds num_layers layers.
    config = {
        **LONGCAT_FLASH, "model_type": "longcat_flash_ngram", "num_hidden_layers": 56,
        "ngram_vocab_size_ratio": 2, "emb_neighbor_num": 3, "emb_split_num": 2,
    }  # fmt: skip
    arch = parse_config(config)
    assert arch.num_layers == 56
    assert not any("generically" in note for note in arch.reading_notes)
    # 2 x 2 tables of 2 x 131072 + 2i + 1 rows, 6144 / 4 wide, each projected to 6144.
    tables = (4 * 2 * 131072 + 1 + 3 + 5 + 7) * 1536
    extra = param_counts(arch).embedding - param_counts(parse_config(LONGCAT_FLASH)).embedding
    assert extra == tables + 4 * 1536 * 6144
    sharded = (
        param_counts(arch, 8).embedding - param_counts(parse_config(LONGCAT_FLASH), 8).embedding
    )
    assert sharded == -(-tables // 8) + 4 * 1536 * 6144


def test_generic_reading_honours_mlp_layer_types_and_exaones_layer_count() -> None:
    # Mellum (mellum.py): an MoE only where mlp_layer_types says "sparse", a dense MLP elsewhere.
    mellum = {
        "model_type": "mellum", "hidden_size": 1024, "num_hidden_layers": 4,
        "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128,
        "intermediate_size": 4096, "moe_intermediate_size": 512, "vocab_size": 1000,
        "num_experts": 8, "num_experts_per_tok": 2,
        "mlp_layer_types": ["dense", "sparse", "sparse", "sparse"],
    }  # fmt: skip
    arch = parse_config(mellum)
    assert arch.moe is not None
    assert arch.moe.moe_layers == (1, 2, 3)
    assert param_counts(arch).dense_mlp == 3 * 1024 * 4096
    # EXAONE 3.x checkpoints name the layer count num_layers (ExaoneConfig's attribute_map).
    exaone = {
        "model_type": "exaone", "hidden_size": 1024, "num_layers": 4,
        "num_attention_heads": 8, "intermediate_size": 4096, "vocab_size": 1000,
    }  # fmt: skip
    assert parse_config(exaone).num_layers == 4


_SMALL: dict[str, Any] = {
    "hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8,
    "num_key_value_heads": 2, "head_dim": 128, "intermediate_size": 4096, "vocab_size": 1000,
}  # fmt: skip


@pytest.mark.parametrize(
    ("model_type", "norm_values"),
    [("apertus", 2 * 1024), ("arcee", 2 * 1024), ("jais2", 2 * 2 * 1024)],
)
def test_up_and_down_mlps_of_apertus_arcee_and_jais2(model_type: str, norm_values: int) -> None:
    # xIELU (apertus.py), ReLU² (arcee.py, jais2.py): no gate projection; Jais 2's LayerNorms
    # carry biases, and Jais2Config puts biases on its MLP (4096 + 1024 a layer).
    counts = param_counts(parse_config({**_SMALL, "model_type": model_type}))
    assert counts.dense_mlp == 4 * 2 * 1024 * 4096
    mlp_bias = 4096 + 1024 if model_type == "jais2" else 0
    qk_norm = 2 * 128 if model_type == "apertus" else 0
    qkv_o_bias = (8 * 128 + 2 * 2 * 128 + 1024) if model_type == "jais2" else 0
    per_layer = norm_values + mlp_bias + qk_norm + qkv_o_bias
    final_norm = 2 * 1024 if model_type == "jais2" else 1024
    assert counts.small == 4 * per_layer + final_norm


def test_afmoe_dense_first_layers_gated_attention_and_four_norms() -> None:
    config = {
        **_SMALL, "model_type": "afmoe", "num_dense_layers": 2, "num_experts": 8,
        "num_experts_per_tok": 2, "moe_intermediate_size": 512, "num_shared_experts": 1,
    }  # fmt: skip
    arch = parse_config(config)
    assert arch.moe is not None
    assert arch.moe.moe_layers == (2, 3)
    assert arch.attention_output_gate
    assert arch.norms_per_layer == 4


# DeciLM / Llama-Nemotron NAS (nemotron_nas.py): a block config per layer.
_DECILM: dict[str, Any] = {
    "model_type": "nemotron-nas", "hidden_size": 1024, "num_hidden_layers": 3,
    "num_attention_heads": 8, "vocab_size": 1000, "tie_word_embeddings": False,
    "block_configs": [
        {"attention": {"n_heads_in_group": 4, "no_op": False}, "ffn": {"ffn_mult": 2.625}},
        {"attention": {"no_op": True}, "ffn": {"ffn_mult": 1.3}},
        {"attention": {"n_heads_in_group": 4}, "ffn": {"no_op": True}},
    ],
}  # fmt: skip


def test_decilm_layers_take_their_own_mlp_width_and_may_skip_attention() -> None:
    arch = parse_config(_DECILM)
    # 2 x 2.625 x 1024 / 3 = 1792 (a multiple of 256); 2 x 1.3 x 1024 / 3 = 887 -> 1024.
    assert arch.mlp_widths == (1792, 1024, 0)
    assert arch.layer_kinds == ("full", "mlp", "full")
    assert arch.num_kv_heads == 2
    assert arch.intermediate_size == 1792  # the widest, for vLLM's activation peak
    counts = param_counts(arch)
    assert counts.dense_mlp == 3 * 1024 * (1792 + 1024)
    assert counts.small == (2 + 1 + 1) * 1024 + 1024  # a norm a part, the final norm
    # Only the two attention layers hold KV: 2 KV heads of 128.
    assert kv_cache_shape(arch).bytes_per_token == 2 * 2 * 2 * 128 * 2
    plan = plan_vllm(arch, VllmSettings(gpu_memory_bytes=80 * GIB, pipeline_parallel_size=3))
    assert plan.kv_cache_bytes > 0


def test_decilm_refuses_what_it_does_not_model_by_name() -> None:
    blocks = _DECILM["block_configs"]
    varied = [blocks[0], blocks[1], {**blocks[2], "attention": {"n_heads_in_group": 8}}]
    with pytest.raises(ConfigError, match=r"^block_configs\[2\]\.attention\.n_heads_in_group"):
        parse_config({**_DECILM, "block_configs": varied})
    linear = [blocks[0], {**blocks[1], "attention": {"replace_with_linear": True}}, blocks[2]]
    with pytest.raises(ConfigError, match=r"^block_configs\[1\]\.attention\.replace_with_linear"):
        parse_config({**_DECILM, "block_configs": linear})
    with pytest.raises(ConfigError, match=r"^block_configs: expected 3 block configs"):
        parse_config({**_DECILM, "block_configs": blocks[:2]})


def test_decilm_pipeline_stages_read_each_layers_own_mlp() -> None:
    # pipeline_stages prices a layer by its kind, experts and (DeciLM) its own MLP width: the
    # stages' weights add up to the whole model's reads.
    arch = parse_config(_DECILM)
    fmt = weight_format(arch)
    alone = decode_tokens_per_second_bound(
        arch, fmt, 3.35e12, DecodeBatch(context_tokens=1024, batch=4)
    )
    step = pipeline_step(
        arch,
        bytes_per_touched_param(arch, fmt, 1),
        alone.weight_bytes_per_step,
        kv_cache_shape(arch),
        DecodeBatch(ParallelLayout(pipeline_parallel_size=3), 1024, 4),
        memory_bandwidth_bytes_per_s=3.35e12,
        activation_bytes=2,
        link=None,
    )
    weights = sum(stage.weight_bytes for stage in step.stages)
    assert weights == pytest.approx(alone.weight_bytes_per_step, abs=3)
    assert sorted(stage.weight_bytes for stage in step.stages)[0] < step.slowest.weight_bytes


def test_command_r_reads_its_logits_from_the_embedding_table() -> None:
    # CohereForAI/c4ai-command-r-v01's shape ("35B"): commandr.py builds no lm_head, so an untied
    # reading would add 256000 x 8192 = 2.1B parameters.
    config = {
        "model_type": "cohere", "hidden_size": 8192, "intermediate_size": 22528,
        "num_attention_heads": 64, "num_key_value_heads": 64, "num_hidden_layers": 40,
        "vocab_size": 256000, "logit_scale": 0.0625, "use_qk_norm": False,
        "max_position_embeddings": 8192, "tie_word_embeddings": False,
    }  # fmt: skip
    arch = parse_config(config)
    assert arch.tie_word_embeddings
    assert arch.norms_per_layer == 1
    assert param_counts(arch).total == pytest.approx(35e9, rel=0.01)


def test_loopcoder_later_loops_keep_a_windowed_cache_of_their_own() -> None:
    # iquest_loopcoder.py: loop 0 attends fully; loop 1 runs every layer again through an
    # Attention of its own whose cache holds at most loop_window_size tokens.
    config = {**_SMALL, "model_type": "iquestloopcoder", "loop_num": 2, "loop_window_size": 64}
    arch = parse_config(config)
    kv = kv_cache_shape(arch)
    assert (kv.full_layers, kv.sliding_layers, kv.sliding_window) == (4, 4, 64)
    per_layer = 2 * 2 * 128 * 2
    assert kv.bytes_for_sequence(1000) == 4 * per_layer * 1000 + 4 * per_layer * 64
    # The gate projections of the later loop: head_dim -> a gate a head, with biases.
    plain = param_counts(parse_config({**config, "loop_num": 1}))
    assert param_counts(arch).total - plain.total == 4 * (128 * 8 + 8)
    plan = plan_vllm(arch, VllmSettings(gpu_memory_bytes=80 * GIB, max_model_len=4096))
    assert plan.kv_cache_bytes > 0


@pytest.mark.parametrize(
    "layers", [{"num_hidden_layers": 24, "num_layers_per_stack": 3}, {"num_hidden_layers": 3}]
)
def test_hrm_text_runs_two_stacks_with_a_cache_per_run(layers: dict[str, int]) -> None:
    # hrm_text.py: an L and an H stack of 3 layers; with H_cycles 2 and L_cycles 3 the L stack
    # runs 6 times and the H stack twice, each run of a layer with a cache of its own: 24 caches
    # (HrmTextConfig writes that count into num_hidden_layers, or keeps the per-stack count).
    config = {**_SMALL, "model_type": "hrm_text", "num_key_value_heads": 8, **layers}
    arch = parse_config(config)
    assert arch.num_layers == 6
    assert kv_cache_shape(arch).full_layers == 24
    assert arch.attention_output_gate
    assert param_counts(arch).small == 0  # its RMSNorms, the final one too, have no weight
