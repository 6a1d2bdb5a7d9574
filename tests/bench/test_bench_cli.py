"""`infermeter bench run` end to end against the stand-in server, and its usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_helpers import SMALL, assert_documented_point
from click.testing import CliRunner, Result
from fake_openai_server import FakeOpenAIServer

from infermeter.bench.cli.main import main
from infermeter.bench.errors import BenchConfigError
from infermeter.bench.launch.server import free_port
from infermeter.bench.run.config import RunConfig
from infermeter.bench.run.point_plans import long_point_notes, plan_points
from infermeter.bench.run.runner import run_benchmark
from infermeter.bench.workloads.lengths import parse_length

SMALL_DATASET = [*SMALL[:4], *SMALL[6:]]  # a --dataset's prompts keep their own lengths


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(main, ["bench", "run", *args])


def test_cli_bench_run_json_prints_documented_keys(fake_server: FakeOpenAIServer) -> None:
    fake_server.config.ttft_s = 0.005
    result = _invoke("--endpoint", fake_server.url, "--concurrency", "1,2", *SMALL, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert [p["concurrency"] for p in summary["points"]] == [1, 2]
    for point in summary["points"]:
        assert_documented_point(point)
        assert point["completed"] == 6
        assert point["failed"] == 0
        assert point["ttft_ms"]["p50"] >= 5
    assert summary["model"] == "fake/model"
    assert fake_server.stats.requests == 2 * (6 + 2)


def test_cli_bench_run_open_loop_json_point(fake_server: FakeOpenAIServer) -> None:
    result = _invoke(
        "--endpoint", fake_server.url, "--request-rate", "50", *SMALL, "--api", "chat", "--json"
    )
    assert result.exit_code == 0, result.output
    (point,) = json.loads(result.stdout)["points"]
    assert point["request_rate"] == 50.0
    assert point["concurrency"] is None
    assert point["send_lag_ms"]["n"] == 6


def test_cli_bench_run_open_loop_with_its_warmup_in_flight_writes_its_result(
    endpoint: str, tmp_path: Path
) -> None:
    # --request-rate 500 --num-requests 20 (100 warm-up requests) had its result refused: its
    # concurrency_mean, which counts the warm-up requests still in flight, was 106 with 20 sent.
    output = tmp_path / "r.json"
    result = _invoke(
        "--endpoint", endpoint, "--gpu", "h100-sxm", "--model-id", "llama-3.2-1b-instruct",
        "--request-rate", "500", "--num-requests", "20", "--warmup", "60",
        "--input-len", "16", "--output-len", "8", "--output", str(output),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    (point,) = json.loads(output.read_text())["points"]
    assert point["requests"]["sent"] == 20
    assert point["requests"]["warmup_in_flight"] > 0
    assert point["concurrency_mean"] > 20 * 1.05 + 1  # what the check refused before


def test_cli_bench_run_counts_failures_and_slo_misses(fake_server: FakeOpenAIServer) -> None:
    fake_server.config.fault = "http_503"
    fake_server.config.fault_every = 2
    result = _invoke(
        "--endpoint",
        fake_server.url,
        "--concurrency",
        "1",
        *SMALL,
        "--slo-ttft-ms",
        "1000",
        "--json",
    )
    assert result.exit_code == 0, result.output
    (point,) = json.loads(result.stdout)["points"]
    assert point["completed"] == 3
    assert point["failed"] == 3
    assert point["failures_by_kind"] == {"http_status": 3}
    assert point["failures_by_http_status"] == {"503": 3}
    assert point["accepted_requests"] == 3


def test_cli_bench_run_prints_table_with_verdicts(fake_server: FakeOpenAIServer) -> None:
    result = _invoke("--endpoint", fake_server.url, "--concurrency", "2", *SMALL)
    assert result.exit_code == 0, result.output
    assert "TTFT p50/p95 ms" in result.stdout
    assert "c=2" in result.stdout
    assert "too_few_requests" in result.stdout


def test_cli_bench_run_without_endpoint_or_model_exits_2() -> None:
    result = _invoke("--concurrency", "1")
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: --model: missing")
    assert "--endpoint" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--concurrency", "0"], "--concurrency"),
        (["--concurrency", "a,b"], "--concurrency"),
        (["--request-rate", "-2"], "--request-rate"),
        (["--input-len", "uniform:9"], "--input-len"),
        (["--output-len", "zero"], "--output-len"),
        (["--num-requests", "0"], "--num-requests"),
        (["--timeout", "0"], "--timeout"),
        (["--slo-ttft-ms", "-5"], "--slo-ttft-ms"),
        (["--api", "embeddings"], "--api"),
        (["--profile", "video"], "--profile"),
        (["--concurrency", "1", "--request-rate", "1"], "--request-rate"),
    ],
)
def test_cli_bench_run_bad_option_exits_2_with_one_line(args: list[str], option: str) -> None:
    result = _invoke("--endpoint", f"http://127.0.0.1:{free_port()}", *args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert option in lines[0]
    assert "Traceback" not in result.output


def test_cli_bench_run_unreachable_endpoint_exits_1() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    result = _invoke("--endpoint", url, "--concurrency", "1", *SMALL)
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"Error: --endpoint: cannot reach {url}")


def test_cli_bench_run_bad_dataset_exits_1(fake_server: FakeOpenAIServer, tmp_path: Path) -> None:
    dataset = tmp_path / "data.jsonl"
    dataset.write_text("{broken\n")
    result = _invoke("--endpoint", fake_server.url, "--dataset", str(dataset), *SMALL_DATASET)
    assert result.exit_code == 1
    assert "--dataset" in result.stderr
    assert "data.jsonl:1" in result.stderr


def test_cli_bench_run_unknown_model_exits_2(fake_server: FakeOpenAIServer) -> None:
    result = _invoke("--endpoint", fake_server.url, "--model", "other/model", *SMALL)
    assert result.exit_code == 2
    assert "--model" in result.stderr
    assert "fake/model" in result.stderr


def test_plan_points_defaults_to_profile_sweep_with_warmup() -> None:
    plans = plan_points(RunConfig(endpoint="http://x", profile="rag"))
    assert [p.concurrency for p in plans] == [1, 4, 16]
    assert [p.warmup_requests for p in plans] == [1, 4, 16]
    assert [p.num_requests for p in plans] == [100, 100, 100]


def test_a_point_that_takes_over_an_hour_to_send_is_noted() -> None:
    # --request-rate 1e-6 waited in silence: 101 requests at that rate take 3.2 years.
    plans = plan_points(RunConfig(endpoint="http://x", request_rates=(1e-6, 0.01, 5.0)))
    assert long_point_notes(plans) == [
        "note: the point at 1e-06 requests/s sends 101 requests in about 3.2 years; "
        "--duration bounds a point",
        "note: the point at 0.01 requests/s sends 101 requests in about 2.8 hours; "
        "--duration bounds a point",
    ]
    bounded = RunConfig(
        endpoint="http://x", request_rates=(1e-6,), duration_s=60, warmup_requests=0
    )
    assert long_point_notes(plan_points(bounded)) == []


def test_a_point_whose_duration_opens_long_after_its_warmup_is_noted() -> None:
    # --request-rate 0.001 --duration 5 ran 200 s: the window opens at the first measured
    # request, which the rate sends a mean 1,000 s after the warm-up's.
    config = RunConfig(endpoint="http://x", request_rates=(0.001, 1.0), duration_s=5)
    assert long_point_notes(plan_points(config)) == [
        "note: the point at 0.001 requests/s sends its first measured request after its warm-up "
        "(1 request), in about 16.7 minutes; its --duration of 5 s counts from there (--warmup 0 "
        "starts it at once)"
    ]
    at_once = RunConfig(
        endpoint="http://x", request_rates=(0.001,), duration_s=5, warmup_requests=0
    )
    assert long_point_notes(plan_points(at_once)) == []


def test_cli_bench_run_notes_a_long_point_before_it_starts() -> None:
    refusing = free_port()
    result = _invoke(
        "--endpoint", f"http://127.0.0.1:{refusing}", "--request-rate", "1e-6", "--output-len", "8"
    )
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0].startswith("note: the point at 1e-06 requests/s sends")


def test_plan_points_rejects_both_loops() -> None:
    with pytest.raises(BenchConfigError):
        plan_points(RunConfig(endpoint="http://x", concurrency=(1,), request_rates=(1.0,)))


def test_run_benchmark_keeps_finished_points_when_server_dies(
    fake_server: FakeOpenAIServer,
) -> None:
    config = RunConfig(
        endpoint=fake_server.url,
        concurrency=(1, 2),
        num_requests=3,
        warmup_requests=1,
        input_len=parse_length("8"),
        output_len=parse_length("4"),
        timeout_s=5,
    )
    result = run_benchmark(config, on_point=lambda point: fake_server.stop())
    assert [p.concurrency for p in result.points] == [1]
    assert result.incomplete
    assert result.stop_reason is not None
    assert "stopped answering" in result.stop_reason


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        (
            "--submitter",
            "octo\x1b]0;pwned\x07cat",
            "--submitter: holds the character U+001B, which no result may hold",
        ),
        ("--dataset", "sharegpt\u2028.json", "--dataset: holds the character U+2028"),
        (
            "--trace",
            "trace\n  1. fake.jsonl",
            "--trace: names a file whose name holds a line break; the result names it on one line",
        ),
        # The run measured, then its result was written with a seed no JSON reader (JavaScript
        # on the site) holds exactly: registry validate took it.
        ("--seed", str(-(10**40)), "--seed: must be at least -9007199254740992, got -1000"),
    ],
)
def test_a_value_the_result_would_refuse_is_refused_before_a_request(
    fake_server: FakeOpenAIServer, tmp_path: Path, option: str, value: str, message: str
) -> None:
    # The run measured, then its result was refused ('the result fails validation: …
    # source.command: contains the control character U+001B'), the points set aside.
    path = tmp_path / value if option in ("--dataset", "--trace") else None
    if path is not None:
        path.write_text(json.dumps({"timestamp": 0, "input_length": 8, "output_length": 2}))
    output = tmp_path / "out" / "r.json"
    given = str(path) if path is not None else value
    extra = [] if option == "--trace" else [*SMALL_DATASET, "--concurrency", "1"]
    run = _invoke("--endpoint", fake_server.url, *extra, option, given, "--output", str(output))
    assert run.exit_code == 2, run.output
    assert run.stderr.startswith(f"Error: {message}")
    assert fake_server.stats.bodies == []
    assert not output.parent.exists()


@pytest.mark.parametrize("from_environment", [False, True], ids=["--api-key", "OPENAI_API_KEY"])
def test_an_api_key_with_a_line_break_is_a_usage_error(
    fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, from_environment: bool
) -> None:
    # The client refused the header: "Error: --endpoint: Forbidden control character detected
    # in headers. Potential header injection attack.; pass --model".
    key = "sk-one\nX-Injected: two"
    given = [] if from_environment else ["--api-key", key]
    if from_environment:
        monkeypatch.setenv("OPENAI_API_KEY", key)
    run = _invoke("--endpoint", fake_server.url, *SMALL, "--concurrency", "1", *given)
    assert run.exit_code == 2, run.output
    assert run.stderr == (
        "Error: --api-key: the key holds a control character or a line break, and it is sent "
        "as one HTTP header line (the key of --api-key, $OPENAI_API_KEY or a launched vLLM's "
        "own)\n"
    )
    assert fake_server.stats.bodies == []


@pytest.mark.parametrize(
    "arguments",
    [
        # Its deadline overflowed: a traceback, 'OverflowError: cannot convert float infinity
        # to integer', in every client task.
        ["--duration", "1e308"],
        ["--timeout", "1e308"],
        ["--profile", "chat-multiturn", "--api", "chat", "--think-time", "1e308"],
    ],
)
def test_a_wait_beyond_the_longest_latency_bound_is_a_usage_error(
    fake_server: FakeOpenAIServer, tmp_path: Path, arguments: list[str]
) -> None:
    run = _invoke("--endpoint", fake_server.url, *arguments, "--output", str(tmp_path / "r.json"))
    assert run.exit_code == 2, run.output
    option = next(argument for argument in arguments[::-1] if argument.startswith("--"))
    assert run.stderr == f"Error: {option}: must be at most 1e+06, got 1e+308\n"
    assert fake_server.stats.bodies == []


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        # Its waits overflowed: 'OverflowError: cannot convert float infinity to integer'.
        (["--request-rate", "1e-300"], "--request-rate: must be at least 1e-06, got 1e-300"),
        # Its default request count was infinite: the same OverflowError in plan_points.
        (["--request-rate", "1,1e308"], "--request-rate: must be at most 1e+06, got 1e+308"),
        # Its rate underflowed to 0, and the line blamed --request-rate, not given.
        (["--trace-speed", "5e-324"], "--trace-speed: must be at least 1e-06, got 4.94066e-324"),
    ],
)
def test_a_rate_beyond_a_million_fold_either_way_is_a_usage_error(
    fake_server: FakeOpenAIServer, tmp_path: Path, arguments: list[str], message: str
) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"timestamp": 0, "input_length": 8, "output_length": 2}\n')
    given = ["--trace", str(trace), *arguments] if "--trace-speed" in arguments else arguments
    run = _invoke("--endpoint", fake_server.url, *given, "--output", str(tmp_path / "r.json"))
    assert run.exit_code == 2, run.output
    assert run.stderr == f"Error: {message}\n"
    assert fake_server.stats.bodies == []
