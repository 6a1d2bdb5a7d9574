"""Mamba-2 layers (IBM Granite 4.0-H, NVIDIA Nemotron-H): the mixer's weights and its state.

The shapes follow vLLM's `MambaMixer2` (vllm/model_executor/layers/mamba/mamba_mixer2.py) and its
state-shape calculator (`MambaStateShapeCalculator.mamba2_state_shape` in mamba_utils.py):

- in_proj maps the hidden state to the gate and x (2 × inner width), B and C (2 × groups × state
  size) and dt (one per head); conv1d runs over x, B and C; per head dt_bias, A and D; a gated
  RMSNorm over the inner width; out_proj back to the hidden size.
- State of one sequence in one layer: the convolution window (kernel − 1 steps of x, B and C) and
  the SSM state (heads × head size × state size), split across tensor-parallel ranks by heads;
  with fewer groups than ranks, vLLM repeats the groups so every rank holds one
  (`extra_groups_for_head_shards`).

Nemotron-H's layers are single-purpose: `hybrid_override_pattern` names each one Mamba-2 (M),
attention (*) or MLP (-); Granite 4.0-H layers are a Mamba-2 or attention mixer plus an MLP.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from infermeter.calculators.config_fields import int_field, optional_int
from infermeter.calculators.mixers import STATE_DTYPE_BYTES, listed_layer_kinds, state_dtype

MAMBA2 = "mamba2"
MLP_ONLY = "mlp"  # Nemotron-H's MLP layers: no attention, no mixer, no KV
_STATE_DTYPE_FIELDS = ("mamba_ssm_cache_dtype", "mamba_ssm_dtype")
"""Where a config names its state dtype, the first set wins (mixers.py reads them the other way
round; kept as each was written)."""


@dataclass(frozen=True)
class Mamba2Mixer:
    """One kind of Mamba-2 layer, as the config describes it."""

    hidden_size: int
    num_heads: int
    head_dim: int
    groups: int
    state_size: int
    conv_kernel: int
    conv_bias: bool
    proj_bias: bool
    ssm_state_dtype: str | None = None  # None: the model dtype

    @property
    def inner_size(self) -> int:
        return self.num_heads * self.head_dim

    def _groups_per_rank(self, tp: int) -> int:
        groups = self.groups if self.groups % tp == 0 else self.groups + tp - self.groups
        return max(1, groups // tp)

    def params(self, tp: int) -> tuple[int, int]:
        """(linear weights, small tensors) of one such layer on one of `tp` ranks."""
        inner = self.inner_size // tp
        heads = self.num_heads // tp
        groups_state = 2 * self._groups_per_rank(tp) * self.state_size
        conv_dim = inner + groups_state
        projected = 2 * inner + groups_state + heads
        linear = self.hidden_size * projected + inner * self.hidden_size
        small = (
            conv_dim * self.conv_kernel
            + (conv_dim if self.conv_bias else 0)
            + 3 * heads  # dt_bias, A, D
            + inner  # the gated RMSNorm
            + (projected + self.hidden_size if self.proj_bias else 0)
        )
        return linear, small

    def state_bytes_per_sequence(self, tp: int, model_dtype_bytes: int) -> int:
        """Bytes of one sequence's state in one such layer on one of `tp` ranks."""
        ssm_bytes = STATE_DTYPE_BYTES.get(self.ssm_state_dtype or "", model_dtype_bytes)
        conv_dim = self.inner_size // tp + 2 * self._groups_per_rank(tp) * self.state_size
        conv = conv_dim * (self.conv_kernel - 1) * model_dtype_bytes
        temporal = self.num_heads // tp * self.head_dim * self.state_size * ssm_bytes
        return conv + temporal


class _Mamba2Fields(NamedTuple):
    """Where a family's config names each Mamba-2 setting (and its default group count)."""

    heads: str
    head_dim: str
    groups: str
    default_groups: int
    state_size: str
    conv_kernel: str
    conv_bias: str
    proj_bias: str


_GRANITE_FIELDS = _Mamba2Fields(
    "mamba_n_heads", "mamba_d_head", "mamba_n_groups", 1, "mamba_d_state", "mamba_d_conv",
    "mamba_conv_bias", "mamba_proj_bias",
)  # fmt: skip
_NEMOTRON_H_FIELDS = _Mamba2Fields(
    "mamba_num_heads", "mamba_head_dim", "n_groups", 8, "ssm_state_size", "conv_kernel",
    "use_conv_bias", "use_bias",
)  # fmt: skip

# A pure Mamba-2 model (`model_type` mamba2, Mamba-Codestral): transformers' Mamba2Config names and
# defaults, as vLLM 0.29's mamba2.py passes them to `MambaMixer2`.
_MAMBA2_FIELDS = _Mamba2Fields(
    "num_heads", "head_dim", "n_groups", 8, "state_size", "conv_kernel", "use_conv_bias",
    "use_bias",
)  # fmt: skip


def mamba2_mixer(config: Mapping[str, Any], hidden: int, where: str) -> Mamba2Mixer:
    """The Mamba-2 layers of a Granite 4.0-H (`mamba_n_heads`, `mamba_d_head`, …), Nemotron-H
    (`mamba_num_heads`, `mamba_head_dim`, `ssm_state_size`, …) or Mamba-2 (`num_heads`,
    `head_dim`, `state_size`, …) config."""
    if config.get("model_type") == "mamba2":
        names = _MAMBA2_FIELDS
    else:
        names = _GRANITE_FIELDS if "mamba_n_heads" in config else _NEMOTRON_H_FIELDS
    return Mamba2Mixer(
        hidden_size=hidden,
        num_heads=int_field(config, names.heads, where),
        head_dim=int_field(config, names.head_dim, where),
        groups=optional_int(config, names.groups, where, names.default_groups),
        state_size=optional_int(config, names.state_size, where, 128),
        conv_kernel=optional_int(config, names.conv_kernel, where, 4),
        conv_bias=bool(config.get(names.conv_bias, True)),
        proj_bias=bool(config.get(names.proj_bias, False)),
        ssm_state_dtype=state_dtype(config, where, _STATE_DTYPE_FIELDS),
    )


# E: a mixture-of-experts layer (Nemotron-H MoE, vLLM's NemotronHMoEDecoderLayer): no attention and
# no state, its experts counted from the MoE keys (`calculators.moe_config`).
_PATTERN_KINDS = {"M": MAMBA2, "*": "full", "-": MLP_ONLY, "E": MLP_ONLY}


def nemotron_h_layer_kinds(config: Mapping[str, Any], num_layers: int, where: str) -> list[str]:
    """Nemotron-H's layers from `hybrid_override_pattern` (M: Mamba-2, *: attention, -: MLP,
    E: mixture of experts)."""
    return listed_layer_kinds(
        config,
        "hybrid_override_pattern",
        num_layers,
        where,
        sequence=str,
        kinds=_PATTERN_KINDS,
        refusal="layer kind {0!r} is not one the calculators model; expected M (Mamba-2), "
        "* (attention), - (MLP) or E (experts)",
    )
