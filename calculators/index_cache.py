"""IndexCache (arXiv 2603.12201) in DeepSeek-V3.2's lightning indexer: the layers that build
their own indexer (its weights and its FP8 key cache); the others reuse the top-k of the closest
preceding one and hold neither. As vLLM builds DeepSeek-V3.2 and GLM-5 (DeepseekV32ForCausalLM,
GlmMoeDsaForCausalLM, and any DeepSeek-V2/V3 config with `index_topk`), per release:

- up to 0.23 every layer builds its indexer: `deepseek_v2.py` DeepseekV2MLAAttention builds it
  before it reads the keys, which only skip the top-k computation;
- 0.24 to 0.28 (`deepseek_v2.py`) and 0.29 to 0.33 (`vllm/models/deepseek_v32/attention.py`,
  where the registry sends both architectures on CUDA and ROCm from 0.29): a layer skips when
  `index_topk_pattern` (a string or a list, one entry a layer; the layers past its end keep
  theirs) is "S" at it, or, without a pattern, when
  max(layer - index_skip_topk_offset + 1, 0) % index_topk_freq != 0 (defaults 2 and 1: no
  layer skips, so a config without the keys plans as before);
- 0.34 (`deepseek_v32/attention.py` through `model_executor/models/utils.py`
  compute_skip_topk_layers): `indexer_types` ("full" or "shared", one a layer) first, else as
  0.24-0.33; a frequency that is not a positive integer is refused.

The multi-token-prediction layers always build one, but vLLM loads them only as a draft and the
calculators do not count them. HY-V4 (`calculators.hy_v4`) reads `indexer_types` the same way.
"""

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from infermeter.calculators.config_fields import layer_list
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.model_arch import IndexerLayers, SparseIndexer

INDEX_CACHE_SINCE = (0, 24)  # deepseek_v2.py builds no indexer on a skipping layer
INDEXER_TYPES_SINCE = (0, 34)  # compute_skip_topk_layers reads indexer_types first


def typed_layers(config: Mapping[str, Any], num_layers: int, where: str) -> IndexerLayers:
    """The layers `indexer_types` marks "full"; None when the config has no `indexer_types`."""
    if config.get("indexer_types") is None:
        return None
    types = layer_list(config, "indexer_types", num_layers, where)
    if any(kind not in ("full", "shared") for kind in types):
        raise ConfigError(f"{where}indexer_types: expected 'full' or 'shared' for each layer")
    return tuple(layer for layer, kind in enumerate(types) if kind == "full")


def keyed_layers(config: Mapping[str, Any], num_layers: int, where: str) -> IndexerLayers:
    """The layers `index_topk_pattern` or `index_topk_freq` and `index_skip_topk_offset` leave
    an indexer (0.24-0.33's rule); None when that is every layer."""
    pattern = config.get("index_topk_pattern")
    if pattern is not None:
        if not isinstance(pattern, (str, list)):
            raise ConfigError(
                f"{where}index_topk_pattern: expected a string or a list, one entry a layer "
                f"('S' skips), got {pattern!r}"
            )
        own = tuple(
            layer for layer in range(num_layers) if layer >= len(pattern) or pattern[layer] != "S"
        )
    else:
        freq = _int(config, "index_topk_freq", 1, where, positive=True)
        offset = _int(config, "index_skip_topk_offset", 2, where, positive=False)
        own = tuple(layer for layer in range(num_layers) if max(layer - offset + 1, 0) % freq == 0)
    return None if len(own) == num_layers else own


def _int(config: Mapping[str, Any], key: str, default: int, where: str, positive: bool) -> int:
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or (positive and value < 1):
        expected = "a positive integer" if positive else "an integer"
        raise ConfigError(f"{where}{key}: expected {expected}, got {value!r}")
    return value


def index_cache_indexer(
    config: Mapping[str, Any], num_layers: int, where: str, indexer: SparseIndexer | None
) -> SparseIndexer | None:
    """The indexer with the layers that build their own as vLLM 0.34 does, and those of the
    earlier releases where they differ (`SparseIndexer.at_release`)."""
    if indexer is None:
        return None
    keyed = keyed_layers(config, num_layers, where)
    typed = typed_layers(config, num_layers, where)
    latest = keyed if typed is None else (None if len(typed) == num_layers else typed)
    if keyed is None and latest is None:
        return indexer
    releases = (((0, 0), None), (INDEX_CACHE_SINCE, keyed), (INDEXER_TYPES_SINCE, latest))
    return replace(indexer, layers=latest, layers_by_release=releases)
