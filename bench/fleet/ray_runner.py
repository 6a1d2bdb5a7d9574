"""A plan's matrix on a Ray cluster: one task per entry, pinned by its GPU kind's resource.

`run_fleet` connects to an existing cluster (`ray.init(address=…)`; infermeter starts no
cluster and schedules nothing itself) and submits every entry as a Ray task that asks for
`{"gpu_<catalog id>": <gpu count>}`, a custom resource each node advertises for the GPUs it
has (`ray start --resources '{"gpu_h100-sxm": 8}'`). Ray places the tasks; on its node a task
runs the entry's `bench run` (the same options and session as its command line) in a fresh
folder. It is a Ray generator task: as each load point ends it streams the result so far
(marked incomplete) back to the driver, and at the end the result file's text, the exit
status and the ends of its logs.

The driver collects each result as soon as its task ends: it writes `<results>/<entry id>.json`
(temp file and rename), validates it as the registry would, and reports it. A run that ended
early still returns what it measured (the result says incomplete). A task whose node is lost
mid-run keeps the points it had streamed, in `<results>/partial/<entry id>.attempt-<n>.json`;
it is submitted once more, where another live node has the resource, or else those points are
its result (incomplete). An entry that no live node can take is reported instead of waiting
forever. Whatever finished is kept. At the end the set is validated together (`registry
validate` on the collected files) and the summary lists every entry's outcome. The vLLM a
lost worker had launched dies with it (`bench.server`: a parent-death signal).

Nodes need infermeter (and vLLM) installed in the Python that runs `ray start`; paths in the
plan other than `output` (a dataset, a tokenizer, a vllm executable) must exist on each node.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from bench.errors import BenchError
from bench.fleet import FleetError
from bench.fleet.matrix import Matrix, MatrixEntry
from bench.multinode import connect_ray
from registry.tree import PARTIAL_FOLDER  # what each lost attempt had measured

Notify = Callable[[str], None]
Status = Literal["collected", "incomplete", "invalid", "failed", "unplaceable", "cancelled"]
TAIL_LINES = 20
_NODE_ID = re.compile(r"node ID: ([0-9a-f]{16,})")


def _tail(text: str, lines: int = TAIL_LINES) -> str:
    return "\n".join([line for line in text.splitlines() if line.strip()][-lines:])


def run_entry(entry: MatrixEntry) -> Iterator[dict[str, Any]]:
    """On a node: the entry's `bench run` in a fresh folder, as a Ray generator task.

    It yields `{"kind": "checkpoint", "result": <text>, "points": n}` as each load point ends
    (the result so far, marked incomplete), so the driver holds every finished point even if
    this node dies, then `{"kind": "done", ...}` with the result text and the logs' ends. The
    run goes in a thread of this worker (infermeter is imported once per worker, not once
    per run) while this generator hands its checkpoints to Ray."""
    from registry.store import dumps_result

    checkpoints: queue.Queue[str | None] = queue.Queue()
    answer: dict[str, Any] = {}
    failure: list[BaseException] = []

    def work() -> None:
        try:
            answer.update(_run_entry(entry, lambda result: checkpoints.put(dumps_result(result))))
        except BaseException as error:  # raised again below, in the task's own thread
            failure.append(error)
        finally:
            checkpoints.put(None)

    thread = threading.Thread(target=work, name=f"bench run {entry.id}", daemon=True)
    thread.start()
    points = 0
    while (text := checkpoints.get()) is not None:
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


def _run_entry(entry: MatrixEntry, checkpoint: Callable[[Any], None]) -> dict[str, Any]:
    """The entry's `bench run` in a fresh folder; its result text and logs' ends."""
    from bench.plan import session_config
    from bench.session import run_session

    node_id = None
    with contextlib.suppress(Exception):
        import ray

        node_id = ray.get_runtime_context().get_node_id()
    lines: list[str] = []
    exit_code = 0
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="infermeter-fleet-") as folder:
        os.chdir(folder)  # a Ray worker runs one task at a time: the folder is the run's own
        try:
            try:
                outcome = run_session(
                    session_config(entry.options, entry.command),
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
    }


@dataclass(frozen=True)
class FleetConfig:
    """Where the cluster is, where results go, and how often a lost run is tried again."""

    address: str
    results_dir: Path
    retries: int = 1
    poll_s: float = 1.0


@dataclass
class EntryOutcome:
    """What became of one entry."""

    entry_id: str
    status: Status = "failed"
    result_path: Path | None = None
    host: str | None = None
    node_id: str | None = None
    attempts: int = 0
    message: str | None = None
    lost: list[str] = field(default_factory=list)  # one line per attempt lost with its node
    partial: list[Path] = field(default_factory=list)  # the points each lost attempt measured

    def as_json(self) -> dict[str, Any]:
        """The outcome as `bench fleet --json` lists it."""
        return {
            "id": self.entry_id,
            "status": self.status,
            "result": str(self.result_path) if self.result_path else None,
            "host": self.host,
            "node_id": self.node_id,
            "attempts": self.attempts,
            "lost": self.lost,
            "partial": [str(path) for path in self.partial],
            "message": self.message,
        }


@dataclass
class FleetSummary:
    """Every entry's outcome, and the problems of the collected set as a whole."""

    outcomes: list[EntryOutcome]
    results_dir: Path
    set_problems: list[str] = field(default_factory=list)
    interrupted: bool = False

    @property
    def ok(self) -> bool:
        """True when every entry was collected, complete and valid, and the set validates."""
        return (
            not self.interrupted
            and not self.set_problems
            and all(o.status == "collected" for o in self.outcomes)
        )

    def counts(self) -> dict[str, int]:
        """How many entries ended in each status."""
        found: dict[str, int] = {}
        for outcome in self.outcomes:
            found[outcome.status] = found.get(outcome.status, 0) + 1
        return found

    def as_json(self) -> dict[str, Any]:
        """The `--json` object."""
        return {
            "ok": self.ok,
            "results_dir": str(self.results_dir),
            "counts": self.counts(),
            "set_problems": self.set_problems,
            "interrupted": self.interrupted,
            "entries": [outcome.as_json() for outcome in self.outcomes],
        }


def _placeable(ray: Any, entry: MatrixEntry, dead: set[str]) -> bool:
    """Whether a live node advertises the entry's resource in the amount it needs."""
    for node in ray.nodes():
        if not node.get("Alive") or node.get("NodeID") in dead:
            continue
        if node.get("Resources", {}).get(entry.resource, 0) >= entry.gpu_count:
            return True
    return False


def _check_results_dir(matrix: Matrix, results_dir: Path) -> None:
    for entry in matrix.entries:
        path = results_dir / f"{entry.id}.json"
        if path.exists():
            raise FleetError(
                f"{path} exists from an earlier fleet run; remove it or pick another folder",
                "--results-dir",
            )


class _Driver:
    """The collection loop over the submitted tasks."""

    def __init__(self, ray: Any, matrix: Matrix, config: FleetConfig, notify: Notify) -> None:
        self.ray = ray
        self.config = config
        self.notify = notify
        self.remote = ray.remote(run_entry)
        self.entries = {entry.id: entry for entry in matrix.entries}
        self.outcomes = {entry.id: EntryOutcome(entry.id) for entry in matrix.entries}
        self.pending: dict[Any, str] = {}  # Ray's ObjectRefGenerator → entry id
        self.checkpoint: dict[str, str] = {}  # entry id → the result so far of its attempt
        self.dead: set[str] = set()
        self.done = 0

    def _progress(self, entry_id: str, text: str) -> None:
        total = len(self.entries)
        self.notify(f"[{self.done}/{total}] {entry_id}: {text}")

    def submit(self, entry: MatrixEntry) -> None:
        outcome = self.outcomes[entry.id]
        if not _placeable(self.ray, entry, self.dead):
            self._finish(
                entry.id,
                "unplaceable",
                f"no live node advertises {{{entry.resource!r}: {entry.gpu_count}}}",
            )
            return
        outcome.attempts += 1
        self.checkpoint.pop(entry.id, None)
        task = self.remote.options(
            num_cpus=0, resources={entry.resource: entry.gpu_count}, max_retries=0
        )
        self.pending[task.remote(entry)] = entry.id
        attempt = f" (attempt {outcome.attempts})" if outcome.attempts > 1 else ""
        self._progress(entry.id, f"submitted for {entry.gpu_count}× {entry.gpu}{attempt}")

    def _finish(self, entry_id: str, status: Status, message: str | None = None) -> None:
        outcome = self.outcomes[entry_id]
        outcome.status = status
        outcome.message = message
        self.done += 1
        where = f" on {outcome.host}" if outcome.host else ""
        detail = f": {message}" if message else ""
        saved = f" → {outcome.result_path}" if outcome.result_path else ""
        self._progress(entry_id, f"{status}{where}{saved}{detail}")

    def _lost(self, entry_id: str, error: Exception) -> None:
        text = " ".join(str(error).split())
        match = _NODE_ID.search(text)
        if match:
            self.dead.add(match.group(1))
        outcome = self.outcomes[entry_id]
        outcome.lost.append(f"attempt {outcome.attempts}: {type(error).__name__}: {text[:200]}")
        kept = self._keep_partial(entry_id)
        entry = self.entries[entry_id]
        if outcome.attempts <= self.config.retries and _placeable(self.ray, entry, self.dead):
            self._progress(entry_id, f"node lost ({type(error).__name__}); trying another node")
            self.submit(entry)
            return
        if kept is not None:
            # No other attempt: the lost one's points are the entry's result, incomplete.
            from registry.store import write_text_atomic

            path = self.config.results_dir / f"{entry_id}.json"
            write_text_atomic(path, kept.read_text(encoding="utf-8"))
            outcome.result_path = path
            message = f"its node was lost; the points it had measured are kept: {text[:200]}"
            self._finish(entry_id, "incomplete", message)
            return
        self._finish(entry_id, "failed", f"its node was lost and it was not retried: {text[:200]}")

    def _keep_partial(self, entry_id: str) -> Path | None:
        """The lost attempt's result so far, written under `partial/` (None if no point ended)."""
        from registry.store import write_text_atomic

        text = self.checkpoint.pop(entry_id, None)
        if text is None:
            return None
        outcome = self.outcomes[entry_id]
        name = f"{entry_id}.attempt-{outcome.attempts}.json"
        path = self.config.results_dir / PARTIAL_FOLDER / name
        write_text_atomic(path, text)
        outcome.partial.append(path)
        self._progress(entry_id, f"the lost attempt's finished points are kept in {path}")
        return path

    def _collect(self, entry_id: str, answer: dict[str, Any]) -> None:
        from registry.index import read_valid_result
        from registry.store import write_text_atomic
        from registry.validate import validate_paths

        outcome = self.outcomes[entry_id]
        outcome.host, outcome.node_id = answer.get("host"), answer.get("node_id")
        logs = self.config.results_dir / "logs"
        log_text = "\n".join(
            part for part in (answer.get("stderr_tail"), answer.get("log_tail")) if part
        )
        if log_text:
            write_text_atomic(logs / f"{entry_id}.log", log_text + "\n")
        text = answer.get("result")
        if text is None:
            last = (answer.get("stderr_tail") or "").splitlines()[-1:] or ["no result written"]
            self._finish(entry_id, "failed", f"exit {answer.get('exit_code')}: {last[0]}")
            return
        path = self.config.results_dir / f"{entry_id}.json"
        write_text_atomic(path, text)
        outcome.result_path = path
        problems = validate_paths([path]).problems
        if problems:
            self._finish(entry_id, "invalid", str(problems[0]))
            return
        result = read_valid_result(path, str(path))
        source = result.source
        if getattr(source, "complete", True) is False:
            self._finish(entry_id, "incomplete", "the run stopped early; its finished points kept")
            return
        self._finish(entry_id, "collected")

    def _drop_unplaceable(self) -> None:
        for ref, entry_id in list(self.pending.items()):
            if not _placeable(self.ray, self.entries[entry_id], self.dead):
                self.ray.cancel(ref, force=True)
                del self.pending[ref]
                entry = self.entries[entry_id]
                self._finish(
                    entry_id,
                    "unplaceable",
                    f"no live node advertises {{{entry.resource!r}: {entry.gpu_count}}} any more",
                )

    def loop(self) -> None:
        ray = self.ray
        checked = time.monotonic()
        while self.pending:
            ready, _ = ray.wait(list(self.pending), num_returns=1, timeout=self.config.poll_s)
            for stream in ready:
                entry_id = self.pending[stream]
                try:
                    message = ray.get(next(stream))
                except (ray.exceptions.RayError, StopIteration) as error:
                    del self.pending[stream]
                    self._lost(entry_id, error)
                    continue
                if message.get("kind") == "checkpoint":
                    self.checkpoint[entry_id] = message["result"]
                    count = message.get("points")
                    where = f" (worker {message['worker']})" if message.get("worker") else ""
                    points = f"{count} point{'s' * (count != 1)}"
                    self._progress(entry_id, f"{points} kept so far{where}")
                    continue
                del self.pending[stream]
                self.checkpoint.pop(entry_id, None)
                self._collect(entry_id, message)
            if time.monotonic() - checked >= 2 * self.config.poll_s:
                self._drop_unplaceable()
                checked = time.monotonic()

    def cancel_all(self) -> None:
        for ref, entry_id in list(self.pending.items()):
            with contextlib.suppress(Exception):
                self.ray.cancel(ref, force=True)
            del self.pending[ref]
            self._finish(entry_id, "cancelled", "interrupted before it finished")


def run_fleet(
    matrix: Matrix, config: FleetConfig, notify: Notify = lambda line: None
) -> FleetSummary:
    """Run every entry of `matrix` on the Ray cluster at `config.address` (module docstring).

    Raises FleetError when Ray is missing or the cluster cannot be reached; every entry's own
    failure is in the summary instead."""
    _check_results_dir(matrix, config.results_dir)
    with contextlib.redirect_stdout(sys.stderr):  # Ray prints cluster events to stdout
        return _run_fleet(matrix, config, notify)


def _run_fleet(matrix: Matrix, config: FleetConfig, notify: Notify) -> FleetSummary:
    from registry.validate import validate_paths

    ray = connect_ray(config.address, "--ray")
    config.results_dir.mkdir(parents=True, exist_ok=True)
    driver = _Driver(ray, matrix, config, notify)
    summary = FleetSummary([], config.results_dir)
    try:
        nodes = [node for node in ray.nodes() if node.get("Alive")]
        notify(f"Ray cluster at {config.address}: {len(nodes)} live nodes")
        for entry in matrix.entries:
            driver.submit(entry)
        driver.loop()
    except KeyboardInterrupt:
        driver.cancel_all()
        summary.interrupted = True
    finally:
        ray.shutdown()
    summary.outcomes = [driver.outcomes[entry.id] for entry in matrix.entries]
    collected = [o.result_path for o in summary.outcomes if o.result_path is not None]
    if collected:
        report = validate_paths(collected)
        summary.set_problems = [str(problem) for problem in report.problems]
    return summary
