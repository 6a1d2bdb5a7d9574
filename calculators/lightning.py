"""Ling 2.5's lightning (linear) attention layers (`model_type` bailing_moe_linear).

As vLLM 0.29 builds them (vllm/model_executor/layers/mamba/linear/bailing_linear_attn.py,
`BailingMoELinearAttention`, on MiniMax-Text-01's linear attention; the model in
vllm/model_executor/models/bailing_moe_linear.py):
- the layers where (i + 1) % `layer_group_size` != 0 are linear attention, the others
  multi-head latent attention (`is_linear_layer`);
- a linear layer projects q, k and v for every head (MHA: `num_attention_heads` KV heads too,
  `head_dim` each), a gate g_proj of the same width, and a dense output projection, all split
  by heads; biases where `use_bias` / `use_qkv_bias` say; q/k RMSNorms (`use_qk_norm`) and the
  gated group RMSNorm over the heads' width;
- each sequence keeps, per layer, a state of heads × head_dim × head_dim values
  (`MambaStateShapeCalculator.linear_attention_state_shape`) in the model dtype (or the
  `mamba_ssm_cache_dtype` the config sets), no convolution state.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from infermeter.calculators.config_fields import optional_int
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.mixers import STATE_DTYPE_BYTES, state_dtype

LIGHTNING = "lightning_attention"


@dataclass(frozen=True)
class LightningMixer:
    """The lightning-attention layers of a Ling 2.5 config."""

    hidden_size: int
    num_heads: int
    head_dim: int
    qkv_bias: bool
    out_bias: bool
    qk_norm: bool
    ssm_state_dtype: str | None = None  # None: the model dtype

    def params(self, tp: int) -> tuple[int, int]:
        """(linear weights, small tensors) of one such layer on one of `tp` ranks."""
        width = self.num_heads * self.head_dim // tp
        linear = self.hidden_size * 3 * width + self.hidden_size * width + width * self.hidden_size
        small = (
            (3 * width if self.qkv_bias else 0)
            + (self.hidden_size if self.out_bias else 0)
            + (2 * self.head_dim if self.qk_norm else 0)
            + width  # g_norm
        )
        return linear, small

    def state_bytes_per_sequence(self, tp: int, model_dtype_bytes: int) -> int:
        """Bytes of one sequence's state in one such layer on one of `tp` ranks."""
        dtype_bytes = STATE_DTYPE_BYTES.get(self.ssm_state_dtype or "", model_dtype_bytes)
        return self.num_heads // tp * self.head_dim * self.head_dim * dtype_bytes


def lightning_layer_kinds(config: Mapping[str, Any], num_layers: int, where: str) -> list[str]:
    """bailing_moe_linear.py's `is_linear_layer`: linear unless (i + 1) % layer_group_size == 0."""
    from infermeter.calculators.model_arch import FULL  # model_arch imports this module

    group = optional_int(config, "layer_group_size", where, 1)
    return [
        LIGHTNING if group > 0 and (index + 1) % group != 0 else FULL for index in range(num_layers)
    ]


def lightning_mixer(config: Mapping[str, Any], hidden: int, where: str) -> LightningMixer:
    heads = optional_int(config, "num_attention_heads", where, 0)
    head_dim = optional_int(config, "head_dim", where, 0) or (hidden // heads if heads else 0)
    if not heads or not head_dim:
        raise ConfigError(f"{where}head_dim: expected a head size > 0 for the linear layers")
    use_bias = bool(config.get("use_bias", False))
    return LightningMixer(
        hidden_size=hidden,
        num_heads=heads,
        head_dim=head_dim,
        qkv_bias=use_bias or bool(config.get("use_qkv_bias", False)),
        out_bias=use_bias,
        qk_norm=bool(config.get("use_qk_norm", False)),
        ssm_state_dtype=state_dtype(config, where),
    )
