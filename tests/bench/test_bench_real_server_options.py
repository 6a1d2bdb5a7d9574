"""What pointing `bench run` at a real server needs: --extra-body, an open loop capped at a
concurrency, and a per-second timeline in the raw records; all against the stand-in server."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from bench_helpers import run_point_at
from click.testing import CliRunner, Result
from fake_openai_server import FakeOpenAIServer

from infermeter.bench.cli.main import main
from infermeter.bench.client.request_record import RequestRecord
from infermeter.bench.client.stream import ErrorKind
from infermeter.bench.result.raw_records import write_raw_records
from infermeter.bench.run.config import RunConfig
from infermeter.bench.run.load import PointPlan
from infermeter.bench.run.metrics import summarize_point
from infermeter.bench.run.runner import run_benchmark
from infermeter.bench.run.timeline import point_timeline
from tests.measured_result import h100_deployment, stored_run

SMALL = ["--num-requests", "6", "--warmup", "0", "--input-len", "16", "--output-len", "8"]


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def test_extra_body_fields_reach_every_request(fake_server: FakeOpenAIServer) -> None:
    body = '{"top_p": 0.9, "temperature": 0.7, "seed": 3}'
    result = invoke(
        "bench", "run", "--endpoint", fake_server.url, "--concurrency", "2", *SMALL,
        "--extra-body", body, "--quiet", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert len(fake_server.stats.bodies) == 6
    for sent in fake_server.stats.bodies:
        assert (sent["top_p"], sent["temperature"], sent["seed"]) == (0.9, 0.7, 3)
        assert sent["max_tokens"] == 8  # the workload's fields stay the benchmark's


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("{top_p: 1}", "--extra-body: not JSON"),
        ("[1, 2]", "--extra-body: expected a JSON object"),
        ('{"max_tokens": 5, "stream": false}', "max_tokens, stream is set by the benchmark"),
        # Bug: both were accepted. NaN was sent as `NaN` (Python's json writes it; JSON has no
        # such number); a field given twice was sent once, with its last value.
        ('{"temperature": NaN}', "--extra-body: NaN and Infinity are not JSON numbers"),
        ('{"top_p": {"a": -Infinity}}', "--extra-body: NaN and Infinity are not JSON numbers"),
        ('{"top_p": 0.9, "top_p": 2}', "--extra-body: not JSON: duplicate key"),
    ],
)
def test_extra_body_refuses_bad_values_in_one_line(
    fake_server: FakeOpenAIServer, value: str, message: str
) -> None:
    result = invoke(
        "bench", "run", "--endpoint", fake_server.url, "--concurrency", "1", *SMALL,
        "--extra-body", value,
    )  # fmt: skip
    assert result.exit_code == 2
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert fake_server.stats.requests == 0


def test_open_loop_capped_at_max_concurrency(fake_server: FakeOpenAIServer) -> None:
    fake_server.config.ttft_s = 0.030
    fake_server.config.itl_s = 0.002
    # 400 req/s offered, each request ~45 ms: uncapped that is ~18 in flight.
    plan = PointPlan(request_rate=400, max_concurrency=3, num_requests=30, warmup_requests=0)
    run = run_point_at(fake_server.url, plan)
    assert len(run.records) == 30
    # The client never had more than 3 in flight (the server may count a 4th for an instant:
    # it decrements after its last write, the client sends the next once it read [DONE]).
    overlaps = [
        sum(1 for o in run.records if o.send_ns <= r.send_ns < o.end_ns) for r in run.records
    ]
    assert max(overlaps) == 3
    assert fake_server.stats.max_in_flight <= 4
    waited = [r for r in run.records if r.slot_wait_ns > 0]
    assert len(waited) >= 20  # most requests queued for a slot, and the record says how long
    longest = max(r.slot_wait_ns for r in waited) / 1e6
    assert longest > 100
    summary = summarize_point(run.records, request_rate=400)
    # The cap's wait is not the client's lag: the send lag stays a small part of it (a busy
    # test machine lags too, so no absolute bound).
    assert summary.send_lag_ms is not None
    assert summary.send_lag_ms.p99 is not None
    assert summary.send_lag_ms.p99 < longest / 5


def test_uncapped_open_loop_is_not_held_back(fake_server: FakeOpenAIServer) -> None:
    fake_server.config.ttft_s = 0.030
    run = run_point_at(
        fake_server.url, PointPlan(request_rate=400, num_requests=30, warmup_requests=0)
    )
    assert fake_server.stats.max_in_flight > 3
    assert all(r.slot_wait_ns == 0 for r in run.records)


def test_max_concurrency_needs_a_request_rate(fake_server: FakeOpenAIServer) -> None:
    result = invoke(
        "bench", "run", "--endpoint", fake_server.url, "--concurrency", "2",
        "--max-concurrency", "2", *SMALL,
    )  # fmt: skip
    assert result.exit_code == 2
    assert "--max-concurrency: caps an open loop" in result.output


def test_capped_open_loop_is_stored_with_its_cap(fake_server: FakeOpenAIServer) -> None:
    config = RunConfig(
        endpoint=fake_server.url, request_rates=(50.0,), max_concurrency=2, num_requests=6,
        warmup_requests=0,
    )  # fmt: skip
    run = run_benchmark(config)
    result = stored_run(run, config, h100_deployment("llama-3.1-8b-instruct", "meta/x"))
    load = result.points[0].load
    assert (load.arrival, load.request_rate, load.concurrency) == ("poisson", 50.0, 2)


def _record(index: int, send_s: float, end_s: float, tokens_at_s: list[float]) -> RequestRecord:
    second = 1_000_000_000
    return RequestRecord(
        index=index,
        send_ns=int(send_s * second),
        end_ns=int(end_s * second),
        token_times_ns=[int(t * second) for t in tokens_at_s],
        chunk_chars=[4] * len(tokens_at_s),
        output_tokens=len(tokens_at_s),
    )


def test_timeline_counts_each_second() -> None:
    records = [
        _record(0, 10.0, 12.5, [10.5, 11.2, 12.4]),  # runs through seconds 0–2
        _record(1, 10.2, 10.9, [10.8]),
        _record(2, 11.5, 13.1, [13.0]),
    ]
    records[1].warmup = True
    records[2].error = ErrorKind.DISCONNECT
    timeline = point_timeline(records)
    assert [s.second for s in timeline] == [0, 1, 2, 3]
    assert [s.sent for s in timeline] == [2, 1, 0, 0]
    assert [s.warmup_sent for s in timeline] == [1, 0, 0, 0]
    assert [s.completed for s in timeline] == [1, 0, 1, 0]
    assert [s.failed for s in timeline] == [0, 0, 0, 1]
    assert [s.output_tokens for s in timeline] == [2, 1, 1, 1]
    assert [s.running for s in timeline] == [1, 2, 1, 0]


def test_timeline_shows_a_stall_and_failures(fake_server: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_server.config.ttft_s = 1.2  # nothing streams during the first second
    fake_server.config.fault = "http_500"
    fake_server.config.fault_every = 3
    run = run_point_at(fake_server.url, PointPlan(concurrency=6, num_requests=6, warmup_requests=0))
    path = tmp_path / "r.requests.jsonl.gz"
    write_raw_records(path, [(1, True, run.records)])
    with gzip.open(path, "rt") as raw:
        lines = [json.loads(line) for line in raw]
    seconds = [line for line in lines if line["kind"] == "second"]
    assert len([line for line in lines if line["kind"] == "request"]) == 6
    assert seconds[0]["sent"] == 6
    assert seconds[0]["failed"] == 2  # every third request fails at once
    assert seconds[0]["running"] == 4
    assert seconds[0]["output_tokens"] == 0
    assert seconds[1]["completed"] == 4
    assert seconds[1]["running"] == 0
    assert sum(s["output_tokens"] for s in seconds) == 4 * 8
