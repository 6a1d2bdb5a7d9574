"""HY-V4's parameters and KV cache as vLLM 0.29.0 and 0.34.0 build them (calculators.hy_v4),
with the arithmetic written out from vllm/models/hy_v4/nvidia (model.py, attention.py, hc.py,
moe.py) and vLLM's HYV4Config (vllm/transformers_utils/configs/hy_v4.py).

No HY-V4 checkpoint's config.json is public (a search of public code found only test
fixtures), so tests/data/configs/hy-v4.json is HYV4Config's defaults (vLLM 0.34.0), with the
lists its __post_init__ fills written out (mlp_layer_types: one dense layer then MoE;
indexer_types: "full" at layer 0 and every fourth layer from 1) and one assumption:
`layer_types` marks every layer "deepseek_sparse_attention" (the class leaves it None, which
would make every layer dense latent attention without an indexer; a checkpoint that ships the
indexer's fields declares the layers that use it). No published parameter count exists to hold
the count to; the count is held to the modules' arithmetic.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from test_calc_api import pasted_config_plan

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.param_count import param_counts

CONFIG_PATH = Path(__file__).parent / "data" / "configs" / "hy-v4.json"
CONFIG = json.loads(CONFIG_PATH.read_text())
H, LAYERS, HEADS, VOCAB = 2816, 34, 32, 120832
OWN_INDEXER = [0, 1, 5, 9, 13, 17, 21, 25, 29, 33]  # indexer_types "full"


def _attention_linear(tp: int) -> int:
    """One layer's latent attention without the indexer, on one of `tp` ranks."""
    fused_qkv_a = H * (1536 + 512 + 64)  # replicated (disable_tp)
    q_b = 1536 * HEADS * (192 + 64) // tp
    kv_b = 512 * HEADS * (192 + 256) // tp
    o_proj = HEADS * 256 * H // tp
    linear_gate = H * HEADS * 256 // tp  # gated_mla, elementwise
    return fused_qkv_a + q_b + kv_b + o_proj + linear_gate


INDEXER = 1536 * 16 * 128 + H * (128 + 16)  # wq_b, wk_weights_proj (replicated)
HC_LAYER = 2 * (8 * 4 * H + 8 + 2)  # two iHC boundaries: hc_fn 4H -> 8, hc_base 8, hc_scale 2
HC_HEAD = 4 * 4 * H + 4 + 1  # hc_head_fn 4H -> 4, hc_head_base 4, hc_head_scale 1


def test_parameters_follow_the_modules_at_tp_1_and_8() -> None:
    arch = parse_config(CONFIG)
    for tp in (1, 8):
        counts = param_counts(arch, tp)
        assert counts.attention == LAYERS * _attention_linear(tp) + len(OWN_INDEXER) * INDEXER
        assert counts.embedding == counts.lm_head == VOCAB // tp * H
        assert counts.dense_mlp == 3 * H * 6912 // tp  # layer 0 only
        assert counts.experts == 33 * 256 * 3 * H * 768 // tp
        assert counts.shared_experts == 33 * 3 * H * 768 // tp
        # q_a/kv_a norms, two layer norms, the indexer's key LayerNorm where it has one; the
        # final norm.
        assert counts.small == LAYERS * (1536 + 512 + 2 * H) + len(OWN_INDEXER) * 256 + H
        # float32: hyper-connections, a sink per head, the router and its correction bias.
        router = 33 * (H * 256 + 256)
        assert counts.four_byte == LAYERS * (HC_LAYER + HEADS // tp) + HC_HEAD + router
        assert counts.router == 0
    # 58.3B parameters, 5.2B a token (8 of 256 experts): no published figure to compare.
    assert param_counts(arch).total == 58_278_201_581
    assert round(param_counts(arch).active / 1e9, 2) == 5.18


def test_shared_indexer_layers_hold_neither_weights_nor_keys() -> None:
    every = {**CONFIG, "indexer_types": ["full"] * LAYERS}
    own, shared = parse_config(CONFIG), parse_config(every)
    assert param_counts(shared).attention - param_counts(own).attention == 24 * INDEXER
    # bfloat16 latents on all 34 layers; a 128-byte FP8 key + a float32 scale on the 10 own.
    assert kv_cache_shape(own).bytes_per_token == LAYERS * 576 * 2 + 10 * 132
    assert kv_cache_shape(shared).bytes_per_token == LAYERS * (576 * 2 + 132)


def test_fp8_cache_of_sparse_and_dense_layers() -> None:
    # fp8: fp8_ds_mla (656 B) on sparse layers, 576 FP8 bytes on dense ones.
    assert kv_cache_shape(parse_config(CONFIG), "fp8").bytes_per_token == 34 * 656 + 10 * 132
    mixed = {**CONFIG, "layer_types": ["full_attention"] * 17 + CONFIG["layer_types"][17:]}
    own_sparse = len([i for i in OWN_INDEXER if i >= 17])
    assert kv_cache_shape(parse_config(mixed), "fp8").bytes_per_token == (
        17 * 576 + 17 * 656 + own_sparse * 132
    )
    # HYV4Config's own default: no layer_types, every layer dense, no indexer at all.
    dense = parse_config({k: v for k, v in CONFIG.items() if k != "layer_types"})
    assert dense.indexer is None
    assert kv_cache_shape(dense).bytes_per_token == LAYERS * 576 * 2
    assert param_counts(dense).attention == LAYERS * _attention_linear(1)


@pytest.mark.parametrize("tp", [1, 8])
def test_calc_vram_plans_hy_v4_at_tp_1_and_8_as_the_page_does(tp: int) -> None:
    plan = pasted_config_plan(
        CONFIG_PATH, "h200-sxm", tensor_parallel_size=str(tp), vllm_version="0.34",
        kv_cache_dtype="fp8", max_model_len="262144",
    )  # fmt: skip
    arch = parse_config(CONFIG)
    roles = plan["weights_by_role"]
    assert roles["four_byte"] == 4 * param_counts(arch, tp).four_byte
    assert roles["experts"] == 2 * param_counts(arch, tp).experts
    # One group of 34 latent caches and 10 indexer key caches: a block of 64 tokens (vLLM
    # 0.34's default; FlashMLA's sparse kernels take 64) holds 64 x (34 x 656 + 10 x 132) bytes.
    assert plan["kv_cache_bytes_per_token"] == 23624
    assert plan["block_size"] == 64
    assert plan["num_blocks"] == plan["kv_cache_bytes"] // (64 * 23624)
    per_request = -(-262144 // 64)
    assert plan["request_bytes_at_max_model_len"] == per_request * 64 * 23624
    assert plan["kv_cache_tokens"] == int(plan["num_blocks"] / per_request * 262144)
    assert plan["fits"]
    assert any(note.startswith("HY-V4: latent attention") for note in plan["notes"])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"gating_type": "rowwise"}, r"^gating_type: expected 'elementwise' or 'headwise'"),
        ({"indexer_types": ["full"] * 3}, r"^indexer_types: expected a list of 34 entries"),
        ({"indexer_types": ["full", "local"] * 17}, r"^indexer_types: expected 'full' or"),
        ({"layer_types": ["sparse"]}, r"^layer_types: expected a list of 34 entries"),
        ({"hc_mult": 1}, r"^hc_mult: expected at least 2 residual streams"),
    ],
)
def test_bad_hy_v4_fields_are_named(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config({**CONFIG, **change})
