"""A server's output copied into its log file with every secret redacted on the way.

vLLM logs its own arguments (`non-default args: {'api_key': ['S']}`), and its libraries print
tokens and headers in their errors, so the child's stdout and stderr go to a pipe, not to the
file: a thread reads the pipe and writes what `registry.secrets.LogRedactor` lets out, line by
line, so no secret ever reaches the disk and a log of any size takes little memory.

`sync` makes everything the server has written so far readable in the file (the startup
figures are read from it as soon as the server answers); `close` waits a moment for the end
of the output (the server and its workers have exited by then), writes the rest and closes.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import select
import threading
from pathlib import Path
from typing import IO

from infermeter.registry.secrets import LogRedactor

_READ_BYTES = 65_536
_POLL_S = 0.2


class RedactedLog:
    """The log file at `path`, fed from a child's output pipe by `attach`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[bytes] = path.open("wb")
        self._redactor = LogRedactor()
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._lock = threading.Lock()
        self._pipe: IO[bytes] | None = None
        self._ended = False
        self._closing = threading.Event()
        self._thread: threading.Thread | None = None

    def attach(self, pipe: IO[bytes]) -> None:
        """Start copying `pipe` (the child's stdout, stderr joined to it) into the file."""
        self._pipe = pipe
        os.set_blocking(pipe.fileno(), False)
        self._thread = threading.Thread(target=self._copy, name="server-log", daemon=True)
        self._thread.start()

    def _copy(self) -> None:
        assert self._pipe is not None
        descriptor = self._pipe.fileno()
        while not self._ended and not self._closing.is_set():
            with contextlib.suppress(OSError, ValueError):
                select.select([descriptor], [], [], _POLL_S)
            self._drain(max_reads=16)  # then the lock is free for `sync`, however fast it logs

    def _drain(self, max_reads: int | None = None) -> None:
        """Copy what the pipe holds now (under the lock, so `sync` and the thread take turns)."""
        with self._lock:
            reads = 0
            while self._pipe is not None and not self._ended:
                if max_reads is not None and reads >= max_reads:
                    return
                reads += 1
                try:
                    data = os.read(self._pipe.fileno(), _READ_BYTES)
                except BlockingIOError:
                    return
                except (OSError, ValueError):
                    data = b""
                if not data:
                    self._ended = True
                    return
                self._write(self._decoder.decode(data))

    def _write(self, text: str) -> None:
        out = self._redactor.feed(text)
        if out and not self._file.closed:
            self._file.write(out.encode("utf-8"))
            self._file.flush()

    def sync(self) -> None:
        """Everything the child has written so far is in the file (its last, unfinished line
        excepted) when this returns."""
        self._drain()

    def close(self, wait_s: float = 2.0) -> None:
        """Copy the rest of the output (waiting up to `wait_s` for its end), then close."""
        if self._thread is not None:
            self._thread.join(wait_s)
        self._closing.set()
        if self._thread is not None:
            self._thread.join(_POLL_S * 5)
        self._drain()
        with self._lock:
            if not self._file.closed:
                rest = self._decoder.decode(b"", final=True)
                self._file.write((self._redactor.feed(rest) + self._redactor.finish()).encode())
                self._file.close()
            if self._pipe is not None:
                with contextlib.suppress(OSError):
                    self._pipe.close()
                self._pipe = None
