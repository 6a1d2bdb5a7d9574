"""Where result files live and how they are written: canonical JSON, content ids, atomic writes.

A result file is `registry/results/<gpu>/<model>/<date>-<id>.json`. Its text is canonical, so
writing the same result twice gives the same bytes and a pull request diff shows only what
changed: keys sorted, indent 2, UTF-8, a trailing newline, null fields left out. The id is the
start of the SHA-256 of that canonical content without the id itself.
"""

import contextlib
import datetime as dt
import errno
import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from infermeter.registry.errors import (
    ContentIdError,
    InvalidFileError,
    Problem,
    UnwritableError,
    shown,
)
from infermeter.registry.input_files import NO_SUCH_FILE, InputFileError, read_input_bytes
from infermeter.registry.migration import is_older_format, upgrade_result_data
from infermeter.registry.models import MeasuredSource, Result

RESULTS_DIR = PurePosixPath("registry/results")
"""Where result files live, relative to the repository root."""

CONTENT_ID_LENGTH = 12


def display_path(path: Path) -> str:
    """The path as messages show it: relative to the current folder when inside it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError, RuntimeError):
        # outside the current folder, that folder is gone, or a link loop (RuntimeError)
        return str(path)


def read_text(path: Path, file: str | None = None) -> str:
    """The UTF-8 text of a registry file; InvalidFileError names the file (`file`, else its
    display path) and says in one line why it cannot be read."""
    file = display_path(path) if file is None else file
    try:  # as an input file is read: a FIFO in a catalog's place is refused, not waited on
        data = read_input_bytes(path, "registry file")
    except InputFileError as error:
        missing = error.reason == NO_SUCH_FILE
        reason = "no such file" if missing else error.reason
        raise InvalidFileError([Problem(file, "", reason)]) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        message = f"not UTF-8 text (byte {error.start})"
        raise InvalidFileError([Problem(file, "", message)]) from None


def canonical_json(data: Any) -> str:
    """Deterministic JSON text: sorted keys, indent 2, UTF-8 characters kept, trailing newline."""
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def result_data(result: Result) -> dict[str, Any]:
    """The result as JSON data, null fields left out (a missing figure is simply absent)."""
    return result.model_dump(mode="json", exclude_none=True)


def dumps_result(result: Result) -> str:
    """The canonical text of a result file."""
    return canonical_json(result_data(result))


def content_id(result: Result) -> str:
    """The id minted from the result's content: everything but the id itself."""
    data = result_data(result)
    del data["id"]
    compact = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(compact.encode("utf-8")).hexdigest()[:CONTENT_ID_LENGTH]


def with_content_id(result: Result) -> Result:
    """The same result with its `id` set to the id minted from its content."""
    return result.model_copy(update={"id": content_id(result)})


def result_date(result: Result) -> str:
    """The date in the file name: when a run started (UTC), or when a report was read.

    A report's `retrieved` date is used rather than `published` because every report has it,
    to the day, which keeps file names uniform.
    """
    source = result.source
    if isinstance(source, MeasuredSource):
        return source.started_at.astimezone(dt.UTC).date().isoformat()
    return source.retrieved


def result_path(result: Result) -> PurePosixPath:
    """`registry/results/<gpu>/<model>/<date>-<id>.json`, relative to the repository root."""
    identity = result.identity
    file_name = f"{result_date(result)}-{result.id}.json"
    return RESULTS_DIR / identity.gpu.id / identity.model.id / file_name


_TEMPORARY = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]{1,10})-[A-Za-z0-9_]+\.tmp")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return pid < 2**31  # another user's process (or a number no process has)
    return True


def remove_stale_temporaries(folder: Path) -> None:
    """Remove the temporary files of our writes into `folder` whose process is gone (a write
    killed outright, SIGKILL or an OOM kill, leaves its `.NAME.PID-XXXX.tmp`); another live
    process's are kept, as is anything not named so."""
    try:
        names = [entry.name for entry in os.scandir(folder) if entry.name.endswith(".tmp")]
    except OSError:
        return
    for name in names:
        match = _TEMPORARY.fullmatch(name)
        if match is not None and not _alive(int(match.group("pid"))):
            (folder / name).unlink(missing_ok=True)


def _make_folder(folder: Path) -> None:
    """`folder` and the folders above it, as needed; a file in the way is NotADirectoryError
    (mkdir says 'File exists', which reads as though the folder were there)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(folder)) from None


def temporary_beside(path: Path) -> tuple[int, str]:
    """A new temporary file in `path`'s folder, named after `path` and this process (an open
    descriptor and its name): renamed onto `path` once whole. Stale ones of dead writers in
    the folder are removed first (`remove_stale_temporaries`)."""
    _make_folder(path.parent)
    remove_stale_temporaries(path.parent)
    return tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}-", suffix=".tmp", dir=path.parent)


def stage_text(path: Path, text: str) -> str:
    """Write `text` whole (flushed to disk, with `path`'s permissions) to a new temporary file
    beside `path` and return its name, to be renamed onto `path`; on failure none is left."""
    descriptor, temporary_name = temporary_beside(path)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="\n") as temporary:
            temporary.write(text)
            temporary.flush()
            os.fsync(temporary.fileno())
        # mkstemp creates the file private; a registry file is as readable as any other.
        os.chmod(temporary_name, _kept_mode(path))
    except BaseException:
        Path(temporary_name).unlink(missing_ok=True)
        raise
    return temporary_name


def missing_folders(paths: Iterable[Path]) -> list[Path]:
    """The folders that writing files at `paths` makes (none of them there yet), deepest first:
    what a write that fails removes again, so nothing of it is left."""
    missing: set[Path] = set()
    for path in paths:
        folder = path.parent
        while not folder.exists():
            missing.add(folder)
            folder = folder.parent
    return sorted(missing, key=lambda folder: len(folder.parts), reverse=True)


def remove_empty(folders: Iterable[Path]) -> None:
    """Remove each of `folders` (deepest first) that is empty; one that is not stays."""
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()


def _kept_mode(path: Path) -> int:
    """The permissions a file written at `path` gets: those of the regular file it replaces,
    else 0o644 (a link replaced does not lend its target's: /dev/null's 0o666 would make a
    world-writable catalog)."""
    try:
        mode = path.lstat().st_mode
    except OSError:
        return 0o644
    return stat.S_IMODE(mode) if stat.S_ISREG(mode) else 0o644


def _is_special_file(path: Path) -> bool:
    """Whether `path` (its links followed) is a device, FIFO or socket: /dev/stdout, /dev/null,
    a shell's process substitution. Such a file is written to, never renamed onto: a rename
    would put a plain file in its place (as root) or fail in its folder (/dev)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def beside(output: Path, suffix: str) -> Path:
    """Where a file that goes with the output the user named is kept (`<stem>.partial.json`, …):
    in the output's folder, or in the current folder where the output is a device, FIFO or
    socket (`_is_special_file`: no file is made in /dev beside /dev/null or /dev/stdout)."""
    name = output.stem + suffix
    return Path(name) if _is_special_file(output) else output.with_name(name)


def _renamed_onto(path: Path) -> Path:
    """The file a write's rename replaces: the one a symbolic link names, not the link."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def write_text_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file and a rename: never half-written.
    Whatever is at `path` (a symbolic link too) is replaced: a tree's own files (results, an
    index, the schemas) are written so, and a link planted in a checkout leads no write
    elsewhere. A file the user named is written by `write_output`."""
    temporary_name = stage_text(path, text)
    try:
        os.replace(temporary_name, path)
    except BaseException:
        Path(temporary_name).unlink(missing_ok=True)
        raise


def write_output(path: Path, text: str) -> None:
    """Write `text` to a file the user named (`--output`, `--html`) as the shell's `>` finds
    it: a device, FIFO or socket (`_is_special_file`: /dev/stdout, /dev/null, a process
    substitution) is written to directly, and fails as its writes fail (/dev/full: no space
    left); a symbolic link is followed to the file it names, which `write_text_atomic` then
    replaces."""
    if _is_special_file(path):
        with path.open("w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
        return
    write_text_atomic(_renamed_onto(path), text)


def check_writable(path: Path, *, folder: bool = False) -> None:
    """Raise `UnwritableError` unless a file can be written at `path` (with `folder`, inside
    the folder `path`) the way `write_output` (a folder: `write_text_atomic`) writes: checked
    before a long run or build, not discovered after it. Creates the missing folders, as the
    write would."""
    try:
        if not folder and path.is_dir():
            raise UnwritableError(display_path(path), "it is a folder; name a file")
        if not folder and _is_special_file(path):
            if not os.access(path, os.W_OK):
                raise UnwritableError(display_path(path), "permission denied")
            return
        target = path if folder else _renamed_onto(path).parent
        _make_folder(target)
        descriptor, probe = tempfile.mkstemp(prefix=".infermeter-probe.", dir=target)
    except OSError as error:  # a name too long is one too (from is_dir)
        raise UnwritableError(display_path(path), error.strerror or type(error).__name__) from None
    os.close(descriptor)
    os.unlink(probe)


def write_result(result: Result, root: Path) -> Path:
    """Write `result` at its place under the repository `root`; returns the file's path.

    Raises ContentIdError when `result.id` is not its content id (see `with_content_id`).
    """
    expected_id = content_id(result)
    if result.id != expected_id:
        raise ContentIdError(f"result id {result.id} is not its content id {expected_id}")
    path = root / result_path(result)
    write_text_atomic(path, dumps_result(result))
    return path


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's pairs as a dict (`json.loads`' `object_pairs_hook`); ValueError for a
    key given twice, which `json` would otherwise settle silently by keeping the last value."""
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise ValueError(f"duplicate key {shown(key)}")
        data[key] = value
    return data


MAX_DEPTH = 32
"""Deepest nesting of arrays and objects accepted; a result needs about 6."""
TOO_DEEP = f"JSON nested deeper than {MAX_DEPTH} levels"


def nesting_depth_exceeds(data: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether arrays and objects nest deeper than `limit` (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth >= limit:
                return True
            children = value.values() if isinstance(value, dict) else value
            stack.extend((child, depth + 1) for child in children)
    return False


def parse_json(text: str, file: str) -> Any:
    """Parse strict JSON (no NaN/Infinity, no duplicate keys); errors name the file and line.
    JSON nested deeper than Python's parser goes (about 1,000 levels) is an invalid file too,
    not a RecursionError for each caller to catch."""
    try:
        return json.loads(
            text, parse_constant=_reject_constant, object_pairs_hook=reject_duplicate_keys
        )
    except RecursionError:
        raise InvalidFileError([Problem(file, "", TOO_DEEP)]) from None
    except json.JSONDecodeError as error:
        message = f"invalid JSON at line {error.lineno} column {error.colno}: {error.msg}"
        raise InvalidFileError([Problem(file, "", message)]) from None
    except ValueError as error:
        raise InvalidFileError([Problem(file, "", f"invalid JSON: {error}")]) from None


def parse_result(text: str, file: str) -> Result:
    """Validate the text of a result file; InvalidFileError lists every problem found.

    A file in an older format is read as its upgrade to the current one (`registry.migration`),
    with the content id of the upgraded content.
    """
    return parse_result_data(parse_json(text, file), file)


def parse_result_data(data: Any, file: str) -> Result:
    """`parse_result` of a file's already-parsed JSON data (the index checks it against the
    schema first and parses the text once)."""
    older = is_older_format(data)
    if older and nesting_depth_exceeds(data):  # the upgrade copies the data by recursion
        raise InvalidFileError([Problem(file, "", TOO_DEEP)])
    data = upgrade_result_data(data, file)
    try:
        result = Result.model_validate(data)
    except ValidationError as error:
        raise InvalidFileError.from_validation_error(file, error, data) from None
    return with_content_id(result) if older else result


def read_result(path: Path) -> Result:
    """Read a result file back into the model; InvalidFileError names the file and each field."""
    file = display_path(path)
    return parse_result(read_text(path, file), file)
