"""Laguna: a head count per layer, a sigmoid output gate, sinks on sliding-window layers
(calculators.laguna), read with vLLM 0.29's LagunaConfig defaults. No public Laguna config.json
was found to hold a count to; these tests hold the mechanisms to vLLM's laguna.py shapes.
"""

from typing import Any

import pytest

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.param_count import param_counts

LAGUNA: dict[str, Any] = {"model_type": "laguna", "num_hidden_layers": 4}
HIDDEN, HEAD = 2048, 128  # LagunaConfig's hidden_size and head_dim


def _total(config: dict[str, Any], tp: int = 1) -> int:
    return param_counts(parse_config(config), tp).total


def test_fewer_query_heads_in_a_layer_shrink_q_o_and_the_gate_not_the_kv() -> None:
    per_layer = {**LAGUNA, "num_attention_heads_per_layer": [48, 48, 32, 48]}
    # 16 fewer heads in one layer: q (hidden -> heads x 128), o (back) and one gate per head.
    assert _total(LAGUNA) - _total(per_layer) == 16 * (2 * HIDDEN * HEAD + HIDDEN)
    assert kv_cache_shape(parse_config(per_layer)) == kv_cache_shape(parse_config(LAGUNA))


def test_a_per_element_gate_is_one_per_query_channel() -> None:
    element = {**LAGUNA, "gating": "per-element"}
    assert _total(element) - _total(LAGUNA) == 4 * HIDDEN * (48 * HEAD - 48)
    assert _total({**LAGUNA, "gating": False}) == _total(LAGUNA) - 4 * HIDDEN * 48


def test_sinks_only_on_the_sliding_window_layers() -> None:
    kinds = ["sliding_attention", "full_attention"] * 2
    sliding = {**LAGUNA, "layer_types": kinds, "sliding_window": 512}
    with_sinks = {**sliding, "swa_attention_sink_enabled": True}
    assert _total(with_sinks) - _total(sliding) == 2 * 48
    assert _total(with_sinks, 2) - _total(sliding, 2) == 2 * 24


def test_bad_per_layer_heads_and_gating_are_refused_naming_the_field() -> None:
    with pytest.raises(ConfigError, match=r"^num_attention_heads_per_layer: expected 4"):
        parse_config({**LAGUNA, "num_attention_heads_per_layer": [48, 48]})
    with pytest.raises(ConfigError, match=r"^gating: expected true, false"):
        parse_config({**LAGUNA, "gating": "per-token"})
