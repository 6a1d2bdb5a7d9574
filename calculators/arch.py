"""A model's architecture, read from its Hugging Face `config.json`, and its parameter counts.

One import for the rest of the project; each concept lives in its own module:

- `calculators.model_arch`: `ModelArch` and its parts, the layer kinds;
- `calculators.config_reader`: `parse_config` (defaults per model type, refusals naming the key),
  with `layer_kinds` (the layer pattern) and `moe_config` (experts, MoE layers) beside it;
- `calculators.param_count`: `param_counts` per tensor role, whole or per tensor-parallel rank.
"""

from calculators.config_reader import CONFIG_KEY_ALIASES, KNOWN_MODEL_TYPES, parse_config
from calculators.model_arch import (
    CHUNKED,
    FULL,
    SLIDING,
    STATE_KINDS,
    LatentAttention,
    MixtureOfExperts,
    ModelArch,
    SparseIndexer,
    VisionTower,
)
from calculators.param_count import ParamCounts, param_counts

__all__ = [
    "CHUNKED",
    "CONFIG_KEY_ALIASES",
    "FULL",
    "KNOWN_MODEL_TYPES",
    "SLIDING",
    "STATE_KINDS",
    "LatentAttention",
    "MixtureOfExperts",
    "ModelArch",
    "ParamCounts",
    "SparseIndexer",
    "VisionTower",
    "param_counts",
    "parse_config",
]
