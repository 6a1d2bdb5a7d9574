"""Writing harvested results into a registry, and the report of what that did.

A harvested row is a result with its *source key* (what the row is in its source: an MLPerf
result ID, benchmark and scenario; a table cell), or a row skipped with its reason. Applying a
harvest:

- a result whose file is already there, byte for byte, is `unchanged`;
- a result whose source key names a result already in the registry with other content is
  `changed`: the new file is written, the old one removed, and a correction (old id → new id)
  is appended to `registry/corrections.yaml`, because merged results are never edited;
- anything else is `added`;
- a row skipped as the same run as another row (`same_as`) whose own result is in the registry
  from an earlier harvest: that result is corrected to the other row's (a correction is
  appended, the old file removed), so one run is one result;
- a row whose file `registry validate` would reject (markup, a count it cannot take, a
  duplicate) is `skipped`, with the source row and the gate's problem: never written.

Every row is judged before anything is written, and the registry then changes as one step
(`registry.changeset`): all of the harvest, or (on any failure) nothing.

Running the same harvest twice changes nothing the second time.
"""

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from infermeter.registry.changeset import ChangeSet
from infermeter.registry.corrections import (
    CORRECTIONS_FILE,
    corrections_text,
    parse_corrections,
)
from infermeter.registry.errors import KEY_CHARACTERS, InvalidFileError, printable, shown
from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.models import Result
from infermeter.registry.result_reader import result_files
from infermeter.registry.store import RESULTS_DIR, dumps_result, read_result, result_path
from infermeter.registry.validate import check_results


@dataclass(frozen=True)
class Harvested:
    """One row of a source: its key, and the result made of it or why it was skipped."""

    key: str
    result: Result | None = None
    skipped: str | None = None
    same_as: str | None = None
    """A skipped row that is the same run as the row with this key (whose result it is): a
    result harvested from it before is corrected to that row's result."""

    def __post_init__(self) -> None:
        if (self.result is None) == (self.skipped is None):
            raise ValueError("a harvested row has either a result or a reason to skip it")
        if self.same_as is not None and self.skipped is None:
            raise ValueError("only a skipped row is the same run as another")


@dataclass
class HarvestReport:
    """What applying a harvest did (or, dry, would do), path by path."""

    added: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    changed: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    """Entries a harvest that writes its file whole (prices) no longer gives."""

    def summary(self) -> str:
        removed = f", {len(self.removed)} removed" if self.removed else ""
        return (
            f"{len(self.added)} added, {len(self.changed)} changed, "
            f"{len(self.unchanged)} unchanged, {len(self.skipped)} skipped{removed}"
        )

    def shown_skipped(self) -> list[tuple[str, str]]:
        """Each skipped row's key and reason as the report shows them (`printable`): both hold
        what a source gave (an item key, a region, an error text), which may be hostile."""
        return [(printable(key), printable(reason)) for key, reason in self.skipped]

    def lines(self) -> list[str]:
        """One line per file or skipped row, then the summary."""
        lines = [f"added {path}" for path in self.added]
        lines += [f"changed {old} → {new}" for old, new in self.changed]
        lines += [f"skipped {key}: {reason}" for key, reason in self.shown_skipped()]
        lines += [f"removed {name}" for name in self.removed]
        return [*lines, self.summary()]

    def as_json(self) -> dict[str, object]:
        return {
            "added": self.added,
            "changed": [{"old": old, "new": new} for old, new in self.changed],
            "unchanged": len(self.unchanged),
            "skipped": [{"row": key, "reason": reason} for key, reason in self.shown_skipped()],
            "removed": self.removed,
        }


def _existing(root: Path, key_of: Callable[[Result], str | None]) -> dict[str, tuple[Path, Result]]:
    found: dict[str, tuple[Path, Result]] = {}
    folder = root / RESULTS_DIR
    if folder.is_symlink():  # validate refuses it; written through, results would go elsewhere
        raise HarvestError(f"{folder}: is a symbolic link; registry folders must be real")
    for path in result_files(root):  # the files validate reads: no FIFO, link or hidden file
        try:
            result = read_result(path)
        except InvalidFileError:
            continue
        key = key_of(result)
        if key is not None:
            found[key] = (path, result)
    return found


def retrieval_dates(root: Path, key_of: Callable[[Result], str | None]) -> dict[str, str]:
    """The `source.retrieved` date of every result of a source already in the registry, by key.

    A row harvested again keeps the date it was first read, so an unchanged source gives
    unchanged files.
    """
    return {
        key: str(getattr(result.source, "retrieved", ""))
        for key, (_, result) in _existing(root, key_of).items()
    }


def _corrections_text(root: Path, entries: list[dict[str, str]]) -> str:
    text = corrections_text(root / CORRECTIONS_FILE) or "schema_version: 1\ncorrections:\n"
    if text.rstrip().endswith("corrections: []"):
        text = text.rstrip()[: -len("[]")].rstrip() + "\n"
    lines = "".join(
        "  - " + yaml.safe_dump(entry, default_flow_style=True, sort_keys=False, width=10_000)
        for entry in entries
    )
    new_text = text + lines
    parse_corrections(new_text, CORRECTIONS_FILE)  # never write a corrections file that fails
    return new_text


@dataclass(frozen=True)
class _Planned:
    """A row that would change the registry: its result, where it goes, what it replaces."""

    row: Harvested
    result: Result
    path: Path
    previous: tuple[Path, Result] | None


def _plan(
    rows: Sequence[Harvested],
    root: Path,
    existing: dict[str, tuple[Path, Result]],
    source: str,
    report: HarvestReport,
) -> list[_Planned]:
    planned: list[_Planned] = []
    seen: set[str] = set()
    for row in rows:
        if row.key in seen:
            key = shown(row.key, KEY_CHARACTERS)
            raise HarvestError(f"{source}: two rows have the same source key {key}")
        seen.add(row.key)
        if row.result is None:
            report.skipped.append((row.key, str(row.skipped)))
            continue
        relative = result_path(row.result)
        path = root / relative
        if path.is_file() and path.read_text(encoding="utf-8") == dumps_result(row.result):
            report.unchanged.append(relative.as_posix())
            continue
        planned.append(_Planned(row, row.result, path, existing.get(row.key)))
    return planned


def _gate(planned: list[_Planned], root: Path, report: HarvestReport) -> list[_Planned]:
    """The planned rows whose files `registry validate` accepts, judged in memory together;
    each other row is skipped, with the gate's first problem."""
    removed = [p.previous[0] for p in planned if p.previous and p.previous[0] != p.path]
    findings = check_results([(p.path, p.result) for p in planned], root, removed)
    passed = []
    for entry in planned:
        problems = findings.get(entry.path)
        if not problems:
            passed.append(entry)
            continue
        first = problems[0]
        where = f"{first.path}: " if first.path else ""
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        reason = f"registry validate would reject its file: {where}{first.message}{more}"
        report.skipped.append((entry.row.key, reason))
    return passed


def apply_harvest(
    rows: Sequence[Harvested],
    root: Path,
    key_of: Callable[[Result], str | None],
    *,
    source: str,
    dry_run: bool = False,
    today: str | None = None,
) -> HarvestReport:
    """Write the harvested results into the registry at `root`; see the module docstring.

    Every row is judged first, as `registry validate` would judge its file (a row whose file
    it would reject is skipped, with the reason), and `dry_run` reports exactly that; then
    every file is written, replaced or removed, and the corrections appended, as one step
    (`registry.changeset`): a failure leaves the registry as it was.

    `key_of` gives the source key of a result already in the registry (None: not from this
    source). Raises HarvestError when two rows share a key.
    """
    report = HarvestReport()
    existing = _existing(root, key_of)
    date = today or dt.datetime.now(dt.UTC).date().isoformat()
    planned = _gate(_plan(rows, root, existing, source, report), root, report)
    change = ChangeSet()
    corrections: list[dict[str, str]] = []
    for entry in planned:
        relative = _relative(root, entry.path)
        change.write(entry.path, dumps_result(entry.result))
        if entry.previous is None:
            report.added.append(relative)
            continue
        old_path, old_result = entry.previous
        if old_path.resolve() != entry.path.resolve():
            change.remove(old_path)
        report.changed.append((_relative(root, old_path), relative))
        corrections.append(
            {
                "result_id": old_result.id,
                "kind": "correction",
                "date": date,
                "reason": f"re-harvested from {source}: {entry.row.key}",
                "replaced_by": entry.result.id,
            }
        )
    corrections += _merge_same_runs(rows, root, existing, report, change, date)
    if corrections:
        change.write(root / CORRECTIONS_FILE, _corrections_text(root, corrections))
    if not dry_run:
        change.apply()
    return report


def _merge_same_runs(
    rows: Sequence[Harvested],
    root: Path,
    existing: dict[str, tuple[Path, Result]],
    report: HarvestReport,
    change: ChangeSet,
    date: str,
) -> list[dict[str, str]]:
    """Corrections of results harvested before from rows now filed as another row's run (whose
    result the gate let through), their files removed in `change`."""
    refused = {key for key, _reason in report.skipped}
    results = {
        row.key: row.result for row in rows if row.result is not None and row.key not in refused
    }
    corrections = []
    for row in rows:
        replacement = results.get(row.same_as) if row.same_as is not None else None
        if replacement is None or row.key not in existing:
            continue
        old_path, old_result = existing[row.key]
        if old_result.id == replacement.id:
            continue
        report.changed.append((_relative(root, old_path), result_path(replacement).as_posix()))
        change.remove(old_path)
        corrections.append(
            {
                "result_id": old_result.id,
                "kind": "correction",
                "date": date,
                "reason": f"{row.key}: {row.skipped}",
                "replaced_by": replacement.id,
            }
        )
    return corrections


def _relative(root: Path, path: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)
