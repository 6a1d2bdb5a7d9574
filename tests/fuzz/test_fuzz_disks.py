"""Writes that the disk refuses (a file size limit, as `ulimit -f` sets, which a full disk
answers the same way: the write fails with an OSError): one line, never a traceback, and a
run's measured points are never lost: on stdout when no folder takes a file.

Real processes under RLIMIT_FSIZE; the run measures a real HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from fuzz_helpers import FAILURES, count

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from fake_openai_server import FakeOpenAIServer, FakeServerConfig

from infermeter.registry.models import Result
from infermeter.registry.validate import check_result

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
SUITE = "disks"


def _limited(limit_bytes: int) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))


def _infermeter(args: list[str], cwd: Path, limit_bytes: int) -> subprocess.CompletedProcess[str]:
    completed = subprocess.run(
        [sys.executable, "-c", "from infermeter.bench.cli.main import main; main()", *args],
        cwd=cwd, capture_output=True, text=True, timeout=180,
        preexec_fn=lambda: _limited(limit_bytes),
        # No bytecode written: a .pyc cut at the limit would break every later import.
        env={"PATH": "/usr/bin:/bin", "TMPDIR": str(cwd), "HOME": str(cwd),
             "PYTHONDONTWRITEBYTECODE": "1"},
    )  # fmt: skip
    crashed = "Traceback" in completed.stderr
    count(SUITE, "traceback" if crashed else f"exit {completed.returncode}")
    if crashed:
        FAILURES["traceback"] += 1
    assert not crashed, completed.stderr[-2000:]
    return completed


@pytest.mark.parametrize(
    "args",
    [["registry", "index", "--registry", str(REPOSITORY_ROOT), "--out", "index"],
     ["registry", "schemas", "--dir", "schemas"]],
    ids=["index", "schemas"],
)  # fmt: skip
def test_fuzz_disks_registry_writes_refused_in_one_line(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / args[-1]).mkdir()
    completed = _infermeter(args, tmp_path, 2048)
    assert completed.returncode == 1, completed.stderr
    assert completed.stderr.strip().splitlines()[-1].endswith("cannot write: File too large")


def test_fuzz_disks_bench_run_puts_its_result_on_stdout_when_no_file_takes_it(
    tmp_path: Path,
) -> None:
    with FakeOpenAIServer(FakeServerConfig(itl_s=0.01)) as server:
        completed = _infermeter(
            ["bench", "run", "--endpoint", server.url, "--concurrency", "1", "--num-requests",
             "4", "--warmup", "1", "--input-len", "16", "--output-len", "8", "--engine", "vllm",
             "--engine-version", "0.9.1", "--model-id", "llama-3.1-8b-instruct", "--gpu",
             "h100-sxm", "--output", "r.json", "--quiet"],
            tmp_path, 2048,
        )  # fmt: skip
    assert completed.returncode == 1, completed.stderr
    assert "follow on standard output" in completed.stderr
    result = Result.model_validate(json.loads(completed.stdout))
    assert len(result.points) == 1
    assert check_result(result).ok
    count(SUITE, "result on stdout the gate accepts")
