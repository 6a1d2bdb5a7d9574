"""OLMo-hybrid (`model_type` olmo_hybrid): Gated DeltaNet layers between OLMo 2 attention layers.

As vLLM 0.29 builds it (vllm/model_executor/models/olmo_hybrid.py,
layers/mamba/gdn/olmo_gdn_linear_attn.py): a "linear_attention" layer is the Gated DeltaNet of
`calculators.mixers` (q, k, v and gate projections, per-head b and a projections, a short
convolution over q, k and v, a gated RMSNorm per value head, its state shaped by
`gated_delta_net_state_shape`), the others are OLMo 2 attention (norms after attention and MLP,
q/k norms); every layer has a gated MLP. A config that leaves fields out takes the defaults of
vLLM's own OlmoHybridConfig (transformers_utils/configs/olmo_hybrid.py), derived ones included.
"""

from collections.abc import Mapping
from typing import Any

_DEFAULTS: dict[str, Any] = {
    "vocab_size": 100352,
    "hidden_size": 3840,
    "intermediate_size": 11008,
    "num_hidden_layers": 32,
    "num_attention_heads": 30,
    "max_position_embeddings": 65536,
    "tie_word_embeddings": False,
    "linear_conv_kernel_dim": 4,
}


def olmo_hybrid_defaults(config: Mapping[str, Any]) -> dict[str, Any]:
    """The fields OlmoHybridConfig gives a config that leaves them out: every fourth layer full
    attention, as many linear key and value heads as attention heads, key heads 0.75 x hidden /
    heads wide, value heads twice that."""
    merged = {**_DEFAULTS, **{key: value for key, value in config.items() if value is not None}}
    heads, hidden, layers = (
        merged["num_attention_heads"],
        merged["hidden_size"],
        merged["num_hidden_layers"],
    )
    if not all(isinstance(value, int) and value > 0 for value in (heads, hidden, layers)):
        return merged  # the reader names the bad field
    if merged.get("layer_types") is None:
        kinds = ["full_attention" if i % 4 == 3 else "linear_attention" for i in range(layers)]
        if "full_attention" not in kinds:
            kinds[-1] = "full_attention"
        merged["layer_types"] = kinds
    merged.setdefault("linear_num_key_heads", heads)
    merged.setdefault("linear_num_value_heads", heads)
    key_heads = merged["linear_num_key_heads"]
    if isinstance(key_heads, int) and key_heads > 0:
        merged.setdefault("linear_key_head_dim", int(0.75 * hidden / key_heads))
    key_dim = merged.get("linear_key_head_dim")
    if isinstance(key_dim, int):
        merged.setdefault("linear_value_head_dim", 2 * key_dim)
    return merged
