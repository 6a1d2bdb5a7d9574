"""Helpers of the registry tests: an empty registry checkout (for results, for prices), git in a
test's repository, an edited copy of a pinned excerpt, a harvest's results by their marked source
key, and the checks that a harvest reproduces the registry's files and a rerun changes nothing."""

import shutil
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path

from infermeter.registry.harvest.outcome import HarvestReport
from infermeter.registry.models import Result
from infermeter.registry.store import read_result

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]


def empty_registry(root: Path) -> Path:
    """A registry checkout at `root`: the repository's catalogs and no results yet (what a
    harvest writes into)."""
    shutil.copytree(REPOSITORY_ROOT / "registry" / "catalogs", root / "registry" / "catalogs")
    (root / "registry" / "results").mkdir()
    return root


def git(root: Path, *arguments: str) -> str:
    """`git -C root ARGUMENTS…`, committing as t <t@example.com>; its output, stripped. A failing
    command fails the test."""
    completed = subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com", *arguments],
        capture_output=True,
        text=True,
        check=True,
    )
    return completed.stdout.strip()


def prices_registry(root: Path) -> Path:
    """A registry checkout at `root` holding only the GPU catalog: what a price harvest reads
    (the GPUs' source names) and writes its price file into."""
    catalogs = root / "registry" / "catalogs"
    catalogs.mkdir(parents=True)
    shutil.copy(REPOSITORY_ROOT / "registry" / "catalogs" / "gpus.yaml", catalogs)
    return root


def edited_copy(folder: Path, source: Path, old: str, new: str, count: int = -1) -> Path:
    """`source` copied into `folder` with `old`, which it must hold, replaced by `new` (`count`
    times; -1: every time)."""
    text = source.read_text(encoding="utf-8")
    assert old in text
    path = folder / source.name
    path.write_text(text.replace(old, new, count), encoding="utf-8")
    return path


def assert_rerun_changes_nothing(harvest: Callable[[], HarvestReport], written: Path) -> None:
    """Harvesting again leaves `written` as it was and reports every entry unchanged."""
    first = harvest()
    text = written.read_text(encoding="utf-8")
    second = harvest()
    assert written.read_text(encoding="utf-8") == text
    assert second.unchanged == first.added
    assert not second.added
    assert not second.changed
    assert not second.removed


def marked(result: Result, marker: str) -> str:
    """What the harvester marked in the result's conditions as `[<marker>: …]` (`cell`, `row`)."""
    conditions: str = result.source.conditions  # type: ignore[union-attr]
    return conditions.rsplit(f"[{marker}: ", 1)[1].rstrip("]")


def results_by_marker(
    registry: Path, marker: str, relatives: Iterable[str] | None = None
) -> dict[str, Result]:
    """The results in `registry` (those at `relatives`, else every one) by what is `marked`."""
    paths = (
        (registry / "registry" / "results").rglob("*.json")
        if relatives is None
        else (registry / relative for relative in relatives)
    )
    return {marked(result, marker): result for result in map(read_result, paths)}


def assert_committed(registry: Path, added: Iterable[str]) -> None:
    """Each file a harvest added into `registry` is the repository's own, byte for byte."""
    for relative in added:
        committed = REPOSITORY_ROOT / relative
        assert committed.is_file(), f"{relative} is not in the registry"
        assert committed.read_bytes() == (registry / relative).read_bytes()
