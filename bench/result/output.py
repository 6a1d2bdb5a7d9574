"""Writing what a run measured: the result file, or, when that fails, everything measured.

Once the load points are measured, nothing that goes wrong may lose them: the result does not
assemble or fails the registry's checks, a file the checks need is missing, the disk is full
or the folder cannot be written. `write_run` then writes what it has as
`<stem>.rejected.json` (the result when it was assembled, else the points' summaries) and every
request's raw record as `<stem>.requests.jsonl.gz`, and raises `RunNotWrittenError`, one line
saying why and where the files are. The files go beside `--output` when that folder takes them,
else to the current folder, else to the system's temporary folder, else (a full disk, a file
size limit) the text rides on the error (`unsaved`) for the command to print on stdout.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infermeter.bench.client.request_record import RequestRecord
from infermeter.bench.errors import BenchError
from infermeter.bench.result.assemble import validate_result, write_result
from infermeter.bench.result.raw_records import raw_records_path, write_raw_records
from infermeter.bench.run.point_summary import PointSummary
from infermeter.registry.models import Result
from infermeter.registry.store import beside, dumps_result, write_text_atomic

RawRecords = Sequence[tuple[int, bool, Sequence[RequestRecord]]]
"""(point number, kept, records) for every point run, as `write_raw_records` takes them."""


class RunNotWrittenError(BenchError):
    """The run's result was not written; what it measured was kept (see `kept`, `raw_records`)."""

    def __init__(
        self,
        message: str,
        kept: Path | None,
        raw_records: Path | None,
        unsaved: str | None = None,
    ) -> None:
        super().__init__(message, "--output")
        self.kept = kept
        self.raw_records = raw_records
        self.unsaved = unsaved
        """The measured points' text when no folder took it: the CLI prints it on stdout, the
        last place left (a full disk, or `ulimit -f`, refuses every file)."""


@dataclass(frozen=True)
class WrittenRun:
    """The result written, and where a run's files went."""

    result: Result
    path: Path
    raw_records: Path | None


def rejected_path(output: Path) -> Path:
    """Where a result that was not written goes: `<stem>.rejected.json` beside `output`."""
    return beside(output, ".rejected.json")


def write_run(
    output: Path,
    build: Callable[[], Result],
    points: Sequence[PointSummary],
    records: RawRecords,
    raw_records: bool,
    model_entry: Mapping[str, Any] | None = None,
) -> WrittenRun:
    """Build, check and write the result at `output` (and the raw records when `raw_records`).

    `build` assembles the result; `points` are the measured summaries, kept when it fails.
    `model_entry`: a model-catalog entry the result's model needs (`bench.result.model_entry`).
    Raises RunNotWrittenError when the result is not written, after keeping the points.
    """
    try:
        result = build()
    except Exception as error:  # whatever it is, the measured points must survive it
        text = _summaries_text(points)
        reason = f"the result could not be assembled: {_line(error)}"
        raise _rejected(output, text, records, reason) from None
    try:
        problems = (
            validate_result(result) if model_entry is None else validate_result(result, model_entry)
        )
    except Exception as error:  # the checks themselves failed: unchecked is not valid
        problems = [f"the registry's checks could not run ({_line(error)})"]
    if problems:
        reason = "the result fails validation: " + "; ".join(problems[:5])
        raise _rejected(output, dumps_result(result), records, reason)
    try:
        write_result(result, output)
    except OSError as error:
        reason = f"cannot write {output}: {error.strerror or error}"
        raise _rejected(output, dumps_result(result), records, reason) from None
    if not raw_records:
        return WrittenRun(result, output, None)
    raw_path = raw_records_path(output)
    try:
        write_raw_records(raw_path, records)
    except OSError as error:
        kept = _keep_raw_records(raw_path, records)
        where = f"kept in {kept}" if kept else "lost: no folder takes them"
        raise RunNotWrittenError(
            f"the result is written to {output}, but the raw records cannot be written to "
            f"{raw_path} ({error.strerror or error}); they are {where}",
            output,
            kept,
        ) from None
    return WrittenRun(result, output, raw_path)


def _line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return text or type(error).__name__


def _folders(output: Path) -> list[Path]:
    """Where to try to keep files, in order: beside `output`, the current folder, temp."""
    folders = [output.parent, Path.cwd(), Path(tempfile.gettempdir())]
    unique: list[Path] = []
    for folder in folders:
        if folder.absolute() not in [seen.absolute() for seen in unique]:
            unique.append(folder)
    return unique


def _rejected(output: Path, text: str, records: RawRecords, reason: str) -> RunNotWrittenError:
    """Keep `text` as `<stem>.rejected.json` and the raw records; the error to raise."""
    name = rejected_path(output).name
    kept: Path | None = None
    for folder in _folders(output):
        try:
            write_text_atomic(folder / name, text)
        except OSError:
            continue
        kept = folder / name
        break
    folder = kept.parent if kept is not None else output.parent
    raw = _keep_raw_records(raw_records_path(folder / output.name), records) if records else None
    if kept is None:
        where = "no folder takes the measured points, so they follow on standard output"
        where += f" (the raw records are in {raw})" if raw else ""
    else:
        where = f"the measured points are kept in {kept}"
        where += f" and the raw records in {raw}" if raw else ""
    return RunNotWrittenError(f"{reason}; {where}", kept, raw, None if kept else text)


def keep_raw_records(output: Path, records: RawRecords) -> Path | None:
    """Write the raw records of a run that has no result (`<stem>.requests.jsonl.gz`, beside
    `output`, else in the current folder, else in the temporary folder); where they went, or
    None when no folder takes them."""
    return _keep_raw_records(raw_records_path(output), records)


def _keep_raw_records(path: Path, records: RawRecords) -> Path | None:
    for folder in _folders(path):
        try:
            write_raw_records(folder / path.name, records)
        except OSError:
            continue
        return folder / path.name
    return None


def _summaries_text(points: Sequence[PointSummary]) -> str:
    """The points' summaries as JSON, for a run whose result could not be assembled."""
    data: dict[str, Any] = {
        "note": "the result could not be assembled; these are the measured points' summaries",
        "points": [dataclasses.asdict(point) for point in points],
    }
    return json.dumps(data, sort_keys=True, indent=2, default=str) + "\n"
