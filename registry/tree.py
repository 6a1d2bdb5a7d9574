"""Which files of a folder are result files: one walk, shared by validate, index and the site.

`walk_results(folder)` never follows a symbolic link and never opens anything; it sorts every
entry into the `.json` regular files to read and the entries refused, each with its reason: a
symbolic link, a hidden file or folder, a folder named like a file (`dir.json/`), something
that is not a regular file (a FIFO named `x.json` would block whoever reads it), any other
file. `registry validate` reports the refused entries of the results tree as problems;
`registry index` and the site read exactly `files`, so the two always agree.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

KEPT_FILES = frozenset({".gitkeep", "README.md"})
"""Files other than results that may sit in the results tree."""

PARTIAL_FOLDER = "partial"
"""Where `bench fleet` keeps what each lost attempt had measured, under its results folder:
`partial/<entry id>.attempt-<n>.json`. Those are not results to submit (the entry's own file,
retried or not, is), so `registry validate FOLDER` skips them and says so."""

_ATTEMPT = re.compile(r"^.+\.attempt-[0-9]+\.json$")


def is_partial_attempt(path: Path) -> bool:
    """Whether `path` is a lost fleet attempt's points (`…/partial/<id>.attempt-<n>.json`)."""
    return path.parent.name == PARTIAL_FOLDER and bool(_ATTEMPT.match(path.name))


@dataclass
class Walk:
    """The `.json` regular files under a folder, and every other entry with why it is not one."""

    files: list[Path] = field(default_factory=list)
    refused: list[tuple[Path, str]] = field(default_factory=list)


def walk_results(folder: Path) -> Walk:
    """Sort the entries under `folder` (see the module docstring), in path order; a `folder`
    that is a symbolic link is refused whole (os.walk would follow it)."""
    walk = Walk()
    if folder.is_symlink():
        walk.refused.append((folder, "is a symbolic link; registry folders must be real"))
        return walk
    for directory, subfolders, names in os.walk(folder):
        here = Path(directory)
        kept = []
        for name in sorted(subfolders):
            path = here / name
            if path.is_symlink():
                walk.refused.append((path, "is a symbolic link; registry folders must be real"))
            elif name.startswith("."):
                walk.refused.append((path, "is a hidden folder; nothing hidden belongs here"))
            elif name.endswith(".json"):
                walk.refused.append((path, "is a folder named like a result file"))
            else:
                kept.append(name)
        subfolders[:] = kept
        for name in sorted(names):
            path = here / name
            reason = _file_problem(path, name)
            if reason is None:
                walk.files.append(path)
            elif name not in KEPT_FILES:
                walk.refused.append((path, reason))
    return walk


def kind_problem(path: Path) -> str | None:
    """Why `path` is no file the registry reads (a link, a FIFO, a socket, a device, or one it
    cannot look at), for a walk and for a file named on the command line alike; None if none."""
    try:
        mode = path.lstat().st_mode
    except OSError as error:
        return f"cannot read: {error.strerror}"
    if stat.S_ISLNK(mode):
        return "is a symbolic link; registry files must be regular files"
    if not stat.S_ISREG(mode):
        return "is not a regular file (a FIFO, socket or device)"
    return None


def _file_problem(path: Path, name: str) -> str | None:
    problem = kind_problem(path)
    if problem is not None:
        return problem
    if name.startswith("."):
        return "is a hidden file; nothing hidden belongs here"
    if not name.endswith(".json"):
        return "is not a .json result file"
    return None
