"""DomynEdge (`model_type` domyn_edge) as vLLM serves it from 0.33.0 on
(vllm/model_executor/models/domyn_edge.py, unchanged in 0.34.0). Its config class is the
checkpoint's own (trust_remote_code): vLLM reads `per_layer_config[i].head_dim`,
`window_sizes[i][0]` and `position_layers[i]` ("rope" or "nope") for each layer.

Parameters of a layer, per rank (Qwen2's decoder with its own attention): qkv_proj (bias-free)
and o_proj of the layer's head size, split by heads (KV heads replicated when fewer than the
ranks); a weightless q norm and a k norm of the head size; four RMSNorms (pre/post attention,
pre/post feed-forward) and Qwen2's SwiGLU MLP. Beside them the embedding, the lm_head (unless
tied) and the final norm.

KV caches: each layer's K and V of its own head size; a layer whose window is w > 0 attends to
w + 1 keys (`per_layer_sliding_window`, a SlidingWindowSpec), any other to every token. Layers
whose pages differ are grouped as vLLM groups them (`cache_specs`): one group when every layer
attends to every token (`UniformTypeKVCacheSpecs`), else pages grown to the largest and layers
of one spec grouped (`_get_kv_cache_groups_uniform_page_size`).
"""

import math
from collections.abc import Mapping
from typing import Any

from infermeter.calculators.cache_specs import (
    CacheGroup,
    CacheSpec,
    uniform_page_groups,
    uniform_type_group,
)
from infermeter.calculators.config_fields import int_field
from infermeter.calculators.errors import ConfigError

DOMYN_EDGE_TYPE = "domyn_edge"
PLAN_NOTE = (
    "DomynEdge: each layer's K/V with its own head size and window (window_sizes), grouped as "
    "vLLM groups per-layer specs; no decode throughput bound (its per-layer reads are not "
    "modelled); the activation peak and CUDA graphs are estimated as for a dense decoder"
)


def _per_layer(config: Mapping[str, Any], layers: int, where: str) -> tuple[list[int], list[int]]:
    """(head size, window: 0 for every token) of each layer."""
    per_layer, windows = config.get("per_layer_config"), config.get("window_sizes")
    if not isinstance(per_layer, list) or len(per_layer) != layers:
        raise ConfigError(f"{where}per_layer_config: expected {layers} entries (num_hidden_layers)")
    if not isinstance(windows, list) or len(windows) != layers:
        raise ConfigError(f"{where}window_sizes: expected {layers} entries (num_hidden_layers)")
    dims, spans = [], []
    for index, (entry, window) in enumerate(zip(per_layer, windows, strict=True)):
        if not isinstance(entry, Mapping):
            raise ConfigError(f"{where}per_layer_config[{index}]: expected an object")
        dims.append(int_field(entry, "head_dim", f"{where}per_layer_config[{index}]."))
        if not isinstance(window, list) or not window or not isinstance(window[0], int):
            raise ConfigError(f"{where}window_sizes[{index}]: expected [left, right] integers")
        spans.append(window[0] + 1 if window[0] > 0 else 0)
    if min(dims) <= 0:
        raise ConfigError(f"{where}per_layer_config: expected head_dim > 0 in every layer")
    return dims, spans


def domyn_edge_defaults(config: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """The config with what the common reader reads derived from the per-layer lists: the
    largest head size as `head_dim`, `layer_types` and the widest window as `sliding_window`
    (the layer caches themselves are this module's)."""
    merged = dict(config)
    layers = int_field(merged, "num_hidden_layers", where)
    dims, spans = _per_layer(merged, layers, where)
    merged["head_dims"], merged["windows"] = dims, spans
    merged["head_dim"] = max(dims)
    merged["layer_types"] = ["sliding_attention" if s else "full_attention" for s in spans]
    merged["sliding_window"] = max(spans) or None
    return merged


def domyn_edge_fields(config: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """`ModelArch` fields of a DomynEdge config: the config, with its per-layer lists read."""
    int_field(config, "num_key_value_heads", where)  # read by rank_parameters
    return {"domyn_edge": dict(config)}


def rank_parameters(config: Mapping[str, Any], tp: int = 1) -> dict[str, int]:
    """Parameters on one of `tp` ranks by `param_count.ParamCounts` role."""
    hidden, heads, kv_heads = (
        config["hidden_size"], config["num_attention_heads"], config["num_key_value_heads"]
    )  # fmt: skip
    attention = small = 0
    for dim in config["head_dims"]:
        attention += hidden * (heads * dim // tp + 2 * max(1, kv_heads // tp) * dim)
        attention += heads * dim // tp * hidden
        small += dim + 4 * hidden  # the k norm; four RMSNorms
    vocab = math.ceil(config["vocab_size"] / tp) * hidden
    layers = len(config["head_dims"])
    return {
        "embedding": vocab,
        "lm_head": 0 if config.get("tie_word_embeddings") else vocab,
        "attention": attention,
        "dense_mlp": layers * 3 * hidden * config["intermediate_size"] // tp,
        "experts": 0,
        "experts_active": 0,
        "shared_experts": 0,
        "router": 0,
        "small": small + hidden,
        "vision": 0,
        "four_byte": 0,
    }


def model_groups(
    config: Mapping[str, Any], kv_bytes: int, tp: int, block_size: int
) -> list[CacheGroup]:
    """The KV cache groups on one of `tp` ranks, `kv_bytes` a K/V element's bytes."""
    kv_heads = max(1, config["num_key_value_heads"] // tp)
    specs = [
        CacheSpec(
            "sliding" if window else "full",
            block_size,
            block_size * kv_heads * 2 * dim * kv_bytes,
            window,
        )
        for dim, window in zip(config["head_dims"], config["windows"], strict=True)
    ]
    if not any(spec.window for spec in specs):
        return uniform_type_group(specs)
    return uniform_page_groups(specs)
