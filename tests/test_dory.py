"""Dory's parameters and caches as vLLM 0.33.0/0.34.0 build them (calculators.dory), with the
arithmetic written out from vllm/model_executor/models/dory.py.

tests/data/configs/dory.json is DoryConfig's defaults (vLLM 0.34.0
vllm/transformers_utils/configs/dory.py) with the layer split vLLM's own config test gives the
72-layer model (tests/transformers_utils/test_dory_config.py: 16 input, 40 recurrent, 16 output
layers); no public config.json of nvidia/NVIDIA-Nemotron-Labs-Dory1.0-4B-BF16 was found, and
`n_recurrent_loops` 4 is this test's choice (the class defaults to 1). The published size is
the checkpoint's name: 4B.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import invoke
from test_calc_api import CATALOG, pasted_config_plan

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.param_count import param_counts

CONFIG_PATH = Path(__file__).parent / "data" / "configs" / "dory.json"
CONFIG = json.loads(CONFIG_PATH.read_text())
H, Q, KV, FFN, VOCAB = 2560, 16 * 256, 4 * 256, 7168, 131072


def test_parameters_by_hand_and_against_the_published_4b() -> None:
    counts = param_counts(parse_config(CONFIG))
    # 36 attention layers: qkv_proj, g_proj (a gate per query channel) and o_proj; 36 MLP
    # layers: gate_up_proj and down_proj. The recurrent ones are counted once, whatever the loops.
    assert counts.attention == 36 * (H * (Q + 2 * KV) + H * Q + Q * H)
    assert counts.dense_mlp == 36 * 3 * H * FFN
    # No norm has a weight; the nGPT scales: sqk, s_gate and attn_alpha an attention layer,
    # suv_gate, suv_up and mlp_alpha an MLP layer, and the lm_head's logit_scale.
    assert counts.small == 36 * (2 * Q + H) + 36 * (2 * FFN + H) + VOCAB
    assert counts.embedding == counts.lm_head == VOCAB * H
    assert counts.total == 3_975_229_440  # "Dory1.0-4B"
    looped_once = param_counts(parse_config({**CONFIG, "n_recurrent_loops": 1}))
    assert looped_once.total == counts.total


def test_every_loop_of_a_recurrent_attention_layer_has_its_own_cache() -> None:
    kv = kv_cache_shape(parse_config(CONFIG))
    # 9 full and 27 sliding attention layers; the 40 recurrent layers hold 5 full and 15
    # sliding ones, which 3 more loops repeat. 4 KV heads of 256, bfloat16.
    assert (kv.full_layers, kv.sliding_layers) == (9 + 3 * 5, 27 + 3 * 15)
    assert kv.sliding_window == 1024
    assert kv.bytes_per_token_per_layer == 2 * KV * 2
    last = kv_cache_shape(parse_config({**CONFIG, "recurrent_kv_cache_mode": "last_loop"}))
    assert (last.full_layers, last.sliding_layers) == (9, 27)


def test_calc_vram_at_tp_1_as_the_page_does() -> None:
    plan = pasted_config_plan(CONFIG_PATH, "h100-sxm", max_model_len="8192")
    assert sum(plan["weights_by_role"].values()) == 2 * 3_975_229_440  # bfloat16
    # Every layer's page of 16 tokens; the 72 sliding caches hold their window (and the
    # tokens in flight), the 24 full ones every token.
    assert plan["kv_cache_bytes_per_token"] == 96 * 4096
    assert plan["fits"]
    assert any(note.startswith("Dory: the recurrent layers") for note in plan["notes"])
    # calc vram's default release (0.19) predates 0.33, the first that registers Dory.
    assert any(note.startswith("Dory is served from vLLM 0.33") for note in plan["notes"])


def test_calc_vram_at_tp_8_is_refused_as_vllm_refuses_it() -> None:
    result = invoke("calc", "vram", "--model", str(CONFIG_PATH), "--gpu", "h100-sxm",
                    "--tensor-parallel-size", "8")  # fmt: skip
    assert result.exit_code == 2
    assert "tensor_parallel_size: vLLM serves model_type 'dory' on at most 1 rank" in (
        result.output
    )
    import calc_compute

    page = calc_compute.compute(
        "vram",
        {"config": CONFIG_PATH.read_text(), "gpu": "h100-sxm", "tensor_parallel_size": "8"},
        CATALOG,
    )
    assert "on at most 1 rank" in json.dumps(page["errors"])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"n_recurrent_layers": 30}, r"^n_input_layers/n_recurrent_layers/n_output_layers: "),
        ({"n_recurrent_loops": 0}, r"^n_recurrent_loops: expected an integer >= 1"),
        ({"recurrent_kv_cache_mode": "ring"}, r"^recurrent_kv_cache_mode: expected per_loop"),
        ({"tie_word_embeddings": True}, r"^tie_word_embeddings: Dory requires untied"),
    ],
)
def test_bad_dory_fields_are_named(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config({**CONFIG, **change})
