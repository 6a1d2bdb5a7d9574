"""Whatever fails after measuring, `bench run --output` keeps what it measured: the points as
`<stem>.rejected.json` and the raw records beside them, one line saying why, exit 1.

The server is the STAND-IN vLLM's HTTP side (tests/bench/standin_vllm.py), in-process on
127.0.0.1; the failures are real where this host allows (a full tmpfs when run as root) and
otherwise raised where the real one would come from.
"""

from __future__ import annotations

import errno
import gzip
import json
import os
import subprocess
from pathlib import Path

import pytest
from bench_helpers import SMALLER
from click.testing import CliRunner, Result

import infermeter.bench.result.output
from infermeter.bench.cli.main import main
from infermeter.bench.result import assemble
from infermeter.bench.session import session
from infermeter.registry import store
from infermeter.registry.models import Result as RegistryResult


def _run(endpoint: str, output: Path, *extra: str) -> Result:
    return CliRunner().invoke(
        main,
        ["bench", "run", "--endpoint", endpoint, "--gpu", "h100-sxm",
         "--model-id", "llama-3.2-1b-instruct", "--concurrency", "1,2", *SMALLER,
         "--output", str(output), *extra],
    )  # fmt: skip


def _error_line(run: Result) -> str:
    assert run.exit_code == 1, run.output
    assert "Traceback" not in run.output
    assert isinstance(run.exception, SystemExit), repr(run.exception)
    errors = [line for line in run.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1, run.stderr
    return errors[0]


def _records(path: Path) -> list[dict[str, object]]:
    with gzip.open(path, "rt") as stream:
        return [record for line in stream if (record := json.loads(line))["kind"] == "request"]


def test_bench_run_validation_failure_keeps_points_and_raw_records(
    endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(result: RegistryResult) -> list[str]:
        return ["points[0].throughput: above the roofline bound"]

    monkeypatch.setattr(infermeter.bench.result.output, "validate_result", refuse)
    output = tmp_path / "out" / "result.json"
    line = _error_line(_run(endpoint, output))  # no --raw-records: kept anyway
    rejected = tmp_path / "out" / "result.rejected.json"
    raw = tmp_path / "out" / "result.requests.jsonl.gz"
    assert line == (
        "Error: --output: the result fails validation: points[0].throughput: above the roofline "
        f"bound; the measured points are kept in {rejected} and the raw records in {raw}"
    )
    assert not output.exists()
    kept = RegistryResult.model_validate_json(rejected.read_text())
    assert [point.requests.completed for point in kept.points] == [4, 4]
    # the partial file written after each point is gone: the rejected copy holds the points
    assert not (tmp_path / "out" / "result.partial.json").exists()
    assert len(_records(raw)) == 2 * (4 + 1)


def test_bench_run_missing_schema_file_keeps_points(
    endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What an installed package without its schemas did: the checks died on a missing file.
    def missing(result: RegistryResult) -> list[str]:
        raise FileNotFoundError(
            errno.ENOENT, "No such file or directory", "site-packages/schemas/result.schema.json"
        )

    monkeypatch.setattr(infermeter.bench.result.output, "validate_result", missing)
    output = tmp_path / "result.json"
    line = _error_line(_run(endpoint, output, "--raw-records"))
    assert "the registry's checks could not run" in line
    assert "site-packages/schemas/result.schema.json" in line
    assert (tmp_path / "result.rejected.json").is_file()
    assert (tmp_path / "result.requests.jsonl.gz").is_file()
    assert not output.exists()


def test_bench_run_unwritable_output_keeps_points_in_the_current_folder(
    endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write = store.write_text_atomic
    full = tmp_path / "full"

    def disk_full(path: Path, text: str) -> None:
        if full in path.parents:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real_write(path, text)

    real_result = assemble.write_result

    def result_disk_full(result: RegistryResult, output: Path) -> None:
        if full in output.parents:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(output))
        real_result(result, output)

    monkeypatch.setattr(infermeter.bench.result.output, "write_text_atomic", disk_full)
    monkeypatch.setattr(infermeter.bench.result.output, "write_result", result_disk_full)
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    line = _error_line(_run(endpoint, full / "result.json"))
    assert f"cannot write {full / 'result.json'}: No space left on device" in line
    assert f"kept in {Path.cwd() / 'result.rejected.json'}" in line
    kept = RegistryResult.model_validate_json((here / "result.rejected.json").read_text())
    assert len(kept.points) == 2
    assert len(_records(here / "result.requests.jsonl.gz")) == 10


def test_bench_run_result_that_cannot_be_assembled_keeps_summaries(
    endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object) -> RegistryResult:
        raise KeyError("identity")

    monkeypatch.setattr(session, "build_result", broken)
    line = _error_line(_run(endpoint, tmp_path / "result.json"))
    assert "the result could not be assembled: 'identity'" in line
    kept = json.loads((tmp_path / "result.rejected.json").read_text())
    assert [point["completed"] for point in kept["points"]] == [4, 4]
    assert (tmp_path / "result.requests.jsonl.gz").is_file()


def _fill(path: Path) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(descriptor, b"\0" * 4096)
    finally:
        os.close(descriptor)


def _can_mount_tmpfs(folder: Path) -> bool:
    if os.geteuid() != 0:
        return False
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
    )
    return mounted.returncode == 0


def test_bench_run_on_a_really_full_disk_keeps_points_elsewhere(
    endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    if not _can_mount_tmpfs(tiny):
        pytest.skip("needs root and a tmpfs mount (the in-process disk-full test covers it)")
    try:
        with pytest.raises(OSError, match="No space left"):
            _fill(tiny / "filler")
        monkeypatch.chdir(tmp_path)
        line = _error_line(_run(endpoint, tiny / "result.json"))
        assert "No space left on device" in line
        assert (tmp_path / "result.rejected.json").is_file()
        assert (tmp_path / "result.requests.jsonl.gz").is_file()
        assert sorted(path.name for path in tiny.iterdir()) == ["filler"]  # no temp files left
    finally:
        subprocess.run(["umount", str(tiny)], check=False)


def test_bench_run_writes_raw_records_only_on_request_when_all_is_well(
    endpoint: str, tmp_path: Path
) -> None:
    run = _run(endpoint, tmp_path / "result.json")
    assert run.exit_code == 0, run.output
    assert sorted(path.name for path in tmp_path.iterdir()) == ["result.json"]
