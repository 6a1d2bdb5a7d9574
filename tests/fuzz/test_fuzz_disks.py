"""Writes that the disk refuses (a file size limit, as `ulimit -f` sets, which a full disk
answers the same way: the write fails with an OSError): one line, never a traceback, and a
run's measured points are never lost: on stdout when no folder takes a file. An output that is
no plain file (a FIFO, as a shell's process substitution gives; a device such as /dev/full; a
symbolic link) is written through, never replaced by a file of our own.

Real processes under RLIMIT_FSIZE; the run measures a real HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import resource
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

import pytest
from fuzz_helpers import FAILURES, check_cli, count
from registry_checkout import empty_registry

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from fake_openai_server import FakeOpenAIServer, FakeServerConfig
from synthetic_run import SYNTHETIC_VLLM_FILE

from infermeter.registry.models import Result
from infermeter.registry.validate import check_result

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
SUITE = "disks"


def _limited(limit_bytes: int, close_stdout: bool) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
    if close_stdout:
        os.close(1)


def _infermeter(
    args: list[str],
    cwd: Path,
    limit_bytes: int,
    stdout: IO[str] | None = None,
    close_stdout: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run infermeter under a file size limit; its standard output captured, or written to
    `stdout` (a file, which the limit cuts short too), or closed (`>&-`)."""
    completed = subprocess.run(
        [sys.executable, "-c", "from infermeter.bench.cli.main import main; main()", *args],
        cwd=cwd, stdout=stdout or subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        timeout=180, preexec_fn=lambda: _limited(limit_bytes, close_stdout),
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


def test_fuzz_disks_harvest_refused_by_the_disk_leaves_the_registry_as_it_was(
    tmp_path: Path,
) -> None:
    # It said '[Errno 27] File too large', naming no file, and left the folders it had made
    # for the results (registry/results/mi300x/llama-3.1-70b-instruct/, empty).
    root = empty_registry(tmp_path / "checkout")
    before = sorted(root.rglob("*"))
    page = DATA / "harvest" / "amd" / "README-f94ec9be.md"
    completed = _infermeter(
        ["registry", "harvest", "amd", "--from", str(page), "--commit", "f94ec9be",
         "--registry", str(root), "--retrieved", "2026-12-01"], tmp_path, 2048,
    )  # fmt: skip
    assert completed.returncode == 1, completed.stderr
    line = completed.stderr.strip().splitlines()[-1]
    assert line.startswith("Error: cannot write checkout/registry/results/mi300x/"), line
    assert line.endswith(".json: File too large"), line
    assert sorted(root.rglob("*")) == before


def test_fuzz_disks_price_harvest_refused_by_the_disk_names_its_catalog(tmp_path: Path) -> None:
    # It said '[Errno 27] File too large', naming no file. (One excerpt of the four rewrites
    # the catalog: the others' prices go.)
    root = empty_registry(tmp_path / "checkout")
    catalog = root / "registry" / "catalogs" / "prices-skypilot.yaml"
    kept = catalog.read_bytes()
    completed = _infermeter(
        ["registry", "harvest", "skypilot", "--from", str(DATA / "harvest" / "skypilot" /
         "verda-vms-000c1d0b.csv"), "--registry", str(root)], tmp_path, 2048,  # one of four
    )  # fmt: skip
    assert completed.returncode == 1, completed.stderr
    assert completed.stderr.strip().splitlines()[-1] == (
        "Error: cannot write checkout/registry/catalogs/prices-skypilot.yaml: File too large"
    )
    assert catalog.read_bytes() == kept


def _small_bench_run(url: str, *output: str) -> list[str]:
    """`bench run` of one small point against the stand-in at `url`, its deployment stated so
    that it writes a result; `output` says where."""
    return ["bench", "run", "--endpoint", url, "--concurrency", "1", "--num-requests", "4",
            "--warmup", "1", "--input-len", "16", "--output-len", "8", "--engine", "vllm",
            "--engine-version", "0.9.1", "--model-id", "llama-3.1-8b-instruct", "--gpu",
            "h100-sxm", *output, "--quiet"]  # fmt: skip


def test_fuzz_disks_bench_run_puts_its_result_on_stdout_when_no_file_takes_it(
    tmp_path: Path,
) -> None:
    with FakeOpenAIServer(FakeServerConfig(itl_s=0.01)) as server:
        completed = _infermeter(_small_bench_run(server.url, "--output", "r.json"), tmp_path, 2048)
    assert completed.returncode == 1, completed.stderr
    assert "follow on standard output" in completed.stderr
    result = Result.model_validate(json.loads(completed.stdout))
    assert len(result.points) == 1
    assert check_result(result).ok
    count(SUITE, "result on stdout the gate accepts")


DATA = REPOSITORY_ROOT / "tests" / "data"
A_RESULT = next((REPOSITORY_ROOT / "registry" / "results").rglob("*.json"))
PLAN = REPOSITORY_ROOT / "bench" / "plans" / "example.yaml"
# Each writer and its output option; the file it writes is whole text of its kind.
WRITERS = {
    "bench report": (["bench", "report", str(A_RESULT), "--html"], b"<!doctype"),
    "bench plan render": (["bench", "plan", "render", str(PLAN), "--kubernetes", "--output"],
                          b"# Rendered by"),
    "bench import": (["bench", "import", str(SYNTHETIC_VLLM_FILE),
                      "--gpu", "h100-sxm", "--gpu-count", "1", "--model-id",
                      "llama-3.1-8b-instruct", "--engine-version", "0.9.1", "--command",
                      "vllm bench serve --max-concurrency 16", "--submitter", "someone",
                      "--timezone", "UTC", "--input-len", "1024", "--output-len", "128",
                      "--output"], b'{\n  "'),
}  # fmt: skip


@pytest.mark.parametrize("writer", list(WRITERS))
def test_fuzz_disks_output_fifo_is_written_through(tmp_path: Path, writer: str) -> None:
    args, start = WRITERS[writer]
    fifo = tmp_path / "out"
    os.mkfifo(fifo)
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = check_cli([*args, str(fifo)], SUITE, limit_s=60)
    reader.join(timeout=30)
    assert result.exit_code == 0, result.output
    assert stat.S_ISFIFO(fifo.lstat().st_mode), "the FIFO was replaced by a file"
    assert len(read) == 1, "nothing was written into the FIFO"
    assert read[0].startswith(start), read[0][:100]


@pytest.mark.parametrize("writer", list(WRITERS))
def test_fuzz_disks_output_symlink_is_followed(tmp_path: Path, writer: str) -> None:
    args, start = WRITERS[writer]
    (tmp_path / "elsewhere").mkdir()
    target = tmp_path / "elsewhere" / "kept"
    target.write_text("old")
    link = tmp_path / "out"
    link.symlink_to(target)
    result = check_cli([*args, str(link)], SUITE, limit_s=60)
    assert result.exit_code == 0, result.output
    assert link.is_symlink(), "the link was replaced by a file"
    assert target.read_bytes().startswith(start)


@pytest.mark.parametrize("writer", list(WRITERS))
def test_fuzz_disks_output_full_device_is_one_line(tmp_path: Path, writer: str) -> None:
    args, _start = WRITERS[writer]
    full = tmp_path / "full"
    try:  # /dev/full's own numbers; a copy, as a write that renamed onto it would replace it
        os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    except PermissionError:
        pytest.skip("creating a device needs CAP_MKNOD")
    result = check_cli([*args, str(full)], SUITE, limit_s=60)
    assert result.exit_code == 1, result.output
    assert result.stderr.strip().endswith("No space left on device"), result.stderr
    assert stat.S_ISCHR(full.lstat().st_mode), "the device was replaced by a file"


@pytest.mark.parametrize("stdout", ["file past the limit", "closed"])
@pytest.mark.parametrize(
    "args",
    [["calc", "vram", "--model", "llama-3.1-8b-instruct", "--gpu", "h100-sxm"],
     ["bench", "compare", "--json", str(A_RESULT), str(A_RESULT)], ["bench", "run", "--help"]],
    ids=["calc", "compare", "help"],
)  # fmt: skip
def test_fuzz_disks_standard_output_that_takes_nothing_is_one_line(
    tmp_path: Path, args: list[str], stdout: str
) -> None:
    with (tmp_path / "out.txt").open("w") as into:
        closed = stdout == "closed"
        completed = _infermeter(args, tmp_path, 100, stdout=into, close_stdout=closed)
    assert completed.returncode == 1, completed.stderr
    reason = "it is closed" if closed else "File too large"
    assert completed.stderr.splitlines() == [f"Error: cannot write standard output: {reason}"]


@pytest.mark.parametrize("writer", list(WRITERS))
def test_fuzz_disks_output_under_a_file_says_it_is_no_folder(tmp_path: Path, writer: str) -> None:
    args, _start = WRITERS[writer]
    (tmp_path / "afile").write_text("kept")
    result = check_cli([*args, str(tmp_path / "afile" / "out")], SUITE, limit_s=60)
    assert result.exit_code == 1, result.output
    assert result.stderr.strip().endswith("Not a directory"), result.stderr
    assert (tmp_path / "afile").read_text() == "kept"


def test_fuzz_disks_bench_run_keeps_no_file_beside_an_output_that_is_no_file(
    tmp_path: Path,
) -> None:
    # beside /dev/null or /dev/stdout (a FIFO here) no file can go: the raw records, the points
    # kept as the run goes, a rejected result go into the current folder instead
    devices, here = tmp_path / "dev", tmp_path / "here"
    devices.mkdir()
    here.mkdir()
    fifo = devices / "out"
    os.mkfifo(fifo)
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_bytes()), daemon=True)
    reader.start()
    with FakeOpenAIServer(FakeServerConfig(itl_s=0.01)) as server:
        run = _small_bench_run(server.url, "--output", str(fifo), "--raw-records")
        completed = _infermeter(run, here, 10_000_000)
    reader.join(timeout=30)
    assert completed.returncode == 0, completed.stderr
    assert len(read) == 1
    assert Result.model_validate(json.loads(read[0])).points
    assert [path.name for path in devices.iterdir()] == ["out"]
    assert [path.name for path in here.iterdir()] == ["out.requests.jsonl.gz"]
