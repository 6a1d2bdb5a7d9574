"""Layers that mix tokens without a KV cache: Mamba (Jamba), Gated DeltaNet (Qwen3-Next),
Kimi Delta Attention (Kimi Linear) and LFM's gated short convolutions (`ShortConv`).

Such a layer keeps a fixed-size state per sequence instead of a K and V vector per token: a
short convolution window and a recurrent (SSM) state. vLLM allocates one state slot per running
sequence, so the state scales with `max_num_seqs`, not with the context length. The shapes follow
vLLM's own `mamba_utils` state-shape calculators, split across tensor-parallel ranks the way its
layers shard them (the inner width and the heads; the small norms are replicated).
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from infermeter.calculators.errors import ConfigError

MAMBA = "mamba"
LINEAR_ATTENTION = "linear_attention"
KDA = "kda"  # Kimi Delta Attention: Gated DeltaNet with a per-channel gate (see calculators.kda)
SHORT_CONV = "short_conv"  # LFM's ShortConv: a gated depthwise convolution, its window the state

STATE_DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}


@dataclass(frozen=True)
class RecurrentMixer:
    """One kind of state-space / linear-attention layer, as the config describes it."""

    kind: str  # MAMBA, LINEAR_ATTENTION, KDA or SHORT_CONV
    hidden_size: int
    # Mamba (Jamba): inner width, state size, convolution width, dt rank, biases.
    inner_size: int = 0
    state_size: int = 0
    conv_kernel: int = 0
    dt_rank: int = 0
    conv_bias: bool = False
    proj_bias: bool = False
    # Jamba's RMSNorms over dt, B and C carry weights; Mamba has none, Falcon-Mamba's have none
    # (vLLM's mamba.py: `rms_norm_has_weight=not is_falcon_mamba`).
    dt_bc_norm_weights: bool = True
    # Gated DeltaNet (Qwen3-Next) and KDA: key/value heads and head sizes.
    key_heads: int = 0
    value_heads: int = 0
    key_head_dim: int = 0
    value_head_dim: int = 0
    ssm_state_dtype: str | None = None  # None: the model dtype
    # KDA whose f and g gates are full-rank projections (BailingMoeV3) rather than Kimi Linear's
    # low-rank pairs.
    full_rank_gates: bool = False

    def params(self, tp: int) -> tuple[int, int]:
        """(linear weights, small tensors) of one such layer on one of `tp` ranks."""
        if self.kind == MAMBA:
            return self._mamba_params(tp)
        if self.kind == KDA:
            return self._kda_params(tp)
        if self.kind == SHORT_CONV:
            return self._short_conv_params(tp)
        hidden = self.hidden_size
        key_dim = self.key_heads * self.key_head_dim
        value_dim = self.value_heads * self.value_head_dim
        conv_dim = 2 * key_dim + value_dim
        linear = (
            hidden * (2 * key_dim + 2 * value_dim) // tp  # in_proj_qkvz
            + hidden * 2 * self.value_heads // tp  # in_proj_ba
            + value_dim * hidden // tp  # out_proj
        )
        small = (
            conv_dim * self.conv_kernel // tp  # conv1d (no bias)
            + 2 * self.value_heads // tp  # dt_bias, A_log
            + self.value_head_dim  # the gated RMSNorm over each value head
        )
        return linear, small

    def _mamba_params(self, tp: int) -> tuple[int, int]:
        hidden = self.hidden_size
        inner = self.inner_size // tp
        state, rank = self.state_size, self.dt_rank
        linear = (
            hidden * 2 * inner  # in_proj (x and gate)
            + inner * (rank + 2 * state)  # x_proj → dt, B, C
            + rank * inner  # dt_proj
            + inner * hidden  # out_proj
        )
        small = (
            inner * self.conv_kernel  # conv1d weight
            + (inner if self.conv_bias else 0)
            + inner  # dt_proj bias
            + inner * state  # A_log
            + inner  # D
            + (rank + 2 * state if self.dt_bc_norm_weights else 0)  # Jamba's dt/B/C norms
            + (2 * inner + hidden if self.proj_bias else 0)
        )
        return linear, small

    def _kda_params(self, tp: int) -> tuple[int, int]:
        """Kimi Delta Attention as vLLM builds it (kimi_gdn_linear_attn.py): q, k, v and the
        beta projection split by heads, the low-rank gate and output-gate down-projections
        (f_a, g_a) replicated on every rank, their up-projections (f_b, g_b) and o_proj split."""
        hidden, heads, head = self.hidden_size, self.value_heads, self.value_head_dim
        width = heads * head
        if self.full_rank_gates:
            gates = 2 * hidden * width // tp  # f_proj, g_proj
        else:
            gates = 2 * hidden * head + 2 * head * width // tp  # f_a, g_a replicated; f_b, g_b
        linear = (
            hidden * 3 * width // tp  # q, k, v
            + hidden * heads // tp  # b_proj (beta per head)
            + gates
            + width * hidden // tp  # o_proj
        )
        small = (
            3 * width * self.conv_kernel // tp  # q/k/v short convolutions (float32 in vLLM)
            + width // tp  # dt_bias per channel (float32)
            + heads // tp  # A_log (float32)
            + head  # o_norm, the gated RMSNorm over each head
        )
        return linear, small

    def _short_conv_params(self, tp: int) -> tuple[int, int]:
        """vLLM's `ShortConv` (layers/mamba/short_conv.py): in_proj hidden -> 3 x hidden (B, C
        and x), out_proj, and a depthwise convolution of `conv_kernel` taps (never quantized),
        all split by channels; a bias on each where `conv_bias`."""
        hidden = self.hidden_size
        linear = 4 * hidden * hidden // tp
        # in_proj's three and the convolution's split; out_proj's (RowParallelLinear) whole.
        bias = 4 * hidden // tp + hidden if self.conv_bias else 0
        return linear, hidden * self.conv_kernel // tp + bias

    def state_bytes_per_sequence(self, tp: int, model_dtype_bytes: int) -> int:
        """Bytes of one sequence's state in one such layer on one of `tp` ranks."""
        ssm_bytes = STATE_DTYPE_BYTES.get(self.ssm_state_dtype or "", model_dtype_bytes)
        if self.kind == SHORT_CONV:  # short_conv_state_shape: the last conv_kernel - 1 inputs
            return self.hidden_size // tp * (self.conv_kernel - 1) * model_dtype_bytes
        if self.kind == MAMBA:
            inner = self.inner_size // tp
            conv = inner * (self.conv_kernel - 1) * model_dtype_bytes
            return conv + inner * self.state_size * ssm_bytes
        key_dim = self.key_heads * self.key_head_dim
        value_dim = self.value_heads * self.value_head_dim
        conv = (2 * key_dim + value_dim) // tp * (self.conv_kernel - 1) * model_dtype_bytes
        temporal = self.value_heads // tp * self.key_head_dim * self.value_head_dim * ssm_bytes
        return conv + temporal


def _positive(config: Mapping[str, Any], name: str, where: str, default: int | None = None) -> int:
    value = config.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{where}{name}: expected an integer > 0, got {value!r}")
    return value


def state_dtype(
    config: Mapping[str, Any],
    where: str,
    names: tuple[str, ...] = ("mamba_ssm_dtype", "mamba_ssm_cache_dtype"),
) -> str | None:
    """The dtype of the recurrent state the first of `names` set (not `auto`) gives; None: the
    model dtype."""
    for name in names:
        value = config.get(name)
        if value is None or value == "auto":
            continue
        if not isinstance(value, str) or value not in STATE_DTYPE_BYTES:
            raise ConfigError(
                f"{where}{name}: expected one of {', '.join(STATE_DTYPE_BYTES)}, got {value!r}"
            )
        return str(value)
    return None


def jamba_mixer(config: Mapping[str, Any], hidden: int, where: str) -> RecurrentMixer:
    """The Mamba layers of a Jamba config (`mamba_*` fields, transformers' defaults)."""
    expand = _positive(config, "mamba_expand", where, 2)
    rank = config.get("mamba_dt_rank", "auto")
    dt_rank = (
        math.ceil(hidden / 16) if rank == "auto" else _positive(config, "mamba_dt_rank", where)
    )
    return RecurrentMixer(
        kind=MAMBA,
        hidden_size=hidden,
        inner_size=expand * hidden,
        state_size=_positive(config, "mamba_d_state", where, 16),
        conv_kernel=_positive(config, "mamba_d_conv", where, 4),
        dt_rank=dt_rank,
        conv_bias=bool(config.get("mamba_conv_bias", True)),
        proj_bias=bool(config.get("mamba_proj_bias", False)),
        ssm_state_dtype=state_dtype(config, where),
    )


def mamba_mixer(config: Mapping[str, Any], hidden: int, where: str) -> RecurrentMixer:
    """The layers of a Mamba or Falcon-Mamba config (transformers' MambaConfig names and
    defaults: `intermediate_size` or `expand` x hidden, `state_size`, `conv_kernel`,
    `time_step_rank` "auto" = hidden / 16 rounded up), as vLLM 0.29's mamba.py builds them with
    its `MambaMixer` (layers/mamba/mamba_mixer.py)."""
    expand = _positive(config, "expand", where, 2)
    rank = config.get("time_step_rank", "auto")
    return RecurrentMixer(
        kind=MAMBA,
        hidden_size=hidden,
        inner_size=_positive(config, "intermediate_size", where, expand * hidden),
        state_size=_positive(config, "state_size", where, 16),
        conv_kernel=_positive(config, "conv_kernel", where, 4),
        dt_rank=math.ceil(hidden / 16)
        if rank == "auto"
        else _positive(config, "time_step_rank", where),
        conv_bias=bool(config.get("use_conv_bias", True)),
        proj_bias=bool(config.get("use_bias", False)),
        dt_bc_norm_weights=False,
        ssm_state_dtype=state_dtype(config, where),
    )


def short_conv_mixer(config: Mapping[str, Any], hidden: int, where: str) -> RecurrentMixer:
    """The gated short convolution (vLLM's `ShortConv`) of LFM2's, LFM2-MoE's and LFM3's "conv"
    layers: `conv_L_cache` taps (their config classes' defaults are applied before), over
    `hidden` channels, a bias on each projection where `conv_bias`."""
    taps = _positive(config, "conv_L_cache", where)
    if taps < 2:
        raise ConfigError(f"{where}conv_L_cache: expected at least 2 taps, got {taps}")
    return RecurrentMixer(
        kind=SHORT_CONV,
        hidden_size=hidden,
        conv_kernel=taps,
        conv_bias=bool(config.get("conv_bias", False)),
    )


def gated_delta_net_mixer(config: Mapping[str, Any], hidden: int, where: str) -> RecurrentMixer:
    """The Gated DeltaNet (linear attention) layers of a Qwen3-Next config."""
    return RecurrentMixer(
        kind=LINEAR_ATTENTION,
        hidden_size=hidden,
        conv_kernel=_positive(config, "linear_conv_kernel_dim", where),
        key_heads=_positive(config, "linear_num_key_heads", where),
        value_heads=_positive(config, "linear_num_value_heads", where),
        key_head_dim=_positive(config, "linear_key_head_dim", where),
        value_head_dim=_positive(config, "linear_value_head_dim", where),
        ssm_state_dtype=state_dtype(config, where),
    )


def listed_layer_kinds(
    config: Mapping[str, Any],
    key: str,
    num_layers: int,
    where: str,
    *,
    sequence: type[str] | type[list[Any]],
    kinds: Mapping[str, str],
    refusal: str,
) -> list[str]:
    """Each layer's kind read from `config[key]`, one item a layer: a `sequence`, a string of
    characters or a list of names, each one of `kinds` (mapped to the layer kind it stands for).
    `refusal` says what an item may be, `{0!r}` standing for the item that is not one."""
    listed = config.get(key)
    noun, unit = ("string", "characters") if sequence is str else ("list", "entries")
    items = f"a {noun} of {num_layers} {unit}"
    if not isinstance(listed, sequence) or len(listed) != num_layers:
        raise ConfigError(f"{where}{key}: expected {items} (num_hidden_layers)")
    for index, item in enumerate(listed):
        if not isinstance(item, str) or item not in kinds:
            raise ConfigError(f"{where}{key}[{index}]: " + refusal.format(item))
    return [kinds[item] for item in listed]


def block_type_kinds(
    config: Mapping[str, Any], num_layers: int, where: str, kinds: Mapping[str, str], refusal: str
) -> list[str]:
    """Each layer's kind from `layers_block_type`, a list of names (Jamba's, Zamba2's)."""
    return listed_layer_kinds(
        config, "layers_block_type", num_layers, where, sequence=list, kinds=kinds, refusal=refusal
    )


def jamba_layer_kinds(config: Mapping[str, Any], num_layers: int, where: str) -> list[str]:
    """Which Jamba layers are attention ("full") and which are Mamba."""
    if config.get("layers_block_type") is not None:
        kinds = {"attention": "full", "mamba": MAMBA}
        refusal = "expected 'attention' or 'mamba', got {0!r}"
        return block_type_kinds(config, num_layers, where, kinds, refusal)
    period = _positive(config, "attn_layer_period", where, 8)
    offset = config.get("attn_layer_offset", 4)
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset < period:
        raise ConfigError(
            f"{where}attn_layer_offset: expected 0 <= offset < {period}, got {offset!r}"
        )
    return ["full" if index % period == offset else MAMBA for index in range(num_layers)]


def jamba_moe_layers(config: Mapping[str, Any], num_layers: int, where: str) -> tuple[int, ...]:
    """Jamba's sparse layers: every `expert_layer_period`-th from `expert_layer_offset`."""
    period = _positive(config, "expert_layer_period", where, 2)
    offset = config.get("expert_layer_offset", 1)
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset < period:
        raise ConfigError(
            f"{where}expert_layer_offset: expected 0 <= offset < {period}, got {offset!r}"
        )
    return tuple(index for index in range(num_layers) if index % period == offset)
