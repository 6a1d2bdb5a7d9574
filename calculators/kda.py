"""Kimi Linear (`model_type` kimi_linear): Kimi Delta Attention (KDA) layers between MLA layers.

Read from vLLM's code: 0.11.1-0.24.0 serve it from `vllm/model_executor/models/kimi_linear.py`,
0.29.0 from `vllm/models/kimi_k3/nvidia/model.py` (`KimiLinearForCausalLM`, the class Kimi K3
builds on), both with the KDA layer of `model_executor/layers/mamba/gdn/kimi_gdn_linear_attn.py`:
- `linear_attn_config.kda_layers` lists the KDA layers, 1-based (`is_kda_layer(i)`: `i + 1` in
  the list); every other layer is DeepSeek-style MLA (`kv_lora_rank`, no q LoRA in the 48B
  model), whose KV cache is the latent and RoPE part as for DeepSeek;
- a KDA layer keeps per sequence a short-convolution state of 3 x heads x head_dim channels by
  `short_conv_kernel_size - 1` steps in the model dtype and a recurrent state of heads x
  head_dim x head_dim in float32 (`mamba_utils.kda_state_shape` / `kda_state_dtype`);
- the MoE: DeepSeek-style routed experts (`num_experts`, `num_experts_per_token`,
  `moe_intermediate_size`) with `num_shared_experts` of the same width after the first
  `first_k_dense_replace` dense layers.
Kimi K3's additions served by the same class (a full-rank KDA gate, attention residual
blocks, latent MoE, an MLA output gate) are not modelled: a kimi_linear config that sets one is
refused, naming it.
"""

from collections.abc import Mapping
from typing import Any

from infermeter.calculators.errors import ConfigError
from infermeter.calculators.mixers import KDA, RecurrentMixer
from infermeter.calculators.model_arch import FULL

# Kimi K3 settings that change the layer (vLLM 0.29 kimi_k3/nvidia/model.py): refused when set.
_K3_MECHANISMS = {
    "attn_res_block_size": "attention residual blocks",
    "routed_expert_hidden_size": "latent MoE",
    "mla_use_output_gate": "an output gate on MLA",
}


def _linear_config(config: Mapping[str, Any], where: str) -> Mapping[str, Any]:
    linear = config.get("linear_attn_config")
    if not isinstance(linear, Mapping):
        raise ConfigError(f"{where}linear_attn_config: expected a JSON object, got {linear!r}")
    return linear


def _positive(linear: Mapping[str, Any], name: str, where: str) -> int:
    value = linear.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(
            f"{where}linear_attn_config.{name}: expected an integer > 0, got {value!r}"
        )
    return value


def check_kimi_linear(config: Mapping[str, Any], where: str) -> None:
    """Refuse the Kimi K3 mechanisms the calculators do not model, naming the key."""
    for key, what in _K3_MECHANISMS.items():
        if config.get(key):
            raise ConfigError(f"{where}{key}: Kimi K3's {what} is not modelled by the calculators")
    if _linear_config(config, where).get("use_full_rank_gate"):
        raise ConfigError(
            f"{where}linear_attn_config.use_full_rank_gate: Kimi K3's full-rank KDA gate is "
            "not modelled by the calculators"
        )


def kimi_linear_layer_kinds(config: Mapping[str, Any], num_layers: int, where: str) -> list[str]:
    """KDA for the layers `linear_attn_config.kda_layers` lists (1-based), MLA for the rest."""
    listed = _linear_config(config, where).get("kda_layers")
    if not isinstance(listed, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) and 1 <= i <= num_layers for i in listed
    ):
        raise ConfigError(
            f"{where}linear_attn_config.kda_layers: expected a list of 1-based layer numbers "
            f"from 1 to {num_layers} (num_hidden_layers)"
        )
    kda = set(listed)
    return [KDA if index + 1 in kda else FULL for index in range(num_layers)]


def kda_layer(
    hidden: int, heads: int, head_dim: int, conv_kernel: int, *, full_rank_gates: bool = False
) -> RecurrentMixer:
    """A KDA layer's shape: heads of one size for keys and values, a float32 recurrent state
    (vLLM's `kda_state_shape` / `kda_state_dtype`), whichever model's config names them."""
    return RecurrentMixer(
        kind=KDA,
        hidden_size=hidden,
        conv_kernel=conv_kernel,
        key_heads=heads,
        value_heads=heads,
        key_head_dim=head_dim,
        value_head_dim=head_dim,
        ssm_state_dtype="float32",
        full_rank_gates=full_rank_gates,
    )


def kda_mixer(config: Mapping[str, Any], hidden: int, where: str) -> RecurrentMixer:
    """Kimi Linear's KDA layers, from `linear_attn_config`."""
    linear = _linear_config(config, where)
    heads = _positive(linear, "num_heads", where)
    head_dim = _positive(linear, "head_dim", where)
    return kda_layer(hidden, heads, head_dim, _positive(linear, "short_conv_kernel_size", where))
