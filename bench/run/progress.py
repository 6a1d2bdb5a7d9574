"""The live progress of a run on stderr: redrawn in place on a terminal, plain lines elsewhere.

`ProgressDisplay` follows a run through the runner's progress hook (`bench.run.runner.RunProgress`).
On a terminal it redraws one status line in place (`\\r`, then erase to the end of the line)
a few times a second from a timer on the run's event loop: requests done of the point's total,
output tokens/s, errors, elapsed seconds and the current point. A finished point leaves one
final line. Counting a finished request is a few additions and never writes, so the display
costs the client nothing per request. Elsewhere (a pipe, a log file, CI) it writes one plain
line per finished point, `c=4: 100 done, 0 failed, 812.3 output tok/s`, and, while a point runs
longer than `PLAIN_INTERVAL_S`, its status line each time that passes, so a log shows that a
long point is alive and how far it got.
"""

from __future__ import annotations

import asyncio
import time
from typing import TextIO

from infermeter.bench.client.request_record import RequestRecord
from infermeter.bench.run.load import PointPlan
from infermeter.bench.run.point_summary import PointSummary
from infermeter.calculators.plural import counted

REDRAW_INTERVAL_S = 0.25
PLAIN_INTERVAL_S = 30.0
_ERASE_LINE = "\r\x1b[K"


def point_name(concurrency: int | None, request_rate: float | None) -> str:
    """`c=16` for a closed-loop point, `rate=2.5/s` for an open-loop one."""
    if concurrency is not None:
        return f"c={concurrency}"
    return f"rate={request_rate:g}/s"


def point_line(summary: PointSummary) -> str:
    """The plain one-line report of a finished point."""
    return (
        f"{point_name(summary.concurrency, summary.request_rate)}: {summary.completed} done, "
        f"{summary.failed} failed, {summary.output_token_throughput:.1f} output tok/s"
    )


class ProgressDisplay:
    """Shows a run's progress on `stream`; `live` (default: `stream.isatty()`) redraws, and
    otherwise a running point's status is written every `plain_interval_s`."""

    def __init__(
        self, stream: TextIO, live: bool | None = None, plain_interval_s: float = PLAIN_INTERVAL_S
    ) -> None:
        self.stream = stream
        self.live = stream.isatty() if live is None else live
        self.plain_interval_s = plain_interval_s
        self._plan: PointPlan | None = None
        self._number = 0
        self._points = 0
        self._started = 0.0
        self._done = 0
        self._errors = 0
        self._output_tokens = 0
        self._timer: asyncio.TimerHandle | None = None

    def point_started(self, plan: PointPlan, number: int, points: int) -> None:
        """Point `number` of `points` is starting (called in the run's event loop)."""
        self._plan, self._number, self._points = plan, number, points
        self._started = time.monotonic()
        self._done = self._errors = self._output_tokens = 0
        if self.live:
            self._draw()
        self._schedule()

    def request_finished(self, record: RequestRecord) -> None:
        """Count one finished request (warm-up included)."""
        self._done += 1
        if record.error is not None:
            self._errors += 1
        tokens = record.output_tokens
        self._output_tokens += tokens if tokens is not None else record.client_output_tokens

    def point_ended(self, summary: PointSummary | None) -> None:
        """The point is over; `summary` is None when it was cut short or discarded."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.live:
            final = point_line(summary) if summary is not None else self.status() + " (stopped)"
            self.stream.write(f"{_ERASE_LINE}{final} [{self._elapsed_s():.1f} s]\n")
            self.stream.flush()
        elif summary is not None:
            self.stream.write(point_line(summary) + "\n")
            self.stream.flush()

    def status(self) -> str:
        """The current status line, e.g. `c=4 (point 2/3): 37/102 requests, …`."""
        plan = self._plan
        if plan is None:
            return ""
        elapsed = self._elapsed_s()
        total = plan.total_requests
        done = f"{self._done}/{total}" if total is not None else str(self._done)
        rate = self._output_tokens / elapsed if elapsed > 0 else 0.0
        bound = f"/{plan.duration_s:g}" if plan.duration_s is not None else ""
        return (
            f"{point_name(plan.concurrency, plan.request_rate)} "
            f"(point {self._number}/{self._points}): {done} requests, {rate:,.0f} tok/s, "
            f"{counted(self._errors, 'error')}, {elapsed:.1f}{bound} s"
        )

    def _elapsed_s(self) -> float:
        return time.monotonic() - self._started

    def _schedule(self) -> None:
        interval = REDRAW_INTERVAL_S if self.live else self.plain_interval_s
        self._timer = asyncio.get_running_loop().call_later(interval, self._tick)

    def _tick(self) -> None:
        if self.live:
            self._draw()
        else:
            self.stream.write(self.status() + "\n")
            self.stream.flush()
        self._schedule()

    def _draw(self) -> None:
        self.stream.write(_ERASE_LINE + self.status())
        self.stream.flush()
