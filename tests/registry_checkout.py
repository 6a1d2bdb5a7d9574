"""A registry checkout for a test to fill: the repository's catalogs and no results yet."""

import shutil
from pathlib import Path

from infermeter.registry.location import catalogs_folder

REPOSITORY_ROOT = Path(__file__).resolve().parents[1]


def empty_registry(root: Path) -> Path:
    """A registry checkout at `root`: the repository's catalogs and no results yet (what a
    harvest writes into)."""
    shutil.copytree(catalogs_folder(REPOSITORY_ROOT), catalogs_folder(root))
    (root / "registry" / "results").mkdir()
    return root
