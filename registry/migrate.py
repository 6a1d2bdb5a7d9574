"""`infermeter registry migrate`: rewrite result files of an older format in the current one.

An upgraded result has a new content id (the id covers `schema_version`), so inside a
registry's `registry/results/` its file moves to the path of the new content and the old file is
removed; a file elsewhere (a contributor's result) is rewritten where it is. Migrating is
idempotent: a registry that is current is left as it is. The immutability check
(`registry.checks.history`) accepts a merged file that was migrated this way.
"""

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from registry.checks.content import results_relative_parts
from registry.errors import InvalidFileError, Problem
from registry.migration import is_older_format, schema_version_of
from registry.store import (
    RESULTS_DIR,
    dumps_result,
    parse_json,
    parse_result,
    result_path,
    write_text_atomic,
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
        elif path.is_file():
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
            text = path.read_text(encoding="utf-8")
            data = parse_json(text, file)
            if not is_older_format(data):
                continue
            upgrade = upgraded_file(text, file)
        except InvalidFileError as error:
            problems.extend(error.problems)
            continue
        except (OSError, UnicodeDecodeError) as error:
            problems.append(Problem(file, "", f"cannot read: {error}"))
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
    migrated = []
    for old_path, new_path, from_version, new_text in plans:
        write_text_atomic(new_path, new_text)
        if new_path.resolve() != old_path.resolve():
            old_path.unlink()
        data = parse_json(new_text, str(new_path))
        migrated.append(Migrated(old_path, new_path, from_version, schema_version_of(data) or 0))
    return migrated
