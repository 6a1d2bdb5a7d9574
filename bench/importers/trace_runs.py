"""Imported trace replays: what an AIPerf or GuideLLM file says of the trace its run replayed,
made into the same workload identity a `bench run --trace` of that trace states.

The tools record the trace by its path only, so the trace file itself is a fact from the
command line (`--trace FILE`): its SHA-256 (of the bytes as read, as `bench run --trace` takes
it), its name (its header's, else its file name) and the requests it holds come from reading it
with the same reader (`bench.workloads.trace.read_trace`), cut after the requests the run sent. The
file must carry the name the tool recorded, so that a trace is not swapped for another by mistake.
The load point is the one a replay here states: the replayed requests over the span of their
timestamps ÷ the speed (`bench.workloads.trace_plan.offered_rate`). Two replays of one trace at one
speed then share a workload key and a load, whichever tool ran them.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

from infermeter.bench.errors import WorkloadFileError
from infermeter.bench.importers.common import (
    ImportFacts,
    Measured,
    MissingFactError,
    ResultImportError,
    same,
    utc_stamp,
)
from infermeter.bench.workloads.trace import read_trace
from infermeter.bench.workloads.trace_plan import offered_rate, trace_identity
from infermeter.bench.workloads.trace_replay import TracePacing
from infermeter.registry.builder import unchecked
from infermeter.registry.models import Load, LoadPoint, Verdict


@dataclass(frozen=True)
class TraceReplayed:
    """What a tool's file states of the trace its run replayed."""

    where: str  # the file and field that name the trace, for messages
    file: str  # the trace's path as the tool recorded it
    speed: float  # arrivals sped up by this factor (2: twice as fast)
    sent: int | None  # requests the run sent (the trace is cut there), None if not stated
    block_size: int | None = None  # tokens per hash ID, where the tool states it


@dataclass(frozen=True)
class ImportedReplay:
    """A run that replayed a trace: the identity and load `replayed_trace` made, and the tool's
    own findings on the replay (GuideLLM's; AIPerf states none)."""

    identity: dict[str, Any]
    load: Load
    verdicts: list[Verdict] = dataclasses.field(default_factory=list)


def _file_name(recorded: str) -> str:
    """The file name of a path the tool recorded, on whichever system it ran."""
    return PureWindowsPath(recorded).name if "\\" in recorded else PurePosixPath(recorded).name


def replayed_trace(
    stated: TraceReplayed, facts: ImportFacts, findings: Sequence[Verdict] = ()
) -> ImportedReplay:
    """The imported replay of `stated`, with the tool's `findings` on it: the workload's trace
    identity and the load point's `load`, reading the trace file the --trace flag gives (with
    --trace-block-size, where given) cut where the run stopped; MissingFactError without the
    file, ResultImportError for a file that is not the one the tool replayed."""
    trace, block_size = facts.trace, facts.trace_block_size
    recorded = _file_name(stated.file)
    if trace is None:
        raise MissingFactError(
            f"missing; {stated.where} replayed the trace {recorded}: give that file, so that "
            "its SHA-256 names the workload",
            "--trace",
        )
    if trace.name != recorded:
        raise ResultImportError(
            f"{trace.name} is not the trace the run replayed ({stated.where}: {recorded})",
            "--trace",
        )
    if block_size is not None and stated.block_size not in (None, block_size):
        raise ResultImportError(
            f"{block_size} contradicts the file ({stated.where}: block size "
            f"{stated.block_size}); drop the flag or give the file's value",
            "--trace-block-size",
        )
    try:
        replay = read_trace(trace, block_size=block_size or stated.block_size, limit=stated.sent)
    except WorkloadFileError as error:
        raise ResultImportError(str(error), "--trace") from None
    if stated.sent is not None and stated.sent > len(replay.requests):
        raise ResultImportError(
            f"the run sent {stated.sent} requests ({stated.where}), but {trace} holds "
            f"{len(replay.requests)}; it is not the trace the run replayed",
            "--trace",
        )
    if not (math.isfinite(stated.speed) and stated.speed > 0):
        raise ResultImportError(f"{stated.where}: the replay's speed {stated.speed!r} is not > 0")
    pacing = TracePacing(stated.speed)  # the tools replay a trace's own arrivals, never re-timed
    identity = trace_identity(replay, pacing)
    load = unchecked(Load, arrival="poisson", request_rate=offered_rate(replay, pacing))
    return ImportedReplay(identity, load, list(findings))


def one_trace(identities: Sequence[tuple[str, dict[str, Any] | None]]) -> dict[str, Any] | None:
    """The trace identity every (where, identity) agrees on (None: no file replayed a trace);
    ResultImportError when some replayed one and some did not, or they replayed different
    traces, cuts or speeds (one result is one workload)."""
    if len({identity is None for _, identity in identities}) > 1:
        raise ResultImportError("some runs replayed a trace and some did not; import them apart")
    identity: dict[str, Any] | None = same(identities, "replayed trace (its file, cut and speed)")
    return identity


def measured_runs(
    tool_name: str,
    runs: Sequence[tuple[str, dict[str, Any]]],
    traces: Sequence[ImportedReplay | None],
    point: Callable[[dict[str, Any], str, ImportedReplay | None], LoadPoint],
    moment: Callable[[dict[str, Any], str, str], dt.datetime],
    **read: Any,
) -> Measured:
    """What runs measured, a load point each (`runs`: (where, run), `traces`: the trace each
    replayed or None): the one trace they replayed, each run's `point`, the span from the
    earliest `start_time` to the latest `end_time` (`moment` reads one), and the rest the files
    say (`read`: `Measured`'s other fields)."""
    trace = one_trace(
        [
            (where, run.identity if run else None)
            for (where, _), run in zip(runs, traces, strict=True)
        ]
    )
    points = [point(run, where, replay) for (where, run), replay in zip(runs, traces, strict=True)]
    starts = [moment(run, "start_time", where) for where, run in runs]
    ends = [moment(run, "end_time", where) for where, run in runs]
    return Measured(
        tool_name=tool_name,
        points=points,
        started_at=utc_stamp(min(starts)),
        finished_at=utc_stamp(max(ends)),
        trace=trace,
        **read,
    )
