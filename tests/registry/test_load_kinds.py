"""What each load kind means downstream: its label, its index row and its per-user rate."""

from pathlib import Path

import pytest
from pydantic import ValidationError

from infermeter.registry.index_rows import index_rows
from infermeter.registry.models import Load, Result
from infermeter.registry.prices import PriceBook
from infermeter.registry.store import read_result

VALID = Path(__file__).resolve().parents[1] / "examples" / "valid" / "results"


def _result(name: str) -> Result:
    return read_result(VALID / name)


def test_offline_point_has_no_per_user_rate() -> None:
    (row,) = index_rows(_result("reported-offline.json"), "f.json", PriceBook([]))
    assert (row.arrival, row.concurrency, row.request_rate) == ("offline", None, None)
    assert row.tokens_per_s_per_user is None
    assert row.tokens_per_s_per_user_basis is None
    assert row.output_tokens_per_s_per_gpu == pytest.approx(13181.24 / 2)
    assert row.load_label == "offline (all requests queued at once)"


def test_server_at_slo_row_carries_bounds_and_measured_p99() -> None:
    (row,) = index_rows(_result("reported-server-at-slo.json"), "f.json", PriceBook([]))
    assert (row.arrival, row.request_rate) == ("poisson", 11.2)
    assert (row.rate_search_percentile, row.rate_search_ttft_ms, row.rate_search_tpot_ms) == (
        99.0,
        2000.0,
        200.0,
    )
    assert (row.ttft_ms_p99, row.tpot_ms_p99) == (1234.5, 61.0)
    assert row.load_label == (
        "highest rate 11.2 req/s poisson with p99 TTFT ≤ 2000 ms, TPOT ≤ 200 ms"
    )


def test_closed_loop_per_user_rate_divides_by_concurrency() -> None:
    rows = index_rows(_result("measured-two-points.json"), "f.json", PriceBook([]))
    for row in rows:
        assert row.concurrency is not None
        assert row.output_tokens_per_s is not None
        assert row.tokens_per_s_per_user == pytest.approx(
            row.output_tokens_per_s / row.concurrency, rel=1e-5
        )
        assert row.load_label == f"concurrency {row.concurrency}"


@pytest.mark.parametrize(
    ("load", "label"),
    [
        ({"arrival": "constant", "request_rate": 4.0}, "4 req/s constant"),
        (
            {"arrival": "gamma", "request_rate": 8.0, "burstiness": 0.5, "concurrency": 128},
            "8 req/s gamma, max 128 in flight",
        ),
        (
            {"arrival": "poisson", "request_rate": 2.5, "rate_search": {"percentile": 90.0,
                                                                        "e2e_ms": 5000.0}},
            "highest rate 2.5 req/s poisson with p90 E2E ≤ 5000 ms",
        ),
        (
            {"arrival": "closed", "concurrency": 12, "concurrency_search": {"percentile": 99.0,
                                                                           "ttft_ms": 800.0}},
            "highest concurrency 12 with p99 TTFT ≤ 800 ms",
        ),
        ({"arrival": "static_batch", "concurrency": 8}, "static batch of 8 (started together)"),
    ],
)  # fmt: skip
def test_load_label(load: dict[str, object], label: str) -> None:
    assert Load.model_validate(load).label() == label


@pytest.mark.parametrize(
    "load",
    [
        {"arrival": "offline", "request_rate": 3.0},
        {"arrival": "constant"},
        {"arrival": "offline", "rate_search": {"percentile": 99.0, "ttft_ms": 1.0}},
        {"arrival": "poisson", "request_rate": 1.0, "rate_search": {"percentile": 100.0,
                                                                    "ttft_ms": 1.0}},
        {"arrival": "poisson", "request_rate": 1.0, "concurrency_search": {"percentile": 99.0,
                                                                           "ttft_ms": 1.0}},
        {"arrival": "offline", "concurrency_search": {"percentile": 99.0, "ttft_ms": 1.0}},
        {"arrival": "closed", "concurrency": 4, "concurrency_search": {"percentile": 99.0}},
        {"arrival": "static_batch"},
        {"arrival": "static_batch", "concurrency": 8, "request_rate": 1.0},
        {"arrival": "static_batch", "concurrency": 8, "concurrency_search": {"percentile": 99.0,
                                                                             "e2e_ms": 1.0}},
    ],
)  # fmt: skip
def test_load_kinds_refuse_parameters_they_do_not_have(load: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Load.model_validate(load)
