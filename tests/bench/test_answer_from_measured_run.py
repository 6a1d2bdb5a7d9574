"""End to end: a result that `bench run` measured against a real HTTP server on 127.0.0.1 (the
stand-in OpenAI server: a batch limit that queues requests, so some miss the TTFT bound, and
HTTP 500s), put in a registry, answers a reader's SLO through `registry answer --json`; the
accepted tokens/s and $ per 1M accepted output tokens are recomputed from the per-request records
alone: tokens of the requests that succeeded and met every bound, over the measured window, at
the run's own SLO, at a looser and a tighter one, and a percentile the records do not prove."""

from __future__ import annotations

import gzip
import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_openai_server import FakeOpenAIServer
from registry_checkout import empty_registry

from infermeter.registry.models import Result
from infermeter.registry.store import result_path
from tests.cli_helpers import invoke, json_output

REPO = Path(__file__).resolve().parents[2]
TTFT_MS = 80.0


def _requests(raw: Path) -> list[dict[str, Any]]:
    with gzip.open(raw, "rt") as stream:
        records = [json.loads(line) for line in stream]
    return [r for r in records if r["kind"] == "request" and not r["warmup"]]


def _catalog_price(price_id: str) -> dict[str, Any]:
    """The price as the catalog files state it (hand-edited and harvested)."""
    for path in sorted((REPO / "registry" / "catalogs").glob("prices*.yaml")):
        for entry in yaml.safe_load(path.read_text("utf-8"))["prices"]:
            if entry["id"] == price_id:
                return dict(entry)
    raise AssertionError(f"{price_id} is in no price catalog")


def test_a_measured_run_answers_a_reader_slo_by_its_per_request_records(
    fake_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    config = fake_server.config
    # 3 requests served at once, 4 sent: the fourth waits a whole reply (~165 ms) for its first
    # token, so some requests miss TTFT <= 80 ms; every 6th request fails with HTTP 500.
    config.version, config.max_running = "0.11.0", 3
    config.ttft_s, config.itl_s = 0.005, 0.02
    config.fault, config.fault_every = "http_500", 6
    output = tmp_path / "run" / "result.json"
    run = invoke(
        "bench", "run", "--endpoint", fake_server.url, "--gpu", "h100-sxm",
        "--model-id", "llama-3.2-1b-instruct", "--concurrency", "4", "--num-requests", "24",
        "--warmup", "0", "--input-len", "16", "--output-len", "8",
        "--slo-ttft-ms", f"{TTFT_MS:g}", "--output", str(output), "--raw-records", "--quiet",
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    result = json.loads(output.read_text())

    # the per-request records alone, read independently of bench's summary
    requests = _requests(output.with_name("result.requests.jsonl.gz"))
    assert len(requests) == 24
    ok = [r for r in requests if r["error"] is None]
    assert len(ok) < len(requests)  # failures are never accepted
    accepted, share = _recount(requests, ttft_ms=TTFT_MS)
    assert 0 < share * len(requests) < len(ok)  # nor successes that missed the bound
    assert share >= 0.5, share  # the reader's p50 below is proved by the records

    registry = empty_registry(tmp_path / "registry-root")
    stored = registry / result_path(Result.model_validate(result))
    stored.parent.mkdir(parents=True)
    shutil.copy(output, stored)
    row = _answer_row(registry, 50, ttft_ms=TTFT_MS)
    assert row["result_ids"] == [result["id"]]
    assert "per-request records" in row["evidence"]["basis"]
    assert row["accepted_output_tokens_per_s"] == _approx(accepted)
    price = _catalog_price(row["price_id"])
    assert (price["gpu"], price["tier"]) == ("h100-sxm", "on_demand")
    assert row["usd_per_million_accepted"] == _approx(
        price["usd_per_gpu_hour"] * 1 / (accepted * 3600) * 1e6  # 1 GPU
    )

    # a looser reader SLO counts every success the run's own SLO left out
    looser, looser_share = _recount(requests, ttft_ms=10 * TTFT_MS)
    assert looser_share == len(ok) / len(requests)
    assert looser > accepted
    row = _answer_row(registry, 50, ttft_ms=10 * TTFT_MS)
    assert row["accepted_output_tokens_per_s"] == _approx(looser)

    # a tighter one (an E2E bound too, met by about half the accepted requests) counts fewer
    e2e = sorted(_ms(r["token_times_ns"][-1] - r["send_ns"]) for r in _met(requests, TTFT_MS))
    tight_e2e = math.ceil(e2e[len(e2e) // 2] * 1000) / 1000  # a whole microsecond
    tighter, tighter_share = _recount(requests, ttft_ms=TTFT_MS, e2e_ms=tight_e2e)
    assert 0 < tighter < accepted
    percentile = math.floor(tighter_share * 100)  # the strictest percentile the records prove
    row = _answer_row(registry, percentile, ttft_ms=TTFT_MS, e2e_ms=tight_e2e)
    assert row["accepted_output_tokens_per_s"] == _approx(tighter)

    # a percentile the records do not prove is a miss, naming the share that met the bounds
    (missed,) = _answer(registry, percentile + 1, ttft_ms=TTFT_MS, e2e_ms=tight_e2e)["answers"]
    assert missed["rows"] == []
    assert missed["nearest_miss"]["result_id"] == result["id"]
    assert "of the requests" in missed["nearest_miss"]["reason"]


def _ms(nanoseconds: int) -> float:
    return nanoseconds / 1e6


def _met(
    requests: list[dict[str, Any]], ttft_ms: float, e2e_ms: float = math.inf
) -> list[dict[str, Any]]:
    """The successful requests within both bounds, by their raw times."""
    return [
        r
        for r in requests
        if r["error"] is None
        and _ms(r["token_times_ns"][0] - r["send_ns"]) <= ttft_ms
        and _ms(r["token_times_ns"][-1] - r["send_ns"]) <= e2e_ms
    ]


def _recount(
    requests: list[dict[str, Any]], ttft_ms: float, e2e_ms: float = math.inf
) -> tuple[float, float]:
    """Accepted output tokens/s over the measured window, and the share of requests met."""
    met = _met(requests, ttft_ms, e2e_ms)
    window_s = (max(r["end_ns"] for r in requests) - min(r["send_ns"] for r in requests)) / 1e9
    return sum(r["output_tokens"] for r in met) / window_s, len(met) / len(requests)


def _answer(registry: Path, percentile: float, **bounds: float) -> dict[str, Any]:
    options = [f"--slo-{name.replace('_', '-')}={value!r}" for name, value in bounds.items()]
    return json_output(
        "registry", "answer", "--registry", str(registry), "--model", "llama-3.2-1b-instruct",
        "--percentile", f"{percentile:g}", *options, "--no-estimate",
    )  # fmt: skip


def _answer_row(registry: Path, percentile: float, **bounds: float) -> dict[str, Any]:
    """The one ranked row of the answer, in the measured lane's closed-loop answer."""
    (found,) = _answer(registry, percentile, **bounds)["answers"]
    assert (found["lane"], found["scenario"], found["slo"]["percentile"]) == (
        "measured",
        "closed",
        percentile,
    )
    (row,) = found["rows"]
    assert "per-request records" in row["evidence"]["basis"]
    return dict(row)


def _approx(value: float) -> Any:
    return pytest.approx(value, rel=1e-4)  # the result file rounds figures to 3 decimals
