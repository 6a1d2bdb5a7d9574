"""K2-Horizon's parameters and cache as vLLM 0.30.0-0.34.0 build them (calculators.k2_horizon,
from vllm/model_executor/models/k2_horizon.py).

tests/data/configs/k2-horizon-mova-36b-a4b.json and k2-horizon-3.7b.json are
IFM/K2-Horizon-MoVA-36B-A4B's and IFM/K2-Horizon-3.7B's config.json as a public MLX port's tests
quote them verbatim (K2HorizonTests; the code index does not name that repository). Their
names' sizes are the counts without the embedding and lm_head tables, truncated: 36.16B and
4.66B a token for the MoVA model, 3.78B for the dense one.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from test_calc_api import pasted_config_plan

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.param_count import ParamCounts, param_counts

DATA = Path(__file__).parent / "data" / "configs"
MOVA_PATH = DATA / "k2-horizon-mova-36b-a4b.json"
MOVA = json.loads(MOVA_PATH.read_text())
DENSE = json.loads((DATA / "k2-horizon-3.7b.json").read_text())
H, Q, KV, VOCAB = 2560, 32 * 128, 8 * 128, 250624
_OPTIONS = {"vllm_version": "0.34", "max_model_len": "131072"}


def _without_tables(counts: ParamCounts) -> int:
    return counts.total - counts.embedding - counts.lm_head


def test_the_published_sizes_are_the_counts_without_the_tables() -> None:
    mova, dense = param_counts(parse_config(MOVA)), param_counts(parse_config(DENSE))
    assert mova.embedding == mova.lm_head == dense.embedding == VOCAB * H
    assert _without_tables(mova) // 10**9 == 36  # "36B"
    assert (_without_tables(mova) - mova.experts + mova.experts_active) // 10**9 == 4  # "A4B"
    assert _without_tables(dense) // 10**8 == 37  # "3.7B"
    # The dense model: q/k/v/o and a gated MLP of 10240 in 36 layers, two norms each.
    assert _without_tables(dense) == 36 * (H * (Q + 2 * KV) + Q * H + 3 * H * 10240 + 2 * H) + H


def test_mova_layers_follow_the_module() -> None:
    for tp in (1, 8):
        counts = param_counts(parse_config(MOVA), tp)
        q, kv = Q // tp, KV // tp
        # 3 dense layers: q/k/v/o and the softplus gate; 45 MoVA layers: q/k/o and the gate,
        # their 64 value experts counted as experts.
        assert counts.attention == 3 * (H * (2 * q + 2 * kv) + q * H) + 45 * (
            H * (2 * q + kv) + q * H
        )
        value_expert = H * kv
        routed = 3 * H * 768 // tp
        assert counts.experts == 45 * (100 * routed + 64 * value_expert)
        assert counts.experts_active == 45 * (8 * routed + 4 * value_expert)
        assert counts.shared_experts == 45 * 3 * H * 768 // tp
        assert counts.dense_mlp == 3 * 3 * H * 6144 // tp
        # The routers of the experts and of the value experts, replicated, and their biases.
        assert counts.router == 45 * H * (100 + 64)
        assert counts.small == 97 * H + 45 * (100 + 64)


def test_query_key_norms_span_the_ranks_q_and_k() -> None:
    normed = {**DENSE, "query_key_norm": True}
    for tp in (1, 8):
        added = param_counts(parse_config(normed), tp).small
        assert added - param_counts(parse_config(DENSE), tp).small == 36 * (Q + KV) // tp


def test_calc_vram_at_tp_1_and_8_as_the_page_says() -> None:
    for tp, heads in (("1", 8), ("8", 1)):
        plan = pasted_config_plan(MOVA_PATH, "h200-sxm", **_OPTIONS, tensor_parallel_size=tp)
        assert plan["kv_cache_bytes_per_token"] == 48 * heads * 2 * 128 * 2
        assert (
            plan["kv_cache_bytes_per_token"]
            == kv_cache_shape(parse_config(MOVA), tensor_parallel_size=int(tp)).bytes_per_token
        )
        counts = param_counts(parse_config(MOVA), int(tp))
        assert plan["weights_by_role"]["experts"] == 2 * counts.experts
        assert plan["fits"]
        assert any(note.startswith("K2-Horizon: MoVA") for note in plan["notes"])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"mova_num_experts_per_tok": 0}, r"^mova_num_experts_per_tok: expected 1 to"),
        ({"mova_num_experts_per_tok": 65}, r"^mova_num_experts_per_tok: expected 1 to"),
    ],
)
def test_bad_mova_fields_are_named(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config({**MOVA, **change})
