"""`bench run` stopped from outside (SIGTERM, a second signal) or by its server: what is kept.

A real `infermeter` process runs against the STAND-IN vllm (tests/bench/standin_vllm.py), and
receives real signals, as `docker stop`, systemd or a CI runner send them.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bench_helpers import SMALL, STANDIN_MODEL, process_alive, server_process
from click.testing import CliRunner, Result
from fake_openai_server import FakeOpenAIServer
from standin_launcher import STANDIN_VLLM
from standin_vllm import IGNORED_SIGINT

from infermeter.bench.cli.main import main
from infermeter.bench.launch.server import free_port
from infermeter.bench.plan.options import RunOptions
from infermeter.bench.run.config import RunResult
from infermeter.bench.session.builder import session_config
from infermeter.bench.session.config import SessionOutcome
from infermeter.bench.session.lines import incomplete_line
from infermeter.bench.session.session import run_session
from infermeter.calculators.plural import counted
from infermeter.registry.models import Result as RegistryResult
from infermeter.registry.validate import validate_paths


def _start_run(
    tmp_path: Path, standin: Path, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """`infermeter bench run` launching the stand-in, two points, the second one long.

    The stand-in's tokens come 50 ms apart: one that fell behind on a loaded machine writes
    its overdue tokens back to back, and at its default 2 ms a point's mean TPOT then fell
    below the 0.74 ms that H100 memory bandwidth allows this model, so the result was rejected
    as impossible (seen at 14 busy loops on 2 cores)."""
    command = [
        sys.executable, "-c", "from infermeter.bench.cli.main import main; main()",
        "bench", "run", "--model", STANDIN_MODEL, "--vllm-executable", str(standin),
        "--gpu", "h100-sxm", "--output", str(tmp_path / "result.json"), "--concurrency", "1,2",
        "--duration", "3", "--num-requests", "100000", "--warmup", "1",
        "--input-len", "16", "--output-len", "8",
    ]  # fmt: skip
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "STANDIN_VLLM_ITL_S": "0.05", **(env or {})},
        # A shell starts background jobs with SIGINT ignored; restore the default.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _wait_for_second_point(process: subprocess.Popen[str]) -> None:
    """Return once the second point (c=2, its first request a warm-up) has measured a request:
    when the stand-in has started 4 requests since the first point ended, for a closed loop of
    2 sends the 3rd and the 4th only as 2 have finished."""
    assert process.stderr is not None
    # A loaded machine starts both processes slowly (up to 53 s to the first point was seen).
    deadline = time.monotonic() + 120
    url = None
    for line in process.stderr:
        if match := re.search(r" ready at (http://\S+) ", line):
            url = match.group(1)
        if line.startswith("c=1:"):
            break
        assert time.monotonic() < deadline, "the first point did not finish"
    assert url is not None, "no vLLM ready line before the first point ended"
    started = _requests_started(url) + 4
    while _requests_started(url) < started:
        assert process.poll() is None, "the run ended before its second point measured"
        assert time.monotonic() < deadline, "the second point measured no request"
        time.sleep(0.02)


def _requests_started(url: str) -> int:
    """How many requests the stand-in vLLM has taken from its queue (its /metrics)."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as response:
        text = response.read().decode()
    (count,) = re.findall(r"^vllm:request_queue_time_seconds_count\S* (\S+)$", text, re.M)
    return int(float(count))


def _standin_pid(log: Path) -> int:
    match = re.search(r"Started server process \[(\d+)\]", log.read_text())
    assert match, log.read_text()
    return int(match.group(1))


def _assert_first_point_kept(tmp_path: Path, stopped: str | None = None) -> None:
    """The finished first point is kept; with `stopped` (the stop reason), so is the second,
    with what finished before the stop, marked interrupted."""
    result = RegistryResult.model_validate_json((tmp_path / "result.json").read_text())
    assert [p.load.concurrency for p in result.points] == ([1, 2] if stopped else [1])
    assert result.source.complete is False
    assert not list(tmp_path.glob(".result.json.*"))  # no temporary file left behind
    assert "interrupted" not in [verdict.code for verdict in result.points[0].validity]
    if stopped:
        _assert_interrupted(result.points[1], stopped)


def _assert_interrupted(point: Any, stopped: str) -> None:
    (verdict,) = [verdict for verdict in point.validity if verdict.code == "interrupted"]
    assert verdict.message.startswith(f"the run was {stopped} during this point, which was to ")
    measured = counted(point.requests.completed + point.requests.failed, "measured request")
    assert f"the {measured}" in verdict.message
    assert point.requests.completed >= 1
    assert point.throughput.output_tokens_per_s > 0


def test_bench_run_standin_sigterm_keeps_finished_points_and_stops_vllm(
    tmp_path: Path, standin_vllm: Path
) -> None:
    process = _start_run(tmp_path, standin_vllm)
    _wait_for_second_point(process)
    process.send_signal(signal.SIGTERM)
    # 0.6 s when quiet, 12 s seen at 14 busy loops: the bound only guards against a hang.
    _, rest = process.communicate(timeout=120)
    assert process.returncode == 1, rest
    assert "Error: the run is incomplete: terminated (SIGTERM); the measured points are in" in rest
    assert "Traceback" not in rest
    _assert_first_point_kept(tmp_path, "terminated (SIGTERM)")
    assert not (tmp_path / "result.partial.json").exists()  # the result holds the points
    log = tmp_path / "result.vllm.log"
    assert not process_alive(_standin_pid(log))
    assert log.read_text().rstrip().endswith("INFO:     Finished server process")  # not killed


def test_bench_run_standin_sigkill_keeps_finished_points_in_the_partial_file(
    tmp_path: Path, standin_vllm: Path
) -> None:
    """SIGKILL gives infermeter no chance to write: the points it had finished are in
    result.partial.json (written after each point), valid, and the stand-in vLLM dies with it
    (the parent-death signal). A run that ends as it should leaves no partial file (the
    SIGTERM test above)."""
    process = _start_run(tmp_path, standin_vllm)
    _wait_for_second_point(process)
    partial = tmp_path / "result.partial.json"
    assert partial.exists()
    process.kill()
    process.communicate(timeout=60)
    assert not (tmp_path / "result.json").exists()
    report = validate_paths([partial])
    assert report.ok, "\n".join(str(problem) for problem in report.problems)
    result = RegistryResult.model_validate_json(partial.read_text())
    assert [p.load.concurrency for p in result.points] == [1]
    assert result.source.complete is False
    pid = _standin_pid(tmp_path / "result.vllm.log")
    deadline = time.monotonic() + 30
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not process_alive(pid)


@pytest.mark.parametrize("second", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_bench_run_standin_second_signal_during_shutdown_still_writes(
    tmp_path: Path, standin_vllm: Path, second: signal.Signals
) -> None:
    # The stand-in ignores SIGINT, so stopping it gracefully would take the 30 s grace; the
    # second signal kills it at once, and the finished point is written all the same.
    process = _start_run(tmp_path, standin_vllm, {"STANDIN_VLLM_IGNORE_SIGINT": "1"})
    _wait_for_second_point(process)
    process.send_signal(signal.SIGINT)
    # infermeter is waiting for the stand-in to exit once the stand-in has had its SIGINT
    log = tmp_path / "result.vllm.log"
    deadline = time.monotonic() + 120
    while IGNORED_SIGINT not in log.read_text():
        assert process.poll() is None, "infermeter ended before it stopped the stand-in"
        assert time.monotonic() < deadline, "infermeter did not stop the stand-in"
        time.sleep(0.05)
    process.send_signal(second)
    _, rest = process.communicate(timeout=120)  # guards against a hang; 12 s seen under load
    assert process.returncode == 1, rest
    assert "killing vLLM now" in rest
    # Killed, not stopped after the 30 s grace by SIGTERM, which the stand-in would have logged.
    assert "Shutting down" not in (tmp_path / "result.vllm.log").read_text()
    assert "Error: the run is incomplete: interrupted" in rest
    assert "Aborted" not in rest
    assert "Traceback" not in rest
    _assert_first_point_kept(tmp_path, "interrupted")
    assert not process_alive(_standin_pid(tmp_path / "result.vllm.log"))


def _unwritable_outputs(tmp_path: Path, read_only: Path) -> Iterator[tuple[str, Path]]:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    yield "a folder", folder
    plain = tmp_path / "plain-file"
    plain.write_text("x")
    yield "under a file", plain / "result.json"
    yield "/proc", Path("/proc/infermeter-result.json")
    yield "a read-only folder", read_only / "result.json"
    yield "under a read-only folder", read_only / "new" / "result.json"


def test_bench_run_standin_unwritable_output_is_refused_before_vllm_starts(
    tmp_path: Path, standin_vllm: Path, read_only_folder: Path
) -> None:
    for label, output in _unwritable_outputs(tmp_path, read_only_folder):
        run = CliRunner().invoke(
            main,
            ["bench", "run", "--model", STANDIN_MODEL, "--vllm-executable", str(standin_vllm),
             "--gpu", "h100-sxm", "--output", str(output), *SMALL],
        )  # fmt: skip
        assert run.exit_code == 2, (label, run.output)
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1, label
        assert re.match(r"Error: (--output: cannot write |Invalid value for '--output')", lines[0])
        assert run.exception is None or isinstance(run.exception, SystemExit), label
        assert not list(tmp_path.rglob("*.vllm.log")), label  # vLLM never started


def test_bench_run_endpoint_unwritable_output_sends_no_request(
    fake_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    run = CliRunner().invoke(
        main,
        ["bench", "run", "--endpoint", fake_server.url, "--gpu", "h100-sxm",
         "--model-id", "llama-3.2-1b-instruct", "--output", str(tmp_path), *SMALL],
    )  # fmt: skip
    assert run.exit_code == 2, run.output
    assert "Error: Invalid value for '--output'" in run.stderr
    assert fake_server.stats.requests == 0


def _serve_standin(port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, str(STANDIN_VLLM), "serve", STANDIN_MODEL, "--host", "127.0.0.1",
         "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **env},
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1):
                return process
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise AssertionError("the stand-in did not start")


def test_bench_run_endpoint_standin_dying_mid_point_marks_that_point_interrupted(
    tmp_path: Path,
) -> None:
    # c=1 sends 8 requests (2 warm-up); the server dies when the 11th arrives, inside c=4.
    port = free_port()
    server = _serve_standin(port, {"STANDIN_VLLM_MODE": "crash", "STANDIN_VLLM_CRASH_AFTER": "10"})
    output = tmp_path / "result.json"
    try:
        run = CliRunner().invoke(
            main,
            ["bench", "run", "--endpoint", f"http://127.0.0.1:{port}", "--model", STANDIN_MODEL,
             "--gpu", "h100-sxm", "--concurrency", "1,4,8", "--output", str(output),
             "--raw-records", *SMALL],
        )  # fmt: skip
    finally:
        server.kill()
        server.wait()
    assert run.exit_code == 1, run.output
    assert "the run is incomplete: the server stopped answering during c=4" in run.stderr
    result = RegistryResult.model_validate_json(output.read_text())
    assert [p.load.concurrency for p in result.points] == [1]
    assert result.source.complete is False


def _json_run(fake_server: FakeOpenAIServer, concurrency: str) -> Result:
    """A short quiet `bench run --json` against the fake server at `concurrency`."""
    return CliRunner().invoke(
        main,
        ["bench", "run", "--endpoint", fake_server.url, "--concurrency", concurrency, "--json",
         "--quiet", *SMALL],
    )  # fmt: skip


def test_bench_run_every_request_failed_exits_1(fake_server: FakeOpenAIServer) -> None:
    fake_server.config.fault = "http_500"
    run = _json_run(fake_server, "1,2")
    assert run.exit_code == 1, run.output
    summary = json.loads(run.stdout)
    assert summary["incomplete"] is True
    assert [p["completed"] for p in summary["points"]] == [0, 0]
    assert "Error: the run is incomplete: every request failed (http_status 12)" in run.stderr


def test_bench_run_some_requests_failing_is_still_complete(
    fake_server: FakeOpenAIServer,
) -> None:
    fake_server.config.fault = "http_500"
    fake_server.config.fault_every = 2
    run = _json_run(fake_server, "1")
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout)["incomplete"] is False


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(child) for child in text.split()]


SIGINT_BIT = 1 << (signal.SIGINT - 1)


def _signal_masks(pid: int) -> dict[str, int]:
    """Process `pid`'s signal sets from /proc (SigCgt caught, SigIgn ignored, SigBlk blocked,
    ShdPnd and SigPnd pending); {} when it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {}
    fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
    names = ("SigCgt", "SigIgn", "SigBlk", "ShdPnd", "SigPnd")
    return {name: int(fields[name], 16) for name in names}


def _starting(pid: int) -> bool:
    """Whether `pid` is a worker (past its `exec`) that catches SIGINT (CPython's handler)
    and does not yet ignore it."""
    masks = _signal_masks(pid)
    return bool(
        _is_worker(pid)
        and masks
        and masks["SigCgt"] & SIGINT_BIT
        and not masks["SigIgn"] & SIGINT_BIT
    )


def _sigint_pending(pid: int) -> bool:
    """Whether process `pid` is alive with a SIGINT not yet handled or dropped."""
    masks = _signal_masks(pid)
    return _process_state(pid) not in ("Z", "") and bool(
        masks and (masks["ShdPnd"] | masks["SigPnd"]) & SIGINT_BIT
    )


def _sigint_blocked(pid: int) -> bool:
    """Whether process `pid` blocks SIGINT (a worker is spawned so: infermeter holds it while
    it starts workers)."""
    masks = _signal_masks(pid)
    return bool(masks and masks["SigBlk"] & SIGINT_BIT)


def _process_state(pid: int) -> str:
    """Process `pid`'s state letter (R, S, T stopped, Z zombie, …); "" when it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return ""


def _is_worker(pid: int) -> bool:
    try:
        return b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def test_bench_run_workers_ctrl_c_while_workers_start_keeps_points_no_traceback(
    tmp_path: Path,
) -> None:
    """A terminal's Ctrl-C reaches every process of its group, workers starting up included.
    (SIGTERM while infermeter starts a worker: tests/bench/test_bench_workers.py.)"""
    with server_process(model=STANDIN_MODEL, ttft_s=0.005, itl_s=0.002) as url:
        process = subprocess.Popen(
            [sys.executable, "-c", "from infermeter.bench.cli.main import main; main()", "bench",
             "run", "--endpoint", url, "--model", STANDIN_MODEL,
             "--model-id", "llama-3.2-1b-instruct", "--engine", "vllm", "--engine-version", "0.9.1",
             "--gpu", "h100-sxm",
             "--output", str(tmp_path / "result.json"), "--concurrency", "1,8",
             "--workers", "2", *SMALL],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
            start_new_session=True,  # its own group, as a terminal's foreground job
        )  # fmt: skip
        _wait_for_first_point(process)
        before = set(_children(process.pid))
        deadline = time.monotonic() + 60
        # The moment to hit: a worker's interpreter is starting up, CPython's SIGINT handler
        # is in place (a Ctrl-C it received would raise there) and the worker has not yet
        # ignored SIGINT. infermeter and the workers are held still while the signal comes (a
        # sleep here let the workers finish the point, 8 requests of 20 ms, on a loaded
        # machine); the workers go on first, until theirs is handled (or, blocked, dropped as
        # they ignore SIGINT), then infermeter, whose stop would terminate them at once.
        while not (
            workers := [c for c in _children(process.pid) if c not in before and _starting(c)]
        ):
            assert time.monotonic() < deadline, "the second point's workers did not start"
            time.sleep(0.002)
        for pid in [*workers, process.pid]:
            os.kill(pid, signal.SIGSTOP)
        while not all(_process_state(pid) == "T" for pid in [*workers, process.pid]):
            assert time.monotonic() < deadline, "a process did not stop"
            time.sleep(0.001)
        os.killpg(process.pid, signal.SIGINT)
        for worker in workers:
            os.kill(worker, signal.SIGCONT)
        # A worker that has not yet read what infermeter sends it waits for infermeter, held
        # stopped here, with SIGINT blocked: it stays pending until infermeter goes on (a run
        # under load waited so 60 s and failed). Such a worker gets 5 s, then infermeter goes on.
        patience = time.monotonic() + 5
        while pending := [worker for worker in workers if _sigint_pending(worker)]:
            assert time.monotonic() < deadline, "a worker kept its SIGINT pending"
            if time.monotonic() > patience and all(map(_sigint_blocked, pending)):
                break
            time.sleep(0.002)
        os.kill(process.pid, signal.SIGCONT)
        _, rest = process.communicate(timeout=120)
    assert process.returncode == 1, rest
    assert "Traceback" not in rest
    assert "Fatal Python error" not in rest
    assert "Error: the run is incomplete: interrupted" in rest
    _assert_first_point_kept(tmp_path)
    assert not [pid for pid in workers if _is_worker(pid)]  # no worker outlives the run


def _wait_for_first_point(process: subprocess.Popen[str]) -> None:
    assert process.stderr is not None
    deadline = time.monotonic() + 60
    for line in process.stderr:
        if line.startswith("c=1:"):
            return
        assert time.monotonic() < deadline, "the first point did not finish"
    raise AssertionError("the run ended before its first point finished")


ENDPOINT_RUN = [
    "--model", STANDIN_MODEL, "--model-id", "llama-3.2-1b-instruct", "--engine", "vllm",
    "--engine-version", "0.9.1", "--gpu", "h100-sxm", "--concurrency", "2", "--duration", "60",
    "--num-requests", "100000", "--warmup", "1", "--input-len", "16", "--output-len", "8",
    "--raw-records",
]  # fmt: skip


def _served(url: str) -> tuple[int, int]:
    """(requests arrived, requests in flight) as the stand-in server's /metrics says."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=5) as response:
        text = response.read().decode()
    figures = {
        line.split("{")[0]: int(float(line.rsplit(" ", 1)[1]))
        for line in text.splitlines()
        if line.startswith("vllm:")
    }
    return figures["vllm:request_success_total"], figures["vllm:num_requests_running"]


def _terminate_in_first_point(
    tmp_path: Path, url: str, ready: Any
) -> tuple[subprocess.Popen[str], str]:
    """`bench run --endpoint` in a process of its own, sent SIGTERM once `ready(arrived,
    in_flight)` holds for what the server saw, inside its first (and only) point."""
    process = subprocess.Popen(
        [sys.executable, "-c", "from infermeter.bench.cli.main import main; main()", "bench", "run",
         "--endpoint", url, "--output", str(tmp_path / "result.json"), *ENDPOINT_RUN],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not ready(*_served(url)):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the server never saw the run's requests"
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, rest = process.communicate(timeout=60)
    assert process.returncode == 1, rest
    assert "Traceback" not in rest
    return process, rest.strip().splitlines()[-1]


def test_bench_run_endpoint_sigterm_in_the_first_point_writes_it_marked_interrupted(
    tmp_path: Path,
) -> None:
    with server_process(model=STANDIN_MODEL, ttft_s=0.005, itl_s=0.002) as url:
        _, line = _terminate_in_first_point(tmp_path, url, lambda arrived, _: arrived >= 12)
    output = tmp_path / "result.json"
    assert line == (
        f"Error: the run is incomplete: terminated (SIGTERM); the measured points are in {output}"
    )
    result = RegistryResult.model_validate_json(output.read_text())
    assert result.source.complete is False
    (point,) = result.points
    assert point.load.concurrency == 2
    _assert_interrupted(point, "terminated (SIGTERM)")
    assert point.requests.completed >= 9  # 12 arrived, one a warm-up, at most 2 in flight
    assert point.duration_s is not None
    assert point.duration_s < 60
    raw = (tmp_path / "result.requests.jsonl.gz").read_bytes()
    requests = [json.loads(row) for row in gzip.decompress(raw).splitlines() if b'"request"' in row]
    measured = [row for row in requests if not row["warmup"]]
    assert {row["kept"] for row in requests} == {True}
    assert len(measured) == point.requests.completed + point.requests.failed


class _StopAfter:
    """A live display that stops the run as Ctrl-C does (a KeyboardInterrupt inside the event
    loop, where a signal handler raises it) once `count` requests finished."""

    def __init__(self, count: int) -> None:
        self.count = count

    def point_started(self, plan: object, number: int, points: int) -> None:
        pass

    def request_finished(self, record: object) -> None:
        self.count -= 1
        if self.count == 0:
            raise KeyboardInterrupt

    def point_ended(self, summary: object) -> None:
        pass


def test_bench_run_stopped_before_any_request_completed_keeps_the_raw_records(
    fake_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    # Every request fails at once: five finished, not one completed.
    fake_server.config.version = "0.9.1"
    fake_server.config.fault = "http_500"
    output = tmp_path / "result.json"
    options = RunOptions.model_validate(
        {
            "endpoint": fake_server.url, "gpu": "h100-sxm", "model-id": "llama-3.2-1b-instruct",
            "concurrency": [1], "duration": 60, "num-requests": 100000, "warmup": 1,
            "input-len": 16, "output-len": 8, "output": str(output),
        }
    )  # fmt: skip
    outcome = run_session(session_config(options, "infermeter bench run"), progress=_StopAfter(5))
    assert outcome.run.stop_reason == "interrupted"
    assert outcome.run.points == []
    assert outcome.output is None
    assert not output.exists()
    assert not (tmp_path / "result.rejected.json").exists()
    raw = tmp_path / "result.requests.jsonl.gz"
    assert incomplete_line(outcome, output) == (
        "the run is incomplete: interrupted; no measured request of a load point completed, so "
        f"there is no result; the raw records of the requests that finished are in {raw}"
    )
    rows = gzip.decompress(raw.read_bytes()).splitlines()
    requests = [json.loads(row) for row in rows if b'"request"' in row]
    assert len(requests) == 4  # the fifth was still being recorded when the run stopped
    assert {(row["kept"], row["error"]) for row in requests} == {(False, "http_status")}


def test_incomplete_line_says_what_was_written_where(tmp_path: Path) -> None:
    run = RunResult("http://h", "m", "completions", "chat", 0, 0, incomplete=True)
    run.stop_reason = "terminated (SIGTERM)"
    output = tmp_path / "r.json"
    stopped = "the run is incomplete: terminated (SIGTERM)"
    assert incomplete_line(SessionOutcome(run), None) == stopped  # no file was asked for
    assert incomplete_line(SessionOutcome(run), output) == (
        f"{stopped}; no request finished, so nothing was written"
    )
    raw = SessionOutcome(run, raw_records=tmp_path / "r.requests.jsonl.gz")
    assert incomplete_line(raw, output).endswith(f"are in {tmp_path / 'r.requests.jsonl.gz'}")
    assert incomplete_line(SessionOutcome(run, output=output), output) == (
        f"{stopped}; the measured points are in {output}"
    )
