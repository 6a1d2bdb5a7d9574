"""Load generation for one load point: closed loop (fixed concurrency) or open loop (a rate).

Closed loop: `concurrency` workers each send a request, wait for its end, and send the next,
so exactly `concurrency` requests are in flight while requests remain.
Open loop: requests leave on a precomputed schedule of arrival offsets (Poisson, or gamma with a
burstiness factor) on the monotonic clock, whatever the server's state; each record keeps its
intended and its actual send time, so the client's own lag is visible. An open loop may be
capped at `max_concurrency` requests in flight (as `vllm bench serve --max-concurrency`): a
request whose time has come waits for a free slot, and its record keeps that wait
(`slot_wait_ns`) apart from the client's own lag.

Both start with `warmup_requests` requests that are recorded with `warmup=True` (excluded from
every figure: they open connections and fill the server's batch), then send measured requests
until `num_requests` of them were sent or `duration_s` passed since the first measured send,
whichever comes first; requests in flight then run to their end, bounded by the client's
per-request timeout and, with `duration_s`, by a timer: whatever is still in flight one
duration after sending stopped (two after the first measured send) ends then, a timeout
(`cut`, the client's `cut_in_flight`), so `--duration` bounds the point's whole time even
against a stream that never ends. Request indices start at
`first_index`, so points of one run never reuse a prompt.

A point may be split across worker processes (`bench.run.workers`): each runs a `Share` of it.
Worker w of n gets closed-loop slots w, w + n, … and the requests that start in them (request k
starts in slot k mod concurrency), or every n-th request of the open-loop schedule from w; a
request keeps its index, its warm-up flag and its scheduled time. Together the shares send the
same requests as one process would, with at most `concurrency` in flight.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from infermeter.bench.client.request_record import PromptRequest, RequestRecord
from infermeter.bench.errors import BenchConfigError
from infermeter.calculators.units import NS_PER_S

Send = Callable[[PromptRequest, int | None], Awaitable[RequestRecord]]
Build = Callable[[int], PromptRequest]
Cut = Callable[[int | None], None]
"""Ends the requests in flight at a monotonic time in ns (None: no cut), as
`StreamingClient.cut_in_flight` does."""


@dataclass(frozen=True)
class PointPlan:
    """One load point: exactly one of `concurrency` and `request_rate`, and its bounds."""

    concurrency: int | None = None
    request_rate: float | None = None
    max_concurrency: int | None = None
    burstiness: float = 1.0
    num_requests: int | None = None
    duration_s: float | None = None
    warmup_requests: int = 0
    first_index: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        if (self.concurrency is None) == (self.request_rate is None):
            raise BenchConfigError("a load point needs either a concurrency or a request rate")
        if self.concurrency is not None and self.concurrency < 1:
            raise BenchConfigError("must be at least 1", "--concurrency")
        if self.request_rate is not None and not self.request_rate > 0:
            raise BenchConfigError("must be greater than 0", "--request-rate")
        if self.max_concurrency is not None:
            if self.request_rate is None:
                raise BenchConfigError(
                    "caps an open loop; give it with --request-rate", "--max-concurrency"
                )
            if self.max_concurrency < 1:
                raise BenchConfigError("must be at least 1", "--max-concurrency")
        if self.burstiness <= 0:
            raise BenchConfigError("must be greater than 0", "--burstiness")
        if self.num_requests is None and self.duration_s is None:
            raise BenchConfigError("a load point needs --num-requests or --duration")
        if self.num_requests is not None and self.num_requests < 1:
            raise BenchConfigError("must be at least 1", "--num-requests")
        if self.duration_s is not None and not self.duration_s > 0:
            raise BenchConfigError("must be greater than 0", "--duration")
        if self.warmup_requests < 0:
            raise BenchConfigError("must not be negative", "--warmup")

    @property
    def total_requests(self) -> int | None:
        """Warm-up plus measured requests when the count bounds the point."""
        return None if self.num_requests is None else self.warmup_requests + self.num_requests


@dataclass(frozen=True)
class Share:
    """The part of a point that worker `worker` of `workers` runs; `start_ns` is the point's
    common start on the monotonic clock (which all processes of a machine share), the origin
    of an open-loop schedule."""

    worker: int
    workers: int
    start_ns: int

    def slots(self, concurrency: int) -> int:
        """How many of a closed loop's `concurrency` slots are this worker's."""
        return len(range(self.worker, concurrency, self.workers))

    def owns(self, local: int, concurrency: int | None) -> bool:
        """Whether request `local` (from 0) of the point is this worker's."""
        slot = local if concurrency is None else local % concurrency
        return slot % self.workers == self.worker


@dataclass
class PointRun:
    """The records of one load point and what the client spent on it."""

    plan: PointPlan
    records: list[RequestRecord] = field(default_factory=list)
    client_cpu_s: float = 0.0
    busiest_client_cpu_s: float = 0.0
    wall_s: float = 0.0

    def finish(self, cpu_start: float, wall_s: float) -> PointRun:
        """This run as one client process ran it: the CPU it spent since `cpu_start`
        (`time.process_time()`), `wall_s`, and the records in request-index order."""
        self.client_cpu_s = time.process_time() - cpu_start
        self.busiest_client_cpu_s = self.client_cpu_s
        self.wall_s = wall_s
        self.records.sort(key=lambda record: record.index)
        return self


def arrival_offsets_s(
    rate: float,
    *,
    seed: int,
    burstiness: float = 1.0,
    count: int | None = None,
    warmup: int = 0,
    duration_s: float | None = None,
) -> list[float]:
    """Send offsets in seconds from the start of an open-loop point, reproducible from `seed`.

    Gaps are gamma-distributed with shape `burstiness` and mean 1/rate: burstiness 1 is a
    Poisson process, below 1 is burstier, above 1 more regular. The first request leaves at 0.
    The schedule ends after `count` offsets, or once an offset lies `duration_s` or more after
    the first measured one (index `warmup`).
    """
    if count is None and duration_s is None:
        raise BenchConfigError("an open-loop schedule needs a count or a duration")
    rng = random.Random(f"{seed}:arrivals:{rate}:{burstiness}")
    scale = 1.0 / (rate * burstiness)
    offsets: list[float] = []
    offset = 0.0
    while count is None or len(offsets) < count:
        past_warmup = len(offsets) > warmup
        if duration_s is not None and past_warmup and offset - offsets[warmup] >= duration_s:
            break
        offsets.append(offset)
        offset += rng.gammavariate(burstiness, scale)
    return offsets


async def run_point(
    send: Send,
    build: Build,
    plan: PointPlan,
    share: Share | None = None,
    into: PointRun | None = None,
    cut: Cut | None = None,
) -> PointRun:
    """Run one load point with `send` (e.g. `StreamingClient.send`) and `build`
    (e.g. `RequestFactory.build`), or only `share` of it; records come back sorted by request
    index. `into`, when given, is the run filled and returned: its records grow as requests
    finish, so a caller whose point is cut short (Ctrl-C) still has what finished. `cut`
    bounds the requests in flight once a `duration_s` is over (see the module docstring)."""
    run = into if into is not None else PointRun(plan)
    measured_from = _cutter(plan, cut)
    cpu_start = time.process_time()
    wall_start = time.monotonic()
    if share is None:
        share = Share(0, 1, time.monotonic_ns())
    loop = _Loop(send, build, plan, share, run.records, measured_from)
    await (loop.closed() if plan.concurrency is not None else loop.open())
    if cut is not None:
        cut(None)
    return run.finish(cpu_start, time.monotonic() - wall_start)


def _cutter(plan: PointPlan, cut: Cut | None) -> Callable[[int], None]:
    """What to call with the time (monotonic ns) of a point's first measured send: with a
    `duration_s`, every request still in flight a duration after sending stopped (two after
    that first send) ends then, a timeout (set by a timer, so a stream that never ends cannot
    hold the point however long the client's own timeout)."""
    if cut is not None:
        cut(None)
    done: list[bool] = []

    def measured_from(start_ns: int) -> None:
        if cut is not None and plan.duration_s is not None and not done:
            done.append(True)  # once: the first worker to measure sets it
            cut(start_ns + 2 * int(plan.duration_s * NS_PER_S))

    return measured_from


@dataclass(frozen=True)
class _Loop:
    """What a point's loop runs with: how to send and build a request, the point, this worker's
    share of it, where its records go, and what to call at the first measured send."""

    send: Send
    build: Build
    plan: PointPlan
    share: Share
    records: list[RequestRecord]
    measured_from: Callable[[int], None]

    async def closed(self) -> None:
        """A closed loop: `plan.concurrency` requests in flight, each sent when one ends."""
        plan, share = self.plan, self.share
        assert plan.concurrency is not None
        concurrency = plan.concurrency
        total = plan.total_requests

        def mine_from(local: int) -> int:
            while not share.owns(local, concurrency):
                local += 1
            return local

        next_local = mine_from(0)
        deadline_ns: int | None = None

        async def worker() -> None:
            nonlocal next_local, deadline_ns
            while True:
                local = next_local
                if total is not None and local >= total:
                    return
                if local >= plan.warmup_requests and plan.duration_s is not None:
                    now = time.monotonic_ns()
                    if deadline_ns is None:
                        deadline_ns = now + int(plan.duration_s * NS_PER_S)
                        self.measured_from(now)
                    elif now >= deadline_ns:
                        return
                next_local = mine_from(local + 1)
                record = await self.send(self.build(plan.first_index + local), None)
                record.warmup = local < plan.warmup_requests
                self.records.append(record)

        await asyncio.gather(*(worker() for _ in range(share.slots(plan.concurrency))))

    async def open(self) -> None:
        """An open loop: requests sent at their scheduled arrival times."""
        plan, share = self.plan, self.share
        assert plan.request_rate is not None
        offsets = arrival_offsets_s(
            plan.request_rate,
            seed=plan.seed,
            burstiness=plan.burstiness,
            count=plan.total_requests,
            warmup=plan.warmup_requests,
            duration_s=plan.duration_s,
        )

        slots = (
            asyncio.Semaphore(max(share.slots(plan.max_concurrency), 1))
            if plan.max_concurrency is not None
            else None
        )

        async def send_one(request: PromptRequest, intended_ns: int, warmup: bool) -> None:
            if slots is None:
                record = await self.send(request, intended_ns)
            else:
                full = slots.locked()  # only then is the wait the cap's, not the client's own lag
                queued_ns = time.monotonic_ns()
                async with slots:
                    waited_ns = time.monotonic_ns() - queued_ns if full else 0
                    record = await self.send(request, intended_ns)
                record.slot_wait_ns = waited_ns
            record.warmup = warmup
            self.records.append(record)

        mine = range(share.worker, len(offsets), share.workers)  # = share.owns(local, None)
        tasks: list[asyncio.Task[None]] = []
        if not mine:
            return
        # The next request is built while waiting for its send time, not after it.
        request = self.build(plan.first_index + mine[0])
        start_ns = share.start_ns
        measured = offsets[plan.warmup_requests] if plan.warmup_requests < len(offsets) else 0.0
        self.measured_from(start_ns + int(measured * NS_PER_S))
        for position, local in enumerate(mine):
            intended_ns = start_ns + int(offsets[local] * NS_PER_S)
            delay_ns = intended_ns - time.monotonic_ns()
            if delay_ns > 0:
                await asyncio.sleep(delay_ns / NS_PER_S)
            tasks.append(
                asyncio.create_task(send_one(request, intended_ns, local < plan.warmup_requests))
            )
            await asyncio.sleep(0)  # let the request leave before the next one is built
            if position + 1 < len(mine):
                request = self.build(plan.first_index + mine[position + 1])
        await asyncio.gather(*tasks)
