"""Gemma 3n's language model (`model_type` gemma3n_text), as vLLM 0.29's gemma3n.py builds it.

Beside Gemma 3's attention (per-head q and k norms; v normed without weights) and four norms a
layer, each decoder layer carries:
- AltUp (`Gemma3nAltUp`): `altup_num_inputs` copies of the hidden state, mixed by replicated
  correction (n x n) and prediction (n x n^2) coefficients from a modality router (hidden -> n)
  with its norm, and a float32 output scale; the model projects the copies in and out with
  2 x (n - 1) hidden x hidden maps (`altup_projections`, `altup_unembed_projections`);
- LAuReL (`Gemma3nLaurelBlock`): a rank-`laurel_rank` residual, hidden -> rank -> hidden, and its
  norm;
- per-layer embeddings (`hidden_size_per_layer_input`, a `vocab_size_per_layer_input` table), as
  Gemma 4's (`param_count._per_layer_embeddings`);
- the last `num_kv_shared_layers` layers read an earlier layer's KV and hold none of their own.
A config that leaves fields out takes transformers' Gemma3nTextConfig defaults (every fifth
layer full attention).
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from infermeter.calculators.config_fields import optional_int
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.gemma4 import kv_shared_layers

GEMMA3N_DEFAULTS: dict[str, Any] = {
    "vocab_size": 262_400,
    "hidden_size": 2048,
    "intermediate_size": 16_384,
    "num_hidden_layers": 35,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "head_dim": 256,
    "max_position_embeddings": 32_768,
    "tie_word_embeddings": True,
    "sliding_window": 512,
    "vocab_size_per_layer_input": 262_144,
    "hidden_size_per_layer_input": 256,
    "altup_num_inputs": 4,
    "num_kv_shared_layers": 15,
    "laurel_rank": 64,
}


@dataclass(frozen=True)
class AltUpLaurel:
    """Gemma 3n's AltUp and LAuReL weights."""

    hidden_size: int
    num_inputs: int
    laurel_rank: int

    def layer_params(self, tp: int) -> tuple[int, int]:
        """(linear weights, small tensors) one decoder layer adds on a rank."""
        hidden, n = self.hidden_size, self.num_inputs
        linear = hidden * n + 2 * hidden * self.laurel_rank // tp  # router; laurel left, right
        small = n * n + n**3 + 3 * hidden  # coefficients; router norm, output scale, laurel norm
        return linear, small

    def model_params(self, tp: int) -> int:
        """The AltUp projections into and out of the copies, on a rank."""
        return 2 * (self.num_inputs - 1) * self.hidden_size * self.hidden_size // tp


def gemma3n_defaults(config: Mapping[str, Any]) -> dict[str, Any]:
    """Gemma3nTextConfig's defaults; the per-layer MLP width list read as the one width it
    holds in every released config."""
    merged = {**GEMMA3N_DEFAULTS, **config}
    layers = merged["num_hidden_layers"]
    if merged.get("layer_types") is None and isinstance(layers, int):
        merged["layer_types"] = [
            "full_attention" if (i + 1) % 5 == 0 else "sliding_attention" for i in range(layers)
        ]
    width = merged["intermediate_size"]
    if isinstance(width, list) and width:
        if len(set(map(str, width))) != 1:
            raise ConfigError(
                "intermediate_size: MLP widths that differ between layers are not modelled; "
                "expected one width for every layer"
            )
        merged["intermediate_size"] = width[0]
    return merged


def gemma3n_fields(config: Mapping[str, Any], num_layers: int, where: str) -> dict[str, Any]:
    """The `ModelArch` fields Gemma 3n sets."""
    hidden = optional_int(config, "hidden_size", where, 2048)
    return {
        "kv_shared_layers": kv_shared_layers(config, num_layers, where, 15),
        "per_layer_input_size": optional_int(config, "hidden_size_per_layer_input", where, 256),
        "per_layer_vocab_size": optional_int(config, "vocab_size_per_layer_input", where, 262_144),
        "altup": AltUpLaurel(
            hidden_size=hidden,
            num_inputs=optional_int(config, "altup_num_inputs", where, 4),
            laurel_rank=optional_int(config, "laurel_rank", where, 64),
        ),
    }
