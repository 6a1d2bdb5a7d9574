"""Laguna (`model_type` laguna): attention with a head count per layer, an output gate, sinks on the
sliding-window layers, and Qwen-style experts.

As vLLM 0.29 builds it (vllm/model_executor/models/laguna.py, `LagunaDecoderLayer`,
`LagunaAttention`, `LagunaMoE`) from its LagunaConfig (transformers_utils/configs/laguna.py):
- `num_attention_heads_per_layer` (Laguna-XS) gives each layer its query heads; the KV heads and
  head size are the same in every layer, so the cache per token is too;
- `gating` projects a sigmoid gate from the hidden state: one per head (True or "per-head") or
  one per query channel ("per-element");
- with `swa_attention_sink_enabled` the "sliding_attention" layers of `layer_types` have a sink
  per head;
- per-head q and k RMSNorms; experts where `decoder_sparse_step` says, except `mlp_only_layers`
  (layer 0 by default), with a shared expert of `shared_expert_intermediate_size`.
"""

from collections.abc import Mapping
from typing import Any

from infermeter.calculators.config_fields import optional_int
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.model_arch import AttentionShape

# LagunaConfig's defaults for the fields that shape the weights and the cache.
LAGUNA_DEFAULTS: dict[str, Any] = {
    "vocab_size": 100352,
    "hidden_size": 2048,
    "intermediate_size": 8192,
    "num_hidden_layers": 40,
    "num_attention_heads": 48,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "max_position_embeddings": 131072,
    "tie_word_embeddings": False,
    "num_experts": 256,
    "num_experts_per_tok": 8,
    "moe_intermediate_size": 512,
    "shared_expert_intermediate_size": 512,
    "mlp_only_layers": [0],
}
_GATES = {True: "head", "per-head": "head", "per-element": "element", False: "", None: ""}


def laguna_fields(config: Mapping[str, Any], num_layers: int, where: str) -> dict[str, Any]:
    """The `ModelArch` fields Laguna sets: heads per layer, the gate, sinks on sliding layers."""
    per_layer = config.get("num_attention_heads_per_layer")
    heads: tuple[int, ...] = ()
    if per_layer is not None:
        if not (
            isinstance(per_layer, list)
            and len(per_layer) == num_layers
            and all(isinstance(h, int) and not isinstance(h, bool) and h > 0 for h in per_layer)
        ):
            raise ConfigError(
                f"{where}num_attention_heads_per_layer: expected {num_layers} head counts > 0 "
                "(num_hidden_layers)"
            )
        heads = tuple(per_layer)
    gating = config.get("gating", True)
    if not isinstance(gating, (bool, str)) or gating not in _GATES:
        raise ConfigError(
            f"{where}gating: expected true, false, 'per-head' or 'per-element', got {gating!r}"
        )
    fields: dict[str, Any] = {"heads_per_layer": heads, "attention_gate": _GATES[gating]}
    if config.get("swa_attention_sink_enabled"):
        head_dim = optional_int(config, "head_dim", where, 128)
        kv_heads = optional_int(config, "num_key_value_heads", where, 8)
        fields["sliding_attention"] = AttentionShape(
            optional_int(config, "num_attention_heads", where, 48),
            kv_heads,
            head_dim,
            head_dim,
            sinks=True,
        )
    return fields
