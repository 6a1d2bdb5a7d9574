"""Helpers of the registry tests: an empty registry checkout (for results, for prices), git in a
test's repository, an edited copy of a pinned excerpt, and the rerun check of a harvest."""

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from infermeter.registry.harvest.outcome import HarvestReport

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
