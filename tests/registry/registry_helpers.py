"""Helpers of the registry tests: an empty registry checkout, and git in a test's repository."""

import shutil
import subprocess
from pathlib import Path

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
