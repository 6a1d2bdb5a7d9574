"""BailingMoeV3 (`model_type` bailing_moe_v3): Kimi Delta Attention layers between multi-head latent
attention layers, with Ling-style experts.

As vLLM 0.29 builds it (vllm/model_executor/models/bailing_moe_v3.py):
- layer i is MLA when (i + 1) is a multiple of `layer_group_size` or i falls after the last whole
  group (`_is_kda_layer`), KDA otherwise;
- KDA (`BailingMoeV3KimiDeltaAttention`) with `no_kda_lora` (vLLM serves no other): q, k, v and a
  beta per head, full-rank f and g gate projections (hidden -> heads x head_dim) instead of Kimi
  Linear's low-rank ones, float32 short convolutions of `short_conv_kernel_size` and dt_bias, a
  gated norm per head; its state is `kda_state_shape` (as Kimi Linear's, calculators.kda);
- MLA (`BailingMoeV3MLAAttention`) as DeepSeek's, its getattr defaults below, with an output gate
  (`gated_attention_proj_granularity_type`: "head_wise" one a head, "element_wise" one a value
  channel);
- experts after `first_k_dense_replace` dense layers, `num_shared_experts` shared experts of
  `moe_shared_expert_intermediate_size`, a float32 router with an expert bias.
"""

from collections.abc import Mapping
from typing import Any

from infermeter.calculators.config_fields import int_field
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.kda import kda_layer
from infermeter.calculators.mixers import KDA, RecurrentMixer
from infermeter.calculators.model_arch import FULL

# bailing_moe_v3.py's getattr defaults for its MLA, and its router's expert bias.
BAILING_V3_DEFAULTS: dict[str, Any] = {
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "moe_router_enable_expert_bias": True,
}
_GATES = {"head_wise": "head", "element_wise": "element", None: ""}


def bailing_v3_layer_kinds(config: Mapping[str, Any], num_layers: int, where: str) -> list[str]:
    """MLA ("full") at the end of each `layer_group_size` group and after the last whole group,
    KDA elsewhere."""
    group = int_field(config, "layer_group_size", where)
    if group == 0:
        raise ConfigError(f"{where}layer_group_size: expected an integer > 0, got 0")
    last_group_end = num_layers // group * group
    return [
        FULL if (index + 1) % group == 0 or index >= last_group_end else KDA
        for index in range(num_layers)
    ]


def bailing_v3_mixer(config: Mapping[str, Any], hidden: int, where: str) -> RecurrentMixer:
    """The KDA layers: `num_attention_heads` heads of `head_dim`, full-rank gates."""
    if not config.get("no_kda_lora", False):
        raise ConfigError(
            f"{where}no_kda_lora: vLLM serves BailingMoeV3's KDA only with no_kda_lora true "
            "(bailing_moe_v3.py)"
        )
    return kda_layer(
        hidden,
        int_field(config, "num_attention_heads", where),
        int_field(config, "head_dim", where),
        int_field(config, "short_conv_kernel_size", where),
        full_rank_gates=True,
    )


def bailing_v3_fields(config: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The MLA layers' output gate."""
    granularity = config.get("gated_attention_proj_granularity_type")
    if not isinstance(granularity, (str, type(None))) or granularity not in _GATES:
        raise ConfigError(
            f"{where}gated_attention_proj_granularity_type: expected 'head_wise', "
            f"'element_wise' or null, got {granularity!r}"
        )
    return {"attention_gate": _GATES[granularity]}
