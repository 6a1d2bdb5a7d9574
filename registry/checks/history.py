"""History: results across files (duplicates) and against a git base (immutability).

Two results with the same comparability key are replicates and welcome; with identical
measurements as well, one is a duplicate. A result merged at the base revision stays byte for
byte as it was, or is removed when `registry/corrections.yaml` withdraws it or corrects it with
a result that is in the registry (an entry never allows editing the file), or it was in an
older format and its upgrade (`registry.migration`, written by `infermeter
registry migrate`) now sits at the upgrade's own path; the corrections file itself only grows.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from infermeter.calculators.json_text import json_loads
from infermeter.registry.checks import Finding
from infermeter.registry.corrections import (
    CORRECTIONS_FILE,
    CorrectionEntry,
    append_only_problems,
    latest_entries,
    parse_corrections,
)
from infermeter.registry.errors import InvalidFileError, RegistryError
from infermeter.registry.git_command import GitCommandError, run_git
from infermeter.registry.migrate import upgraded_file
from infermeter.registry.models import Result, comparability_key
from infermeter.registry.store import RESULTS_DIR


class GitError(RegistryError):
    """git is missing, the folder is no git checkout, or a git command failed."""


class UnknownRevisionError(GitError):
    """The base revision names no commit of the repository."""


class _GitFailed(GitError):
    """A git command ran and exited with an error."""


@dataclass(frozen=True)
class Checked:
    """A result that parsed, the file it came from, and whether it was asked to be checked."""

    file: str
    location: Path
    result: Result
    reported: bool
    key: tuple[object, ...] | None = None
    """The result's measurements key, if already computed (see `measurements_key`)."""


def measurements_key(result: Result) -> tuple[object, ...]:
    """Comparability key and measurements: equal for two files that duplicate each other."""
    return _measurements_key(result)


def _measurements_key(result: Result) -> tuple[object, ...]:
    points = [point.model_dump(mode="json") for point in result.points]
    return (*comparability_key(result), json.dumps(points, sort_keys=True))


def duplicate_findings(results: Sequence[Checked]) -> list[Finding]:
    """One finding per reported result whose measurements another file repeats."""
    by_key: dict[tuple[object, ...], list[Checked]] = {}
    for checked in results:
        key = checked.key if checked.key is not None else _measurements_key(checked.result)
        by_key.setdefault(key, []).append(checked)
    findings = []
    for group in by_key.values():
        distinct = {checked.location.resolve(): checked for checked in group}
        if len(distinct) < 2:
            continue
        for checked in distinct.values():
            if not checked.reported:
                continue
            others = sorted(other.file for other in distinct.values() if other is not checked)
            message = (
                f"duplicates {', '.join(others)}: same comparability key and identical "
                "measurements (a replicate must be a separate run)"
            )
            findings.append(Finding(checked.file, "", message, "duplicates"))
    return findings


def _git(repository: Path, *arguments: str) -> bytes:
    try:
        return run_git(repository, arguments, needed_for="to compare with --base", timeout_s=120)
    except GitCommandError as error:
        raise (_GitFailed if error.failed else GitError)(str(error)) from None


def _toplevel(root: Path) -> Path:
    if not root.is_dir():
        raise GitError(f"{root}: no such folder")
    try:
        return Path(_git(root, "rev-parse", "--show-toplevel").decode().strip())
    except _GitFailed:
        raise GitError(f"{root} is not inside a git repository") from None


def _verify(toplevel: Path, base: str) -> str:
    if base.startswith("-"):
        raise UnknownRevisionError(f"--base: {base!r} is not a git revision")
    try:
        return (
            _git(toplevel, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}")
            .decode()
            .strip()
        )
    except _GitFailed:
        raise UnknownRevisionError(f"--base: unknown git revision {base!r} in {toplevel}") from None


def _base_corrections(toplevel: Path, commit: str, prefix: str) -> list[CorrectionEntry]:
    name = f"{prefix}{CORRECTIONS_FILE}"
    listed = _git(toplevel, "ls-tree", "--name-only", commit, "--", name).decode().strip()
    if not listed:
        return []
    text = _git(toplevel, "cat-file", "blob", f"{commit}:{name}").decode("utf-8", "replace")
    try:
        return parse_corrections(text, f"{name} at {commit[:12]}")
    except InvalidFileError:
        return []  # a base that was already broken constrains nothing


def _base_id(blob: bytes, name: str) -> str:
    try:
        data = json_loads(blob)
        if isinstance(data, dict) and isinstance(data.get("id"), str):
            return str(data["id"])
    except ValueError:
        pass
    return PurePosixPath(name).stem[-12:]


def _migrated(toplevel: Path, prefix: str, blob: bytes, name: str) -> bool:
    """Whether the base file was of an older format and its upgrade is in place, unchanged."""
    try:
        upgrade = upgraded_file(blob.decode("utf-8"), name)
    except (UnicodeDecodeError, InvalidFileError):
        return False
    if upgrade is None:
        return False
    relative, text = upgrade
    current = toplevel / f"{prefix}{relative.as_posix()}"
    if not current.is_file() or current.is_symlink():
        return False
    return current.read_bytes() == text.encode("utf-8")


def _current_result_ids(results: Path) -> set[str]:
    """Content ids of the result files in the working tree (from their names)."""
    if not results.is_dir():
        return set()
    return {path.stem[-12:] for path in results.rglob("*.json")}


def _edit_problem(
    entry: CorrectionEntry | None, result_id: str, deleted: bool, current_ids: set[str]
) -> str | None:
    """Why a merged result may not have been changed (or deleted) this way; None if it may.

    A corrections entry allows exactly what it says: a withdrawal lets the file stay as it was
    merged (shown as withdrawn) or be removed; a correction lets it stay or be removed when the
    result that replaces it is in the registry. No entry allows editing a merged file: its
    content is its id, and a corrected result is a new file with its own.
    """
    if entry is None:
        return (
            "but merged results are immutable: append a correction or withdrawal of "
            f"{result_id} to {CORRECTIONS_FILE} instead"
        )
    if not deleted:
        return (
            f"but its {entry.kind} in {CORRECTIONS_FILE} allows only keeping the file as "
            "merged or removing it: the corrected figures go in a new result file"
        )
    if entry.kind == "correction" and entry.replaced_by not in current_ids:
        return (
            f"but its correction in {CORRECTIONS_FILE} names {entry.replaced_by} as the "
            f"replacement, and no result file in {RESULTS_DIR}/ has that id"
        )
    return None


def immutability_findings(
    registry_root: Path, base: str, corrections: list[CorrectionEntry]
) -> list[Finding]:
    """Merged results changed or deleted since `base` without a corrections entry, and edits
    to entries of the corrections file that `base` already had.

    Raises GitError when git is missing or `registry_root` is no checkout, and
    UnknownRevisionError when `base` names no commit.
    """
    toplevel = _toplevel(registry_root)
    commit = _verify(toplevel, base)
    relative_root = registry_root.resolve().relative_to(toplevel.resolve()).as_posix()
    prefix = "" if relative_root == "." else f"{relative_root}/"
    results_prefix = f"{prefix}{RESULTS_DIR}/"
    listing = _git(toplevel, "ls-tree", "-r", "-z", "--name-only", commit, "--", results_prefix)
    entries = latest_entries(corrections)
    current_ids = _current_result_ids(toplevel / results_prefix)
    findings = []
    for name in sorted(part for part in listing.decode("utf-8", "replace").split("\0") if part):
        if not name.endswith(".json"):
            continue
        blob = _git(toplevel, "cat-file", "blob", f"{commit}:{name}")
        current = toplevel / name
        if current.is_file() and not current.is_symlink() and current.read_bytes() == blob:
            continue
        result_id = _base_id(blob, name)
        if _migrated(toplevel, prefix, blob, name):
            continue
        deleted = not current.exists()
        entry = entries.get(result_id)
        message = _edit_problem(entry, result_id, deleted, current_ids)
        if message is None:
            continue
        what = "deleted" if deleted else "changed"
        findings.append(Finding(name, "", f"{what} since {base}, {message}", "immutability"))
    corrections_name = f"{prefix}{CORRECTIONS_FILE}"
    base_entries = _base_corrections(toplevel, commit, prefix)
    for problem in append_only_problems(base_entries, corrections, corrections_name):
        findings.append(Finding(problem.file, problem.path, problem.message, "immutability"))
    return findings
