"""MiMo-V2 and MiMo-V2-Flash (`model_type` mimo_v2, mimo_v2_flash): sliding-window layers with heads
of their own between full-attention layers, values narrower than keys, experts after a dense layer.

As vLLM 0.29 builds them (vllm/model_executor/models/mimo_v2.py, `MiMoV2FlashDecoderLayer`):
- `hybrid_layer_pattern` names each layer: 1 a sliding-window layer (`sliding_window_size`
  tokens) with `swa_num_attention_heads`, `swa_num_key_value_heads`, `swa_head_dim` and
  `swa_v_head_dim` (default `swa_head_dim`) and, with `add_swa_attention_sink_bias`, a sink per
  head; 0 a full-attention layer with `num_attention_heads`, `num_key_value_heads`, `head_dim`
  and `v_head_dim` (default `head_dim`). `QKVParallelLinear(v_head_size=...)` and the cache keep
  values of their own width: a token takes KV heads x (key + value width) per layer;
- `moe_layer_freq` (a list, one flag a layer) marks the expert layers (`n_routed_experts` of
  `moe_intermediate_size`, top `num_experts_per_tok`), the others a dense MLP.
The two kinds of layer store different bytes per token, so vLLM pads the smaller pages
(`unify_kv_cache_spec_page_size`), as `calculators.kv_blocks.page_blocks` does.
"""

from collections.abc import Mapping
from typing import Any

from infermeter.calculators.config_fields import int_field, optional_int
from infermeter.calculators.mixers import listed_layer_kinds
from infermeter.calculators.model_arch import FULL, SLIDING, AttentionShape

MIMO_V2_TYPES = frozenset({"mimo_v2", "mimo_v2_flash"})


def mimo_v2_defaults(config: Mapping[str, Any]) -> dict[str, Any]:
    """vLLM reads the window from `sliding_window_size`."""
    merged = dict(config)
    if merged.get("sliding_window_size") is not None:
        merged["sliding_window"] = merged["sliding_window_size"]
    return merged


def mimo_v2_layer_kinds(config: Mapping[str, Any], num_layers: int, where: str) -> list[str]:
    """Sliding-window layers where `hybrid_layer_pattern` says 1, full attention where 0."""
    pattern = config.get("hybrid_layer_pattern")
    as_text = [str(flag) for flag in pattern] if isinstance(pattern, list) else pattern
    return listed_layer_kinds(
        {"hybrid_layer_pattern": as_text},
        "hybrid_layer_pattern",
        num_layers,
        where,
        sequence=list,
        kinds={"0": FULL, "1": SLIDING},
        refusal="expected 0 (full attention) or 1 (sliding window), got {0!r}",
    )


def mimo_v2_fields(config: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The value width of the full-attention layers and the sliding-window layers' heads."""
    head_dim = int_field(config, "head_dim", where)
    swa_head_dim = optional_int(config, "swa_head_dim", where, head_dim)
    heads = int_field(config, "num_attention_heads", where)
    kv_heads = optional_int(config, "num_key_value_heads", where, heads)
    return {
        "v_head_dim": optional_int(config, "v_head_dim", where, head_dim),
        "sliding_attention": AttentionShape(
            heads=optional_int(config, "swa_num_attention_heads", where, heads),
            kv_heads=optional_int(config, "swa_num_key_value_heads", where, kv_heads),
            head_dim=swa_head_dim,
            v_head_dim=optional_int(config, "swa_v_head_dim", where, swa_head_dim),
            sinks=bool(config.get("add_swa_attention_sink_bias", False)),
        ),
    }
