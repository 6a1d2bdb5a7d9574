"""Zamba2 (`model_type` zamba2): Mamba-2 layers and a few shared transformer blocks.

As vLLM 0.29 builds it (vllm/model_executor/models/zamba2.py) from transformers' Zamba2Config:
- every layer is a Mamba-2 mixer with one RMSNorm (`Zamba2MambaDecoderLayer`: `n_mamba_heads`
  heads of `mamba_expand` x hidden / heads channels, `mamba_d_state`, `mamba_d_conv`,
  `mamba_ngroups`), so every layer keeps a Mamba-2 state per sequence;
- the layers `layers_block_type` names "hybrid" also run one of `num_mem_blocks` shared
  transformer blocks (round robin): attention over the hidden state concatenated with the
  embeddings (2 x hidden wide in, `num_attention_heads` heads of 2 x hidden / heads, as many KV
  heads: `QKVParallelLinear` without a KV head count), a gated GELU MLP of `intermediate_size`
  (4 x hidden by default) and two RMSNorms (2 x hidden and hidden). The blocks' weights are
  shared, but each hybrid layer has its own KV cache, its own hidden x hidden projection
  (`ReplicatedLinear`, on every rank) and its own low-rank adapters (`Zamba2LoRA`, rank
  `adapter_rank`): on the MLP's gate and up projections always, on q, k and v with
  `use_shared_attention_adapter`;
- the lm_head is tied to the embeddings.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from infermeter.calculators.config_fields import int_field, optional_int
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.mamba2 import MAMBA2, Mamba2Mixer
from infermeter.calculators.mixers import block_type_kinds, state_dtype
from infermeter.calculators.model_arch import FULL

_BLOCK_KINDS = {"hybrid": FULL, "mamba": MAMBA2, "linear_attention": MAMBA2}


@dataclass(frozen=True)
class SharedBlocks:
    """Zamba2's shared transformer blocks and what each hybrid layer adds to them."""

    hidden_size: int
    intermediate_size: int
    blocks: int
    adapter_rank: int
    attention_adapters: bool
    mlp_bias: bool

    def block_params(self, tp: int) -> tuple[int, int, int]:
        """(attention weights, MLP weights, norms and biases) of one shared block on a rank."""
        hidden, width = self.hidden_size, 2 * self.hidden_size
        attention = width * 3 * width // tp + width * hidden // tp  # qkv_proj, o_proj
        mlp = 3 * hidden * self.intermediate_size // tp  # gate_up_proj, down_proj
        small = width + hidden + (2 * self.intermediate_size // tp + hidden if self.mlp_bias else 0)
        return attention, mlp, small

    def layer_params(self, tp: int) -> int:
        """Weights one hybrid layer adds on a rank: its projection and its adapters."""
        hidden, width, rank = self.hidden_size, 2 * self.hidden_size, self.adapter_rank
        mlp_adapter = hidden * rank // tp + rank * 2 * self.intermediate_size // tp
        attention_adapters = 3 * (width * rank // tp + rank * width // tp)
        if not self.attention_adapters:
            attention_adapters = 0
        return hidden * hidden + mlp_adapter + attention_adapters


# transformers' Zamba2Config default (Zamba2-2.7B's 54 layers) when `layers_block_type` is absent.
_DEFAULT_BLOCK_TYPES = (
    ["mamba"] + (["mamba"] * 5 + ["hybrid"]) * 7 + ["mamba"] * 4 + ["hybrid"] + ["mamba"] * 3
    + ["hybrid"] + ["mamba"] * 2
)  # fmt: skip


def zamba2_layer_kinds(config: Mapping[str, Any], num_layers: int, where: str) -> list[str]:
    """Attention (a shared block beside the mixer) for "hybrid" layers, Mamba-2 for the rest."""
    if config.get("layers_block_type") is None:
        config = {**config, "layers_block_type": _DEFAULT_BLOCK_TYPES}
    return block_type_kinds(
        config, num_layers, where, _BLOCK_KINDS, "expected 'hybrid' or 'mamba', got {0!r}"
    )


def zamba2_shape(config: Mapping[str, Any], where: str) -> tuple[int, int, int, int, int]:
    """(hidden size, layers, attention heads, KV heads, head size): heads 2 x hidden / heads
    wide, as many KV heads as heads."""
    hidden = int_field(config, "hidden_size", where)
    heads = int_field(config, "num_attention_heads", where)
    if hidden == 0 or heads == 0 or 2 * hidden % heads:
        raise ConfigError(
            f"{where}num_attention_heads: {heads} does not divide 2 x hidden_size "
            f"({2 * hidden}); expected a divisor > 0"
        )
    return hidden, int_field(config, "num_hidden_layers", where), heads, heads, 2 * hidden // heads


def zamba2_mixer(config: Mapping[str, Any], hidden: int, where: str) -> Mamba2Mixer:
    """Every layer's Mamba-2 mixer (transformers' Zamba2Config defaults)."""
    heads = optional_int(config, "n_mamba_heads", where, 8)
    inner = optional_int(config, "mamba_expand", where, 2) * hidden
    if heads == 0 or inner % heads:
        raise ConfigError(
            f"{where}n_mamba_heads: {heads} does not divide mamba_expand x hidden_size "
            f"({inner}); expected a divisor > 0"
        )
    return Mamba2Mixer(
        hidden_size=hidden,
        num_heads=heads,
        head_dim=inner // heads,
        groups=optional_int(config, "mamba_ngroups", where, 1),
        state_size=optional_int(config, "mamba_d_state", where, 64),
        conv_kernel=optional_int(config, "mamba_d_conv", where, 4),
        conv_bias=bool(config.get("use_conv_bias", True)),
        proj_bias=bool(config.get("add_bias_linear", False)),
        ssm_state_dtype=state_dtype(config, where),
    )


def zamba2_fields(config: Mapping[str, Any], hidden: int, where: str) -> dict[str, Any]:
    """The `ModelArch` field Zamba2 adds: its shared blocks."""
    width = optional_int(config, "intermediate_size", where, 0) or 4 * hidden
    return {
        "shared_blocks": SharedBlocks(
            hidden_size=hidden,
            intermediate_size=width,
            blocks=optional_int(config, "num_mem_blocks", where, 1) or 1,
            adapter_rank=optional_int(config, "adapter_rank", where, 128),
            attention_adapters=bool(config.get("use_shared_attention_adapter", False)),
            mlp_bias=bool(config.get("add_bias_linear", False)),
        ),
    }
