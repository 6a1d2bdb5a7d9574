"""A change to a registry checkout made as one step: every file written or removed, or none.

A harvest writes many result files, removes the ones they replace and appends to
`registry/corrections.yaml`; stopped half-way (a full disk, a bad row found late, Ctrl-C) it
would leave a registry that fails validation. `ChangeSet` collects the writes and removals
first; `apply` then stages every new text in a temporary file beside its target (nothing of
the registry is touched yet: a failure here removes the temporaries and the registry is byte
for byte as it was), and only then renames them into place, keeping each file it replaces or
removes until the end, so that a failure among the renames puts every file back.
"""

import os
from dataclasses import dataclass, field
from pathlib import Path

from infermeter.registry.errors import UnwritableError
from infermeter.registry.store import (
    display_path,
    missing_folders,
    remove_empty,
    stage_text,
    temporary_beside,
)


@dataclass
class ChangeSet:
    """Files to write (path → text) and to remove, applied together by `apply`."""

    writes: dict[Path, str] = field(default_factory=dict)
    removals: list[Path] = field(default_factory=list)

    def write(self, path: Path, text: str) -> None:
        self.writes[path] = text

    def remove(self, path: Path) -> None:
        self.removals.append(path)

    def apply(self) -> None:
        """Make every change or, on any failure (which is raised), none: no file, temporary or
        folder of it is left. UnwritableError names a target that is a folder (the registry's
        walk refuses one named like a file) and one whose text cannot be written (a full disk)."""
        for path in self.writes:
            if path.is_dir() and not path.is_symlink():
                raise UnwritableError(display_path(path), "it is a folder; a file goes there")
        made = missing_folders(self.writes)
        try:
            _swap(_staged(self.writes), self.removals)
        except BaseException:
            remove_empty(made)
            raise


def _staged(writes: dict[Path, str]) -> dict[Path, str]:
    """Each text staged in a temporary beside its path (`stage_text`), or none of them."""
    staged: dict[Path, str] = {}
    try:
        for path, text in writes.items():
            staged[path] = stage_text(path, text)
    except BaseException as error:
        for temporary in staged.values():
            Path(temporary).unlink(missing_ok=True)
        if isinstance(error, OSError):  # a write's own error names no file
            raise UnwritableError(display_path(path), error.strerror or str(error)) from None
        raise
    return staged


def _set_aside(path: Path) -> str | None:
    """Move an existing file out of the way (renamed to a temporary beside it), None if absent."""
    if not path.exists():
        return None
    descriptor, kept = temporary_beside(path)
    os.close(descriptor)
    try:
        os.replace(path, kept)
    except BaseException:
        Path(kept).unlink(missing_ok=True)  # nothing of this change is left behind
        raise
    return kept


def _swap(staged: dict[Path, str], removals: list[Path]) -> None:
    done: list[tuple[Path, str | None]] = []  # (target, what it held before, set aside)
    try:
        for path, temporary in staged.items():
            done.append((path, _set_aside(path)))
            os.replace(temporary, path)
        for path in removals:
            if path not in staged:
                done.append((path, _set_aside(path)))
    except BaseException:
        for path, kept in reversed(done):
            if kept is not None:
                os.replace(kept, path)
            elif path in staged:
                path.unlink(missing_ok=True)
        for temporary in staged.values():
            Path(temporary).unlink(missing_ok=True)
        raise
    for _, kept in done:
        if kept is not None:
            Path(kept).unlink(missing_ok=True)
