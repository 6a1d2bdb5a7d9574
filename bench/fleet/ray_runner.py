"""A plan's matrix on a Ray cluster: one task per entry, pinned by its GPU kind's resource.

`run_fleet` connects to an existing cluster (`ray.init(address=…)`; infermeter starts no
cluster and schedules nothing itself) and submits every entry as a Ray task that asks for
`{"gpu_<catalog id>": <gpu count>}`, a custom resource each node advertises for the GPUs it
has (`ray start --resources '{"gpu_h100-sxm": 8}'`), and for as many of Ray's own `GPU`s, so
that Ray gives the run GPUs of its own on the node (`CUDA_VISIBLE_DEVICES`, which its vLLM and
telemetry inherit; the summary lists them as `gpu_ids`). Ray places the tasks; on its node a task
runs the entry's `bench run` (the same options and session as its command line) in a fresh
folder (`bench.fleet.ray_task`). It is a Ray generator task: as each load point ends it
streams the result so far (marked incomplete) back to the driver, and at the end the result
file's text, the exit status and the ends of its logs.

The driver collects each result as soon as its task ends (`bench.fleet.results_folder` says
what it writes where): it writes `<results>/<entry id>.json`
(temp file and rename), validates it as the registry would, and reports it. A run that ended
early still returns what it measured (the result says incomplete). The result so far that a
task streams back is written at once to `<results>/partial/<entry id>.attempt-<n>.json`
(removed once the attempt's whole result is written), so it outlives a lost node and a driver
killed outright alike. A task whose node is lost mid-run keeps those points; it is submitted
once more, where another live node has the resource, or else those points are
its result (incomplete). An entry that no live node can take is reported instead of waiting
forever. Whatever finished is kept. At the end the set is validated together (`registry
validate` on the collected files) and the summary lists every entry's outcome. The vLLM a
lost worker had launched dies with it (`bench.launch.server`: a parent-death signal). Ctrl-C or
SIGTERM here asks every run under way to stop (`cancel_all`, through `bench.fleet.ray_stop`);
each task passes it on to its run (`bench.fleet.ray_task`), which stops measuring, keeps the
point under way as interrupted and stops its vLLM as Ctrl-C of `bench run` does, and hands
its result back: each entry's result, incomplete, holds every point it measured. A run that
does not answer in time is cancelled by force and keeps the points it had streamed back.

An entry that serves one model over several hosts (`ray-address:` in the plan) holds whole
nodes of its kind in a placement group for its run, and its task runs in that group
(`bench.fleet.ray_groups`).

Nodes need infermeter (and vLLM) installed in the Python that runs `ray start`; paths in the
plan other than `output` (a dataset, a tokenizer, a vllm executable) must exist on each node.
"""

from __future__ import annotations

import contextlib
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infermeter.bench.fleet import ray_groups, ray_stop
from infermeter.bench.fleet.matrix import Matrix, MatrixEntry
from infermeter.bench.fleet.outcomes import EntryOutcome, FleetSummary, Status
from infermeter.bench.fleet.ray_task import run_entry
from infermeter.bench.fleet.results_folder import ResultsFolder
from infermeter.bench.launch.multinode import connect_ray
from infermeter.bench.session.interrupts import TERMINATED, StopSignals, stop_reason
from infermeter.calculators.plural import counted

Notify = Callable[[str], None]
CANCEL_GRACE_S = 60.0  # how long an interrupted fleet waits for its runs to write and stop
_NODE_ID = re.compile(r"node ID: ([0-9a-f]{16,})")


@dataclass(frozen=True)
class FleetConfig:
    """Where the cluster is, where results go, and how often a lost run is tried again."""

    address: str
    results_dir: Path
    retries: int = 1
    poll_s: float = 1.0


def _placeable(ray: Any, entry: MatrixEntry, dead: set[str]) -> bool:
    """Whether a live node advertises the entry's resource in the amount it needs (a
    multi-node entry: whether the live nodes of its kind can hold it)."""
    if entry.multinode:
        return ray_groups.placeable(ray, entry, dead)
    for node in ray.nodes():
        if not node.get("Alive") or node.get("NodeID") in dead:
            continue
        resources = node.get("Resources", {})
        if min(resources.get(entry.resource, 0), resources.get("GPU", 0)) >= entry.gpu_count:
            return True
    return False


def _nowhere(entry: MatrixEntry) -> str:
    if entry.multinode:
        return f"the live nodes advertising {entry.resource!r} cannot hold {entry.gpu_count} GPUs"
    return (
        f"no live node advertises {{{entry.resource!r}: {entry.gpu_count}}} "
        f"and {entry.gpu_count} GPU{'s' * (entry.gpu_count != 1)}"
    )


class _Driver:
    """The collection loop over the submitted tasks."""

    def __init__(self, ray: Any, matrix: Matrix, config: FleetConfig, notify: Notify) -> None:
        self.ray = ray
        self.config = config
        self.notify = notify
        self.folder = ResultsFolder(config.results_dir)
        self.remote = ray.remote(run_entry)
        self.entries = {entry.id: entry for entry in matrix.entries}
        self.outcomes = {entry.id: EntryOutcome(entry.id) for entry in matrix.entries}
        self.pending: dict[Any, str] = {}  # Ray's ObjectRefGenerator → entry id
        self.checkpoint: dict[str, str] = {}  # entry id → the result so far of its attempt
        self.dead: set[str] = set()
        self.groups: dict[str, Any] = {}  # entry id → the placement group a multi-node one holds
        self.done = 0
        self.stop = ray_stop.stop_name()  # the runs' stop request, made on Ctrl-C
        self.stopping = False
        self._stop_request: Any = None  # its actor, kept while the driver runs
        self.hurried = False  # a second signal: stop waiting for the runs

    def _progress(self, entry_id: str, text: str) -> None:
        total = len(self.entries)
        self.notify(f"[{self.done}/{total}] {entry_id}: {text}")

    def submit(self, entry: MatrixEntry) -> None:
        outcome = self.outcomes[entry.id]
        if not _placeable(self.ray, entry, self.dead):
            self._finish(entry.id, "unplaceable", _nowhere(entry))
            return
        outcome.attempts += 1
        self.checkpoint.pop(entry.id, None)
        where = ""
        if entry.multinode:
            group, split = ray_groups.hold_nodes(self.ray, entry, self.dead)
            self.groups[entry.id] = group
            task = self.remote.options(
                num_cpus=0,
                resources={entry.resource: ray_groups.bundle_amount(group, entry)},
                max_retries=0,
                scheduling_strategy=ray_groups.scheduling(group),
            )
            where = f" over {split.nodes} nodes × {split.gpus_per_node} (a placement group)"
        else:
            # GPUs as well as the kind: Ray then gives the task GPUs of its own on the node
            # (CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES), which the run's vLLM and its
            # telemetry inherit; two entries on one multi-GPU node never share a GPU.
            task = self.remote.options(
                num_cpus=0,
                num_gpus=entry.gpu_count,
                resources={entry.resource: entry.gpu_count},
                max_retries=0,
            )
        self.pending[task.remote(entry, self.stop)] = entry.id
        attempt = f" (attempt {outcome.attempts})" if outcome.attempts > 1 else ""
        self._progress(entry.id, f"submitted for {entry.gpu_count}× {entry.gpu}{where}{attempt}")

    def _note_placement(self, entry_id: str) -> None:
        """A multi-node entry's nodes, from Ray's placement group table, while it holds them."""
        group = self.groups.get(entry_id)
        if group is not None and not self.outcomes[entry_id].placement:
            with contextlib.suppress(Exception):
                self.outcomes[entry_id].placement = ray_groups.group_nodes(self.ray, group)

    def _release(self, entry_id: str) -> None:
        group = self.groups.pop(entry_id, None)
        if group is not None:
            ray_groups.release(self.ray, group)

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
        self._release(entry_id)
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
            outcome.result_path = self.folder.write_result(
                entry_id, kept.read_text(encoding="utf-8")
            )
            message = f"its node was lost; the points it had measured are kept: {text[:200]}"
            self._finish(entry_id, "incomplete", message)
            return
        self._finish(entry_id, "failed", f"its node was lost and it was not retried: {text[:200]}")

    def _hold(self, entry_id: str, text: str) -> None:
        """The attempt's result so far, held here and written to `partial/` at once, so that
        what it measured outlives this driver too (a SIGKILL, an out-of-memory kill)."""
        self.checkpoint[entry_id] = text
        self.folder.hold(entry_id, self.outcomes[entry_id].attempts, text)

    def _superseded(self, entry_id: str) -> None:
        self.folder.supersede(entry_id, self.outcomes[entry_id].attempts)

    def _keep_partial(self, entry_id: str) -> Path | None:
        """The lost attempt's result so far, kept under `partial/` (None if no point ended)."""
        text = self.checkpoint.pop(entry_id, None)
        if text is None:
            return None
        outcome = self.outcomes[entry_id]
        path = self.folder.hold(entry_id, outcome.attempts, text)
        outcome.partial.append(path)
        self._progress(entry_id, f"the lost attempt's finished points are kept in {path}")
        return path

    def _collect(self, entry_id: str, answer: dict[str, Any]) -> None:
        from infermeter.registry.result_reader import read_valid_result
        from infermeter.registry.validate import validate_paths

        outcome = self.outcomes[entry_id]
        outcome.host, outcome.node_id = answer.get("host"), answer.get("node_id")
        outcome.gpu_ids = list(answer.get("gpu_ids") or [])
        log_text = "\n".join(
            part for part in (answer.get("stderr_tail"), answer.get("log_tail")) if part
        )
        if log_text:
            self.folder.write_log(entry_id, log_text)
        text = answer.get("result")
        if text is None and self.stopping:
            self._finish(entry_id, "cancelled", "interrupted before it finished a point")
            return
        if text is None:
            last = (answer.get("stderr_tail") or "").splitlines()[-1:] or ["no result written"]
            self._finish(entry_id, "failed", f"exit {answer.get('exit_code')}: {last[0]}")
            return
        path = self.folder.write_result(entry_id, text)
        self._superseded(entry_id)
        outcome.result_path = path
        problems = validate_paths([path]).problems
        if problems:
            self._finish(entry_id, "invalid", str(problems[0]))
            return
        result = read_valid_result(path, str(path))
        source = result.source
        if getattr(source, "complete", True) is False and self.stopping:
            message = "interrupted; the run stopped and wrote what it had measured"
            self._finish(entry_id, "cancelled", message)
            return
        if getattr(source, "complete", True) is False:
            self._finish(entry_id, "incomplete", "the run stopped early; its finished points kept")
            return
        self._finish(entry_id, "collected")

    def _drop_unplaceable(self) -> None:
        for ref, entry_id in list(self.pending.items()):
            if not _placeable(self.ray, self.entries[entry_id], self.dead):
                self.ray.cancel(ref, force=True)
                del self.pending[ref]
                self._release(entry_id)
                nowhere = _nowhere(self.entries[entry_id])
                self._finish(entry_id, "unplaceable", f"{nowhere} any more")

    def _receive(self, gone: Callable[[str, Exception], None]) -> None:
        """Wait up to `poll_s` for the tasks and handle what came back: a checkpoint is held,
        a task's answer collected; a task that ended without one (its node lost, or
        cancelled) goes to `gone`. While stopping, an answer without a result keeps the
        points streamed before it."""
        ray = self.ray
        ready, _ = ray.wait(list(self.pending), num_returns=1, timeout=self.config.poll_s)
        for stream in ready:
            entry_id = self.pending[stream]
            try:
                message = ray.get(next(stream))
            except (ray.exceptions.RayError, StopIteration) as error:
                del self.pending[stream]
                gone(entry_id, error)
                continue
            self._note_placement(entry_id)
            if message.get("kind") == "checkpoint":
                self._hold(entry_id, message["result"])
                count = message.get("points")
                where = f" (worker {message['worker']})" if message.get("worker") else ""
                points = f"{count} point{'s' * (count != 1)}"
                self._progress(entry_id, f"{points} kept so far{where}")
                continue
            del self.pending[stream]
            self._release(entry_id)
            if self.stopping and message.get("result") is None and entry_id in self.checkpoint:
                self._stopped(entry_id)  # it wrote nothing more: its streamed points
                continue
            self.checkpoint.pop(entry_id, None)
            self._collect(entry_id, message)

    def loop(self) -> None:
        checked = time.monotonic()
        while self.pending:
            self._receive(self._lost)
            if time.monotonic() - checked >= 2 * self.config.poll_s:
                self._drop_unplaceable()
                checked = time.monotonic()

    def hurry(self) -> None:
        """A second Ctrl-C or SIGTERM: stop waiting for the runs to hand their results back."""
        self.hurried = True

    def cancel_all(self) -> None:
        """Stop every run under way as Ctrl-C stops `bench run`. The driver asks the runs to
        stop (`bench.fleet.ray_stop`); each run stops measuring, keeps the point under way as
        interrupted, stops its vLLM and hands its result back, which is collected as usual
        (status "cancelled" when incomplete). What has not answered within CANCEL_GRACE_S (a
        second Ctrl-C or SIGTERM ends the wait, `hurry`) is cancelled by force and keeps the
        points it had streamed back. Where the request cannot be made, a Ray cancel (not
        forced) stops the runs instead, and Ray hands nothing more of a cancelled task back."""
        ray = self.ray
        self.stopping = True
        self._stop_request = ray_stop.request_stop(ray, self.stop)
        if self._stop_request is None:
            for ref in self.pending:
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=False)
        deadline = time.monotonic() + CANCEL_GRACE_S
        with contextlib.suppress(KeyboardInterrupt):
            while self.pending and time.monotonic() < deadline and not self.hurried:
                self._receive(lambda entry_id, error: self._stopped(entry_id))
        for ref, entry_id in list(self.pending.items()):
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
            del self.pending[ref]
            self._stopped(entry_id)

    def _stopped(self, entry_id: str) -> None:
        """An entry cancelled before its result came back: its streamed points, if any."""
        self._release(entry_id)
        text = self.checkpoint.pop(entry_id, None)
        if text is None:
            self._finish(entry_id, "cancelled", "interrupted before it finished a point")
            return
        self.outcomes[entry_id].result_path = self.folder.write_result(entry_id, text)
        self._superseded(entry_id)
        self._finish(entry_id, "cancelled", "interrupted; the points it had finished are kept")


def run_fleet(
    matrix: Matrix, config: FleetConfig, notify: Notify = lambda line: None
) -> FleetSummary:
    """Run every entry of `matrix` on the Ray cluster at `config.address` (module docstring).

    Raises FleetError when Ray is missing or the cluster cannot be reached; every entry's own
    failure is in the summary instead."""
    ResultsFolder(config.results_dir).check_free(matrix)
    with contextlib.redirect_stdout(sys.stderr):  # Ray prints cluster events to stdout
        return _run_fleet(matrix, config, notify)


def _run_fleet(matrix: Matrix, config: FleetConfig, notify: Notify) -> FleetSummary:
    from infermeter.registry.validate import validate_paths

    ray = connect_ray(config.address, "--ray")
    config.results_dir.mkdir(parents=True, exist_ok=True)
    driver = _Driver(ray, matrix, config, notify)
    summary = FleetSummary([], config.results_dir)
    # Ctrl-C and SIGTERM (what GitHub Actions, Kubernetes and systemd send) alike: the first
    # stops the runs, keeping what they measured; a later one ends the wait for them.
    with StopSignals() as signals:
        signals.on_repeat = driver.hurry
        try:
            nodes = [node for node in ray.nodes() if node.get("Alive")]
            notify(f"Ray cluster at {config.address}: {counted(len(nodes), 'live node')}")
            for entry in matrix.entries:
                driver.submit(entry)
            driver.loop()
        except KeyboardInterrupt as stop:
            signals.finishing()
            # Which signal it was, as StopSignals noted it: Ray's calls raise a plain
            # KeyboardInterrupt for whatever interrupted them.
            reason = TERMINATED if signals.received[:1] == ["SIGTERM"] else stop_reason(stop)
            notify(f"{reason}: asking every run to stop and hand back what it measured")
            driver.cancel_all()
            summary.interrupted = True
            summary.stop_reason = reason
        finally:
            ray.shutdown()
    summary.outcomes = [driver.outcomes[entry.id] for entry in matrix.entries]
    collected = [o.result_path for o in summary.outcomes if o.result_path is not None]
    if collected:
        report = validate_paths(collected)
        summary.set_problems = [str(problem) for problem in report.problems]
    return summary
