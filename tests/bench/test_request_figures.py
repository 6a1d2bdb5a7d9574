"""Each successful request's SLO figures in the result file (`LoadPoint.request_figures`): what
the answer checks a reader's SLO against request by request. Times are rounded up to the
microsecond, so a bound in whole microseconds is decided as on the raw times; a run whose
figures would take its file over the registry's size limit keeps its points without them, each
point saying so."""

from __future__ import annotations

import datetime as dt

import pytest

from infermeter.bench.client.request_record import RequestRecord
from infermeter.bench.result.assemble import build_result, validate_result
from infermeter.bench.result.deployment import Deployment
from infermeter.bench.result.provenance import Provenance
from infermeter.bench.run.config import RunConfig, RunResult
from infermeter.bench.run.metrics import summarize_point
from infermeter.bench.telemetry.host import host_info
from infermeter.bench.workloads.lengths import parse_length
from infermeter.registry.input_files import LIMITS_BYTES
from infermeter.registry.models import Result
from infermeter.registry.store import dumps_result

MS = 1_000_000  # ns


def _record(i: int, ttft_ns: int, tokens: int, ok: bool = True) -> RequestRecord:
    send = i * 50 * MS
    times = [send + ttft_ns + k * 10 * MS for k in range(tokens)] if ok else []
    return RequestRecord(
        index=i, send_ns=send, end_ns=(times or [send + MS])[-1], token_times_ns=times,
        chunk_chars=[3] * len(times), output_tokens=tokens if ok else None, input_tokens=8,
        error=None if ok else "http_status", http_status=None if ok else 500,
    )  # fmt: skip


def _result(records: list[RequestRecord]) -> Result:
    config = RunConfig(
        endpoint="http://127.0.0.1:1", input_len=parse_length("8"), output_len=parse_length("4")
    )
    run = RunResult(
        endpoint=config.endpoint, model="meta-llama/Llama-3.1-8B-Instruct", api="completions",
        profile="chat", seed=0, prompt_salt=0, points=[summarize_point(records, concurrency=2)],
    )  # fmt: skip
    now = dt.datetime(2026, 12, 1, 12, tzinfo=dt.UTC)
    deployment = Deployment(
        "h100-sxm", 1, "sxm", "0.9.1", "llama-3.1-8b-instruct", "meta-llama/Llama-3.1-8B-Instruct"
    )
    provenance = Provenance("infermeter bench run", now, now, "octocat", host_info(None))
    return build_result(run, config, deployment, [], None, provenance)


def test_each_successful_request_is_kept_in_send_order_rounded_up_to_the_microsecond() -> None:
    records = [
        _record(2, 80 * MS + 1, 4),  # 1 ns over 80 ms: stored above an 80 ms bound
        _record(0, 80 * MS, 4),  # exactly 80 ms: stored at it
        _record(1, 30 * MS, 1),  # one token: no TPOT
        _record(3, 30 * MS, 4, ok=False),  # failed: counted in requests.failed only
    ]
    (point,) = _result(records).points
    figures = point.request_figures
    assert figures is not None
    assert point.requests.failed == 1
    assert figures.output_tokens == [4, 1, 4]
    assert figures.ttft_ms == [80.0, 30.0, 80.001]
    assert figures.tpot_ms == [10.0, None, 10.0]
    assert figures.e2e_ms == [110.0, 30.0, 110.001]


def test_figures_that_would_pass_the_file_limit_are_left_out_and_each_point_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    records = [_record(i, 20 * MS, 4) for i in range(40)]
    kept = _result(records)
    assert kept.points[0].request_figures is not None
    size = len(dumps_result(kept).encode("utf-8"))
    monkeypatch.setitem(LIMITS_BYTES, "result file", size - 1)
    (point,) = _result(records).points
    assert point.request_figures is None
    (verdict,) = [v for v in point.validity if v.code == "request_figures_left_out"]
    assert "above the limit" in verdict.message
    assert validate_result(kept) == []
