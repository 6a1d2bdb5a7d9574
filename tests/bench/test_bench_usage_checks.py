"""Server-reported usage is checked, not trusted: impossible counts are refused, counts above
what was streamed become a verdict (against the fake server's lying modes)."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner
from fake_openai_server import FakeOpenAIServer

from infermeter.bench.cli.main import main

ARGS = ["--concurrency", "2", "--num-requests", "6", "--warmup", "0", "--input-len", "16",
        "--output-len", "8", "--json", "--quiet"]  # fmt: skip


def _point(server: FakeOpenAIServer, *extra: str) -> dict[str, Any]:
    run = CliRunner().invoke(main, ["bench", "run", "--endpoint", server.url, *ARGS, *extra])
    assert run.exit_code == 0, run.output
    point: dict[str, Any] = json.loads(run.stdout)["points"][0]
    return point


def _codes(point: dict[str, Any]) -> set[str]:
    return {verdict["code"] for verdict in point["verdicts"]}


def test_bench_usage_honest_server_has_no_usage_verdict(fake_server: FakeOpenAIServer) -> None:
    point = _point(fake_server)
    assert point["output_tokens"] == 48
    assert not _codes(point) & {"usage_impossible", "usage_above_stream", "usage_mismatch"}


def test_bench_usage_twice_max_tokens_is_refused(fake_server: FakeOpenAIServer) -> None:
    # 8 tokens asked and streamed, 16 reported: no server generates beyond max_tokens.
    fake_server.config.usage_offset = 8
    point = _point(fake_server)
    assert point["output_tokens"] == 48  # the streamed count, not 96
    assert point["usage_rejected_requests"] == 6
    assert "usage_impossible" in _codes(point)


def test_bench_usage_negative_is_refused(fake_server: FakeOpenAIServer) -> None:
    fake_server.config.usage_offset = -100
    point = _point(fake_server)
    assert point["output_tokens"] == 48
    assert point["usage_rejected_requests"] == 6
    assert point["output_token_throughput"] > 0


def test_bench_usage_above_what_was_streamed_is_a_verdict(fake_server: FakeOpenAIServer) -> None:
    # The server stops at 3 tokens (it ignores max_tokens) but reports 6: within max_tokens
    # 8, yet twice what arrived.
    fake_server.config.output_tokens = 3
    fake_server.config.usage_offset = 3
    point = _point(fake_server, "--no-ignore-eos")
    assert point["usage_above_stream_requests"] == 6
    assert "usage_above_stream" in _codes(point)
