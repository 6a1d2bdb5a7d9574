"""The hooks a run calls as it goes: a `PointObserver` (telemetry, a launched server's watchdog)
sees each point start and end, with its records; a `RunProgress` (the live display,
`bench.run.progress`) also sees every request as it finishes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from infermeter.bench.client.request_record import RequestRecord
from infermeter.bench.run.load import PointPlan
from infermeter.bench.run.point_summary import PointSummary


class PointObserver(Protocol):
    """Watches the load points of a run (called inside the run's event loop: be quick)."""

    def point_started(self, plan: PointPlan) -> None:
        """The point's first request is about to leave."""

    def point_ended(
        self, records: Sequence[RequestRecord], summary: PointSummary | None
    ) -> str | None:
        """The point is over: its records and summary (None when the point was cut short or
        the server never answered). A returned reason discards the point and stops the run."""


class RunProgress(Protocol):
    """Follows a run live (called inside the run's event loop: be quick)."""

    def point_started(self, plan: PointPlan, number: int, points: int) -> None:
        """Point `number` (from 1) of `points` is about to start."""

    def request_finished(self, record: RequestRecord) -> None:
        """A request of the current point finished (warm-up included), failed or not."""

    def point_ended(self, summary: PointSummary | None) -> None:
        """The point is over: its summary, or None when it was cut short or discarded."""
