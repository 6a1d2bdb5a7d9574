"""What became of each entry of a `bench fleet` run, and of the run as a whole."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Status = Literal["collected", "incomplete", "invalid", "failed", "unplaceable", "cancelled"]


@dataclass
class EntryOutcome:
    """What became of one entry."""

    entry_id: str
    status: Status = "failed"
    result_path: Path | None = None
    host: str | None = None
    node_id: str | None = None
    gpu_ids: list[str] = field(default_factory=list)  # the node's GPUs Ray gave the run
    attempts: int = 0
    message: str | None = None
    lost: list[str] = field(default_factory=list)  # one line per attempt lost with its node
    partial: list[Path] = field(default_factory=list)  # the points each lost attempt measured
    placement: list[dict[str, Any]] = field(default_factory=list)  # a multi-node entry's nodes

    def as_json(self) -> dict[str, Any]:
        """The outcome as `bench fleet --json` lists it."""
        return {
            "id": self.entry_id,
            "status": self.status,
            "result": str(self.result_path) if self.result_path else None,
            "host": self.host,
            "node_id": self.node_id,
            "gpu_ids": self.gpu_ids,
            "attempts": self.attempts,
            "lost": self.lost,
            "partial": [str(path) for path in self.partial],
            "placement": self.placement,
            "message": self.message,
        }


@dataclass
class FleetSummary:
    """Every entry's outcome, and the problems of the collected set as a whole."""

    outcomes: list[EntryOutcome]
    results_dir: Path
    set_problems: list[str] = field(default_factory=list)
    interrupted: bool = False
    stop_reason: str | None = None  # "interrupted" (Ctrl-C) or "terminated (SIGTERM)"

    @property
    def ok(self) -> bool:
        """True when every entry was collected, complete and valid, and the set validates."""
        return (
            not self.interrupted
            and not self.set_problems
            and all(o.status == "collected" for o in self.outcomes)
        )

    def counts(self) -> dict[str, int]:
        """How many entries ended in each status."""
        found: dict[str, int] = {}
        for outcome in self.outcomes:
            found[outcome.status] = found.get(outcome.status, 0) + 1
        return found

    def as_json(self) -> dict[str, Any]:
        """The `--json` object."""
        return {
            "ok": self.ok,
            "results_dir": str(self.results_dir),
            "counts": self.counts(),
            "set_problems": self.set_problems,
            "interrupted": self.interrupted,
            "stop_reason": self.stop_reason,
            "entries": [outcome.as_json() for outcome in self.outcomes],
        }
