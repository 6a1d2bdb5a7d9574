"""Every request's raw record beside a result: `<stem>.requests.jsonl.gz`, gzipped JSON lines
with each point's timeline, written atomically."""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
from collections.abc import Sequence
from pathlib import Path

from infermeter.bench.client.request_record import RequestRecord
from infermeter.bench.run.timeline import point_timeline
from infermeter.registry.store import beside, temporary_beside


def raw_records_path(output: Path) -> Path:
    """Where the raw records of the result at `output` go: `<stem>.requests.jsonl.gz`."""
    return beside(output, ".requests.jsonl.gz")


def write_raw_records(
    path: Path, points: Sequence[tuple[int, bool, Sequence[RequestRecord]]]
) -> None:
    """Every request's record as one JSON line, gzipped, written atomically, then each
    point's timeline (`bench.run.timeline`), one line per second.

    `points` holds (point number, kept, records); a point that was not kept (cut short by a
    crash or Ctrl-C) is in the file with `"kept": false`. Each line's `kind` says what it is:
    `request` (the record's fields) or `second` (the timeline's fields).
    """
    descriptor, temporary = temporary_beside(path)
    try:
        with (
            os.fdopen(descriptor, "wb") as raw,
            gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as stream,
        ):
            for number, kept, records in points:
                lines = [
                    {"kind": "request", **dataclasses.asdict(record)} for record in records
                ] + [{"kind": "second", **second.as_json()} for second in point_timeline(records)]
                for line in lines:
                    line = {"point": number, "kept": kept, **line}
                    stream.write(json.dumps(line, sort_keys=True).encode() + b"\n")
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
