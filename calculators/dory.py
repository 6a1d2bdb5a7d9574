"""Dory (`model_type` dory), NVIDIA's normalized latent recurrent transformer, as vLLM serves it
from 0.33.0 on (vllm/model_executor/models/dory.py and transformers_utils/configs/dory.py,
unchanged in what holds memory to 0.34.0).

Layers: `layer_types` gives each physical layer one sub-layer, attention ("full_attention",
"sliding_attention" of `sliding_window` tokens) or a SwiGLU MLP ("mlp"); DoryConfig's default
alternates them, every fourth attention layer full. The first `n_input_layers` run once, the
next `n_recurrent_layers` run `n_recurrent_loops` times over the same weights (counted once),
the last `n_output_layers` once.

Parameters of a layer (bias-free, no RMSNorm anywhere: nGPT's `justnorm` has no weight):
- attention: qkv_proj, a g_proj output gate hidden -> heads x head_dim, o_proj; the nGPT
  scales `sqk` and `s_gate` (heads x head_dim each) and the residual's `attn_alpha` (hidden);
- MLP: gate_up_proj and down_proj of `intermediate_size`, the scales `suv_gate` and `suv_up`
  (intermediate_size each) and `mlp_alpha` (hidden).
Beside them the embedding, the untied lm_head and its `logit_scale` (vocab_size), no final norm.

KV caches: with `recurrent_kv_cache_mode` "per_loop" (the default) every loop of a recurrent
attention layer is an attention layer of its own (its own prefix, so its own cache spec);
"last_loop" keeps one cache a layer, each loop overwriting it. vLLM refuses tensor parallelism
("Dory currently supports tensor_parallel_size=1 only").
"""

from collections.abc import Mapping
from typing import Any

from infermeter.calculators.config_fields import int_field
from infermeter.calculators.errors import ConfigError

DORY_TYPE = "dory"
# DoryConfig's defaults (vLLM 0.33.0/0.34.0 transformers_utils/configs/dory.py).
DORY_DEFAULTS: dict[str, Any] = {
    "vocab_size": 131072, "hidden_size": 2560, "num_hidden_layers": 72,
    "intermediate_size": 7168, "num_attention_heads": 16, "num_key_value_heads": 4,
    "head_dim": 256, "max_position_embeddings": 8192, "tie_word_embeddings": False,
    "sliding_window": 1024, "n_input_layers": 0, "n_output_layers": 0, "n_recurrent_loops": 1,
    "recurrent_kv_cache_mode": "per_loop",
}  # fmt: skip
DORY_NOTE = (
    "Dory: the recurrent layers run n_recurrent_loops times over weights counted once, each "
    "loop's attention with a cache of its own (recurrent_kv_cache_mode per_loop); the activation "
    "peak, CUDA graphs and decode bound are estimated as for one pass through the layers"
)
_KINDS = ("sliding_attention", "full_attention", "mlp")


def dory_defaults(config: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """The config as DoryConfig completes it: its defaults, the alternating `layer_types`
    (odd layers MLP, layer 6 of every 8 full attention, the other attention layers sliding) and
    `n_recurrent_layers` (the layers that are neither input nor output)."""
    merged = {**DORY_DEFAULTS, **config}
    layers = int_field(merged, "num_hidden_layers", where)
    if merged.get("layer_types") is None:
        merged["layer_types"] = [
            "mlp" if i % 2 else "full_attention" if i % 8 == 6 else "sliding_attention"
            for i in range(layers)
        ]
    if merged.get("n_recurrent_layers") is None:
        merged["n_recurrent_layers"] = (
            layers
            - int_field(merged, "n_input_layers", where)
            - int_field(merged, "n_output_layers", where)
        )
    return merged


def _check(config: Mapping[str, Any], where: str) -> tuple[int, int, int]:
    """(input layers, recurrent layers, loops), checked as DoryConfig.validate does."""
    layers = int_field(config, "num_hidden_layers", where)
    names = ("n_input_layers", "n_recurrent_layers", "n_output_layers")
    parts = [int_field(config, name, where) for name in names]
    if sum(parts) != layers:
        raise ConfigError(
            f"{where}n_input_layers/n_recurrent_layers/n_output_layers: expected them to sum to "
            f"num_hidden_layers {layers}, got {parts}"
        )
    loops = int_field(config, "n_recurrent_loops", where)
    if loops < 1:
        raise ConfigError(f"{where}n_recurrent_loops: expected an integer >= 1, got {loops}")
    mode = config.get("recurrent_kv_cache_mode")
    if mode not in ("per_loop", "last_loop"):
        raise ConfigError(
            f"{where}recurrent_kv_cache_mode: expected per_loop or last_loop, got {mode!r}"
        )
    kinds = config["layer_types"]
    if not isinstance(kinds, list) or any(kind not in _KINDS for kind in kinds):
        raise ConfigError(f"{where}layer_types: expected a list of {', '.join(_KINDS)}")
    if config.get("tie_word_embeddings"):
        raise ConfigError(f"{where}tie_word_embeddings: Dory requires untied embeddings")
    return parts[0], parts[1], loops


def dory_fields(config: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """`ModelArch` fields of a Dory config beyond the common reading (its block layout is
    config_reader's): the loops' extra caches, the nGPT scales and vLLM's refusal of tensor
    parallelism."""
    start, recurrent, loops = _check(config, where)
    kinds = config["layer_types"]
    looped = kinds[start : start + recurrent]
    extra = loops - 1 if config["recurrent_kv_cache_mode"] == "per_loop" else 0
    hidden, width = config["hidden_size"], config["intermediate_size"]
    q_size = config["num_attention_heads"] * config["head_dim"]
    attention = sum(1 for kind in kinds if kind != "mlp")
    scales = attention * (2 * q_size + hidden) + (len(kinds) - attention) * (2 * width + hidden)
    return {
        "extra_full_caches": extra * looped.count("full_attention"),
        "extra_sliding_caches": extra * looped.count("sliding_attention"),
        "scale_params": scales + config["vocab_size"],
        "max_tensor_parallel": 1,
    }
