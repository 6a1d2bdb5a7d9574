"""LFM3's parameters, KV cache and convolution states as vLLM 0.34.0 builds them
(calculators.lfm3, the SHORT_CONV kind of calculators.mixers), with the arithmetic written out
from vllm/model_executor/models/lfm3.py and vllm/model_executor/layers/mamba/short_conv.py.

No LFM3 checkpoint's config.json is public (a search of public code found none), so
tests/data/configs/lfm3.json is vLLM's Lfm3Config defaults (0.34.0,
vllm/transformers_utils/configs/lfm3.py) with the layer_types its __init__ fills written out
(full attention at i % 4 == 2, sliding at i % 4 == 0 past 0, a short convolution elsewhere: 6,
5 and 13 layers). No published parameter count exists to hold the count to; it is held to the
modules' arithmetic.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import json_output
from test_calc_api import pasted_config_plan

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.param_count import param_counts

CONFIG_PATH = Path(__file__).parent / "data" / "configs" / "lfm3.json"
CONFIG = json.loads(CONFIG_PATH.read_text())
H, LAYERS, HEADS, KV_HEADS, HEAD, MLP, VOCAB, TAPS = 2048, 24, 16, 4, 128, 7680, 128000, 7
ATTENTION_LAYERS, CONV_LAYERS = 11, 13


def _attention_linear(tp: int) -> int:
    """qkv_proj, the gate per head (gate_proj) and o_proj on a rank."""
    q = HEADS * HEAD // tp
    kv = 2 * max(1, KV_HEADS // tp) * HEAD
    return H * (q + kv + HEADS // tp) + q * H


@pytest.mark.parametrize("tp", [1, 8])
def test_parameters_follow_the_modules(tp: int) -> None:
    counts = param_counts(parse_config(CONFIG), tp)
    conv_linear = (3 * H * H + H * H) // tp  # ShortConv's in_proj (B, C, x) and out_proj
    assert counts.attention == ATTENTION_LAYERS * _attention_linear(tp) + CONV_LAYERS * conv_linear
    assert counts.dense_mlp == LAYERS * 3 * H * MLP // tp  # w13 and w2 in every layer
    assert counts.embedding == VOCAB // tp * H
    assert counts.lm_head == 0  # tied
    # Four sandwich norms a layer, q/k norms, the depthwise convolutions; embedding_norm.
    small = LAYERS * 4 * H + ATTENTION_LAYERS * 2 * HEAD + CONV_LAYERS * H * TAPS // tp + H
    assert counts.small == small


def test_class_default_size() -> None:
    # 1.73B parameters: no published figure to compare.
    assert param_counts(parse_config(CONFIG)).total == 1_728_801_536


def test_options_that_change_the_count() -> None:
    base = param_counts(parse_config(CONFIG))
    plain = param_counts(
        parse_config({**CONFIG, "use_attention_gate": False, "use_sandwich_norm": False})
    )
    assert base.attention - plain.attention == ATTENTION_LAYERS * H * HEADS
    assert base.small - plain.small == LAYERS * 2 * H
    # conv_bias: in_proj's and the convolution's split, out_proj's whole.
    biased = param_counts(parse_config({**CONFIG, "conv_bias": True}))
    assert biased.small - base.small == CONV_LAYERS * (4 * H + H)


@pytest.mark.parametrize("tp", [1, 8])
def test_caches_and_convolution_states(tp: int) -> None:
    kv = kv_cache_shape(parse_config(CONFIG), tensor_parallel_size=tp)
    assert (kv.full_layers, kv.sliding_layers, kv.state_layers) == (6, 5, 13)
    assert kv.sliding_window == 256
    assert kv.bytes_per_token_per_layer == 2 * max(1, KV_HEADS // tp) * HEAD * 2
    # short_conv_state_shape: conv_L_cache - 1 inputs of hidden_size / TP channels, bf16.
    assert kv.state_bytes_per_sequence_per_layer == H // tp * (TAPS - 1) * 2
    # Lfm3Config's default pattern where layer_types is absent.
    default = parse_config({**CONFIG, "layer_types": None})
    assert default.layer_kinds == parse_config(CONFIG).layer_kinds


@pytest.mark.parametrize("tp", [1, 8])
def test_calc_vram_plans_lfm3_as_the_page_does(tp: int) -> None:
    options = {"vllm_version": "0.34", "max_model_len": "128000"}
    plan = pasted_config_plan(CONFIG_PATH, "h200-sxm", tensor_parallel_size=str(tp), **options)
    arch = parse_config(CONFIG)
    assert plan["weights_by_role"]["attention"] == 2 * param_counts(arch, tp).attention
    assert plan["kv_cache_bytes_per_token"] == 11 * 2 * max(1, KV_HEADS // tp) * HEAD * 2
    assert plan["state_bytes_per_sequence"] == CONV_LAYERS * H // tp * (TAPS - 1) * 2
    # 6 full, 5 sliding and 13 state layers in groups of 5 (vLLM's hybrid grouping): 2 + 1 + 3.
    assert plan["kv_cache_groups"] == 6
    assert plan["fits"]
    assert not any(note.startswith("LFM3 is served from") for note in plan["notes"])
    old = json_output("calc", "vram", "--model", str(CONFIG_PATH), "--gpu", "h200-sxm")
    assert (
        "LFM3 is served from vLLM 0.34 (the first release that registers it); this plan "
        "applies 0.19's memory terms to it" in old["vllm_plan"]["notes"]
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"layer_types": ["conv"] * 3}, r"^layer_types: expected a list of 24 entries"),
        ({"layer_types": ["mamba"] * 24}, r"^layer_types\[0\]: expected 'full_attention', "),
        ({"conv_L_cache": 1}, r"^conv_L_cache: expected at least 2 taps, got 1"),
    ],
)
def test_bad_lfm3_fields_are_named(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config({**CONFIG, **change})
