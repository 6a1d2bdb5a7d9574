"""The kind of each decoder layer (full, sliding-window or chunked attention, Mamba, linear
attention), read from a config's `layer_types` list or from the pattern its model type implies."""

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from infermeter.calculators.bailing_moe_v3 import bailing_v3_layer_kinds
from infermeter.calculators.config_fields import optional_int
from infermeter.calculators.decilm import DECILM, decilm_layer_kinds
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.glm5_next import GLM5_NEXT_TYPE, glm5_next_layer_kinds
from infermeter.calculators.kda import kimi_linear_layer_kinds
from infermeter.calculators.lfm2 import lfm2_layer_kinds
from infermeter.calculators.lfm3 import lfm3_layer_kinds
from infermeter.calculators.lightning import lightning_layer_kinds
from infermeter.calculators.mamba2 import MAMBA2, MLP_ONLY, nemotron_h_layer_kinds
from infermeter.calculators.mimo_v2 import mimo_v2_layer_kinds
from infermeter.calculators.mixers import KDA, LINEAR_ATTENTION, MAMBA, jamba_layer_kinds
from infermeter.calculators.model_arch import CHUNKED, FULL, SLIDING
from infermeter.calculators.state_space import ATTENTION_FREE_TYPES, attention_free_kinds
from infermeter.calculators.zamba2 import zamba2_layer_kinds

_LAYER_TYPES = {
    "full_attention": FULL,
    "attention": FULL,
    "sliding_attention": SLIDING,
    "linear_attention": LINEAR_ATTENTION,
    "chunked_attention": CHUNKED,
    # Attention that keeps every token and selects some (transformers 5.18's name for DSA and
    # Qwen4-Exp's QSA layers; vLLM 0.34's qwen4_exp names them qwen_sparse_attention too).
    "indexed_attention": FULL,
    "qwen_sparse_attention": FULL,
    "mamba": MAMBA,
    # A layer with an MLP and no attention (Dory's "mlp" layers, calculators.dory).
    "mlp": MLP_ONLY,
}


def _listed_layer_kinds(config: Mapping[str, Any], num_layers: int, where: str) -> list[str]:
    layer_types = config["layer_types"]
    if not isinstance(layer_types, list):
        raise ConfigError(f"{where}layer_types: expected a list, got {layer_types!r}")
    if len(layer_types) != num_layers:
        raise ConfigError(
            f"{where}layer_types: expected {num_layers} entries (num_hidden_layers), "
            f"got {len(layer_types)}"
        )
    kinds = []
    for index, kind in enumerate(layer_types):
        if kind not in _LAYER_TYPES:
            raise ConfigError(
                f"{where}layer_types[{index}]: unknown layer kind {kind!r}; expected one of "
                + ", ".join(sorted(_LAYER_TYPES))
            )
        kinds.append(_LAYER_TYPES[kind])
    return kinds


def _llama4_layer_kinds(config: Mapping[str, Any], num_layers: int, where: str) -> list[str]:
    """Llama 4: layers with RoPE attend within chunks; every fourth (NoPE) layer globally."""
    if not config.get("attention_chunk_size"):
        return [FULL] * num_layers
    no_rope = config.get("no_rope_layers")
    if no_rope is None:
        interval = optional_int(config, "no_rope_layer_interval", where, 4) or 4
        no_rope = [int((index + 1) % interval != 0) for index in range(num_layers)]
    if not isinstance(no_rope, list) or len(no_rope) != num_layers:
        raise ConfigError(
            f"{where}no_rope_layers: expected a list of {num_layers} flags (num_hidden_layers)"
        )
    # transformers' naming: a 1 in no_rope_layers means the layer *uses* RoPE (chunked).
    return [CHUNKED if flag else FULL for flag in no_rope]


def _granite_layer_kinds(config: Mapping[str, Any], num_layers: int, where: str) -> list[str]:
    """Granite 4.0-H's "mamba" layers are Mamba-2 (vLLM's granitemoehybrid.py: MambaMixer2)."""
    kinds = _listed_layer_kinds(config, num_layers, where)
    return [MAMBA2 if kind == MAMBA else kind for kind in kinds]


def _qwen3_next_layer_kinds(config: Mapping[str, Any], num_layers: int, where: str) -> list[str]:
    """Qwen3-Next: `layer_types`, or full attention every `full_attention_interval` layers."""
    if config.get("layer_types") is not None:
        return _listed_layer_kinds(config, num_layers, where)
    interval = optional_int(config, "full_attention_interval", where, 4) or 4
    return [
        FULL if (index + 1) % interval == 0 else LINEAR_ATTENTION for index in range(num_layers)
    ]


# Model types whose layer pattern has a reader of its own.
_READERS: dict[str, Callable[[Mapping[str, Any], int, str], Sequence[str]]] = {
    "bailing_moe_v3": bailing_v3_layer_kinds,
    "mimo_v2": mimo_v2_layer_kinds,
    "mimo_v2_flash": mimo_v2_layer_kinds,
    "zamba2": zamba2_layer_kinds,
    "jamba": jamba_layer_kinds,
    "nemotron_h": nemotron_h_layer_kinds,
    "granitemoehybrid": _granite_layer_kinds,
    "kimi_linear": kimi_linear_layer_kinds,
    "llama4_text": _llama4_layer_kinds,
    "qwen3_next": _qwen3_next_layer_kinds,
    # AliceAI: Qwen3-Next's pattern, its linear-attention layers KDA (calculators.alice_ai).
    "alice_ai": lambda config, num_layers, where: [
        KDA if kind == LINEAR_ATTENTION else kind
        for kind in _qwen3_next_layer_kinds(config, num_layers, where)
    ],
    "bailing_moe_linear": lightning_layer_kinds,
    DECILM: decilm_layer_kinds,
    GLM5_NEXT_TYPE: glm5_next_layer_kinds,
    "lfm3": lfm3_layer_kinds,
    "lfm2": lfm2_layer_kinds,
    "lfm2_moe": lfm2_layer_kinds,
    # HY-V4: every layer is latent attention, sparse or dense (calculators.hy_v4).
    "hy_v4": lambda config, num_layers, where: (FULL,) * num_layers,
}


def layer_kinds(config: Mapping[str, Any], num_layers: int, where: str) -> tuple[str, ...]:
    model_type = str(config.get("model_type", ""))
    if model_type in ATTENTION_FREE_TYPES:
        return attention_free_kinds(model_type, num_layers)
    reader = _READERS.get(model_type)
    if reader is not None:
        return tuple(reader(config, num_layers, where))
    window = config.get("sliding_window")
    if config.get("use_sliding_window") is False or not window:
        if config.get("layer_types") is not None:
            # Without a window every attention layer is global, but other kinds stay.
            kinds = _listed_layer_kinds(config, num_layers, where)
            return tuple(FULL if kind == SLIDING else kind for kind in kinds)
        return (FULL,) * num_layers
    if config.get("layer_types") is not None:
        return tuple(_listed_layer_kinds(config, num_layers, where))
    if model_type == "gemma2":
        # Gemma 2 alternates: even layers use the local window, odd layers attend globally.
        return tuple(SLIDING if index % 2 == 0 else FULL for index in range(num_layers))
    pattern = optional_int(config, "sliding_window_pattern", where, 0)
    if pattern:
        # Every pattern-th layer is global (Gemma 3: five local layers, then one global).
        return tuple(FULL if (index + 1) % pattern == 0 else SLIDING for index in range(num_layers))
    # A bare sliding_window with no pattern applies to every layer (Mistral v0.1).
    return (SLIDING,) * num_layers
