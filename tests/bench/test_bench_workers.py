"""A load point split across worker processes, against the stand-in server: the merged result
counts what one process gives, concurrency holds in total, failures keep their kind."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from bench_helpers import process_alive
from fake_openai_server import FakeOpenAIServer

from infermeter.bench.client.client import StreamingClient
from infermeter.bench.client.request_record import PromptRequest, RequestRecord
from infermeter.bench.run.config import RunConfig
from infermeter.bench.run.load import PointPlan, PointRun, Share, arrival_offsets_s, run_point
from infermeter.bench.run.runner import run_benchmark
from infermeter.bench.run.workers import WorkerFailed, WorkerJob, run_point_in_workers
from infermeter.bench.session.interrupts import StopSignals, Terminated
from infermeter.bench.workloads.lengths import parse_length
from infermeter.bench.workloads.profiles import get_profile
from infermeter.bench.workloads.prompts import RequestFactory, WorkloadSpec


def _factory() -> RequestFactory:
    spec = WorkloadSpec(
        profile=get_profile("chat"), input_len=parse_length("8"), output_len=parse_length("6")
    )
    return RequestFactory(spec)


def _single(url: str, plan: PointPlan) -> PointRun:
    factory = _factory()

    async def main() -> PointRun:
        async with StreamingClient(url, "fake/model", timeout_s=10) as client:
            return await run_point(client.send, factory.build, plan)

    return asyncio.run(main())


def _split(
    url: str, plan: PointPlan, workers: int, factory: RequestFactory | None = None
) -> PointRun:
    job = WorkerJob(url, "fake/model", factory or _factory(), timeout_s=10, workers=workers)
    seen: list[RequestRecord] = []
    run = asyncio.run(run_point_in_workers(job, plan, seen.append))
    assert sorted(r.index for r in seen) == [r.index for r in run.records]
    return run


def _outcome(run: PointRun) -> list[tuple[int, bool, str | None, int]]:
    return [(r.index, r.warmup, r.error, len(r.token_times_ns)) for r in run.records]


@pytest.mark.parametrize(("concurrency", "workers"), [(4, 2), (5, 2), (3, 3), (2, 4)])
def test_shares_split_slots_and_requests_without_overlap(concurrency: int, workers: int) -> None:
    shares = [Share(w, workers, 0) for w in range(workers)]
    assert sum(share.slots(concurrency) for share in shares) == concurrency
    for local in range(50):
        assert sum(share.owns(local, concurrency) for share in shares) == 1
        assert sum(share.owns(local, None) for share in shares) == 1


def test_workers_merged_result_counts_what_one_process_gives(
    fake_server: FakeOpenAIServer,
) -> None:
    plan = PointPlan(concurrency=4, num_requests=14, warmup_requests=4)
    one = _single(fake_server.url, plan)
    two = _split(fake_server.url, plan, 2)
    assert _outcome(two) == _outcome(one)
    assert [r.index for r in two.records] == list(range(18))
    assert two.client_cpu_s > 0
    assert 0 < two.busiest_client_cpu_s < two.client_cpu_s  # one of two processes
    assert two.wall_s > 0


def test_workers_keep_concurrency_in_total(fake_server: FakeOpenAIServer) -> None:
    fake_server.config.ttft_s = 0.05
    fake_server.config.itl_s = 0.01
    run = _split(fake_server.url, PointPlan(concurrency=5, num_requests=15, warmup_requests=0), 2)
    assert fake_server.stats.max_in_flight == 5
    assert len(run.records) == 15
    starts = sorted((r.send_ns, 1) for r in run.records)
    ends = sorted((r.end_ns, -1) for r in run.records)
    in_flight = peak = 0
    for _, step in sorted(ends + starts):  # an end before a start at the same instant
        in_flight += step
        peak = max(peak, in_flight)
    assert peak == 5


@pytest.mark.parametrize("fault", ["http_500", "disconnect", "malformed", "oom"])
def test_workers_classify_failures_as_one_process_does(
    fake_server: FakeOpenAIServer, fault: str
) -> None:
    fake_server.config.fault = fault
    fake_server.config.fault_every = 3  # by arrival: the count, not which ones, is fixed
    plan = PointPlan(concurrency=3, num_requests=12, warmup_requests=0)
    one = Counter(r.error for r in _single(fake_server.url, plan).records)
    two = Counter(r.error for r in _split(fake_server.url, plan, 2).records)
    assert two == one
    assert sum(n for kind, n in two.items() if kind is not None) == 4


def test_workers_split_an_open_loop_schedule(fake_server: FakeOpenAIServer) -> None:
    plan = PointPlan(request_rate=200.0, num_requests=20, warmup_requests=2, seed=7)
    run = _split(fake_server.url, plan, 2)
    assert [r.index for r in run.records] == list(range(22))
    assert [r.warmup for r in run.records] == [True] * 2 + [False] * 20
    offsets = arrival_offsets_s(200.0, seed=7, count=22, warmup=2)
    intended = [r.intended_send_ns for r in run.records]
    assert all(value is not None for value in intended)
    start = intended[0]
    assert start is not None
    for record, offset_s in zip(run.records, offsets, strict=True):
        assert record.intended_send_ns == start + int(offset_s * 1e9)
        assert record.ok


def test_run_benchmark_with_workers_gives_the_same_counts(fake_server: FakeOpenAIServer) -> None:
    def config(workers: int) -> RunConfig:
        return RunConfig(
            endpoint=fake_server.url,
            concurrency=(2, 4),
            num_requests=8,
            warmup_requests=2,
            input_len=parse_length("8"),
            output_len=parse_length("5"),
            timeout_s=10,
            workers=workers,
        )

    one, two = run_benchmark(config(1)), run_benchmark(config(2))
    assert not two.incomplete
    for a, b in zip(one.points, two.points, strict=True):
        assert (b.concurrency, b.completed, b.failed) == (a.concurrency, a.completed, a.failed)
        assert b.output_tokens == a.output_tokens


class _BrokenFactory(RequestFactory):
    """Builds one request, then raises: a bug inside a worker."""

    def build(self, index: int) -> PromptRequest:
        if index > 0:
            raise RuntimeError("broken factory")
        return super().build(index)


def test_worker_failure_is_reported(fake_server: FakeOpenAIServer) -> None:
    spec = WorkloadSpec(profile=get_profile("chat"), input_len=parse_length("8"))
    plan = PointPlan(concurrency=2, num_requests=4)
    with pytest.raises(WorkerFailed, match="broken factory"):
        _split(fake_server.url, plan, 2, _BrokenFactory(spec))


def _worker_children() -> list[int]:
    me = os.getpid()
    try:
        children = Path(f"/proc/{me}/task/{me}/children").read_text().split()
    except OSError:
        return []
    alive = []
    for child in children:
        with contextlib.suppress(OSError):
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                alive.append(int(child))
    return alive


def test_workers_sigterm_while_a_worker_starts_waits_for_it_and_leaves_no_child(
    fake_server: FakeOpenAIServer, capfd: pytest.CaptureFixture[str]
) -> None:
    # 2 MB to send each worker: infermeter is inside a worker's start (writing them to the
    # child, which reads them once its interpreter is up) when the signal comes.
    job = WorkerJob(
        fake_server.url, "fake/model", _factory(), timeout_s=10, workers=3,
        extra_body={"padding": "x" * 2_000_000},
    )  # fmt: skip
    seen: list[int] = []

    def terminate_when_the_first_worker_exists() -> None:
        deadline = time.monotonic() + 30
        while not seen and time.monotonic() < deadline:
            seen.extend(_worker_children())
            time.sleep(0.001)
        os.kill(os.getpid(), signal.SIGTERM)

    sender = threading.Thread(target=terminate_when_the_first_worker_exists)
    plan = PointPlan(concurrency=3, num_requests=30, warmup_requests=0)
    with StopSignals() as signals:
        sender.start()
        with pytest.raises(Terminated):
            asyncio.run(run_point_in_workers(job, plan))
    sender.join()
    assert seen
    assert signals.received == ["SIGTERM"]
    assert fake_server.stats.requests == 0
    deadline = time.monotonic() + 10
    while _worker_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _worker_children() == []
    assert "Traceback" not in capfd.readouterr().err  # no worker failed to read its start


FIRST_WORKER = """
import multiprocessing, signal, time
from infermeter.bench.run.workers import _signals_held
worker = multiprocessing.get_context("spawn").Process(target=time.sleep, args=(30,), daemon=True)
with _signals_held():
    worker.start()
mask = int(open(f"/proc/{worker.pid}/status").read().split("SigBlk:")[1].split()[0], 16)
print("blocked" if mask & 1 << signal.SIGINT - 1 else "deliverable")
worker.terminate()
"""


def test_workers_first_worker_of_a_process_is_born_with_sigint_blocked() -> None:
    """The first worker a process starts launches multiprocessing's resource tracker, which
    unblocks SIGINT after its own start: that worker too must be born with SIGINT blocked,
    or a terminal's Ctrl-C cuts its interpreter's startup short with a traceback. In a fresh
    interpreter (in this one the tracker may already run)."""
    run = subprocess.run(
        [sys.executable, "-c", FIRST_WORKER], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "blocked"


KILLED_PARENT = """
import asyncio, os, sys
from infermeter.bench.run.load import PointPlan
from infermeter.bench.run.workers import WorkerJob, run_point_in_workers
from infermeter.bench.workloads.lengths import parse_length
from infermeter.bench.workloads.profiles import get_profile
from infermeter.bench.workloads.prompts import RequestFactory, WorkloadSpec

spec = WorkloadSpec(
    profile=get_profile("chat"), input_len=parse_length("8"), output_len=parse_length("6")
)
job = WorkerJob(sys.argv[1], "fake/model", RequestFactory(spec), timeout_s=60, workers=1)
said = []

def first_record(record):
    if not said:
        me = os.getpid()
        said.append(open(f"/proc/{me}/task/{me}/children").read().split())
        print(*said[0], flush=True)

asyncio.run(run_point_in_workers(job, PointPlan(concurrency=2, duration_s=600), first_record))
"""


def test_a_worker_ends_when_the_run_that_started_it_is_killed(
    fake_server: FakeOpenAIServer,
) -> None:
    """SIGKILLed mid-point, the parent cannot stop its workers: each sees it gone at its next
    flush and ends, instead of sending load for the rest of the point (600 s here)."""
    launcher = subprocess.Popen(
        [sys.executable, "-c", KILLED_PARENT, fake_server.url], stdout=subprocess.PIPE, text=True
    )
    assert launcher.stdout is not None
    workers = [int(pid) for pid in launcher.stdout.readline().split()]
    try:
        assert workers, "the worker sent no record"
        launcher.kill()
        launcher.wait(30)
        deadline = time.monotonic() + 30
        while any(map(process_alive, workers)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(map(process_alive, workers)), "a worker outlived the killed run"
    finally:
        for pid in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        launcher.kill()
        launcher.stdout.close()
