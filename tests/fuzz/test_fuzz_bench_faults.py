"""`bench run` against a fault-injecting server (tests/bench/fake_openai_server.py): every fault
is a measured outcome or a one-line stop, never a traceback or a hang; the `--json` object is
JSON; with faults on some requests the point is still measured."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from fake_openai_server import FAULTS, FakeOpenAIServer, FakeServerConfig
from fuzz_helpers import check_cli

ARGS = ["--concurrency", "2", "--num-requests", "6", "--warmup", "0", "--input-len", "8",
        "--output-len", "6", "--timeout", "2", "--json", "--quiet"]  # fmt: skip


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(FakeServerConfig()) as fake:
        yield fake


@pytest.mark.parametrize("every", [1, 2], ids=["every-request", "every-second-request"])
@pytest.mark.parametrize("fault", FAULTS)
def test_fuzz_bench_fault_is_an_outcome_not_a_crash(
    server: FakeOpenAIServer, fault: str, every: int
) -> None:
    # A stall outlasts the 1 s timeout it is run with (the others keep 2 s): the same outcome,
    # 5 s less of the suite's time.
    server.config = FakeServerConfig(fault=fault, fault_every=every, stall_s=1.5)
    args = [*ARGS[:-4], "--timeout", "1", *ARGS[-2:]] if fault.startswith("stall") else ARGS
    result = check_cli(["bench", "run", "--endpoint", server.url, *args], "bench-faults", 40)
    summary = json.loads(result.stdout)
    (point,) = summary["points"]
    assert point["completed"] + point["failed"] == 6
    if every == 1:  # nothing succeeded: said so, exit 1
        assert result.exit_code == 1
        assert point["completed"] == 0
        assert "every request failed" in result.stderr
    else:  # half failed: a measured point with its failures by kind
        assert result.exit_code == 0, result.output
        assert point["completed"] == 3
        assert sum(point["failures_by_kind"].values()) == 3


@pytest.mark.parametrize("offset", [8, -50, 10**30])
def test_fuzz_bench_lying_usage_never_inflates_the_figures(
    server: FakeOpenAIServer, offset: int
) -> None:
    server.config = FakeServerConfig(usage_offset=offset)
    result = check_cli(["bench", "run", "--endpoint", server.url, *ARGS], "bench-faults", 40)
    assert result.exit_code == 0, result.output
    (point,) = json.loads(result.stdout)["points"]
    assert point["output_tokens"] == 36  # what was streamed: 6 requests × 6 tokens
    assert point["usage_rejected_requests"] == 6


@pytest.mark.parametrize("load", [["--concurrency", "2"], ["--request-rate", "4"]],
                         ids=["closed", "open"])  # fmt: skip
def test_fuzz_bench_duration_bounds_the_point_whole_time(
    server: FakeOpenAIServer, load: list[str]
) -> None:
    # Streams that stop writing and never end, with the default 600 s --timeout: --duration 1
    # ends the point within the duration and as long again (it waited the whole timeout).
    server.config = FakeServerConfig(fault="stall", fault_every=1, stall_s=60)
    args = ["bench", "run", "--endpoint", server.url, *load, "--duration", "1", "--warmup",
            "0", "--input-len", "8", "--output-len", "6", "--json", "--quiet"]  # fmt: skip
    result = check_cli(args, "bench-faults", limit_s=30)
    assert result.exit_code == 1, result.output  # every request failed: a timeout each
    assert "every request failed (timeout" in result.stderr, result.stderr


DEEP = "[" * 60_000 + "]" * 60_000  # one command-line word holds at most 128 KiB


@pytest.mark.parametrize("given", ["--trace", "--extra-body"])
def test_fuzz_bench_json_nested_past_the_parser_is_one_line(
    server: FakeOpenAIServer, tmp_path: Path, given: str
) -> None:
    """A trace line or an --extra-body nested deeper than Python's JSON parser goes is refused
    by name (a RecursionError's traceback before)."""
    server.config = FakeServerConfig()
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"timestamp": 0, "input_length": 8, "output_length": 4}\n' + DEEP + "\n")
    # A replay takes its requests, lengths and arrivals from the trace: no load options.
    given_args = [given, str(trace)] if given == "--trace" else [*ARGS[:-4], given, DEEP]
    result = check_cli(["bench", "run", "--endpoint", server.url, *ARGS[-4:], *given_args],
                       "bench-faults", 40)  # fmt: skip
    assert result.exit_code in (1, 2), result.output[-400:]
    assert given in result.stderr
    assert "nested deeper than 100 levels" in result.stderr
