"""Signals at any moment of the `infermeter` console script (`bench.cli.console`), as a real
process: during its imports (Ctrl-C in the first fraction of a second printed a
KeyboardInterrupt traceback), and several in a row during a run (the exit status was -2 or -15
although the result was written; it must be 1, with the "incomplete" line).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from fuzz_helpers import FAILURES, count

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from bench_helpers import STANDIN_MODEL, server_process

from infermeter.registry.models import Result

SUITE = "signals"
CONSOLE = [sys.executable, "-c", "from infermeter.bench.cli.console import main; main()"]


def _ended(process: subprocess.Popen[str], what: str) -> str:
    _, stderr = process.communicate(timeout=120)
    crashed = "Traceback" in stderr
    count(SUITE, "traceback" if crashed else f"exit {process.returncode}")
    if crashed:
        FAILURES["traceback"] += 1
    assert not crashed, (what, stderr[-2000:])
    assert process.returncode == 1, (what, process.returncode, stderr[-1000:])
    return stderr


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_fuzz_signals_during_the_imports_end_quietly(number: signal.Signals) -> None:
    # -X importtime names each module as its import ends: click's line means bench.cli.console's
    # handlers are in place and the CLI's own imports are under way.
    process = subprocess.Popen(
        [sys.executable, "-X", "importtime", *CONSOLE[1:], "calc", "vram", "--model",
         "llama-3.1-8b-instruct", "--gpu", "h100-sxm"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stderr is not None
    lines = []
    for line in process.stderr:
        lines.append(line)
        if line.rsplit("|", 1)[-1].strip() == "click":
            break
    process.send_signal(number)
    stderr = "".join(lines) + _ended(process, number.name)
    assert "\nAborted!\n" in stderr, stderr[-300:]


def _arrived(url: str) -> int:
    """Requests the stand-in server has answered (its /metrics)."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=5) as response:
        text = response.read().decode()
    for line in text.splitlines():
        if line.startswith("vllm:request_success_total"):
            return int(float(line.rsplit(" ", 1)[1]))
    return 0


def test_fuzz_signals_several_during_a_run_exit_1_with_the_result_written(
    tmp_path: Path,
) -> None:
    output = tmp_path / "result.json"
    with server_process(model=STANDIN_MODEL, ttft_s=0.005, itl_s=0.01) as url:
        process = subprocess.Popen(
            [*CONSOLE, "bench", "run", "--endpoint", url, "--output", str(output),
             "--model", STANDIN_MODEL, "--model-id", "llama-3.2-1b-instruct", "--engine", "vllm",
             "--engine-version", "0.9.1", "--gpu", "h100-sxm", "--concurrency", "2",
             "--duration", "60", "--num-requests", "100000", "--warmup", "1", "--input-len",
             "16", "--output-len", "8", "--quiet"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while _arrived(url) < 4:  # the (60 s) point is under way
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the server never saw the run's requests"
            time.sleep(0.05)
        signals = [signal.SIGINT, signal.SIGTERM] * 50
        while process.poll() is None and signals:
            process.send_signal(signals.pop())
            time.sleep(0.02)
        stderr = _ended(process, "several signals")
    assert "Error: the run is incomplete:" in stderr.strip().splitlines()[-1], stderr[-600:]
    result = Result.model_validate_json(output.read_text())
    assert result.source.complete is False
    count(SUITE, "result written")
