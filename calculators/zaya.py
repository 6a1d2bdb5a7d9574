"""ZAYA1 (`model_type` zaya) as vLLM 0.34.0 serves it (vllm/model_executor/models/zaya.py, new
in 0.34.0), with transformers' ZayaConfig (5.13+; its defaults are Zyphra/ZAYA1-8B's).

Every layer (`layer_types` "hybrid", or "hybrid_sliding" with `sliding_window`) is compressed
convolutional attention (CCA) and a mixture of experts.

Parameters of a layer, per rank:
- CCA, replicated on every rank (ReplicatedLinear; quantizable): q_proj hidden -> heads x
  head_dim, k_proj hidden -> kv_heads x head_dim, v_proj_current and v_proj_delayed of half
  that each, o_proj; biases with `attention_bias`. Small: a depthwise Conv1d over the q and k
  channels (`cca_time0` taps, with a bias) and a grouped one (`cca_time1` taps, one group a
  head, with a bias), a temperature per KV head;
- the MoE: `num_experts` SwiGLU experts of `moe_intermediate_size` (FusedMoE, split over the
  ranks), and the router replicated and never quantized: down_proj hidden -> router_hidden_size
  (with a bias), an MLP of an RMSNorm, fc1 and fc2 (with biases) and out_proj to num_experts + 1
  classes (the last skips the experts), `router_states_scale` (every layer but the first) and a
  float32 balancing bias per class;
- two RMSNorms and two residual scalings (a scale and a bias on each of two inputs: 4 x hidden).
Beside them: the embedding split by vocabulary (tied to the lm_head by default), the input's
scale and bias, the final norm.

Caches of a layer, on every rank whole: its attention's K and V (every KV head: the attention
is not split), full or sliding; and the CCA state (`MambaBase`, a ShortConv spec): the last
cca_time0 + cca_time1 - 2 q/k projections, (heads + kv_heads) x head_dim each, and the previous
token's delayed value, kv_heads x head_dim / 2, in the model dtype (`mamba_cache_dtype` auto;
the config's own key is not read by vLLM).
"""

from collections.abc import Mapping
from typing import Any

from infermeter.calculators.config_fields import int_field
from infermeter.calculators.errors import ConfigError

ZAYA_TYPE = "zaya"
# ZayaConfig's defaults (transformers 5.24 models/zaya/configuration_zaya.py): ZAYA1-8B's.
ZAYA_DEFAULTS: dict[str, Any] = {
    "vocab_size": 262272, "hidden_size": 2048, "num_hidden_layers": 40,
    "num_attention_heads": 8, "num_key_value_heads": 2, "max_position_embeddings": 131072,
    "tie_word_embeddings": True, "moe_intermediate_size": 2048, "num_experts_per_tok": 1,
    "num_experts": 16, "head_dim": 128, "attention_bias": False, "router_hidden_size": 256,
    "cca_time0": 2, "cca_time1": 2,
}  # fmt: skip
ZAYA_NOTE = (
    "ZAYA1: CCA attention and its K/V replicated on every rank, the experts split; each layer's "
    "CCA state (the convolution's history and the delayed value) planned as a state layer in "
    "the model dtype beside the layer's attention; the activation peak and CUDA graphs are "
    "estimated as for a plain MoE"
)
_KINDS = {"hybrid": "full_attention", "hybrid_sliding": "sliding_attention"}


def zaya_defaults(config: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """The config as ZayaConfig completes it, its layer types under the reader's names."""
    merged = {**ZAYA_DEFAULTS, **config}
    layers = int_field(merged, "num_hidden_layers", where)
    kinds = merged.get("layer_types") or ["hybrid"] * layers
    if not isinstance(kinds, list) or any(kind not in _KINDS for kind in kinds):
        raise ConfigError(f"{where}layer_types: expected a list of hybrid, hybrid_sliding")
    if "hybrid_sliding" in kinds and not merged.get("sliding_window"):
        raise ConfigError(f"{where}sliding_window: required by hybrid_sliding layers")
    if merged["num_experts_per_tok"] != 1:
        raise ConfigError(f"{where}num_experts_per_tok: ZAYA supports 1 only")
    merged["layer_types"] = [_KINDS[kind] for kind in kinds]
    return merged


def zaya_fields(config: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """`ModelArch` fields of a ZAYA config: the config, which its parameters and caches read."""
    for name in ("router_hidden_size", "cca_time0", "cca_time1", "head_dim"):
        if int_field(config, name, where) < 1:
            raise ConfigError(f"{where}{name}: expected an integer >= 1")
    return {"zaya": dict(config)}


def _cca(config: Mapping[str, Any]) -> tuple[int, int]:
    """(linear, small) parameters of one layer's CCA, whole on every rank."""
    hidden, head = config["hidden_size"], config["head_dim"]
    heads, kv_heads = config["num_attention_heads"], config["num_key_value_heads"]
    q, kv = heads * head, kv_heads * head
    linear = hidden * (q + kv + kv) + q * hidden  # q, k, v current + delayed (kv), o
    small = (q + 2 * kv + hidden) if config["attention_bias"] else 0
    channels = q + kv
    small += channels * config["cca_time0"] + channels  # depthwise, with a bias
    small += channels * (channels // (heads + kv_heads)) * config["cca_time1"] + channels
    return linear, small + kv_heads


def _router(config: Mapping[str, Any]) -> tuple[int, int, int]:
    """(router weights and biases, norms and scales, float32) of one layer, replicated."""
    hidden, size = config["hidden_size"], config["router_hidden_size"]
    classes = config["num_experts"] + 1
    weights = hidden * size + size + 2 * (size * size + size) + size * classes
    return weights, size, classes


def rank_parameters(config: Mapping[str, Any], tp: int = 1) -> dict[str, int]:
    """Parameters on one of `tp` ranks by `param_count.ParamCounts` role."""
    hidden, layers = config["hidden_size"], config["num_hidden_layers"]
    linear, small = _cca(config)
    router, router_small, four_byte = _router(config)
    per_expert = 3 * hidden * config["moe_intermediate_size"] // tp
    vocab = -(-config["vocab_size"] // tp) * hidden
    scales = config["router_hidden_size"] * (layers - 1)  # router_states_scale
    return {
        "embedding": vocab,
        "lm_head": 0 if config["tie_word_embeddings"] else vocab,
        "attention": layers * linear,
        "dense_mlp": 0,
        "experts": layers * config["num_experts"] * per_expert,
        "experts_active": layers * config["num_experts_per_tok"] * per_expert,
        "shared_experts": 0,
        "router": layers * router,
        # Per layer two norms and two residual scalings (4 x hidden each); the input's scale and
        # bias, the final norm.
        "small": layers * (small + router_small + 10 * hidden) + scales + 3 * hidden,
        "vision": 0,
        "four_byte": layers * four_byte,
    }


def cache_fields(config: Mapping[str, Any], kv_bytes: int, state_bytes: int) -> dict[str, Any]:
    """`kv_cache.KVCacheShape` fields on any rank: each layer's K/V of every KV head (`kv_bytes`
    an element) and its CCA state (`state_bytes` an element)."""
    head, kv_heads = config["head_dim"], config["num_key_value_heads"]
    heads = config["num_attention_heads"] + kv_heads
    history = config["cca_time0"] + config["cca_time1"] - 2
    kinds = config["layer_types"]
    sliding = kinds.count("sliding_attention")
    return {
        "bytes_per_token_per_layer": 2 * kv_heads * head * kv_bytes,
        "full_layers": len(kinds) - sliding,
        "sliding_layers": sliding,
        "sliding_window": config.get("sliding_window") if sliding else None,
        "dtype_bytes": kv_bytes,
        "state_layers": len(kinds),
        "state_bytes_per_sequence_per_layer": (heads * head * history + kv_heads * head // 2)
        * state_bytes,
    }
