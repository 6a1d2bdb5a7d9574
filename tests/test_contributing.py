"""CONTRIBUTING.md names the files each common change touches: every file and folder it names
is in the repository, and every name it says a file declares is declared there, so a rename
cannot leave the counts pointing at nothing."""

import re
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
GUIDE = (REPOSITORY / "CONTRIBUTING.md").read_text(encoding="utf-8")
TOP = ("bench/", "registry/", "calculators/", "site/", "tests/", "schemas/", "benchmarks/")

# `path`, with no placeholder (`<source>`) or wildcard in it.
_TOPS = "|".join(re.escape(top) for top in TOP)
_PATH = re.compile(rf"`((?:{_TOPS})[A-Za-z0-9_./-]*)`")
# "`path`'s `NAME`" and "`path` (`NAME`": a name the guide says the file holds.
_HELD = re.compile(r"`([a-z_/]+\.py)`(?:'s|\s*\()\s*`([A-Za-z_][A-Za-z0-9_]*)")


def test_every_path_the_guide_names_is_in_the_repository() -> None:
    paths = set(_PATH.findall(GUIDE))
    assert len(paths) > 30
    missing = sorted(path for path in paths if not (REPOSITORY / path).exists())
    assert not missing, f"CONTRIBUTING.md names paths that are not there: {missing}"


def test_every_name_the_guide_places_in_a_file_is_defined_there() -> None:
    held = set(_HELD.findall(GUIDE))
    assert len(held) >= 5
    absent = sorted(
        f"{path}: {name}"
        for path, name in held
        if not re.search(rf"\b{name}\b", (REPOSITORY / path).read_text(encoding="utf-8"))
    )
    assert not absent, f"CONTRIBUTING.md places names where they are not: {absent}"
