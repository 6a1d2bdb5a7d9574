"""Gemma 4's language model as vLLM's gemma4.py builds it, read from a `gemma4_text` config.

- Sliding-window layers use `head_dim` and `num_key_value_heads`; full-attention layers use
  `global_head_dim` (512 by default) and, when `attention_k_eq_v` is set,
  `num_global_key_value_heads`. With K = V vLLM still allocates the V slot of qkv_proj and the
  V half of the cache (it loads K into both), so weights and KV count both.
- The last `num_kv_shared_layers` layers read the KV of the last earlier layer of their kind:
  they hold no KV of their own; with `use_double_wide_mlp` their MLP is twice as wide.
- Every layer runs its dense MLP; with `enable_moe_block` a routed-expert block runs beside it
  (`num_experts`, `top_k_experts`, `moe_intermediate_size`; a router with a per-dimension scale).
- Per-layer embeddings (`hidden_size_per_layer_input` > 0, the small E2B/E4B models): a
  `vocab_size_per_layer_input` × (layers × width) embedding, a projection of the hidden state to
  it, and a gate and projection in every layer.
"""

from collections.abc import Mapping
from typing import Any

from infermeter.calculators.config_fields import optional_int
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.model_arch import MixtureOfExperts

GEMMA4_TYPES = frozenset({"gemma4_text", "gemma4_unified_text"})
_DEFAULT_GLOBAL_HEAD_DIM = 512


def kv_shared_layers(config: Mapping[str, Any], num_layers: int, where: str, default: int) -> int:
    """`num_kv_shared_layers` (Gemma 3n and 4): the last layers, holding no KV of their own."""
    shared = optional_int(config, "num_kv_shared_layers", where, default)
    if shared >= num_layers:
        raise ConfigError(
            f"{where}num_kv_shared_layers: {shared} of {num_layers} layers; at least one layer "
            "must hold its own KV"
        )
    return shared


def gemma4_fields(config: Mapping[str, Any], num_layers: int, where: str) -> dict[str, Any]:
    """The `ModelArch` fields Gemma 4 adds, from its text config."""
    shared = kv_shared_layers(config, num_layers, where, 0)
    k_eq_v = bool(config.get("attention_k_eq_v", False))
    global_kv = optional_int(config, "num_global_key_value_heads", where, 0) if k_eq_v else 0
    ple = optional_int(config, "hidden_size_per_layer_input", where, 0)
    vocab = optional_int(config, "vocab_size", where, 0)
    return {
        "global_head_dim": optional_int(config, "global_head_dim", where, 0)
        or _DEFAULT_GLOBAL_HEAD_DIM,
        "global_kv_heads": global_kv or None,
        "kv_shared_layers": shared,
        "mlp_beside_moe": True,
        "double_wide_shared_mlp": bool(config.get("use_double_wide_mlp", False)),
        "per_layer_input_size": ple,
        "per_layer_vocab_size": optional_int(config, "vocab_size_per_layer_input", where, vocab)
        if ple
        else 0,
    }


def gemma4_moe(config: Mapping[str, Any], num_layers: int, where: str) -> MixtureOfExperts | None:
    """Gemma 4's routed-expert block, in every layer when `enable_moe_block` is set."""
    if not (config.get("enable_moe_block") or config.get("use_second_mlp_block")):
        return None
    width = optional_int(config, "moe_intermediate_size", where, 0) or optional_int(
        config, "expert_intermediate_size", where, 0
    )
    experts = optional_int(config, "num_experts", where, 0)
    top_k = optional_int(config, "top_k_experts", where, 0)
    if not (width and experts and top_k):
        raise ConfigError(
            f"{where}enable_moe_block: needs num_experts, top_k_experts and "
            "moe_intermediate_size > 0"
        )
    return MixtureOfExperts(
        num_experts=experts,
        experts_per_token=top_k,
        expert_intermediate_size=width,
        shared_intermediate_size=0,
        moe_layers=tuple(range(num_layers)),
        router_bias=False,
        expert_bias=False,
    )
