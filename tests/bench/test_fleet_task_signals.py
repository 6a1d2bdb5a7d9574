"""A `bench fleet` task stopped on its node: SIGTERM to the Ray worker, or Ray's cancel (which
interrupts the task's main thread through its SIGINT handler, `_thread.interrupt_main`, as
ray/_raylet.pyx `kill_main_task` does), stops the run as the CLI's Ctrl-C or SIGTERM does: the
finished points are written and handed back, and the STAND-IN vLLM it launched is stopped.

The task's generator (`run_entry`) runs here in the main thread, as a Ray worker runs it; the
run itself goes in its thread, as on a node."""

from __future__ import annotations

import _thread
import os
import signal
import sys
import time
from pathlib import Path

import pytest
import yaml
from bench_helpers import STANDIN_MODEL

from infermeter.bench.fleet.matrix import load_matrix
from infermeter.bench.fleet.ray_task import run_entry
from infermeter.registry.models import Result as RegistryResult

pytestmark = pytest.mark.slow


def _standins() -> list[int]:
    """The stand-in vLLMs this test process launched (its children's children included)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError):
                continue
            if "standin_vllm.py" in command and parent in (os.getpid(), *_children()):
                found.append(int(entry.name))
    return found


def _children() -> list[int]:
    path = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children")
    return [int(pid) for pid in path.read_text().split()] if path.exists() else []


@pytest.mark.parametrize(
    ("stop", "reason"),
    [
        (lambda: os.kill(os.getpid(), signal.SIGTERM), "terminated (SIGTERM)"),
        (_thread.interrupt_main, "interrupted"),  # what a Ray cancel does to the task
    ],
    ids=["sigterm", "ray-cancel"],
)
def test_fleet_task_stopped_keeps_its_finished_points_and_stops_the_standin_vllm(
    tmp_path: Path,
    standin_vllm: Path,
    monkeypatch: pytest.MonkeyPatch,
    stop: object,
    reason: str,
) -> None:
    # Tokens 10 ms apart: a pace an L40S could serve a 1B model at (the registry refuses
    # faster decoding than the GPU's memory bandwidth allows).
    monkeypatch.setenv("STANDIN_VLLM_ITL_S", "0.01")
    defaults = {
        "model": STANDIN_MODEL, "vllm-executable": str(standin_vllm), "load-format": "dummy",
        "max-model-len": 4096, "concurrency": [1, 2], "num-requests": 24, "warmup": 0,
        "input-len": 16, "output-len": 8, "startup-timeout": 60,
    }  # fmt: skip
    plan = tmp_path / "plan.yaml"
    runs = [{"name": "chat", "gpus": ["l40s"]}]
    plan.write_text(yaml.safe_dump({"defaults": defaults, "runs": runs}))
    (entry,) = load_matrix(plan).entries
    handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    task = run_entry(entry)
    first = next(task)  # the first point ended: the second is under way
    assert (first["kind"], first["points"]) == ("checkpoint", 1)
    launched = _standins()
    assert launched
    assert callable(stop)
    stop()
    rest = list(task)
    done = rest[-1]
    assert done["kind"] == "done"
    assert done["exit_code"] == 1
    assert f"Error: the run is incomplete: {reason}" in done["stderr_tail"]
    result = RegistryResult.model_validate_json(done["result"])
    assert result.source.complete is False
    assert result.points[0].load.concurrency == 1
    assert result.points[0].requests.completed == 24  # the finished point is kept whole
    # vLLM was stopped by the run (as the CLI stops it), not left behind.
    deadline = time.monotonic() + 15
    while any(Path(f"/proc/{pid}").exists() for pid in launched) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(Path(f"/proc/{pid}/cmdline").exists() for pid in launched)
    assert done["log_tail"].endswith("INFO:     Finished server process")  # a clean stop
    assert {n: signal.getsignal(n) for n in handlers} == handlers  # the worker's own again
    assert sys.exc_info() == (None, None, None)


class _RayAskedToStop:
    """A STAND-IN for the `ray` module in a worker whose fleet driver already asked its runs
    to stop: connected, and the stop request's named actor exists."""

    def __init__(self) -> None:
        self.looked_up: list[str] = []

    def is_initialized(self) -> bool:
        return True

    def get_actor(self, name: str) -> object:
        self.looked_up.append(name)
        return object()


def test_fleet_task_placed_after_the_stop_was_asked_runs_nothing_standin_ray(
    tmp_path: Path, standin_vllm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task Ray places only after Ctrl-C of `bench fleet` (it waited for a free node) ends at
    once, launching no vLLM: its answer says it was interrupted before the run began."""
    plan = tmp_path / "plan.yaml"
    defaults = {
        "model": STANDIN_MODEL, "vllm-executable": str(standin_vllm), "load-format": "dummy",
    }  # fmt: skip
    plan.write_text(yaml.safe_dump({"defaults": defaults, "runs": [{"gpus": ["l40s"]}]}))
    (entry,) = load_matrix(plan).entries
    ray = _RayAskedToStop()
    monkeypatch.setitem(sys.modules, "ray", ray)
    (done,) = list(run_entry(entry, "infermeter-fleet-stop-x"))
    assert ray.looked_up == ["infermeter-fleet-stop-x"]
    assert (done["kind"], done["exit_code"], done["result"]) == ("done", 1, None)
    assert done["stderr_tail"] == "Error: interrupted before the run began"
    assert _standins() == []
