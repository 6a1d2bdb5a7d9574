"""Beam's parameters and KV cache as vLLM 0.33.0 and 0.34.0 build them (calculators.beam), with
the arithmetic written out from vllm/models/beam/nvidia (model.py, attention.py, moe.py).

No Beam checkpoint's config.json is public (a search of public code found none), so
tests/data/configs/beam.json is vLLM's BeamConfig defaults (0.34.0,
vllm/transformers_utils/configs/beam.py) with the lists its __init__ fills written out (every
layer "sliding_attention", every MLP "sparse"). No published parameter count exists to hold the
count to; it is held to the modules' arithmetic.
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

CONFIG_PATH = Path(__file__).parent / "data" / "configs" / "beam.json"
CONFIG = json.loads(CONFIG_PATH.read_text())
H, LAYERS, HEADS, KV_HEADS, HEAD, VOCAB, EXPERTS = 2048, 24, 32, 4, 64, 151936, 128


def _attention_linear(tp: int) -> int:
    """qkv_gate_proj (q, k, v and the output gate per query channel) and o_proj on a rank; with
    more ranks than KV heads each rank keeps one."""
    q = HEADS * HEAD // tp
    kv = 2 * max(1, KV_HEADS // tp) * HEAD
    return H * (q + kv + q) + q * H


@pytest.mark.parametrize("tp", [1, 8])
def test_parameters_follow_the_modules(tp: int) -> None:
    counts = param_counts(parse_config(CONFIG), tp)
    assert counts.attention == LAYERS * _attention_linear(tp)
    assert counts.embedding == counts.lm_head == VOCAB // tp * H  # never tied
    assert counts.experts == LAYERS * EXPERTS * 3 * H * 768 // tp
    assert counts.dense_mlp == counts.shared_experts == counts.router == 0
    # q/k norms, the gate's bias per head, four sandwich norms a layer; the final norm.
    assert counts.small == LAYERS * (2 * HEAD + HEADS // tp + 4 * H) + H
    # float32: GateLinear's weight and e_score_correction_bias.
    assert counts.four_byte == LAYERS * (H * EXPERTS + EXPERTS)


def test_class_default_size() -> None:
    # 15.45B parameters, 1.86B a token (8 of 128 experts): no published figure to compare.
    counts = param_counts(parse_config(CONFIG))
    assert counts.total == 15_451_497_216
    assert round(counts.active / 1e9, 2) == 1.86


def test_dense_layers_and_full_attention_layers() -> None:
    mixed = {
        **CONFIG,
        "mlp_layer_types": ["dense"] * 2 + ["sparse"] * 22,
        "layer_types": ["sliding_attention", "sliding_attention", "full_attention"] * 8,
    }
    arch = parse_config(mixed)
    counts = param_counts(arch)
    assert counts.dense_mlp == 2 * 3 * H * 6144
    assert counts.experts == 22 * EXPERTS * 3 * H * 768
    assert counts.four_byte == 22 * (H * EXPERTS + EXPERTS)
    kv = kv_cache_shape(arch)
    assert (kv.full_layers, kv.sliding_layers, kv.sliding_window) == (8, 16, 4096)
    assert kv.bytes_per_token_per_layer == 2 * KV_HEADS * HEAD * 2
    # BeamConfig's default: no layer_types means every layer slides.
    assert kv_cache_shape(parse_config({**CONFIG, "layer_types": None})).sliding_layers == 24


@pytest.mark.parametrize("tp", [1, 8])
def test_calc_vram_plans_beam_as_the_page_does(tp: int) -> None:
    plan = pasted_config_plan(
        CONFIG_PATH, "h200-sxm", tensor_parallel_size=str(tp), vllm_version="0.34",
        max_model_len="32768",
    )  # fmt: skip
    arch = parse_config(CONFIG)
    roles = plan["weights_by_role"]
    assert roles["four_byte"] == 4 * param_counts(arch, tp).four_byte
    assert roles["experts"] == 2 * param_counts(arch, tp).experts
    # One group of 24 sliding layers: K and V of the rank's KV heads (one copy at TP 8).
    assert plan["kv_cache_bytes_per_token"] == LAYERS * 2 * max(1, KV_HEADS // tp) * HEAD * 2
    assert plan["kv_cache_groups"] == 1
    assert plan["fits"]
    assert any(note.startswith("Beam: the served model only") for note in plan["notes"])
    assert not any(note.startswith("Beam is served from") for note in plan["notes"])


def test_a_release_before_beam_says_it_does_not_serve_it() -> None:
    # calc vram's default release is 0.19.
    plan = json_output("calc", "vram", "--model", str(CONFIG_PATH), "--gpu", "b200")["vllm_plan"]
    served = "Beam is served from vLLM 0.33 (its recipe's min_vllm_version)"
    assert f"{served}; this plan applies 0.19's memory terms to it" in plan["notes"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"tie_word_embeddings": True}, r"^tie_word_embeddings: vLLM's Beam requires false"),
        ({"layer_types": ["sliding_attention"] * 3}, r"^layer_types: expected 24 entries"),
    ],
)
def test_bad_beam_fields_are_named(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config({**CONFIG, **change})
