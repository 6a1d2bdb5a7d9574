"""The result so far of a running `bench run`, on disk after each finished load point.

A `bench run` stopped by SIGTERM or Ctrl-C writes its finished points itself, marked incomplete;
one killed outright (SIGKILL, an out-of-memory kill) cannot. So after every finished point the
result so far, marked incomplete (`bench.session.session`'s checkpoint), is written atomically to
`<stem>.partial.json` beside the output, and removed once the run has written what it could:
after a kill it is what the run had measured, a valid result file.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from infermeter.registry.models import Result
from infermeter.registry.store import beside, dumps_result, write_text_atomic


class PartialResult:
    """`<stem>.partial.json` beside `output`: `write` after each point, `remove` at the end."""

    def __init__(self, output: Path) -> None:
        self.path = beside(output, ".partial.json")

    def write(self, result: Result) -> None:
        """The result so far (never half-written); a failed write leaves the last one."""
        with contextlib.suppress(OSError):
            write_text_atomic(self.path, dumps_result(result))

    def remove(self) -> None:
        """Gone: the run wrote its result (or its rejected copy) itself."""
        self.path.unlink(missing_ok=True)
