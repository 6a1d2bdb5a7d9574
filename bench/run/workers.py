"""One load point split across worker processes, for loads one client process cannot parse.

`run_point_in_workers` spawns `WorkerJob.workers` processes. Each rebuilds the client and
the request factory from the `WorkerJob` (pickled to it), waits for the point's common start,
runs its `Share` of the point (`bench.run.load`: its closed-loop slots and their requests, or its
part of the open-loop schedule) on its own event loop, and sends its records back as they
finish, in small batches, so a live display keeps up. The parent merges them. All processes of
one machine read the same CLOCK_MONOTONIC, so their timestamps are comparable as they are.

Workers are started for each point (about a second with the imports) and end with it, or
with the parent, whose end a worker sees within `FLUSH_INTERVAL_S` (a killed `bench run` leaves
no worker sending load for the rest of the point); they ignore Ctrl-C, which the parent
handles: it stops them when the point is cancelled. A Ctrl-C
or SIGTERM that comes while a worker is being started waits until its start is done (a start
cut short leaves a child that fails to read what it was sent, with a traceback), and a worker
is born with SIGINT blocked, so the terminal's Ctrl-C, sent to every process of the group,
cannot interrupt its interpreter while it starts up, before it could ignore it.

Exceptions::

    BenchError (bench.errors)
    └── WorkerFailed    a worker process raised or died; the point has no result
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from multiprocessing import resource_tracker
from multiprocessing.connection import Connection
from types import FrameType
from typing import Any

from infermeter.bench.client.client import StreamingClient, run_event_loop
from infermeter.bench.client.request_record import PromptRequest, RequestRecord, TokenCounter
from infermeter.bench.client.stream import Api
from infermeter.bench.errors import BenchError
from infermeter.bench.run.load import PointPlan, PointRun, Share, run_point
from infermeter.bench.workloads.prompts import RequestFactory

# A worker sends its finished records this often (seconds): one pickle and one pipe write per
# batch instead of per request.
FLUSH_INTERVAL_S = 0.1
# The common start lies this far ahead of the moment every worker is ready, so that each
# has read it before it comes (an open-loop schedule's first request leaves at the start).
START_LEAD_NS = 50_000_000


class WorkerFailed(BenchError):
    """A worker process raised an exception or died before its share of the point ended."""


@dataclass(frozen=True)
class WorkerJob:
    """What a worker needs to rebuild the run's client and requests in its own process."""

    endpoint: str
    model: str
    factory: RequestFactory
    api: Api = "completions"
    timeout_s: float = 600.0
    ignore_eos: bool = True
    continuous_usage_stats: bool = False
    count_tokens_with_tokenizer: bool = False
    workers: int = 2
    extra_body: dict[str, Any] = field(default_factory=dict)
    api_key: str | None = field(default=None, repr=False)

    def client(self) -> StreamingClient:
        """The client, as the run's main process would build it."""
        count_tokens: TokenCounter | None = None
        tokenizer = self.factory.tokenizer
        if self.count_tokens_with_tokenizer and tokenizer is not None:
            encode = tokenizer.encode

            def count_tokens(text: str) -> int:
                return len(encode(text, add_special_tokens=False).ids)

        return StreamingClient(
            self.endpoint,
            self.model,
            api=self.api,
            timeout_s=self.timeout_s,
            ignore_eos=self.ignore_eos,
            continuous_usage_stats=self.continuous_usage_stats,
            count_tokens=count_tokens,
            extra_body=self.extra_body,
            api_key=self.api_key,
        )


async def run_point_in_workers(
    job: WorkerJob,
    plan: PointPlan,
    on_record: Callable[[RequestRecord], None] | None = None,
    into: PointRun | None = None,
) -> PointRun:
    """Run `plan` split across `job.workers` processes; `on_record(record)`, when given, sees each
    record as its batch arrives. Records come back sorted by request index; `client_cpu_s` is
    the workers' CPU time together, `busiest_client_cpu_s` the busiest worker's, `wall_s` the
    longest worker's; `into` as `bench.run.load.run_point` takes it (the batches that arrived).
    Raises `WorkerFailed`."""
    workers = job.workers
    if workers < 1:
        raise ValueError("workers must be at least 1")
    context = multiprocessing.get_context("spawn")
    loop = asyncio.get_running_loop()
    pipes: list[Connection] = []
    processes = []
    run = into if into is not None else PointRun(plan)
    try:
        for worker in range(workers):
            parent_end, child_end = context.Pipe()
            process = context.Process(
                target=_worker_main,
                args=(job, plan, worker, workers, child_end),
                name=f"infermeter-worker-{worker}",
                daemon=True,
            )
            with _signals_held():
                process.start()
                processes.append(process)
            child_end.close()
            pipes.append(parent_end)
        for pipe in pipes:
            _expect(await _receive(loop, pipe), "ready")
        start_ns = time.monotonic_ns() + START_LEAD_NS
        for pipe in pipes:
            pipe.send(("go", start_ns))
        results = await asyncio.gather(
            *(_collect(loop, pipe, run.records, on_record) for pipe in pipes)
        )
    finally:
        for pipe in pipes:
            pipe.close()
        for process in processes:
            if process.is_alive():
                process.terminate()
            process.join(5)
    run.client_cpu_s = sum(cpu_s for cpu_s, _ in results)
    run.busiest_client_cpu_s = max(cpu_s for cpu_s, _ in results)
    run.wall_s = max(wall_s for _, wall_s in results)
    run.records.sort(key=lambda record: record.index)
    return run


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait until the block is done, then arrive as they came (at the
    handlers in place before); a child started inside it inherits SIGINT blocked."""
    held: list[int] = []
    previous: dict[int, Any] = {}
    holding = True

    def hold(number: int, frame: FrameType | None) -> None:
        if holding:
            held.append(number)
        elif callable(previous[number]):  # one that came while the handlers were put back
            previous[number](number, frame)

    if threading.current_thread() is threading.main_thread():
        for stop_signal in _STOP_SIGNALS:
            previous[stop_signal] = signal.signal(stop_signal, hold)
    # The first Process.start() of a process launches CPython's resource tracker, and then
    # unblocks SIGINT and SIGTERM (SIG_UNBLOCK, not the mask it found): the worker spawned
    # right after would be born with Ctrl-C deliverable. Launched here, before the block, the
    # tracker leaves the block alone.
    resource_tracker.ensure_running()
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        # A Ctrl-C that waited in the mask is handled (held) before this call returns.
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        holding = False
        for number, handler in previous.items():
            signal.signal(number, handler)
        stop: BaseException | None = None
        for number in held:  # every one, so that the run's handler notes a second one too
            try:
                signal.raise_signal(number)
            except BaseException as error:
                stop = stop or error
        if stop is not None:
            raise stop


async def _receive(loop: asyncio.AbstractEventLoop, pipe: Connection) -> Any:
    """The next message from a worker. A thread waits for it: a pipe watched by the event
    loop becomes non-blocking, and a batch larger than the pipe's buffer then fails to read."""
    try:
        return await loop.run_in_executor(None, pipe.recv)
    except (EOFError, OSError):
        raise WorkerFailed("a worker process ended without its results") from None


def _expect(message: Any, kind: str) -> Any:
    if message[0] == "error":
        raise WorkerFailed(f"a worker process failed:\n{message[1]}")
    if message[0] != kind:
        raise WorkerFailed(f"a worker process sent {message[0]!r} where {kind!r} was due")
    return message


async def _collect(
    loop: asyncio.AbstractEventLoop,
    pipe: Connection,
    records: list[RequestRecord],
    on_record: Callable[[RequestRecord], None] | None,
) -> tuple[float, float]:
    """Take one worker's record batches until its end; its (cpu_s, wall_s)."""
    while True:
        message = await _receive(loop, pipe)
        if message[0] != "records":
            _, cpu_s, wall_s = _expect(message, "done")
            return cpu_s, wall_s
        records.extend(message[1])
        if on_record is not None:
            for record in message[1]:
                on_record(record)


def _worker_main(
    job: WorkerJob, plan: PointPlan, worker: int, workers: int, pipe: Connection
) -> None:
    """A worker process: its share of the point, results through `pipe`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops us
    try:
        run_event_loop(_run_share(job, plan, worker, workers, pipe))
    except BaseException:
        with contextlib.suppress(OSError):  # the parent may be gone
            pipe.send(("error", traceback.format_exc()))
    finally:
        pipe.close()


async def _run_share(
    job: WorkerJob, plan: PointPlan, worker: int, workers: int, pipe: Connection
) -> None:
    finished: list[RequestRecord] = []
    client = job.client()
    async with client:

        async def send(request: PromptRequest, intended_ns: int | None) -> RequestRecord:
            record = await client.send(request, intended_ns)
            # run_point sets `record.warmup` as soon as this returns, in the same step of the
            # loop, so it is set before `flush` next runs.
            finished.append(record)
            return record

        parent = multiprocessing.parent_process()

        async def flush() -> None:
            while True:
                await asyncio.sleep(FLUSH_INTERVAL_S)
                if parent is not None and not parent.is_alive():
                    os._exit(1)  # the run was killed: no one reads what this worker measures
                if finished:
                    pipe.send(("records", finished[:]))
                    finished.clear()

        pipe.send(("ready",))
        _, start_ns = pipe.recv()
        delay_ns = start_ns - time.monotonic_ns()
        if delay_ns > 0:
            await asyncio.sleep(delay_ns / 1e9)
        flusher = asyncio.create_task(flush())
        try:
            run = await run_point(
                send,
                job.factory.build,
                plan,
                Share(worker, workers, start_ns),
                cut=client.cut_in_flight,
            )
        finally:
            flusher.cancel()
    if finished:
        pipe.send(("records", finished[:]))
    pipe.send(("done", run.client_cpu_s, run.wall_s))
