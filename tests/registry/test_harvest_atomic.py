"""A harvest checks everything first, then changes the registry as one step, and never writes
a file `registry validate` would reject (`registry.harvest.outcome`, `registry.changeset`).

Runs `registry harvest mlperf` on the real v5.1 excerpt (tests/data/harvest/mlperf-v5.1) in a
real git repository, into a registry in a temporary folder.
"""

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from registry_checkout import empty_registry
from registry_helpers import V51, git, mlperf_v51_repository

from infermeter.bench.cli.main import main
from infermeter.registry.changeset import ChangeSet
from infermeter.registry.errors import UnwritableError
from infermeter.registry.store import write_text_atomic
from infermeter.registry.validate import validate_paths

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
SKYPILOT = REPOSITORY_ROOT / "tests" / "data" / "harvest" / "skypilot"


def _snapshot(root: Path) -> dict[str, str]:
    """Every file under `root` (hidden ones too) by its SHA-256."""
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def _harvest(source: Path, root: Path, *extra: str) -> tuple[int, str]:
    outcome = CliRunner().invoke(
        main,
        ["registry", "harvest", "mlperf", "--round", "5.1", "--from", str(source),
         "--registry", str(root), *extra],
    )  # fmt: skip
    assert outcome.exception is None or isinstance(outcome.exception, SystemExit), outcome.output
    return outcome.exit_code, outcome.output


@pytest.mark.parametrize(
    ("date", "why"),
    [
        ("2026-13-45", "'2026-13-45' is not a calendar date such as 2026-11-30"),
        ("9999-12-31", "9999-12-31 is in the future"),  # each row would fail the gate
    ],
    ids=["no-date", "future"],
)
@pytest.mark.parametrize("dry", [False, True], ids=["write", "dry-run"])
def test_harvest_with_a_bad_retrieved_date_leaves_the_registry_byte_identical(
    tmp_path: Path, dry: bool, date: str, why: str
) -> None:
    source, root = mlperf_v51_repository(tmp_path), empty_registry(tmp_path / "checkout")
    code, output = _harvest(source, root, "--retrieved", "2026-11-30")
    assert code == 0, output
    # A changed source: every row would be re-harvested (written, old files removed).
    git(source, "commit", "-q", "--allow-empty", "-m", "another commit")
    before = _snapshot(root)
    code, output = _harvest(source, root, "--retrieved", date, *(["--dry-run"] * dry))
    assert code == 2, output  # a bad option value is a usage error
    assert output.strip().splitlines() == [f"Error: --retrieved: {why}"]
    assert _snapshot(root) == before


def test_harvest_onto_a_folder_named_like_its_file_changes_nothing(tmp_path: Path) -> None:
    # A folder where a result goes: '[Errno 20] Not a directory: PATH -> .PATH.….tmp', the
    # temporary made to set it aside left in the registry.
    source, root = mlperf_v51_repository(tmp_path), empty_registry(tmp_path / "checkout")
    code, dry = _harvest(source, root, "--retrieved", "2026-11-30", "--dry-run")
    assert code == 0, dry
    relative = next(line for line in dry.splitlines() if line.startswith("added ")).split()[1]
    (root / relative).mkdir(parents=True)
    before = _snapshot(root)
    code, output = _harvest(source, root, "--retrieved", "2026-11-30")
    assert code == 1, output
    assert output.strip().splitlines() == [
        f"Error: cannot write {root / relative}: it is a folder; a file goes there"
    ]
    assert _snapshot(root) == before
    assert not [path for path in root.rglob("*") if path.name.endswith(".tmp")]


def test_price_harvest_onto_a_folder_named_like_its_catalog_is_one_line(tmp_path: Path) -> None:
    # It said "[Errno 21] Is a directory: '…/.prices-skypilot.yaml.….tmp' -> '…'", naming
    # the temporary it would have renamed.
    root = empty_registry(tmp_path / "checkout")
    catalog = root / "registry" / "catalogs" / "prices-skypilot.yaml"
    catalog.unlink()
    catalog.mkdir()
    before = _snapshot(root)
    outcome = CliRunner().invoke(
        main, ["registry", "harvest", "skypilot", "--from", str(SKYPILOT), "--registry", str(root)]
    )
    assert outcome.exit_code == 1, outcome.output
    assert outcome.output.strip().splitlines() == [f"Error: cannot write {catalog}: Is a directory"]
    assert _snapshot(root) == before
    assert not [path for path in root.rglob("*") if path.name.endswith(".tmp")]


def test_harvest_skips_a_row_the_gate_rejects_and_names_it(tmp_path: Path) -> None:
    rows = json.loads((V51 / "summary_results.json").read_text(encoding="utf-8"))
    system = rows[0]["System"]
    source = mlperf_v51_repository(tmp_path, {system: f"{system} <script>alert(1)</script>"})
    root = empty_registry(tmp_path / "checkout")
    code, dry = _harvest(source, root, "--retrieved", "2026-11-30", "--dry-run")
    assert code == 0, dry
    code, output = _harvest(source, root, "--retrieved", "2026-11-30")
    assert code == 0, output
    skipped = [line for line in output.splitlines() if "registry validate would reject" in line]
    assert skipped
    assert all(f" {rows[0]['ID'].removeprefix('v')} " in line for line in skipped)
    assert "contains markup" in skipped[0]
    assert skipped == [line for line in dry.splitlines() if "would reject" in line]
    report = validate_paths(registry_root=root)
    assert report.ok, [str(problem) for problem in report.problems]
    assert report.files_checked >= 1


def test_changeset_that_cannot_stage_a_file_changes_nothing(tmp_path: Path) -> None:
    kept = tmp_path / "kept.json"
    kept.write_text("old\n", encoding="utf-8")
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where a folder is needed\n", encoding="utf-8")
    change = ChangeSet()
    change.write(kept, "new\n")
    change.write(tmp_path / "added.json", "added\n")
    change.write(blocker / "inside.json", "cannot be written\n")
    change.remove(kept)
    before = _snapshot(tmp_path)
    with pytest.raises(UnwritableError, match=r"inside\.json: (File exists|Not a directory)"):
        change.apply()
    assert _snapshot(tmp_path) == before


def test_changeset_that_cannot_set_a_file_aside_leaves_no_temporary(tmp_path: Path) -> None:
    (tmp_path / "kept.json").write_text("old\n", encoding="utf-8")
    (tmp_path / "folder.json").mkdir()  # removed as a file would be: it cannot be set aside
    change = ChangeSet()
    change.write(tmp_path / "kept.json", "new\n")
    change.remove(tmp_path / "folder.json")
    before = _snapshot(tmp_path)
    with pytest.raises(NotADirectoryError):
        change.apply()
    assert _snapshot(tmp_path) == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["folder.json", "kept.json"]


def test_changeset_writes_replaces_and_removes_together(tmp_path: Path) -> None:
    replaced, removed = tmp_path / "a.json", tmp_path / "b.json"
    replaced.write_text("old\n", encoding="utf-8")
    removed.write_text("gone\n", encoding="utf-8")
    change = ChangeSet()
    change.write(replaced, "new\n")
    change.write(tmp_path / "sub" / "c.json", "added\n")
    change.remove(removed)
    change.apply()
    assert _snapshot(tmp_path) == {
        "a.json": hashlib.sha256(b"new\n").hexdigest(),
        "sub/c.json": hashlib.sha256(b"added\n").hexdigest(),
    }


def test_write_removes_temporaries_of_killed_writers_and_keeps_live_ones(tmp_path: Path) -> None:
    # A write killed outright (SIGKILL during the raw records) leaves its temporary beside
    # the complete result; the next write into the folder removes it, not a live writer's.
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f".r.requests.jsonl.gz.{dead.pid}-abc123.tmp"
    live = tmp_path / f".r.json.{os.getpid()}-def456.tmp"
    other = tmp_path / ".someone-elses.tmp"
    for path in (stale, live, other):
        path.write_text("partial", encoding="utf-8")
    write_text_atomic(tmp_path / "next.json", "{}\n")
    assert not stale.exists()
    assert live.exists()
    assert other.exists()
    assert (tmp_path / "next.json").read_text(encoding="utf-8") == "{}\n"
