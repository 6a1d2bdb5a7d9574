"""A load point second by second: what was sent, finished, failed and streamed, from its records.

Second s covers [origin + s, origin + s + 1) on the monotonic clock, where the origin is the
point's first send (warm-up included: the timeline shows the whole point, and each second says
how many of its sends were warm-up). Per second:

- `sent`, `warmup_sent`: requests that left in it;
- `completed`, `failed`: requests that ended in it, successfully or not (by `RequestRecord.ok`);
- `output_tokens`: tokens whose chunk arrived in it (a chunk's tokens as `bench.run.metrics` counts
  them), so `output_tokens` is the second's output throughput in tokens/s;
- `running`: requests in flight at the second's end (sent, not yet ended).

A stall shows as seconds with `running` > 0 and no tokens; a server that sheds load as
seconds of `failed`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from infermeter.bench.client.request_record import RequestRecord
from infermeter.bench.run.request_figures import chunk_token_counts
from infermeter.calculators.units import NS_PER_S


@dataclass(frozen=True)
class Second:
    """One second of a load point (see the module docstring)."""

    second: int
    sent: int
    warmup_sent: int
    completed: int
    failed: int
    output_tokens: int
    running: int

    def as_json(self) -> dict[str, Any]:
        """The second as a plain JSON object."""
        return asdict(self)


def point_timeline(records: Sequence[RequestRecord]) -> list[Second]:
    """The point's seconds, from its first send to its last end (none without records)."""
    if not records:
        return []
    origin = min(record.send_ns for record in records)
    last = max(max(record.end_ns, record.send_ns) for record in records)
    seconds = (last - origin) // NS_PER_S + 1
    sent = [0] * seconds
    warmup = [0] * seconds
    completed = [0] * seconds
    failed = [0] * seconds
    tokens = [0] * seconds
    started_by = [0] * seconds  # requests sent before each second's end
    ended_by = [0] * seconds

    def at(time_ns: int) -> int:
        return min(max((time_ns - origin) // NS_PER_S, 0), seconds - 1)

    for record in records:
        start = at(record.send_ns)
        sent[start] += 1
        warmup[start] += record.warmup
        started_by[start] += 1
        end = at(record.end_ns)
        (completed if record.ok else failed)[end] += 1
        ended_by[end] += 1
        if record.token_times_ns:
            for arrived_ns, count in zip(
                record.token_times_ns, chunk_token_counts(record), strict=True
            ):
                tokens[at(arrived_ns)] += count
    timeline = []
    in_flight = 0
    for second in range(seconds):
        in_flight += started_by[second] - ended_by[second]
        timeline.append(
            Second(
                second=second,
                sent=sent[second],
                warmup_sent=warmup[second],
                completed=completed[second],
                failed=failed[second],
                output_tokens=tokens[second],
                running=in_flight,
            )
        )
    return timeline
