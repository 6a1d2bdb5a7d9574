"""K2-Horizon (`model_type` k2_horizon) as vLLM serves it from 0.30.0 to 0.34.0
(`vllm/model_executor/models/k2_horizon.py`, first in the 0.30.0 sdist): a GQA decoder of
Qwen3-MoE's layout (`mlp_only_layers`, `decoder_sparse_step`; `intermediate_size` for the dense
layers, `num_experts` of `moe_intermediate_size` with `num_shared_experts` of that width as one
shared MLP without a gate) and what this module counts:
- MoVA (`K2HorizonMoVAAttention`) on the MoE layers when `mova_num_experts` > 0: the value
  projection is `mova_num_experts` column-parallel value experts (hidden -> the rank's KV width
  each) chosen by a replicated `v_router` (hidden -> mova_num_experts, its bias float32 when
  `moe_gate_bias`); q and k as usual; the KV cache as any GQA layer's;
- `attention_gate_func` set: a column-parallel `gate_proj` hidden -> heads x head_dim;
- `query_key_norm`: q and k norms over the rank's whole q and k widths (`K2HorizonRMSNorm` of
  q_size and kv_size), not one head's;
- `attention_bias`: biases on q/k/v and o_proj; `moe_gate_bias`: the routers' float32 bias;
- `layernorm_num_groups` groups the norms' statistics only (one weight of hidden each).
The value experts are counted as routed experts (split by TP as vLLM's ColumnParallelLinear
splits them; a token reads `mova_num_experts_per_tok` of them), so with expert parallelism over
data-parallel ranks the plan spreads them over TP x DP ranks where vLLM keeps them TP-split.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from infermeter.calculators.config_fields import int_field, optional_int
from infermeter.calculators.errors import ConfigError

K2_HORIZON_NOTE = (
    "K2-Horizon: MoVA's value experts counted as routed experts (vLLM splits them by TP only: "
    "under expert parallelism with data-parallel ranks the plan spreads them wider than vLLM "
    "does); the float32 router biases counted in the model dtype"
)


@dataclass(frozen=True)
class K2HorizonParts:
    """What K2-Horizon's attention holds beyond a plain GQA layer's, on every layer or on the
    MoVA (MoE) layers."""

    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    gate: bool
    qk_norm: bool
    value_experts: int  # MoVA's on every MoE layer; 0: none
    value_experts_per_token: int
    router_bias: bool

    def model_params(self, tp: int, layers: int, moe_layers: int) -> dict[str, int]:
        """Parameters by role on one of `tp` ranks, of `layers` decoder layers of which
        `moe_layers` are MoE (MoVA) layers: the value experts as `experts` (those a token uses
        as `experts_active`) less the v_proj they replace, counted as `attention`."""
        q_width = self.heads // tp * self.head_dim
        kv_width = max(1, self.kv_heads // tp) * self.head_dim
        mova_layers = moe_layers if self.value_experts else 0
        per_expert = mova_layers * self.hidden * kv_width
        small = layers * (q_width + kv_width) if self.qk_norm else 0
        return {
            "attention": (layers * self.hidden * q_width if self.gate else 0) - per_expert,
            "experts": self.value_experts * per_expert,
            "experts_active": self.value_experts_per_token * per_expert,
            "router": mova_layers * self.hidden * self.value_experts,
            "small": small + (mova_layers * self.value_experts if self.router_bias else 0),
        }


def k2_horizon_fields(config: Mapping[str, Any], where: str) -> dict[str, Any]:
    """`ModelArch` fields of a k2_horizon config."""
    value_experts = optional_int(config, "mova_num_experts", where, 0)
    chosen = optional_int(config, "mova_num_experts_per_tok", where, 0)
    if value_experts and not 0 < chosen <= value_experts:
        raise ConfigError(
            f"{where}mova_num_experts_per_tok: expected 1 to mova_num_experts "
            f"({value_experts}), got {chosen}"
        )
    heads = int_field(config, "num_attention_heads", where)
    hidden = int_field(config, "hidden_size", where)
    parts = K2HorizonParts(
        hidden=hidden,
        heads=heads,
        kv_heads=optional_int(config, "num_key_value_heads", where, heads),
        head_dim=optional_int(config, "head_dim", where, 0) or hidden // heads,
        gate=config.get("attention_gate_func") is not None,
        qk_norm=bool(config.get("query_key_norm", True)),
        value_experts=value_experts,
        value_experts_per_token=chosen,
        router_bias=bool(config.get("moe_gate_bias")),
    )
    return {"k2_horizon": parts}
