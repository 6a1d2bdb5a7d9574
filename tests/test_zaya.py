"""ZAYA1's parameters and caches as vLLM 0.34.0 builds them (calculators.zaya), with the
arithmetic written out from vllm/model_executor/models/zaya.py.

tests/data/configs/zaya1-8b.json: Zyphra/ZAYA1-8B's config in transformers' native schema,
field for field transformers 5.24's ZayaConfig defaults (models/zaya/configuration_zaya.py,
whose docstring names that checkpoint) and the key set a public test fixture mirrors from "the
pinned Zyphra/ZAYA1-8B config.json" (the code index names neither repository); the hub's
older schema (a public transcript of its config.json) agrees: hidden 2048, 8 query and 2 KV
heads of 128, 16 experts, top-1, tied embeddings. Published size (the model card, as that
transcript quotes it): "760M active parameters and 8.4B total", which our count matches
without the embedding table (753.6M and 8.30B).
"""

import json
from pathlib import Path
from typing import Any

import pytest
from test_calc_api import pasted_config_plan

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.param_count import param_counts

CONFIG_PATH = Path(__file__).parent / "data" / "configs" / "zaya1-8b.json"
CONFIG = json.loads(CONFIG_PATH.read_text())
H, Q, KV, R, VOCAB = 2048, 8 * 128, 2 * 128, 256, 262272


def test_parameters_by_hand_and_against_the_published_size() -> None:
    arch = parse_config(CONFIG)
    one, eight = param_counts(arch), param_counts(arch, 8)
    # CCA, replicated on every rank: q, k, the current and delayed halves of v, o.
    assert one.attention == eight.attention == 40 * (H * (Q + 2 * KV) + Q * H)
    # 16 experts of three 2048 x 2048 matrices, split over the ranks.
    assert one.experts == 8 * eight.experts == 40 * 16 * 3 * H * 2048
    # The router: down_proj and fc1, fc2 with biases, out_proj to 17 classes; its float32
    # balancing bias a class.
    assert one.router == 40 * (H * R + R + 2 * (R * R + R) + R * 17)
    assert one.four_byte == 40 * 17
    # Small: the two convolutions over 1280 q/k channels (2 taps, biases; the second in 10
    # groups of 128), 2 temperatures, the router's norm, 2 norms and 2 residual scalings a
    # layer; router_states_scale on 39 layers; the input's scale and bias, the final norm.
    conv = 1280 * 2 + 1280 + 1280 * 128 * 2 + 1280
    assert one.small == 40 * (conv + 2 + R + 10 * H) + 39 * R + 3 * H
    assert (one.embedding, one.lm_head) == (VOCAB * H, 0)
    without_embedding = one.total - one.embedding
    assert without_embedding == 8_303_356_408  # published 8.4B (-1.2 %)
    assert one.active - one.embedding == 753_609_208  # published 760M (-0.8 %)


def test_the_caches_are_whole_on_every_rank() -> None:
    arch = parse_config(CONFIG)
    for tp in (1, 8):
        kv = kv_cache_shape(arch, tensor_parallel_size=tp)
        assert kv.bytes_per_token_per_layer == 2 * 2 * 128 * 2  # both KV heads, bfloat16
        assert (kv.full_layers, kv.state_layers) == (40, 40)
        # 2 taps of history of 10 heads of 128, and half a KV head's width of delayed value.
        assert kv.state_bytes_per_sequence_per_layer == (10 * 128 * 2 + 128) * 2
    sliding = {**CONFIG, "layer_types": ["hybrid", "hybrid_sliding"] * 20, "sliding_window": 4096}
    kv = kv_cache_shape(parse_config(sliding))
    assert (kv.full_layers, kv.sliding_layers, kv.sliding_window) == (20, 20, 4096)


@pytest.mark.parametrize("tp", ["1", "8"])
def test_calc_vram_as_the_page_does(tp: str) -> None:
    plan = pasted_config_plan(
        CONFIG_PATH, "h100-sxm", tensor_parallel_size=tp, max_model_len="131072"
    )
    rank = param_counts(parse_config(CONFIG), int(tp))
    assert plan["weights_by_role"]["experts"] == 2 * rank.experts
    assert plan["weights_by_role"]["attention"] == 2 * 40 * (H * (Q + 2 * KV) + Q * H)
    # 40 attention layers of 1 KiB a token on every rank; 131,072 tokens.
    assert plan["kv_cache_bytes_per_token"] == 40 * 1024
    # Blocks of 16 tokens: 8,192 of the attention group and one of the state group (a page of
    # 16 KiB a layer holds its 5,376-byte state).
    assert plan["block_size"] == 16
    assert plan["request_bytes_at_max_model_len"] == (131072 // 16 + 1) * 40 * 16 * 1024
    assert plan["fits"]
    assert any(note.startswith("ZAYA1: CCA attention") for note in plan["notes"])
    assert any(note.startswith("ZAYA1 is served from vLLM 0.34") for note in plan["notes"])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"layer_types": ["mamba"] * 40}, r"^layer_types: expected a list of hybrid"),
        ({"layer_types": ["hybrid_sliding"] * 40}, r"^sliding_window: required by hybrid_sliding"),
        ({"num_experts_per_tok": 2}, r"^num_experts_per_tok: ZAYA supports 1 only"),
        ({"cca_time0": 0}, r"^cca_time0: expected an integer >= 1"),
    ],
)
def test_bad_zaya_fields_are_named(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config({**CONFIG, **change})
