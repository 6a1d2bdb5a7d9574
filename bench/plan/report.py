"""What a plan's runs came to (`bench run --plan`): each run's summary, and which failed.

A plan goes on past a run that fails (it raised before measuring) or ends incomplete (a
crashed server, a result it could not write), and stops after a run cut short by Ctrl-C or
SIGTERM (`stops_plan`). `PlanReport` collects the runs as they end: `as_json` is `--json`'s
object, one entry per run (the run's result, or its error and no points), and `failure_line`
the one line an exit 1 gives when any run failed or is incomplete.
"""

from __future__ import annotations

from typing import Any

from infermeter.bench.session.config import SessionOutcome
from infermeter.bench.session.interrupts import INTERRUPTED, TERMINATED


def stops_plan(outcome: SessionOutcome) -> bool:
    """Whether the run was stopped by a signal: Ctrl-C stops the plan, not only the run."""
    return outcome.run.incomplete and outcome.run.stop_reason in (INTERRUPTED, TERMINATED)


class PlanReport:
    """The runs of one plan as they end, in order."""

    def __init__(self, run_count: int) -> None:
        self.run_count = run_count
        self.summaries: list[dict[str, Any]] = []
        self.failed: list[str] = []

    def add_failure(self, label: str, message: str) -> None:
        """A run that failed before it measured anything, with the one line that says why."""
        self.failed.append(label)
        self.summaries.append({"name": label, "output": None, "error": message, "points": []})

    def add(self, label: str, outcome: SessionOutcome) -> str | None:
        """A run that ran; returns `incomplete: REASON` when it ended early (it counts as
        failed), else None."""
        result = outcome.run
        stop = f"incomplete: {result.stop_reason}" if result.incomplete else None
        output = str(outcome.output) if outcome.output is not None else None
        self.summaries.append({"name": label, "output": output, "error": stop, **result.as_json()})
        if stop is not None:
            self.failed.append(label)
        return stop

    def as_json(self) -> dict[str, Any]:
        """`bench run --plan --json`'s object: `{"runs": [...]}`."""
        return {"runs": self.summaries}

    def failure_line(self) -> str | None:
        """`N of M runs failed or are incomplete: LABELS`, or None when every run succeeded."""
        if not self.failed:
            return None
        return (
            f"{len(self.failed)} of {self.run_count} runs failed or are incomplete: "
            f"{', '.join(self.failed)}"
        )
