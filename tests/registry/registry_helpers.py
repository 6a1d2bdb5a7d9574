"""Helpers of the registry tests: an empty registry checkout (for results, for prices), git in a
test's repository, the MLPerf v5.1 excerpt as one, an edited copy of a pinned excerpt, a
harvest's results by their marked source key, and the checks that a harvest reproduces the
registry's files and a rerun changes nothing."""

import hashlib
import json
import shutil
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from registry_checkout import empty_registry

from infermeter.registry.catalog import GPUS_FILE
from infermeter.registry.harvest.mlperf import harvest_mlperf
from infermeter.registry.harvest.options import HarvestOptions
from infermeter.registry.harvest.outcome import HarvestReport
from infermeter.registry.harvest.sources import FileCitation
from infermeter.registry.location import catalogs_folder
from infermeter.registry.models import Result
from infermeter.registry.store import read_result

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
V51 = REPOSITORY_ROOT / "tests" / "data" / "harvest" / "mlperf-v5.1"
"""The pinned excerpt of mlcommons/inference_results_v5.1 (commit 965182b0)."""
# The upstream commits of the MLPerf results repositories the pinned excerpts were copied from,
# as the harvests cite them; v6.0's bytes were read from a fork that holds its commit.
V41_COMMIT = "4a0c87411066bd697db46fa44cf6f04fd458f627"
V51_COMMIT = "965182b03376a00fcae415c54e560e1c83937932"
V60_COMMIT = "ab33b2144a9f822f69d24f78569f993d195ee7e5"
V60_READ_FROM = (
    "Bytes read from the fork gbeezybez/inference_results_v6.0 (its HEAD 232fbf90 holds upstream "
    "commit ab33b214, 'Publishing Results', 2026-03-26, unchanged in its history)."
)


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


def mlperf_v51_repository(folder: Path, edit: dict[str, str] | None = None) -> Path:
    """The v5.1 excerpt (`V51`) as a real git repository in `folder`, one commit on main; `edit`
    replaces a System name (old → new) in its results table first."""
    repo = folder / "inference_results_v5.1"
    shutil.copytree(V51, repo)
    if edit:
        summary = repo / "summary_results.json"
        rows = json.loads(summary.read_text(encoding="utf-8"))
        for row in rows:
            row["System"] = edit.get(row["System"], row["System"])
        summary.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "excerpt")
    return repo


def prices_registry(root: Path) -> Path:
    """A registry checkout at `root` holding only the GPU catalog: what a price harvest reads
    (the GPUs' source names) and writes its price file into."""
    catalogs = catalogs_folder(root)
    catalogs.mkdir(parents=True)
    shutil.copy(catalogs_folder(REPOSITORY_ROOT) / GPUS_FILE, catalogs)
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


class MlperfHarvest(NamedTuple):
    """A pinned excerpt harvested into a fresh registry checkout."""

    registry: Path
    report: HarvestReport
    results: dict[str, Result]  # by each result's MLPerf entry


@dataclass(frozen=True)
class MlperfExcerpt:
    """A pinned excerpt of an MLPerf round that `registry harvest mlperf` reads as that round:
    its folder, the round, the commit and read-from text the harvest cites, and the sha256 of
    its files' listing (sorted by path, as `sha256sum` lists them)."""

    folder: Path
    round: str
    commit: str
    read_from: str | None
    sha256: str

    def harvest(
        self, root: Path, today: str = "2026-12-02"
    ) -> tuple[HarvestReport, dict[str, Result]]:
        """Harvest the excerpt into the registry at `root`: the report, and every result there
        by its MLPerf entry."""
        options = HarvestOptions(root, today=today)
        cited = FileCitation(commit=self.commit, read_from=self.read_from)
        report = harvest_mlperf(self.folder, self.round, options, cited=cited)
        found = {}
        for path in (root / "registry/results").rglob("*.json"):
            result = read_result(path)
            found[result.source.mlperf.entry()] = result  # type: ignore[union-attr]
        return report, found

    def harvest_fresh(self, root: Path) -> "MlperfHarvest":
        """Harvest the excerpt into a new empty registry checkout at `root`: the checkout, the
        report, and every result there by its MLPerf entry."""
        report, results = self.harvest(empty_registry(root))
        return MlperfHarvest(root, report, results)

    def shared_harvest(self, folder: str) -> Any:
        """A module-scoped fixture: one harvest of the excerpt into a fresh registry (in a
        temporary folder named `folder`), shared by the module's tests. A module names it
        `harvested = EXCERPT.shared_harvest(…)`."""

        @pytest.fixture(scope="module")
        def harvested(tmp_path_factory: pytest.TempPathFactory) -> MlperfHarvest:
            return self.harvest_fresh(tmp_path_factory.mktemp(folder) / "checkout")

        return harvested

    def listing_sha256(self) -> str:
        listing = "".join(
            f"{hashlib.sha256(path.read_bytes()).hexdigest()}  ./{path.relative_to(self.folder)}\n"
            for path in sorted(
                self.folder.rglob("*"), key=lambda p: str(p.relative_to(self.folder))
            )
            if path.is_file()
        )
        return hashlib.sha256(listing.encode()).hexdigest()

    def _relative(self, path: Path) -> str:
        return str(path.relative_to(self.folder))

    def assert_pinned_and_committed(
        self, registry: Path, report: HarvestReport, count: int
    ) -> None:
        """The excerpt is the pinned one, its harvest added `count` results that are the
        repository's own byte for byte, and a second harvest adds and changes nothing."""
        assert self.listing_sha256() == self.sha256
        assert len(report.added) == count
        assert_committed(registry, report.added)
        again, _ = self.harvest(registry, today="2027-01-01")
        assert (again.added, again.changed) == ([], [])
