"""Ctrl-C and SIGTERM during a run: the first stops the measuring, none stops the finishing.

`docker stop`, systemd, Kubernetes and CI runners stop a process with SIGTERM, a terminal with
SIGINT (Ctrl-C); both must leave the finished points written and a launched vLLM stopped.
`StopSignals` (a context manager, main thread only; elsewhere it does nothing) handles both the
same way while it is active:

- the first signal raises `KeyboardInterrupt` where the run is (`Terminated`, a subclass, for
  SIGTERM), so the run ends as a Ctrl-C ends it: incomplete, with what finished; while the
  run's event loop runs (`event_loop`), from a callback of that loop, never inside a task's
  step;
- every later signal, and any signal once `finishing()` was called, raises nothing: it is
  noted in `received`, and `on_repeat` runs (the session kills a launched server at once
  instead of waiting for its grace period), so the result is still written.

The previous handlers come back on exit, except in the `infermeter` command's own process
(`process_ends_after_command`, which `bench.cli.console` calls): once a signal stopped the run,
that process is ending, and later signals are ignored until it exits (its result written,
exit status 1 with the "incomplete" line), never its death by a signal (−2, −15). A process
that lives on (a Ray worker, a test) gets its handlers back.

Only the main thread receives signals. A run in another thread (`bench fleet` runs each
`bench run` in a thread of its Ray worker, whose main thread streams the points back) is
registered while its `StopSignals` is active, and the main thread passes each SIGINT or
SIGTERM on with `pass_on`: the run then stops exactly as it would in the main thread. The
first signal raises `KeyboardInterrupt` (`Terminated`) in the run's thread: from a callback
of its event loop while one runs (`event_loop`, which `bench.client.client.run_event_loop` enters;
the loop re-raises it, as it does a signal handler's), else through CPython's
`PyThreadState_SetAsyncExc` (raised at the thread's next bytecode, as the main thread raises
a signal handler's). Later ones, and any once it is finishing, are noted and hurry it
(`on_repeat`).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType, TracebackType

INTERRUPTED = "interrupted"
TERMINATED = "terminated (SIGTERM)"
_HANDLED = (signal.SIGINT, signal.SIGTERM)
_RUNS: dict[int, StopSignals] = {}  # thread id → the active StopSignals of a run in that thread
_LOOPS: dict[int, asyncio.AbstractEventLoop] = {}  # thread id → the event loop it runs now
_LOCK = threading.Lock()


_PROCESS = {"ends": False}


def process_ends_after_command() -> None:
    """This process ends when its command does (the `infermeter` console script): a run that
    a signal stopped leaves later signals ignored (see the module docstring)."""
    _PROCESS["ends"] = True


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
        self._thread: int | None = None

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for number in _HANDLED:
                self._previous[number] = signal.signal(number, self._handle)
        else:
            self._thread = threading.get_ident()
            with _LOCK:
                _RUNS[self._thread] = self
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for number, handler in self._previous.items():
            # Once a signal stopped the run, the process is ending (writing, then its report
            # and exit status 1): later signals are ignored, or SIGTERM's default would kill it
            # mid-report (exit -15) and a Ctrl-C's KeyboardInterrupt cut the incomplete line.
            late = signal.SIG_IGN if self.received and _PROCESS["ends"] else handler
            signal.signal(number, late)  # type: ignore[arg-type]
        self._previous.clear()
        if self._thread is not None:
            with _LOCK:
                _RUNS.pop(self._thread, None)

    def finishing(self) -> None:
        """From now on the work is writing what was measured: signals are noted, not raised."""
        with _LOCK:
            self._finishing = True

    def _first(self, number: int) -> bool:
        """Note the signal; whether it is the one that stops the run (else it hurries it)."""
        self.received.append(signal.Signals(number).name)
        if self._raised or self._finishing:
            return False
        self._raised = True
        return True

    def _handle(self, number: int, frame: FrameType | None) -> None:
        if self._first(number):
            stop = Terminated if number == signal.SIGTERM else KeyboardInterrupt
            loop = _LOOPS.get(threading.get_ident())  # no lock: this thread may hold it now
            if loop is not None and loop.is_running():
                # Raised from a callback of the loop, between two task steps, as `pass_on` does
                # for a run in another thread: raised here, it would cut a task's step short at
                # any bytecode (half a gather's tasks made, a worker left sending after the
                # client closed, its error printed as a traceback at exit).
                loop.call_soon_threadsafe(_raise, stop)
                return
            raise stop()
        if self.on_repeat is not None:
            self.on_repeat()


@contextlib.contextmanager
def event_loop(loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """While `loop` runs in this thread, a signal passed on to it is raised from the loop."""
    thread_id = threading.get_ident()
    with _LOCK:
        _LOOPS[thread_id] = loop
    try:
        yield
    finally:
        with _LOCK:
            _LOOPS.pop(thread_id, None)


def _raise(stop: type[KeyboardInterrupt]) -> None:
    raise stop()


def pass_on(thread_id: int, number: int) -> bool:
    """Signal `number`, received by the main thread, for the run in thread `thread_id`: handled
    as that run's StopSignals would in the main thread (module docstring). False when no run
    is active in that thread."""
    with _LOCK:
        signals = _RUNS.get(thread_id)
        if signals is None:
            return False
        if signals._first(number):
            stop = Terminated if number == signal.SIGTERM else KeyboardInterrupt
            loop = _LOOPS.get(thread_id)
            if loop is not None:
                loop.call_soon_threadsafe(_raise, stop)
            else:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(thread_id), ctypes.py_object(stop)
                )
            return True
        repeat = signals.on_repeat
    if repeat is not None:
        repeat()
    return True
