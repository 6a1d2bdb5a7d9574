"""LFM2 and LFM2-MoE (`model_type` lfm2, lfm2_moe) as vLLM serves them
(`vllm/model_executor/models/lfm2.py` and `lfm2_moe.py`, read in 0.34.0; the config classes
are transformers' `Lfm2Config` and `Lfm2MoeConfig`, 5.24.0).

Hybrids of grouped-query attention and LFM's gated short convolutions, in the order
`layer_types` lists them ("full_attention" or "conv"). Per layer, on a rank:
- attention (`Lfm2Attention`): qkv_proj and out_proj split by heads, no biases, per-head q/k
  RMSNorms; the head size is hidden_size / num_attention_heads whatever `head_dim` says;
- "conv": vLLM's `ShortConv` (`calculators.mixers`, kind SHORT_CONV) over `conv_dim` channels
  (LFM2-MoE: hidden_size), whose last `conv_L_cache` - 1 inputs vLLM keeps per sequence as a
  Mamba state; its output joins the residual stream, so `conv_dim` (and LFM2's MLP input
  `block_dim`) can only be hidden_size;
- LFM2: a SwiGLU MLP (w13, w2) whose width `Lfm2MLP` derives from `intermediate_size`
  (`Lfm2Config` puts `block_ff_dim` there): with `block_auto_adjust_ff_dim`, int(2w/3), times
  `block_ffn_dim_multiplier`, rounded up to a multiple of `block_multiple_of`;
- LFM2-MoE: the first `num_dense_layers` layers an MLP of `intermediate_size` as it stands, the
  others `num_experts` experts of `moe_intermediate_size` behind a replicated router, with a
  float32 correction bias per expert where `use_expert_bias`;
- two RMSNorms (operator_norm, ffn_norm).
The final RMSNorm is `embedding_norm`, and the lm_head is the embedding (`tie_weights`, whatever
the config says).
"""

from collections.abc import Mapping
from typing import Any

from infermeter.calculators.config_fields import int_field
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.mixers import SHORT_CONV, listed_layer_kinds
from infermeter.calculators.model_arch import FULL

LFM2_TYPES = ("lfm2", "lfm2_moe")
# The config classes' defaults that a count or a cache reads (transformers 5.24.0).
LFM2_DEFAULTS: dict[str, Any] = {
    "vocab_size": 65536, "hidden_size": 2560, "intermediate_size": 12288,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
    "max_position_embeddings": 128000, "conv_bias": False, "conv_L_cache": 3,
    "block_multiple_of": 256, "block_ffn_dim_multiplier": 1.0, "block_auto_adjust_ff_dim": True,
}  # fmt: skip
LFM2_MOE_DEFAULTS: dict[str, Any] = {
    "vocab_size": 65536, "hidden_size": 2048, "intermediate_size": 7168,
    "moe_intermediate_size": 1792, "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 8, "max_position_embeddings": 128000, "conv_bias": False,
    "conv_L_cache": 3, "num_dense_layers": 2, "num_experts_per_tok": 4, "num_experts": 32,
    "use_expert_bias": True,
}  # fmt: skip
_KINDS = {"full_attention": FULL, "conv": SHORT_CONV}


def lfm2_defaults(config: Mapping[str, Any], where: str) -> dict[str, Any]:
    """An lfm2 / lfm2_moe config (its class's defaults applied) as vLLM's modules read it:
    `block_ff_dim` as the MLP width and `full_attn_idxs` as the layer pattern (Lfm2Config's
    __post_init__), LFM2's MLP width auto-adjusted (Lfm2MLP), the head size hidden / heads."""
    merged = dict(config)
    hidden = int_field(merged, "hidden_size", where)
    heads = int_field(merged, "num_attention_heads", where)
    merged["head_dim"] = hidden // heads if heads else 0
    if merged.get("model_type") == "lfm2_moe":
        return merged
    if "block_ff_dim" in merged:
        merged["intermediate_size"] = merged["block_ff_dim"]
    merged["intermediate_size"] = _mlp_width(merged, where)
    for name in ("conv_dim", "block_dim"):
        width = int_field(merged, name, where)
        if width != hidden:
            raise ConfigError(
                f"{where}{name}: expected hidden_size ({hidden}): lfm2.py adds the layer's "
                f"output to the residual stream, got {width}"
            )
    if merged.get("layer_types") is None:
        merged["layer_types"] = _attention_at(merged, where)
    return merged


def _mlp_width(config: Mapping[str, Any], where: str) -> int:
    """Lfm2MLP's width: `intermediate_size`, or with `block_auto_adjust_ff_dim` two thirds of
    it, times `block_ffn_dim_multiplier`, rounded up to a multiple of `block_multiple_of`."""
    width = int_field(config, "intermediate_size", where)
    if not config.get("block_auto_adjust_ff_dim"):
        return width
    multiple = int_field(config, "block_multiple_of", where)
    factor = config.get("block_ffn_dim_multiplier", 1.0)
    if multiple <= 0:
        raise ConfigError(f"{where}block_multiple_of: expected an integer > 0, got {multiple}")
    if isinstance(factor, bool) or not isinstance(factor, int | float) or not factor > 0:
        raise ConfigError(f"{where}block_ffn_dim_multiplier: expected a number > 0, got {factor!r}")
    width = int(factor * int(2 * width / 3))
    return multiple * ((width + multiple - 1) // multiple)


def _attention_at(config: Mapping[str, Any], where: str) -> list[str]:
    """Lfm2Config's `layer_types` from `full_attn_idxs` (absent: every layer attention)."""
    layers = int_field(config, "num_hidden_layers", where)
    indices = config.get("full_attn_idxs", list(range(layers)))
    if not isinstance(indices, list) or not all(
        isinstance(index, int) and 0 <= index < layers for index in indices
    ):
        raise ConfigError(
            f"{where}full_attn_idxs: expected a list of layer indices 0..{layers - 1}"
        )
    return ["full_attention" if index in indices else "conv" for index in range(layers)]


def lfm2_layer_kinds(config: Mapping[str, Any], num_layers: int, where: str) -> list[str]:
    """Each layer's kind from `layer_types` (LFM2-MoE's config has no other pattern: vLLM's
    lfm2_moe.py indexes the list)."""
    refusal = "expected 'full_attention' or 'conv', got {0!r}"
    return listed_layer_kinds(
        config, "layer_types", num_layers, where, sequence=list, kinds=_KINDS, refusal=refusal
    )
