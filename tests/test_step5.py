"""Step5's parameters and caches as vLLM 0.33.0-0.34.0 build them (calculators.step5), with the
arithmetic written out from vllm/models/step5/nvidia/model.py (Step5Attention,
Step5FusedQKVIndexerLinear, Step5SparseIndexerIndexTPLinear, Step5MoE) and
common/sparse_summary_cache.py.

No public Step5 config.json was found: tests/data/configs/step5.json is Step5Config's defaults
(vLLM 0.34.0 transformers_utils/configs/step5.py) with the three flags vLLM's Step5 requires set
true (use_head_wise_attn_gate for its DSA layers, use_moe_router_bias, need_fp32_gate) and a
sparse_config of Step5SparseConfig's defaults (common/config.py). Without a sliding_window
every layer is full attention, so all 48 are DSA layers. No published size exists for it.
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

CONFIG_PATH = Path(__file__).parent / "data" / "configs" / "step5.json"
CONFIG = json.loads(CONFIG_PATH.read_text())
H, LAYERS, HEADS, KV, HEAD = 5120, 48, 40, 8, 128


def _dsa_layer(tp: int) -> int:
    """One DSA layer's unquantized tensors on a rank: q/k/v and the per-head gate fused with
    the indexer's 16 q heads of 256 (over min(TP, 4) ranks) and its k and z (256 each,
    replicated); sparse_indexer_w (16 rows over the same ranks); the q RMSNorm and k LayerNorm
    of 256."""
    share = min(tp, 4)
    fused = H * (HEADS // tp * HEAD + 2 * max(1, KV // tp) * HEAD + HEADS // tp)
    return fused + H * (16 * 256 // share + 512) + H * 16 // share + 3 * 256


def test_step5_counts_follow_the_module() -> None:
    arch = parse_config(CONFIG)
    for tp in (1, 8):
        counts = param_counts(arch, tp)
        # Only o_proj stays quantizable in a DSA layer.
        assert counts.attention == LAYERS * HEADS // tp * HEAD * H
        norms = (2 * LAYERS + 1) * H + LAYERS * 2 * HEAD
        assert counts.small == LAYERS * _dsa_layer(tp) + norms
        # Layers 1-47 are MoE: 16 experts of 10240, a shared expert of 10240 x 4; the float32
        # router, its bias, and the unused float32 ssmax_s of each DSA layer.
        assert counts.experts == 47 * 16 * 3 * H * 10240 // tp
        assert counts.shared_experts == 47 * 3 * H * 40960 // tp
        assert counts.four_byte == 47 * (H * 16 + 16) + LAYERS * HEADS
        assert counts.router == 0
    assert param_counts(arch).total == 152_895_299_184


def test_the_caches_per_token() -> None:
    arch = parse_config(CONFIG)
    for tp, heads in ((1, 8), (8, 1)):
        shape = kv_cache_shape(arch, tensor_parallel_size=tp)
        assert shape.bytes_per_token_per_layer == heads * 2 * HEAD * 2
        # A 256-byte FP8 summary per 8 tokens in each DSA layer.
        assert shape.extra_bytes_per_token == LAYERS * 32


def test_sliding_layers_take_their_own_heads_and_no_indexer() -> None:
    sliding = {**CONFIG, "sliding_window": 512, "swa_num_attention_heads": 64}
    arch = parse_config(sliding)
    # Step5Attention's default pattern: even layers slide, odd ones attend fully (DSA).
    assert arch.layer_kinds == ("sliding", "full") * 24
    assert arch.step5 is not None
    assert arch.step5.dsa_layers == 24
    assert arch.sliding_attention is not None
    assert arch.sliding_attention.heads == 64
    assert arch.sliding_attention.head_dim == H // 64  # head_dim or hidden / its own heads
    shape = kv_cache_shape(arch)
    assert (shape.full_layers, shape.sliding_layers) == (24, 24)
    assert shape.extra_bytes_per_token == 24 * 32


def test_calc_vram_at_tp_1_and_8_as_the_page_says() -> None:
    one = pasted_config_plan(CONFIG_PATH, "h200-sxm", vllm_version="0.34",
                             max_model_len="4096", tensor_parallel_size="1")  # fmt: skip
    assert one["weights_by_role"]["small"] == 2 * param_counts(parse_config(CONFIG)).small
    assert not one["fits"]  # 306 GB of weights
    eight = pasted_config_plan(CONFIG_PATH, "h200-sxm", vllm_version="0.34",
                               max_model_len="4096", tensor_parallel_size="8")  # fmt: skip
    assert eight["kv_cache_bytes_per_token"] == LAYERS * 512 + LAYERS * 32
    assert eight["request_bytes_at_max_model_len"] == 4096 * (LAYERS * 512 + LAYERS * 32)
    assert eight["fits"]
    assert any(note.startswith("Step5: Step 3.5's layers") for note in eight["notes"])


def test_the_vl_wrapper_counts_its_perception_encoder() -> None:
    # PerceptionEncoderConfig's defaults: 47 blocks of 1536 (MLP 8960, two layer scales), a
    # 14-pixel patch convolution, 52 x 52 positions, a pre-LayerNorm, the two downsampling
    # convolutions to 4 x 1536, and vit_large_projector 6144 -> 5120 without a bias.
    wrapper = {"model_type": "step5_vl", "text_config": CONFIG,
               "vision_config": {"model_type": "perception_encoder"}}  # fmt: skip
    w = 1536
    block = 4 * w + 4 * w * w + 4 * w + 2 * w * 8960 + 8960 + w + 2 * w
    tower = 47 * block + 3 * w * 14 * 14 + 2 * w + 52 * 52 * w
    tower += 2 * w * w * 9 + 2 * w + 8 * w * w * 9 + 4 * w
    arch = parse_config(wrapper)
    assert arch.vision_params == tower + 4 * w * H == 1_987_306_240
    assert not any("vision tower" in note for note in arch.reading_notes)
    biased = parse_config({**wrapper, "projector_bias": True})
    assert biased.vision_params == arch.vision_params + H


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"sparse_config": None}, r"^sparse_config: vLLM serves Step5 only"),
        ({"need_fp32_gate": False}, r"^need_fp32_gate: vLLM's Step5 MoE requires it true"),
        ({"use_head_wise_attn_gate": False}, r"^head_dim/use_head_wise_attn_gate: "),
        ({"sparse_config": {**CONFIG["sparse_config"], "proxy_dim": 128}},
         r"^sparse_config\.proxy_dim: vLLM's Step5 DSA requires 256"),
        ({"sparse_config": {**CONFIG["sparse_config"], "sparse_indexer_num_heads": 24}},
         r"^sparse_config\.sparse_indexer_num_heads: "),
        ({"sparse_config": {**CONFIG["sparse_config"], "index_tp_size": 0,
                            "num_provider_groups": 0}},
         r"^sparse_config\.index_tp_size: expected an integer > 0"),
    ],
)  # fmt: skip
def test_bad_step5_fields_are_named(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config({**CONFIG, **change})
