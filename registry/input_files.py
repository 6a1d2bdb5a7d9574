"""Reading an input file safely: only a regular file, at most its kind's size, UTF-8 text.

Every file infermeter reads that a user names (a plan, a benchmark file to import, a harvest's
source page or table, a model's config.json) is read by `read_input_text`: a FIFO, a device
(/dev/zero, /dev/urandom) or a folder is refused at once (opened without blocking, then
checked), a file above the limit of its kind is refused before it is read (and one that grows
while read is cut at the limit and refused), and text that is not UTF-8 is named by its byte.
Each refusal is one `InputFileError` line naming the file, what it is, and the limit.
"""

import os
import stat
from pathlib import Path

from infermeter.calculators.limits import MAX_CONFIG_BYTES
from infermeter.registry.errors import RegistryError

MIB = 1024 * 1024

LIMITS_BYTES = {
    "result file": MIB,
    "plan": MIB // 4,
    "benchmark file": 256 * MIB,
    "source page": 4 * MIB,
    "source table": 256 * MIB,
    "model config": MAX_CONFIG_BYTES,  # a config pasted into a page too
    "dataset": 1024 * MIB,
    "prediction": MIB,
    "corrections file": 64 * MIB,
    "registry file": 64 * MIB,
}
"""The largest file of each kind read (a plan of 200 runs is about 20 kB; vLLM's
`--save-result` with every request's figures for 100,000 requests is about 60 MB; `calc perf
--json` writes about 2 kB)."""


SOURCE_KINDS = frozenset({"source page", "source table"})
"""The kinds read as a source published them: a byte order mark before the text (a file saved
by Excel or Notepad) is no part of it (`source_text`)."""


def source_text(text: str, kind: str) -> str:
    """`text` of a `kind` of file as its reader takes it: a source's without a leading byte
    order mark (its first line, a provenance header, is then read as the same line)."""
    return text.removeprefix("\ufeff") if kind in SOURCE_KINDS else text


NO_SUCH_FILE = "No such file or directory"
"""The reason of an `InputFileError` for a file that is not there."""


class InputFileError(RegistryError):
    """An input file is not a regular file, too large, or not UTF-8 text: `PATH: reason`."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


def _describe(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _size(limit: int) -> str:
    return f"{limit / MIB:g} MiB"


def read_input_bytes(path: Path, kind: str) -> bytes:
    """The bytes of the regular file at `path`, a `kind` of `LIMITS_BYTES`; InputFileError
    (one line) for anything else."""
    limit = LIMITS_BYTES[kind]
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputFileError(path, NO_SUCH_FILE) from None
    except OSError as error:
        raise InputFileError(path, f"cannot read: {error.strerror or error}") from None
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):  # checked before fdopen, which refuses a folder by its number
        os.close(descriptor)
        raise InputFileError(path, f"is {_describe(mode)}; a {kind} must be a regular file")
    with os.fdopen(descriptor, "rb") as stream:
        size = os.fstat(descriptor).st_size
        if size > limit:
            raise InputFileError(
                path, f"{size / MIB:.1f} MiB is above the limit of {_size(limit)} for a {kind}"
            )
        try:
            data = stream.read(limit + 1)
        except OSError as error:
            raise InputFileError(path, f"cannot read: {error.strerror or error}") from None
    if len(data) > limit:
        raise InputFileError(path, f"grew above the limit of {_size(limit)} for a {kind}")
    return data


def read_input_text(path: Path, kind: str) -> str:
    """The UTF-8 text of the regular file at `path` (see `read_input_bytes`)."""
    data = read_input_bytes(path, kind)
    try:
        return source_text(data.decode("utf-8"), kind)
    except UnicodeDecodeError as error:
        raise InputFileError(
            path, f"not UTF-8 text (byte {error.start}); a {kind} is UTF-8"
        ) from None


def check_regular_file(path: Path, kind: str) -> None:
    """Refuse (InputFileError) a `path` that exists but is no regular file (a FIFO, a device,
    a folder), without opening it: for a file handed to another program."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise InputFileError(path, "No such file or directory") from None
    except OSError as error:
        raise InputFileError(path, f"cannot read: {error.strerror or error}") from None
    if not stat.S_ISREG(mode):
        raise InputFileError(path, f"is {_describe(mode)}; a {kind} must be a regular file")
