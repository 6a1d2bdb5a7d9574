"""The live progress display: redrawn in place on a terminal, plain lines elsewhere."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import pty
import re
import select
import subprocess
import sys
import time

from bench_helpers import SMALL
from click.testing import CliRunner
from fake_openai_server import FakeOpenAIServer

from infermeter.bench.cli.main import main
from infermeter.bench.run.config import RunConfig
from infermeter.bench.run.progress import ProgressDisplay
from infermeter.bench.run.runner import run_benchmark
from infermeter.bench.workloads.lengths import parse_length

PLAIN_LINE = re.compile(r"^c=\d+: \d+ done, \d+ failed, \d+\.\d output tok/s$")


class _Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def _config(url: str) -> RunConfig:
    return RunConfig(
        endpoint=url,
        concurrency=(1, 2),
        num_requests=4,
        warmup_requests=1,
        input_len=parse_length("16"),
        output_len=parse_length("10"),
    )


def test_progress_terminal_redraws_in_place_then_leaves_a_final_line(
    fake_server: FakeOpenAIServer,
) -> None:
    fake_server.config.itl_s = 0.02  # ~0.2 s a request: each point spans several redraws
    stream = _Terminal()
    result = run_benchmark(_config(fake_server.url), progress=ProgressDisplay(stream))
    assert len(result.points) == 2
    text = stream.getvalue()
    lines = text.split("\n")
    assert lines[-1] == ""
    finals = [line.rsplit("\r\x1b[K", 1)[-1] for line in lines[:-1]]
    assert len(finals) == 2  # one final line per point, nothing else ends a line
    for final, name in zip(finals, ("c=1", "c=2"), strict=True):
        assert re.fullmatch(rf"{name}: 4 done, 0 failed, \d+\.\d output tok/s \[\d+\.\d s\]", final)
    redraws = [part for part in text.split("\r\x1b[K") if "requests" in part]
    assert len(redraws) >= 4
    assert "c=2 (point 2/2): " in text
    status = r"c=1 \(point 1/2\): [1-5]/5 requests, [\d,]+ tok/s, 0 errors, \d+\.\d s"
    assert re.search(status, text)


def test_progress_counts_errors_live(fake_server: FakeOpenAIServer) -> None:
    fake_server.config.fault = "http_503"
    fake_server.config.fault_every = 2
    display = ProgressDisplay(_Terminal())
    run_benchmark(_config(fake_server.url), progress=display)
    assert ", 2 errors," in display.status()  # the last point sends ordinals 5-9; 6 and 8 fail


def test_progress_not_a_terminal_writes_plain_lines_only(fake_server: FakeOpenAIServer) -> None:
    stream = io.StringIO()
    run_benchmark(_config(fake_server.url), progress=ProgressDisplay(stream))
    text = stream.getvalue()
    assert "\r" not in text
    assert "\x1b" not in text
    lines = text.splitlines()
    assert len(lines) == 2
    assert all(PLAIN_LINE.match(line) for line in lines)


def test_progress_not_a_terminal_shows_a_long_point_alive(fake_server: FakeOpenAIServer) -> None:
    """Off a terminal a point used to leave nothing until it ended (a real sweep's first point,
    minutes in a CI log); now its status line each interval, then the finished line."""
    fake_server.config.itl_s = 0.02  # ~0.2 s a request, 5 requests a point one at a time
    stream = io.StringIO()
    config = dataclasses.replace(_config(fake_server.url), concurrency=(1,))
    run_benchmark(config, progress=ProgressDisplay(stream, plain_interval_s=0.3))
    *alive, final = stream.getvalue().splitlines()
    assert alive
    for line in alive:
        assert re.fullmatch(
            r"c=1 \(point 1/1\): \d/5 requests, [\d,]+ tok/s, 0 errors, \d+\.\d s", line
        ), line
    assert PLAIN_LINE.match(final)


def test_progress_cli_plain_lines_on_a_pipe_and_none_with_quiet(
    fake_server: FakeOpenAIServer,
) -> None:
    args = ["bench", "run", "--endpoint", fake_server.url, "--concurrency", "1,2", *SMALL]
    shown = CliRunner().invoke(main, [*args, "--json"])
    assert shown.exit_code == 0, shown.output
    assert [line for line in shown.stderr.splitlines() if PLAIN_LINE.match(line)] == [
        line for line in shown.stderr.splitlines() if line.startswith("c=")
    ]
    assert len([line for line in shown.stderr.splitlines() if PLAIN_LINE.match(line)]) == 2
    json.loads(shown.stdout)
    quiet = CliRunner().invoke(main, [*args, "--json", "--quiet"])
    assert quiet.exit_code == 0, quiet.output
    assert "c=1" not in quiet.stderr
    json.loads(quiet.stdout)


def test_progress_cli_on_a_pseudo_terminal_keeps_json_stdout_clean(
    fake_server: FakeOpenAIServer,
) -> None:
    fake_server.config.itl_s = 0.02
    controller, terminal = pty.openpty()
    command = [
        sys.executable, "-c", "from infermeter.bench.cli.main import main; main()",
        "bench", "run", "--endpoint", fake_server.url, "--concurrency", "2", *SMALL, "--json",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=terminal)
    os.close(terminal)
    seen = b""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal closed: the process is gone
                break
            if not chunk:
                break
            seen += chunk
        elif process.poll() is not None:
            break
    os.close(controller)
    stdout, _ = process.communicate(timeout=30)
    assert process.returncode == 0, seen
    assert b"\r\x1b[K" in seen
    assert re.search(rb"c=2: 6 done, 0 failed, [\d.]+ output tok/s \[[\d.]+ s\]", seen)
    assert json.loads(stdout)["points"][0]["completed"] == 6
