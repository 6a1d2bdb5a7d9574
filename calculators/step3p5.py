"""Step 3.5 (`model_type` step3p5): sliding-window layers with heads of their own, a sigmoid
gate per head, per-head q/k norms, experts where `moe_layers_enum` lists them.

As vLLM 0.29 builds it (vllm/model_executor/models/step3p5.py, `Step3p5DecoderLayer`,
`Step3p5Attention`, `FusedMoEBlock`) from its Step3p5Config (transformers_utils/configs/step3p5.py):
- the layers whose `layer_types` entry is `attention_other_setting["attention_type"]` take that
  setting's `num_attention_heads`, `num_attention_groups` (KV heads) and `head_dim`; the others
  the config's own; a layer is "sliding_attention" only where `sliding_window` is set;
- `use_head_wise_attn_gate`: a g_proj from the hidden state to one gate a head;
- q_norm and k_norm (GemmaRMSNorm over head_dim) in every layer (config_reader's qk-norm types);
- the checkpoint's `layer_types` may be longer than num_hidden_layers: vLLM's config class cuts it.
"""

from collections.abc import Mapping
from typing import Any

from infermeter.calculators.config_fields import int_field, optional_int, optional_mapping
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.model_arch import AttentionShape

# Step3p5Config defaults that change a count when config.json leaves them out.
STEP3P5_DEFAULTS: dict[str, Any] = {
    "num_attention_groups": 8,
    "tie_word_embeddings": False,
    "use_head_wise_attn_gate": False,
}


def step3p5_layer_types(config: dict[str, Any]) -> None:
    """Cut `layer_types` to num_hidden_layers, as Step3p5Config does; without `sliding_window`
    every layer attends fully (Step3p5Attention)."""
    types, layers = config.get("layer_types"), config.get("num_hidden_layers")
    if isinstance(types, list) and isinstance(layers, int):
        types = types[:layers]
        if not config.get("sliding_window"):
            types = ["full_attention"] * len(types)
        config["layer_types"] = types


def step3p5_fields(config: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The `ModelArch` fields Step 3.5 sets: the other layers' heads, the per-head gate."""
    fields: dict[str, Any] = {
        "attention_gate": "head" if config.get("use_head_wise_attn_gate") else ""
    }
    other = optional_mapping(config, "attention_other_setting", where)
    if other is None:
        return fields
    inner = f"{where}attention_other_setting."
    if other.get("attention_type", "sliding_attention") != "sliding_attention":
        raise ConfigError(
            f"{inner}attention_type: expected 'sliding_attention', got {other['attention_type']!r}"
        )
    head_dim = optional_int(other, "head_dim", inner, 0) or optional_int(
        config, "head_dim", where, 0
    )
    if not head_dim:
        raise ConfigError(f"{inner}head_dim: required field missing from config.json")
    fields["sliding_attention"] = AttentionShape(
        int_field(other, "num_attention_heads", inner),
        int_field(other, "num_attention_groups", inner),
        head_dim,
        head_dim,
        False,
    )
    return fields
