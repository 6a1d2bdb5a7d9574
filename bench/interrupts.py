"""Ctrl-C and SIGTERM during a run: the first stops the measuring, none stops the finishing.

`docker stop`, systemd, Kubernetes and CI runners stop a process with SIGTERM, a terminal with
SIGINT (Ctrl-C); both must leave the finished points written and a launched vLLM stopped.
`StopSignals` (a context manager, main thread only; elsewhere it does nothing) handles both the
same way while it is active:

- the first signal raises `KeyboardInterrupt` where the run is (`Terminated`, a subclass, for
  SIGTERM), so the run ends as a Ctrl-C ends it: incomplete, with what finished;
- every later signal, and any signal once `finishing()` was called, raises nothing: it is
  noted in `received`, and `on_repeat` runs (the session kills a launched server at once
  instead of waiting for its grace period), so the result is still written.

The previous handlers come back on exit.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType, TracebackType

INTERRUPTED = "interrupted"
TERMINATED = "terminated (SIGTERM)"
_HANDLED = (signal.SIGINT, signal.SIGTERM)


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: the run stops as a Ctrl-C stops it."""

    def __init__(self) -> None:
        super().__init__(TERMINATED)


def stop_reason(stop: KeyboardInterrupt) -> str:
    """The run's `stop_reason` for a Ctrl-C (`interrupted`) or a SIGTERM (`terminated …`)."""
    return TERMINATED if isinstance(stop, Terminated) else INTERRUPTED


class StopSignals:
    """SIGINT and SIGTERM as one Ctrl-C, then only noted (see the module docstring)."""

    def __init__(self) -> None:
        self.received: list[str] = []
        self.on_repeat: Callable[[], None] | None = None
        self._raised = False
        self._finishing = False
        self._previous: dict[signal.Signals, object] = {}

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for number in _HANDLED:
                self._previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)  # type: ignore[arg-type]
        self._previous.clear()

    def finishing(self) -> None:
        """From now on the work is writing what was measured: signals are noted, not raised."""
        self._finishing = True

    @property
    def stopped(self) -> bool:
        """Whether a signal has arrived."""
        return bool(self.received)

    def _handle(self, number: int, frame: FrameType | None) -> None:
        self.received.append(signal.Signals(number).name)
        if self._raised or self._finishing:
            if self.on_repeat is not None:
                self.on_repeat()
            return
        self._raised = True
        raise Terminated() if number == signal.SIGTERM else KeyboardInterrupt()
