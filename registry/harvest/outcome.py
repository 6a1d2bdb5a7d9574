"""Writing harvested results into a registry, and the report of what that did.

A harvested row is a result with its *source key* (what the row is in its source: an MLPerf
result ID, benchmark and scenario; a table cell), or a row skipped with its reason. Applying a
harvest:

- a result whose file is already there, byte for byte, is `unchanged`;
- a result whose source key names a result already in the registry with other content is
  `changed`: the new file is written, the old one removed, and a correction (old id → new id)
  is appended to `registry/corrections.yaml`, because merged results are never edited;
- anything else is `added`.

Running the same harvest twice changes nothing the second time.
"""

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from registry.corrections import CORRECTIONS_FILE, parse_corrections
from registry.errors import InvalidFileError
from registry.harvest.errors import HarvestError
from registry.models import Result
from registry.store import RESULTS_DIR, dumps_result, read_result, result_path, write_text_atomic


@dataclass(frozen=True)
class Harvested:
    """One row of a source: its key, and the result made of it or why it was skipped."""

    key: str
    result: Result | None = None
    skipped: str | None = None

    def __post_init__(self) -> None:
        if (self.result is None) == (self.skipped is None):
            raise ValueError("a harvested row has either a result or a reason to skip it")


@dataclass
class HarvestReport:
    """What applying a harvest did (or, dry, would do), path by path."""

    added: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    changed: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"{len(self.added)} added, {len(self.changed)} changed, "
            f"{len(self.unchanged)} unchanged, {len(self.skipped)} skipped"
        )

    def lines(self) -> list[str]:
        """One line per file or skipped row, then the summary."""
        lines = [f"added {path}" for path in self.added]
        lines += [f"changed {old} → {new}" for old, new in self.changed]
        lines += [f"skipped {key}: {reason}" for key, reason in self.skipped]
        return [*lines, self.summary()]

    def as_json(self) -> dict[str, object]:
        return {
            "added": self.added,
            "changed": [{"old": old, "new": new} for old, new in self.changed],
            "unchanged": len(self.unchanged),
            "skipped": [{"row": key, "reason": reason} for key, reason in self.skipped],
        }


def _existing(root: Path, key_of: Callable[[Result], str | None]) -> dict[str, tuple[Path, Result]]:
    found: dict[str, tuple[Path, Result]] = {}
    folder = root / RESULTS_DIR
    for path in sorted(folder.rglob("*.json")) if folder.is_dir() else []:
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


def _append_corrections(root: Path, entries: list[dict[str, str]]) -> None:
    path = root / CORRECTIONS_FILE
    text = (
        path.read_text(encoding="utf-8") if path.exists() else "schema_version: 1\ncorrections:\n"
    )
    if text.rstrip().endswith("corrections: []"):
        text = text.rstrip()[: -len("[]")].rstrip() + "\n"
    lines = "".join(
        "  - " + yaml.safe_dump(entry, default_flow_style=True, sort_keys=False, width=10_000)
        for entry in entries
    )
    new_text = text + lines
    parse_corrections(new_text, CORRECTIONS_FILE)  # never write a corrections file that fails
    write_text_atomic(path, new_text)


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

    `key_of` gives the source key of a result already in the registry (None: not from this
    source). Raises HarvestError when two rows share a key or a result.
    """
    report = HarvestReport()
    existing = _existing(root, key_of)
    seen: dict[str, str] = {}
    corrections: list[dict[str, str]] = []
    date = today or dt.datetime.now(dt.UTC).date().isoformat()
    for row in rows:
        if row.key in seen:
            raise HarvestError(f"{source}: two rows have the same source key {row.key!r}")
        seen[row.key] = row.key
        if row.result is None:
            report.skipped.append((row.key, str(row.skipped)))
            continue
        relative = result_path(row.result)
        path = root / relative
        text = dumps_result(row.result)
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            report.unchanged.append(relative.as_posix())
            continue
        previous = existing.get(row.key)
        if dry_run:
            if previous is None:
                report.added.append(relative.as_posix())
            else:
                report.changed.append((_relative(root, previous[0]), relative.as_posix()))
            continue
        write_text_atomic(path, text)
        if previous is None:
            report.added.append(relative.as_posix())
            continue
        old_path, old_result = previous
        if old_path.resolve() != path.resolve():
            old_path.unlink()
        report.changed.append((_relative(root, old_path), relative.as_posix()))
        corrections.append(
            {
                "result_id": old_result.id,
                "kind": "correction",
                "date": date,
                "reason": f"re-harvested from {source}: {row.key}",
                "replaced_by": row.result.id,
            }
        )
    if corrections:
        _append_corrections(root, corrections)
    return report


def _relative(root: Path, path: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)
