"""Step5 (`model_type` step5) as vLLM 0.33.0-0.34.0 serve it (`vllm/models/step5/nvidia/model.py`,
`common/config.py`, `common/sparse_summary_cache.py`; first in the 0.33.0 sdist): Step 3.5's
layers (read as the step3p5 family, calculators.step3p5: sliding layers with heads of their own,
a gate per head, q/k norms, experts where `moe_layers_enum` lists them, a shared expert of
`share_expert_dim`), with what Step5Config and this module add:
- `layer_types` (or `layer_types_with_mtp`, cut to num_hidden_layers) default to sliding even
  layers and full odd ones; `swa_num_attention_heads` sets the sliding layers' query heads;
- the router is float32 (`need_fp32_gate`, required) with a float32 bias per expert
  (`use_moe_router_bias`, required);
- with a `sparse_config` section (vLLM refuses a checkpoint without one), its full-attention
  layers are DSA layers: q/k/v and the per-head gate fused with the indexer's q
  (`sparse_indexer_num_heads` of `proxy_dim` 256, split over min(TP, `index_tp_size`) ranks),
  k and z (one head each, replicated) in one projection that cannot be quantized
  (`Step5FusedQKVIndexerLinear`); `sparse_indexer_w` hidden -> the indexer heads (split the
  same way); an RMSNorm and a LayerNorm of 256; an unused float32 `ssmax_s` per head; and beside
  the layer's KV a 256-byte FP8 summary per 8 tokens (`Step5SparseSummaryCacheLayer`: a
  FullAttentionSpec with tokens_per_state 8 in the layer's own group).
Not modelled: the CSA tail ring (`csa_tail_ring.py`: a few rows a request), `norm_dtype` float32
norms (counted in the model dtype). The step5_vl wrapper's Perception Encoder is
calculators.vision's.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from infermeter.calculators.config_fields import int_field, optional_int, optional_mapping
from infermeter.calculators.errors import ConfigError

STEP5_TYPE = "step5"
# Step5Config's defaults (vLLM 0.34.0 transformers_utils/configs/step5.py) that change a count.
STEP5_DEFAULTS: dict[str, Any] = {
    "hidden_size": 5120, "intermediate_size": 13312, "num_attention_heads": 40,
    "num_attention_groups": 8, "num_hidden_layers": 48, "vocab_size": 65536,
    "tie_word_embeddings": False, "moe_intermediate_size": 10240, "moe_num_experts": 16,
    "moe_top_k": 4, "use_head_wise_attn_gate": False, "use_moe_router_bias": False,
    "need_fp32_gate": False,
}  # fmt: skip
STEP5_NOTE = (
    "Step5: Step 3.5's layers with a float32 router, and on its full-attention layers the DSA "
    "indexer (unquantized, with the layer's q/k/v and gate) and a 256-byte FP8 summary per 8 "
    "tokens beside each layer's KV; the CSA tail ring (a few rows a request) is not counted"
)
_PROXY_DIM = 256
_SUMMARY_BYTES_PER_TOKEN = _PROXY_DIM // 8


def step5_layer_types(merged: dict[str, Any]) -> None:
    """Step5Config's layer types (the dense prefix of `layer_types_with_mtp`), Step5Attention's
    default (even layers sliding), and `swa_num_attention_heads` as the sliding layers' heads."""
    layers = merged.get("num_hidden_layers")
    types = merged.get("layer_types_with_mtp") or merged.get("layer_types")
    if isinstance(layers, int) and not types:
        types = ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(layers)]
    if types:
        merged["layer_types"] = types
    swa_heads = merged.get("swa_num_attention_heads")
    if swa_heads is not None:
        other = dict(merged.get("attention_other_setting") or {})
        other.setdefault("attention_type", "sliding_attention")
        groups = merged.get("num_attention_groups", merged.get("num_key_value_heads"))
        other.setdefault("num_attention_groups", groups)
        # Step5Attention: head_dim or hidden_size // the sliding layer's own heads.
        hidden = merged.get("hidden_size")
        fallback = hidden // swa_heads if isinstance(hidden, int) and swa_heads else None
        other.setdefault("head_dim", merged.get("head_dim") or fallback)
        merged["attention_other_setting"] = {**other, "num_attention_heads": swa_heads}


@dataclass(frozen=True)
class Step5Parts:
    """What Step5 adds to Step 3.5's layers: its DSA layers' indexers and router biases."""

    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    dsa_layers: int
    index_heads: int
    index_tp: int
    experts: int

    def model_params(self, tp: int, layers: int, moe_layers: int) -> dict[str, int]:
        """Parameters by role on one of `tp` ranks: the DSA layers' fused q/k/v and gate move
        from `attention` to the unquantized `small`, with the indexer's weights and norms."""
        q_width = self.heads // tp * self.head_dim
        kv_width = 2 * max(1, self.kv_heads // tp) * self.head_dim
        fused = self.hidden * (q_width + kv_width + self.heads // tp)
        index_rows = self.index_heads * _PROXY_DIM // min(tp, self.index_tp)
        indexer = self.hidden * (index_rows + 2 * _PROXY_DIM)  # q; k and z replicated
        indexer += self.hidden * self.index_heads // min(tp, self.index_tp)  # sparse_indexer_w
        norms = _PROXY_DIM + 2 * _PROXY_DIM  # the q RMSNorm, the k LayerNorm with its bias
        return {
            "attention": -self.dsa_layers * fused,
            "small": self.dsa_layers * (fused + indexer + norms),
            "four_byte": self.dsa_layers * self.heads + moe_layers * self.experts,
        }

    @property
    def summary_bytes_per_token(self) -> int:
        """The DSA layers' FP8 summaries, bytes per token."""
        return self.dsa_layers * _SUMMARY_BYTES_PER_TOKEN


def _sparse_section(config: Mapping[str, Any], where: str) -> Mapping[str, Any] | None:
    """The sparse_config section when DSA is on (None when `enabled` is false)."""
    section = optional_mapping(config, "sparse_config", where)
    if section is None:
        raise ConfigError(
            f"{where}sparse_config: vLLM serves Step5 only from a checkpoint with a "
            "sparse_config section"
        )
    if section.get("enabled") is False:
        return None
    place = f"{where}sparse_config."
    for key, expected in (("proxy_dim", _PROXY_DIM), ("region_block_size", 8),
                          ("sparse_indexer_num_k_heads", 1)):  # fmt: skip
        if optional_int(section, key, place, expected) != expected:
            raise ConfigError(f"{place}{key}: vLLM's Step5 DSA requires {expected}")
    return section


def step5_fields(config: Mapping[str, Any], kinds: tuple[str, ...], where: str) -> dict[str, Any]:
    """`ModelArch` fields of a step5 config beyond Step 3.5's; `kinds`: its layer kinds."""
    for key in ("need_fp32_gate", "use_moe_router_bias"):
        if not config.get(key):
            raise ConfigError(f"{where}{key}: vLLM's Step5 MoE requires it true")
    section = _sparse_section(config, where)
    heads = int_field(config, "num_attention_heads", where)
    head_dim = optional_int(config, "head_dim", where, 0) or (
        int_field(config, "hidden_size", where) // heads
    )
    dsa_layers = kinds.count("full") if section is not None else 0
    if dsa_layers and (head_dim not in (128, 192) or not config.get("use_head_wise_attn_gate")):
        raise ConfigError(
            f"{where}head_dim/use_head_wise_attn_gate: Step5's DSA layers require a head_dim "
            f"of 128 or 192 and the per-head gate; got {head_dim}"
        )
    place = f"{where}sparse_config."
    index_heads = optional_int(section or {}, "sparse_indexer_num_heads", place, 16)
    index_tp = optional_int(section or {}, "index_tp_size", place, 0) or optional_int(
        section or {}, "num_provider_groups", place, 4
    )
    if index_tp <= 0:
        raise ConfigError(f"{place}index_tp_size: expected an integer > 0, got {index_tp}")
    if dsa_layers and (index_heads // index_tp not in (2, 4) or index_heads % index_tp):
        raise ConfigError(
            f"{place}sparse_indexer_num_heads: vLLM's Step5 DSA requires 2 or 4 indexer heads "
            f"per index_tp_size group; got {index_heads} over {index_tp}"
        )
    parts = Step5Parts(
        hidden=int_field(config, "hidden_size", where),
        heads=heads,
        kv_heads=int_field(config, "num_key_value_heads", where),
        head_dim=head_dim,
        dsa_layers=dsa_layers,
        index_heads=index_heads,
        index_tp=index_tp,
        experts=optional_int(config, "num_experts", where, 0),
    )
    return {"step5": parts, "float32_router": True}
