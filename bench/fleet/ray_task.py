"""One `bench fleet` entry on its node: the Ray task that runs its `bench run`.

`run_entry` is a Ray generator task. It runs the entry's `bench run` (the same options and
session as its command line) in a fresh folder, in a thread of the worker, and streams back
the result so far (marked incomplete) as each load point ends, then the result file's text,
the exit status and the ends of its logs. SIGTERM to the worker, and a Ray cancel, stop the
run as they stop `bench run` on the command line (`bench.session.interrupts.pass_on`).
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import socket
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from infermeter.bench.errors import BenchError
from infermeter.bench.fleet import ray_stop
from infermeter.bench.fleet.matrix import MatrixEntry
from infermeter.bench.fleet.ray_groups import with_cluster_address
from infermeter.bench.session.interrupts import INTERRUPTED, stop_reason

if TYPE_CHECKING:
    from infermeter.bench.session.config import SessionConfig

TAIL_LINES = 20


def _tail(text: str, lines: int = TAIL_LINES) -> str:
    return "\n".join([line for line in text.splitlines() if line.strip()][-lines:])


def run_entry(entry: MatrixEntry, stop: str | None = None) -> Iterator[dict[str, Any]]:
    """On a node: the entry's `bench run` in a fresh folder, as a Ray generator task.

    It yields `{"kind": "checkpoint", "result": <text>, "points": n}` as each load point ends
    (the result so far, marked incomplete), so the driver holds every finished point even if
    this node dies, then `{"kind": "done", ...}` with the result text and the logs' ends. The
    run goes in a thread of this worker (infermeter is imported once per worker, not once
    per run) while this generator hands its checkpoints to Ray.

    A SIGTERM or SIGINT to the worker, a Ray cancel (`ray.cancel(ref)`, which raises
    KeyboardInterrupt in the task through the SIGINT handler), or the driver's stop request
    `stop` (`bench.fleet.ray_stop`: how Ctrl-C of `bench fleet` reaches the run) stops the run
    as it stops `bench run` on the command line (`bench.session.interrupts.pass_on`): the points
    finished so far and the one under way (as interrupted) are written and vLLM is stopped.
    After a signal or a stop request the result (incomplete) is still handed back; after a
    Ray cancel Ray hands nothing more to the driver, which keeps the points streamed before."""
    from infermeter.registry.store import dumps_result

    checkpoints: queue.Queue[str | None] = queue.Queue()
    answer: dict[str, Any] = {}
    failure: list[BaseException] = []

    held = _held_nodes() if entry.multinode else ()
    ray = sys.modules.get("ray")  # imported and connected in a Ray worker; never started here
    watching = stop is not None and ray is not None and ray.is_initialized()
    if watching and stop is not None and ray_stop.requested(ray, stop):
        yield {"kind": "done", **_not_begun()}  # stopped while it waited to be placed
        return

    def keep(result: Any) -> None:
        checkpoints.put(dumps_result(result))

    def work() -> None:
        try:
            answer.update(_run_entry(entry, keep, held))
        except BaseException as error:  # raised again below, in the task's own thread
            failure.append(error)
        finally:
            checkpoints.put(None)

    thread = threading.Thread(target=work, name=f"bench run {entry.id}", daemon=True)
    thread.start()
    ended = threading.Event()
    if watching:
        watcher = (ray, stop, thread, ended)
        threading.Thread(target=ray_stop.watch, args=watcher, daemon=True).start()
    points = 0
    with _signals_to(thread), _setting(ended):
        while (text := _next(checkpoints, thread)) is not None:
            points += 1
            yield {
                "kind": "checkpoint",
                "result": text,
                "points": points,
                "worker": f"{os.getpid()} on {socket.gethostname()}",
            }
        thread.join()
    if failure:
        raise failure[0]
    yield {"kind": "done", **answer}


@contextlib.contextmanager
def _setting(event: threading.Event) -> Iterator[None]:
    """`event` set on the way out, however the block ends (the stop watcher's end)."""
    try:
        yield
    finally:
        event.set()


def _not_begun() -> dict[str, Any]:
    """The answer of a run stopped before it began: no result, the reason."""
    return {
        "exit_code": 1,
        "result": None,
        "stderr_tail": f"Error: {INTERRUPTED} before the run began",
        "log_tail": "",
        "host": socket.gethostname(),
        "node_id": None,
        "gpu_ids": [],
    }


def _next(checkpoints: queue.Queue[str | None], thread: threading.Thread) -> str | None:
    """The next checkpoint (None: the run ended), waking often: a signal is handled only
    between waits (Ray's cancel interrupts the main thread without a real signal)."""
    while True:
        try:
            return checkpoints.get(timeout=0.2)
        except queue.Empty:
            if not thread.is_alive() and checkpoints.empty():
                return None


@contextlib.contextmanager
def _signals_to(thread: threading.Thread) -> Iterator[None]:
    """While the run is under way, SIGINT and SIGTERM to this worker go to the run's thread."""
    from infermeter.bench.session.interrupts import pass_on

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handle(number: int, frame: object) -> None:
        if thread.ident is not None:
            pass_on(thread.ident, number)

    previous = {number: signal.signal(number, handle) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _held_by(config: SessionConfig, held: tuple[str, ...]) -> SessionConfig:
    """The session with vLLM's ranks confined to the `held` nodes (checked once it is up)."""
    if not held or config.server is None:
        return config
    return replace(config, server=replace(config.server, ray_nodes=held))


def _held_nodes() -> tuple[str, ...]:
    """The nodes of the placement group this task runs in (a multi-node entry's, held by the
    driver, `bench.fleet.ray_groups`): vLLM's ranks must be on them. Read in the task's own
    thread: Ray knows a task's placement group there only."""
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return ()
    with contextlib.suppress(Exception):  # unreadable: the run checks the kind's nodes only
        group = ray.util.get_current_placement_group()
        if group is not None:
            table = ray.util.placement_group_table(group)
            return tuple(sorted(set(table.get("bundles_to_node_id", {}).values())))
    return ()


def _run_entry(
    entry: MatrixEntry, checkpoint: Callable[[Any], None], held: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The entry's `bench run` in a fresh folder; its result text and logs' ends."""
    from infermeter.bench.session.builder import session_config
    from infermeter.bench.session.session import run_session

    node_id, gpu_ids = None, []
    options, command = entry.options, entry.command
    ray = sys.modules.get("ray")  # imported and connected in a Ray worker; never started here
    if ray is not None and ray.is_initialized():
        context = ray.get_runtime_context()
        node_id = context.get_node_id()
        gpu_ids = [str(gpu) for gpu in context.get_accelerator_ids().get("GPU", [])]
        if entry.multinode:  # vLLM over this task's own cluster (bench.fleet.ray_groups)
            options, command = with_cluster_address(entry, context.gcs_address)
    lines: list[str] = []
    exit_code = 0
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="infermeter-fleet-") as folder:
        os.chdir(folder)  # a Ray worker runs one task at a time: the folder is the run's own
        try:
            try:
                outcome = run_session(
                    _held_by(session_config(options, command), held),
                    notify=lines.append,
                    checkpoint=checkpoint,
                )
                lines += outcome.notes
                if outcome.run.incomplete:
                    exit_code = 1
                    lines.append(f"Error: the run is incomplete: {outcome.run.stop_reason}")
            except BenchError as error:
                exit_code = error.exit_code
                lines.append(f"Error: {error.one_line()}")
            except KeyboardInterrupt as stop:  # stopped before any point could be measured
                exit_code = 1
                lines.append(f"Error: {stop_reason(stop)} before the run began")
            output = Path(folder) / entry.output
            log = Path(folder) / entry.log
            result = output.read_text(encoding="utf-8") if output.is_file() else None
            log_text = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
        finally:
            os.chdir(here)
    return {
        "exit_code": exit_code,
        "result": result,
        "stderr_tail": _tail("\n".join(lines)),
        "log_tail": _tail(log_text),
        "host": socket.gethostname(),
        "node_id": node_id,
        "gpu_ids": gpu_ids,
    }
