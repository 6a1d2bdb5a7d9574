"""What `bench fleet` writes, and where: the folder its results are collected into.

- `<entry id>.json`: an entry's result (its whole result, or what it had measured when it
  was stopped or lost for good), one per entry: a fleet run never writes over an earlier
  one's (`check_free`);
- `partial/<entry id>.attempt-<n>.json`: an attempt's result so far, written as each of its
  load points comes back (`hold`), so it outlives a lost node and a driver killed outright;
  removed once that attempt's result is written (`supersede`), kept for an attempt that was
  lost (`registry validate FOLDER` skips these by name: they are not results to submit);
- `logs/<entry id>.log`: the ends of the run's own output and of vLLM's log.

Every file is written whole (a temp file, then a rename).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from infermeter.bench.fleet import FleetError
from infermeter.bench.fleet.matrix import Matrix
from infermeter.registry.store import write_text_atomic
from infermeter.registry.tree import PARTIAL_FOLDER


@dataclass(frozen=True)
class ResultsFolder:
    """The fleet's results folder (module docstring)."""

    path: Path

    def check_free(self, matrix: Matrix) -> None:
        """FleetError when an entry's result is there already, from an earlier fleet run."""
        for entry in matrix.entries:
            result = self.result(entry.id)
            if result.exists():
                raise FleetError(
                    f"{result} exists from an earlier fleet run; remove it or pick another folder",
                    "--results-dir",
                )

    def result(self, entry_id: str) -> Path:
        return self.path / f"{entry_id}.json"

    def partial(self, entry_id: str, attempt: int) -> Path:
        return self.path / PARTIAL_FOLDER / f"{entry_id}.attempt-{attempt}.json"

    def write_result(self, entry_id: str, text: str) -> Path:
        """The entry's result; its path."""
        path = self.result(entry_id)
        write_text_atomic(path, text)
        return path

    def hold(self, entry_id: str, attempt: int, text: str) -> Path:
        """An attempt's result so far; its path."""
        path = self.partial(entry_id, attempt)
        write_text_atomic(path, text)
        return path

    def supersede(self, entry_id: str, attempt: int) -> None:
        """The attempt's result is written: its result so far goes (and `partial/`, once
        empty)."""
        with contextlib.suppress(FileNotFoundError):
            self.partial(entry_id, attempt).unlink()
        with contextlib.suppress(OSError):
            (self.path / PARTIAL_FOLDER).rmdir()

    def write_log(self, entry_id: str, text: str) -> None:
        write_text_atomic(self.path / "logs" / f"{entry_id}.log", text + "\n")
