"""DomynEdge's parameters and caches as vLLM 0.33.0/0.34.0 build them (calculators.domyn_edge),
with the arithmetic written out from vllm/model_executor/models/domyn_edge.py.

tests/data/configs/domyn-edge.json is constructed: no public config.json of
domyn/Domyn-Edge-Base was found, and vLLM has no config class for it (the checkpoint's own,
trust_remote_code). Its keys are those domyn_edge.py reads (per_layer_config[i].head_dim,
window_sizes[i], position_layers[i]); the values are this test's: 24 layers, every fourth a
NoPE layer attending to every token with heads of 128, the others a window of 1023 (+1) with
heads of 64. No published size exists to compare: the count is held to the module's arithmetic.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from test_calc_api import pasted_config_plan

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import ConfigError, InputError
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.layer_caches import layer_caches
from infermeter.calculators.param_count import param_counts

CONFIG_PATH = Path(__file__).parent / "data" / "configs" / "domyn-edge.json"
CONFIG = json.loads(CONFIG_PATH.read_text())
H, HEADS, KV, FFN, VOCAB = 2048, 16, 4, 8192, 131072


def test_parameters_by_hand() -> None:
    for tp in (1, 8):
        counts = param_counts(parse_config(CONFIG), tp)
        # q, k, v and o of each layer's head size: 16 query heads split, 4 KV heads split (one
        # a rank, replicated, at TP 8).
        kv_rank = max(1, KV // tp)
        per_dim = H * (HEADS // tp + 2 * kv_rank) + HEADS // tp * H
        assert counts.attention == per_dim * (18 * 64 + 6 * 128)
        assert counts.dense_mlp == 24 * 3 * H * FFN // tp
        # A k norm of the head size (the q norm has no weight), four RMSNorms, the final one.
        assert counts.small == 18 * 64 + 6 * 128 + 24 * 4 * H + H
        assert counts.embedding == counts.lm_head == VOCAB // tp * H
    assert param_counts(parse_config(CONFIG)).total == 1_902_317_440


def test_the_caches_are_grouped_layer_by_layer() -> None:
    arch = parse_config(CONFIG)
    caches = layer_caches(arch, None, 1, 16, 2)
    assert caches is not None
    # 18 sliding layers (pages of 16 tokens x 4 KV heads x 2 x 64 x 2 B = 16 KiB) and 6 full
    # ones (32 KiB): every page grown to 32 KiB (the sliding ones then hold 32 tokens), the 6
    # full layers one group, the 18 sliding ones three groups of 6.
    assert len(caches.groups) == 4
    assert {spec.page_bytes for g in caches.groups for spec in g.specs} == {32768}
    windows = sorted({spec.window for g in caches.groups for spec in g.specs})
    assert windows == [0, 1024]
    with pytest.raises(InputError, match="a head size and a window per layer"):
        kv_cache_shape(arch)


@pytest.mark.parametrize(("tp", "kv_heads"), [("1", 4), ("8", 1)])
def test_calc_vram_as_the_page_does(tp: str, kv_heads: int) -> None:
    plan = pasted_config_plan(CONFIG_PATH, "h100-sxm", tensor_parallel_size=tp,
                              max_model_len="32768", max_num_batched_tokens="8192")  # fmt: skip
    assert plan["kv_cache_groups"] == 4
    block = 6 * 16 * kv_heads * 2 * 128 * 2  # a full layer's page for each of a group's 6
    # The full group's pages of 16 tokens for 32,768 tokens; each sliding group's pages of 32
    # tokens for the window and the tokens in flight (1023 + 8192), plus one.
    pages = 32768 // 16 + 3 * (-(-(1023 + 8192) // 32) + 1)
    assert plan["request_bytes_at_max_model_len"] == pages * block
    assert plan["fits"]
    assert any(note.startswith("DomynEdge: each layer's K/V") for note in plan["notes"])
    assert any(note.startswith("DomynEdge is served from vLLM 0.33") for note in plan["notes"])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"window_sizes": [[0, 0]]}, r"^window_sizes: expected 24 entries"),
        ({"per_layer_config": [{}] * 24}, r"^per_layer_config\[0\]\.head_dim: required field"),
        ({"window_sizes": [["x"]] * 24}, r"^window_sizes\[0\]: expected \[left, right\]"),
    ],
)
def test_bad_domyn_edge_fields_are_named(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config({**CONFIG, **change})
