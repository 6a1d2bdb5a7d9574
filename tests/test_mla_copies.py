"""Tests of calculators.mla_copies: the matrices vLLM's MLA layers keep after loading, per release,
and their place in the plan's weights."""

from typing import Any

import pytest

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.mla_copies import MlaCopies, mla_copies
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.quantization import weight_format
from infermeter.calculators.vllm_plan import plan_vllm, plan_weights
from infermeter.calculators.vllm_settings import GIB, VllmSettings
from infermeter.registry.catalog import load_models

MIB = 1024**2
MODELS = load_models()
AWQ: dict[str, Any] = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True}
# DeepSeek-Coder-V2-Lite's shapes, as tests/data/vllm_startup_logs.yaml gives them (vllm#13109).
CODER_V2_LITE: dict[str, Any] = {
    "architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2", "hidden_size": 2048,
    "num_hidden_layers": 27, "num_attention_heads": 16, "intermediate_size": 10944,
    "moe_intermediate_size": 1408, "n_routed_experts": 64, "n_shared_experts": 2,
    "num_experts_per_tok": 6, "first_k_dense_replace": 1, "moe_layer_freq": 1,
    "kv_lora_rank": 512, "q_lora_rank": None, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "v_head_dim": 128, "vocab_size": 102400, "max_position_embeddings": 163840,
    "torch_dtype": "bfloat16",
}  # fmt: skip


def _deepseek_v3(quantization_config: dict[str, Any] | None = None) -> ModelArch:
    config = dict(MODELS["deepseek-v3"].config)
    if quantization_config is not None:
        config["quantization_config"] = quantization_config
    return parse_config(config)


def _copies(
    arch: ModelArch, version: tuple[int, int], tp: int = 1, quantization: str | None = None
) -> MlaCopies:
    return mla_copies(arch, weight_format(arch, quantization), version, tp)


def test_mla_copies_none_for_an_unquantized_checkpoint_from_0_8() -> None:
    # W_UK_T and W_UV are views of kv_b_proj's BF16 weight: no second copy.
    arch = _deepseek_v3()
    for version in ((0, 8), (0, 19), (0, 29)):
        assert _copies(arch, version, quantization="none").bytes == 0


def test_mla_copies_a_quantized_kv_b_proj_is_kept_dequantized_from_0_8() -> None:
    arch = _deepseek_v3()  # FP8 (block) checkpoint: kv_b_proj is FP8
    per_layer = 512 * (128 // 8) * (128 + 128) * 2  # L x heads/TP x (P + V), BF16
    copies = _copies(arch, (0, 19), tp=8)
    assert copies.bytes == 61 * per_layer == 61 * 4 * MIB
    assert not copies.absorbed
    assert not copies.estimated
    assert _copies(arch, (0, 19), tp=16).bytes == copies.bytes // 2


def test_mla_copies_absorption_of_0_7_matches_the_awq_deepseek_coder_v2_lite_shapes() -> None:
    # DeepSeek-Coder-V2-Lite: hidden 2048, 16 heads, no q_lora_rank, 27 layers (vllm#13109's log).
    arch = parse_config({**CODER_V2_LITE, "quantization_config": AWQ})
    w_q_uk = w_uv_o = 2048 * 16 * 512 * 2
    w_qr = 2048 * 16 * 64 * 2
    kv_b = 512 * 16 * 256 * 2
    copies = _copies(arch, (0, 7))
    assert copies.bytes == 27 * (w_q_uk + w_uv_o + w_qr + kv_b) == 27 * 72 * MIB
    assert copies.absorbed
    assert copies.estimated
    assert _copies(arch, (0, 8)).bytes == 27 * kv_b
    assert _copies(arch, (0, 6)).bytes == 0  # no MLA path before 0.7.1


def test_mla_copies_fp8_checkpoints_requantize_the_absorbed_products() -> None:
    arch = _deepseek_v3()
    fp8 = _copies(arch, (0, 7), tp=8).bytes
    bf16 = _copies(arch, (0, 7), tp=8, quantization="none").bytes
    heads = 128 // 8
    products = 1536 * heads * 512 + heads * 512 * 7168
    assert bf16 == 61 * (products * 2 + 1536 * heads * 64 * 2)
    # FP8 products (1 byte + a float32 scale per 128 x 128 block) plus the dequantized kv_b_proj.
    assert fp8 == pytest.approx(61 * (products * (1 + 4 / 128**2) + 1536 * heads * 64 * 2
                                      + 512 * heads * 256 * 2), abs=61)  # fmt: skip


def test_mla_copies_none_where_attention_is_kept_unquantized_or_there_is_no_mla() -> None:
    kept = _deepseek_v3({**AWQ, "modules_to_not_convert": ["self_attn"]})
    assert _copies(kept, (0, 19)).bytes == 0
    llama = parse_config(MODELS["llama-3.1-8b-instruct"].config)
    assert _copies(llama, (0, 7)).bytes == 0


def test_plan_weights_count_the_copies_and_say_where_they_are_estimated() -> None:
    arch = _deepseek_v3(AWQ)
    settings = VllmSettings(gpu_memory_bytes=141 * GIB, tensor_parallel_size=8, vllm_version="0.19")
    weights = plan_weights(arch, settings)
    assert weights.by_role["mla_copies"] == _copies(arch, (0, 19), tp=8).bytes > 0
    plan = plan_vllm(arch, settings)
    assert plan.weights_bytes == weights.total
    assert any("MLA copies" in note for note in plan.notes)
    assert "weights_bytes" not in plan.estimated_terms
    old = plan_vllm(arch, VllmSettings(gpu_memory_bytes=141 * GIB, tensor_parallel_size=8,
                                       vllm_version="0.7"))  # fmt: skip
    assert "weights_bytes" in old.estimated_terms
    assert any("0.7.0 keeps none" in note for note in old.notes)
