"""Replaying a trace (`bench.workloads.trace`) as one load point.

Arrivals, as the replay's `TracePacing` sets them: each request that opens a chain (a request
without a session, or a session's first turn) is sent at its recorded timestamp divided by
`speed`, or, re-timed, at the offsets of a Poisson process at `rate`
(`bench.run.load.arrival_offsets_s`), whatever the server's state. A session's later turns
form a closed loop: each is sent its recorded `delay` (÷ speed) after the previous turn's reply
ended (a later turn without a delay keeps its timestamp, or waits for the previous reply if
that ends later). Every record keeps its intended and actual send time, so the point's send lag
(`send_lag_ms`) is the replay's lateness, with the verdict `client_send_lag` when the client
fell behind.

Each request is also given the share of its prompt in blocks seen earlier (`cached_share`),
so TTFT can be read by how much of the prompt a cache could have served
(`ttft_by_cached_share`).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from infermeter.bench.client.request_record import PromptRequest, RequestRecord
from infermeter.bench.run.distribution import Distribution, summarize
from infermeter.bench.run.load import PointRun, Send, arrival_offsets_s
from infermeter.bench.run.request_figures import ttft_s
from infermeter.bench.workloads.trace import Trace, TracePrompts, TraceRequest
from infermeter.calculators.units import NS_PER_S

CACHED_SHARE_BUCKETS = (0.0, 0.25, 0.5, 0.75, 1.0)


@dataclass(frozen=True)
class TracePacing:
    """When a replay sends the trace's requests: its own arrivals sped up by `speed` (2: twice
    as fast), or, with a `rate`, re-timed as a Poisson process at that many requests/s (the
    arrivals then do not use `speed`)."""

    speed: float = 1.0
    rate: float | None = None

    @property
    def identity_speed(self) -> float | None:
        """The speed a workload identity states: None when re-timed, where it paces nothing."""
        return None if self.rate is not None else self.speed

    def replay_s(self, recorded_ms: float) -> float:
        """A span the trace recorded (ms), in seconds of the replay (÷ speed)."""
        return recorded_ms / 1000 / self.speed


@dataclass(frozen=True)
class Chain:
    """Requests sent one after another: one request, or a session's turns."""

    start_s: float
    turns: tuple[TraceRequest, ...]


def chains(trace: Trace, pacing: TracePacing, seed: int = 0) -> list[Chain]:
    """The trace's chains with their start offsets (seconds from the replay's start)."""
    groups: dict[str, list[TraceRequest]] = {}
    ordered: list[list[TraceRequest]] = []
    for request in trace.requests:
        if request.session_id is None:
            ordered.append([request])
        elif request.session_id in groups:
            groups[request.session_id].append(request)
        else:
            groups[request.session_id] = [request]
            ordered.append(groups[request.session_id])
    origin = next(r.timestamp_ms for r in trace.requests if r.timestamp_ms is not None) or 0.0
    if pacing.rate is not None:
        offsets = arrival_offsets_s(pacing.rate, seed=seed, count=len(ordered))
    else:
        offsets = [pacing.replay_s((turns[0].timestamp_ms or origin) - origin) for turns in ordered]
    return [Chain(start, tuple(turns)) for start, turns in zip(offsets, ordered, strict=True)]


def cached_shares(trace: Trace) -> dict[int, float]:
    """Trace line → the share of that request's input in leading blocks seen earlier (for
    prompts made from block IDs)."""
    return {
        request.line: cached / max(request.input_length, 1)
        for request, cached in trace.seen_prefixes()
    }


async def run_trace(
    send: Send, prompts: TracePrompts, run: PointRun, pacing: TracePacing
) -> PointRun:
    """Replay `prompts.trace` into `run` (see the module docstring); records come back sorted
    by request index (the trace's order)."""
    trace = prompts.trace
    first_index = run.plan.first_index
    positions = {request.line: number for number, request in enumerate(trace.requests)}
    shares = cached_shares(trace)
    cpu_start = time.process_time()
    start_ns = time.monotonic_ns()

    def build(request: TraceRequest, turn: tuple[int, int] | None) -> PromptRequest:
        prompt = prompts.build(first_index + positions[request.line], request)
        return prompt if turn is None else replace(prompt, session=turn[0], turn=turn[1])

    async def send_at(request: TraceRequest, prompt: PromptRequest, intended_ns: int) -> bool:
        delay_ns = intended_ns - time.monotonic_ns()
        if delay_ns > 0:
            await asyncio.sleep(delay_ns / NS_PER_S)
        record = await send(prompt, intended_ns)
        record.cached_share = shares.get(request.line)
        run.records.append(record)
        return record.ok

    async def replay(number: int, chain: Chain, first: PromptRequest) -> None:
        ok = await send_at(chain.turns[0], first, start_ns + int(chain.start_s * NS_PER_S))
        for turn, request in enumerate(chain.turns[1:], start=2):
            if not ok:
                return  # a failed turn ends its session, as a user's would
            intended_ns = _next_turn_ns(request, start_ns, trace, pacing)
            ok = await send_at(request, build(request, (number, turn)), intended_ns)

    # Each chain's first prompt is built while waiting for its send time, not after it.
    tasks: list[asyncio.Task[None]] = []
    for number, chain in enumerate(chains(trace, pacing, run.plan.seed)):
        session = chain.turns[0].session_id is not None
        first = build(chain.turns[0], (number, 1) if session else None)
        delay_ns = start_ns + int(chain.start_s * NS_PER_S) - time.monotonic_ns()
        if delay_ns > 0:
            await asyncio.sleep(delay_ns / NS_PER_S)
        tasks.append(asyncio.create_task(replay(number, chain, first)))
        await asyncio.sleep(0)  # let the request leave before the next one is built
    await asyncio.gather(*tasks)
    return run.finish(cpu_start, (time.monotonic_ns() - start_ns) / NS_PER_S)


def _next_turn_ns(request: TraceRequest, start_ns: int, trace: Trace, pacing: TracePacing) -> int:
    """When a session's later turn is due: its delay after now (the previous reply just
    ended), or its own timestamp when it has no delay (never before now)."""
    now = time.monotonic_ns()
    if request.delay_ms is not None:
        return now + int(pacing.replay_s(request.delay_ms) * NS_PER_S)
    origin = trace.requests[0].timestamp_ms or 0.0
    if pacing.rate is None and request.timestamp_ms is not None:
        return max(now, start_ns + int(pacing.replay_s(request.timestamp_ms - origin) * NS_PER_S))
    return now


@dataclass(frozen=True)
class CachedShareSummary:
    """TTFT of the measured, successful requests whose cached share lies in
    [cached_share_min, cached_share_max) (the last bucket includes 1). Its fields are named as
    the `--json` bucket's keys and the registry's `CachedShareStats`."""

    cached_share_min: float
    cached_share_max: float
    requests: int
    ttft_ms: Distribution


def ttft_by_cached_share(records: Sequence[RequestRecord]) -> tuple[CachedShareSummary, ...]:
    """TTFT by the share of the prompt a cache could serve, in quarters (the last includes 1)."""
    buckets: list[CachedShareSummary] = []
    edges = CACHED_SHARE_BUCKETS
    for low, high in itertools.pairwise(edges):
        group = [
            r
            for r in records
            if r.ok
            and not r.warmup
            and r.cached_share is not None
            and low <= r.cached_share
            and (r.cached_share < high or (high == edges[-1] and r.cached_share <= high))
        ]
        if group:
            buckets.append(
                CachedShareSummary(low, high, len(group), summarize(ttft_s(r) for r in group))
            )
    return tuple(buckets)
