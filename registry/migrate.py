"""`infermeter registry migrate`: rewrite result files of an older format in the current one.

An upgraded result has a new content id (the id covers `schema_version`), so inside a
registry's `registry/results/` its file moves to the path of the new content and the old file is
removed; a file elsewhere (a contributor's result) is rewritten where it is. Migrating is
idempotent: a registry that is current is left as it is. The immutability check
(`registry.checks.history`) accepts a merged file that was migrated this way.
"""

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from infermeter.registry.changeset import ChangeSet
from infermeter.registry.checks.content import results_relative_parts
from infermeter.registry.errors import InvalidFileError, Problem
from infermeter.registry.input_files import InputFileError, read_input_text
from infermeter.registry.migration import is_older_format, schema_version_of
from infermeter.registry.store import (
    RESULTS_DIR,
    dumps_result,
    parse_json,
    parse_result,
    result_path,
)


@dataclass(frozen=True)
class Migrated:
    """One file rewritten: where it was, where it is now, and the versions."""

    old_path: Path
    new_path: Path
    from_version: int
    to_version: int


def upgraded_file(text: str, file: str) -> tuple[PurePosixPath, str] | None:
    """For the text of an older-format result: its upgrade's path below the repository root and
    canonical text; None when the text is of the current format (or no result at all).

    Raises InvalidFileError when the text is an older-format result that cannot be upgraded.
    """
    try:
        data = parse_json(text, file)
    except InvalidFileError:
        return None
    if not is_older_format(data):
        return None
    result = parse_result(text, file)
    return result_path(result), dumps_result(result)


def _result_files(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*.json") if not p.is_symlink()))
        elif path.exists():  # a FIFO or a device too: reading it says what it is
            files.append(path)
        else:
            raise InvalidFileError([Problem(str(path), "", "no such file or folder")])
    return files


def _plans(paths: list[Path], registry_root: Path) -> list[tuple[Path, Path, int, str]]:
    targets = paths or [registry_root / RESULTS_DIR]
    plans: list[tuple[Path, Path, int, str]] = []
    problems: list[Problem] = []
    for path in _result_files(targets):
        file = str(path)
        try:
            text = read_input_text(path, "result file")
            data = parse_json(text, file)
            if not is_older_format(data):
                continue
            upgrade = upgraded_file(text, file)
        except InvalidFileError as error:
            problems.extend(error.problems)
            continue
        except InputFileError as error:
            problems.append(Problem(file, "", error.reason))
            continue
        if upgrade is None:
            continue
        relative, new_text = upgrade
        below_results = results_relative_parts(path.absolute().parts)
        if below_results is None:
            new_path = path
        else:
            results_root = Path(*path.absolute().parts[: -len(below_results)])
            new_path = results_root.joinpath(*relative.relative_to(RESULTS_DIR).parts)
        plans.append((path, new_path, schema_version_of(data) or 0, new_text))
    if problems:
        raise InvalidFileError(problems)
    return plans


def pending_migrations(paths: list[Path], registry_root: Path) -> list[Path]:
    """The files among `paths` (default the registry's results) of an older format."""
    return [old_path for old_path, _, _, _ in _plans(paths, registry_root)]


def migrate_paths(paths: list[Path], registry_root: Path) -> list[Migrated]:
    """Upgrade every older-format result among `paths` (files or folders, default the
    registry's results); returns what was rewritten. Files of the current format are left alone.

    Every file is upgraded in memory first; if any cannot be, InvalidFileError lists them all
    and nothing is written.
    """
    plans = _plans(paths, registry_root)
    _gate(plans, registry_root)
    migrated = []
    change = ChangeSet()
    for old_path, new_path, from_version, new_text in plans:
        change.write(new_path, new_text)
        if new_path.resolve() != old_path.resolve():
            change.remove(old_path)
        data = parse_json(new_text, str(new_path))
        migrated.append(Migrated(old_path, new_path, from_version, schema_version_of(data) or 0))
    change.apply()  # every file, or (on any failure) none
    return migrated


def _gate(plans: list[tuple[Path, Path, int, str]], registry_root: Path) -> None:
    """Raise InvalidFileError, writing nothing, when `registry validate` would reject an
    upgraded file (judged in memory, as the registry would hold them all)."""
    from infermeter.registry.validate import check_results

    results = [(new, parse_result(text, str(new))) for _, new, _, text in plans]
    removed = [old for old, new, _, _ in plans if old.resolve() != new.resolve()]
    findings = check_results(results, registry_root, removed)
    problems = [
        Problem(str(path), finding.path, f"after the upgrade: {finding.message}")
        for path, found in findings.items()
        for finding in found
    ]
    if problems:
        raise InvalidFileError(problems)
