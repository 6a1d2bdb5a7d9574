"""One `bench run` from start to finish: launch vLLM (or use an endpoint), measure, write.

`run_session` resolves what the result file will need before anything slow starts (the GPU's
and the model's catalog ids), starts vLLM when no endpoint is given, runs the load points with
telemetry (NVML and the engine's `/metrics`, see `bench.telemetry.sampler`), stops the server
whatever happens, then assembles, validates and writes the result. A server that dies mid-run ends
the run: the point it died in is discarded, the finished points are kept and the result is marked
incomplete (so is a run cut by Ctrl-C or SIGTERM, see `bench.session.interrupts`, which also keeps
the point under way with the requests that finished, marked `interrupted`, see
`bench.run.interrupted`; a second signal kills vLLM at once and still lets the result be written).
An `--output` that cannot be written is refused before anything starts. When no point has a
completed measured request there is no result: only the raw records of the requests that
finished are written, if any did (`SessionOutcome.raw_records`).

Default paths: the result goes to `--output` (a launched run without it writes
`./infermeter-result.json`); vLLM's log to `<stem>.vllm.log` and the raw records to
`<stem>.requests.jsonl.gz` beside it.

Its parts: `config` (`SessionConfig`, `SessionOutcome`), `deployment_plan` (the
deployment identity known before the run), `point_observer` (telemetry per point, the server's
watchdog) and `lines` (what it tells).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

from infermeter.bench.errors import BenchConfigError
from infermeter.bench.launch.engines import ServerFacts, identify_server
from infermeter.bench.launch.multinode import (
    NodeSplit,
    check_placement,
    cluster_node_gpus,
    placement_group_ids,
    split_over_nodes,
)
from infermeter.bench.launch.served import answer_problem, endpoint_is_local, engine_of
from infermeter.bench.launch.server import ServerConfig, VllmServer
from infermeter.bench.launch.vllm_log import StartupFigures
from infermeter.bench.result.assemble import build_result
from infermeter.bench.result.deployment import Deployment
from infermeter.bench.result.deployment_plan import (
    endpoint_model,
    launched_gpu_count,
    plan_deployment,
)
from infermeter.bench.result.model_entry import entry_for_run
from infermeter.bench.result.output import keep_raw_records, write_run
from infermeter.bench.result.provenance import Provenance, default_submitter, engine_host
from infermeter.bench.run.config import RunConfig, RunResult
from infermeter.bench.run.hooks import RunProgress
from infermeter.bench.run.point_plans import long_point_notes, plan_points
from infermeter.bench.run.point_summary import PointSummary
from infermeter.bench.run.runner import RunWorkload, prepare_workload, run_benchmark
from infermeter.bench.session.config import Notify, SessionConfig, SessionOutcome
from infermeter.bench.session.interrupts import StopSignals
from infermeter.bench.session.lines import split_line, startup_line
from infermeter.bench.session.point_observer import PointObserver
from infermeter.bench.telemetry.engine_metrics import server_cache_config
from infermeter.bench.telemetry.host import client_info
from infermeter.bench.telemetry.nvml import GpuInventory, NvmlGpus, open_gpus
from infermeter.bench.telemetry.sampler import TelemetrySampler
from infermeter.registry.builder import unchecked
from infermeter.registry.models import EngineIdentity, Result
from infermeter.registry.secrets import redact

__all__ = ["DEFAULT_OUTPUT", "UNFINISHED", "run_session"]

DEFAULT_OUTPUT = Path("infermeter-result.json")

# The stop reason of a checkpoint: the result as it stood when its last point ended.
UNFINISHED = "the run had not finished: the points measured before its last checkpoint"


def run_session(
    config: SessionConfig,
    on_point: Callable[[PointSummary], None] | None = None,
    notify: Notify = lambda line: None,
    progress: RunProgress | None = None,
    checkpoint: Callable[[Result], None] | None = None,
) -> SessionOutcome:
    """Run the whole session (see the module docstring); raises BenchError subclasses.
    `on_point` and `progress` follow the load points as `run_benchmark`'s do; `checkpoint`
    gets, after each finished point, the result so far, marked incomplete (`bench fleet`
    sends it to the driver, so a run whose host dies keeps its points). SIGTERM is Ctrl-C
    meanwhile, and no signal stops the result being written (`bench.session.interrupts`)."""
    plan_points(config.run)  # a bad load option fails before a model is loaded
    workload = prepare_workload(config.run)  # and a bad trace, dataset or tokenizer
    for line in long_point_notes(workload.plans):
        notify(line)
    if config.output is not None:
        _check_output(config.output)
    with StopSignals() as signals:
        return _run_session(config, workload, on_point, notify, progress, signals, checkpoint)


def _check_output(output: Path) -> None:
    """Refuse an output that cannot be written before anything is started or sent."""
    from infermeter.registry.errors import UnwritableError
    from infermeter.registry.store import check_writable

    try:
        check_writable(output)
    except UnwritableError as error:
        message = f"{error}; name a file in a folder you can write"
        raise BenchConfigError(message, "--output") from None


def _run_session(
    config: SessionConfig,
    workload: RunWorkload,
    on_point: Callable[[PointSummary], None] | None,
    notify: Notify,
    progress: RunProgress | None,
    signals: StopSignals,
    checkpoint: Callable[[Result], None] | None = None,
) -> SessionOutcome:
    session = _Session(config, notify, dt.datetime.now(dt.UTC), config.run)
    _place(session)
    _identify_endpoint(session)
    with _telemetry(session):
        _plan(session)
        with _launched(session, signals):
            run, observer = _measure(session, workload, on_point, progress, checkpoint)
            signals.finishing()  # from here a signal hurries the stop; it never skips the write
    return _write(session, run, observer)


@dataclass
class _Session:
    """What a session learns as it goes, step by step (see `_run_session`)."""

    config: SessionConfig
    notify: Notify
    started_at: dt.datetime
    run_config: RunConfig  # a launched server's URL and model once it is up
    gpu_count: int | None = None
    split: NodeSplit | None = None
    local: bool = True
    facts: ServerFacts | None = None
    # An endpoint's memory plan, as vLLM states it in /metrics (a launched one's: its log too)
    endpoint_startup: StartupFigures | None = None
    gpus: NvmlGpus | None = None
    inventory: GpuInventory | None = None
    notes: list[str] = field(default_factory=list)
    engine_name: str = "unknown"
    version: str | None = None
    deployment: Deployment | None = None
    server: VllmServer | None = None

    @property
    def startup(self) -> StartupFigures | None:
        """The server's memory plan: a launched one's from its log, an endpoint's from /metrics."""
        return self.server.startup if self.server is not None else self.endpoint_startup

    def deployed(self, deployment: Deployment) -> Deployment:
        """`deployment` with the engine as it turned out to be."""
        engine = unchecked(EngineIdentity, name=self.engine_name, version=self.version or "unknown")
        return replace(deployment, engine=engine)

    def provenance(self) -> Provenance:
        """Who ran what, where and when; no API key or token is ever stored."""
        config, server = self.config, self.server
        server_command = (
            redact(shlex.join(server.command))
            if server is not None
            else redact(config.options.server_command)
            if config.options.server_command
            else None
        )
        return Provenance(
            command=redact(config.command),
            server_command=server_command,
            started_at=self.started_at,
            finished_at=dt.datetime.now(dt.UTC),
            submitter=config.options.submitter or default_submitter(),
            host=engine_host(
                self.inventory, server is not None, self.local, self.engine_name, self.version
            ),
            client=client_info(),
            server=self.facts,
        )


def _place(session: _Session) -> None:
    """Placement: the GPUs a launched vLLM uses, and how a Ray cluster's nodes share them."""
    server_config = session.config.server
    if server_config is None:
        return
    session.gpu_count = launched_gpu_count(server_config)
    if server_config.ray_address:
        address = server_config.ray_address
        node_gpus = cluster_node_gpus(address, session.config.options.gpu_id)
        session.split = split_over_nodes(session.gpu_count, node_gpus, address)
        session.notify(f"vLLM over the Ray cluster at {address}: {split_line(session.split)}")


def _identify_endpoint(session: _Session) -> None:
    """An endpoint's engine as it reports itself, and its memory plan; whether it is local."""
    endpoint = session.config.run.endpoint
    launched = session.config.server is not None
    session.local = launched or endpoint_is_local(endpoint)
    if launched:
        return
    unanswered = answer_problem(endpoint)
    if unanswered is not None:
        # Nothing to ask it: `_plan` refuses it, or the run where it asks for the models.
        session.run_config = replace(session.run_config, unanswered=unanswered)
        return
    session.facts = identify_server(endpoint)
    session.endpoint_startup = server_cache_config(endpoint)
    if session.facts is not None:
        session.engine_name, session.version = session.facts.engine, session.facts.version


@contextlib.contextmanager
def _telemetry(session: _Session) -> Iterator[None]:
    """Telemetry: NVML on this host's GPUs, closed whatever happens; a note says why not."""
    config = session.config
    indices = config.options.gpu_indices or None
    reason: str | None
    if not session.local and not indices:
        endpoint = config.run.endpoint
        reason = f"{endpoint} is on another host; name its GPUs here with --gpu-indices if not"
    else:
        # On several hosts NVML sees this one's GPUs only: a node's share.
        count = session.split.gpus_per_node if session.split else session.gpu_count
        session.gpus, reason = open_gpus(count, indices)
    gpus = session.gpus
    if gpus is None:
        session.notes.append(f"no GPU telemetry: {reason}")
    session.inventory = gpus.inventory if gpus else None
    try:
        yield
    finally:
        if gpus is not None:
            gpus.close()


def _plan(session: _Session) -> None:
    """The engine an endpoint's result names, and the deployment known before the run."""
    config = session.config
    if config.output is None:
        return
    if config.server is None:
        options = config.options
        session.engine_name, session.version, engine_notes = engine_of(
            session.facts,
            options.engine,
            options.engine_version,
            config.run.endpoint,
            session.run_config.unanswered,
        )
        session.notes += engine_notes
    session.deployment = plan_deployment(
        config, session.inventory, session.notify, session.facts, session.split
    )


@contextlib.contextmanager
def _launched(session: _Session, signals: StopSignals) -> Iterator[None]:
    """Launch: vLLM started when no endpoint is given, and stopped whatever happens."""
    server_config = session.config.server
    if server_config is None:
        yield
        return
    server = session.server = VllmServer(server_config)
    signals.on_repeat = partial(_hurry, server, session.notify)
    try:
        _start(session, server, server_config)
        yield
    finally:
        server.stop()


def _start(session: _Session, server: VllmServer, server_config: ServerConfig) -> None:
    """Start vLLM, check where Ray placed its ranks, and point the run at it."""
    notify = session.notify
    notify(f"starting vLLM (log: {server_config.log_path}) …")
    ray_address = server_config.ray_address if session.split is not None else None
    groups = placement_group_ids(ray_address) if ray_address else set()
    server.start()
    if ray_address:
        session.deployment = _placed(
            session.deployment, ray_address, session.config.options.gpu_id, groups, notify,
            server_config.ray_nodes,
        )  # fmt: skip
    startup = server.startup
    notify(
        f"vLLM {server.version or '?'} ready at {server.url} in "
        f"{startup.startup_s or 0:.1f} s: {startup_line(startup)}"
    )
    session.run_config = replace(session.run_config, endpoint=server.url, model=server_config.model)
    session.engine_name, session.version = "vllm", server.version


def _measure(
    session: _Session,
    workload: RunWorkload,
    on_point: Callable[[PointSummary], None] | None,
    progress: RunProgress | None,
    checkpoint: Callable[[Result], None] | None,
) -> tuple[RunResult, PointObserver]:
    """Measure: the load points, with telemetry per point and a checkpoint after each."""
    sampler = TelemetrySampler(session.gpus, engine_url=session.run_config.endpoint)
    # Every record is kept: the raw records are written on request, and whenever the result
    # cannot be.
    observer = PointObserver(sampler, session.server)
    keep = partial(_keep_so_far, session, observer, checkpoint) if checkpoint is not None else None
    run = run_benchmark(
        session.run_config,
        on_point=on_point,
        observer=observer,
        progress=progress,
        on_run=keep,
        workload=workload,
    )
    return run, observer


def _keep_so_far(
    session: _Session,
    observer: PointObserver,
    checkpoint: Callable[[Result], None],
    so_far: RunResult,
) -> None:
    """Send `checkpoint` the result so far, marked incomplete; the run goes on without it."""
    if session.deployment is None:
        return
    partial_run = replace(
        so_far, points=list(so_far.points), incomplete=True, stop_reason=UNFINISHED
    )
    deployed = session.deployed(session.deployment)
    with contextlib.suppress(Exception):  # a copy: the run goes on without it
        checkpoint(
            build_result(
                partial_run,
                session.run_config,
                deployed,
                observer.kept[: len(partial_run.points)],
                session.startup,
                session.provenance(),
            )
        )


def _write(session: _Session, run: RunResult, observer: PointObserver) -> SessionOutcome:
    """Write: the result file, or only the raw records when no point has a result."""
    config, server_config = session.config, session.config.server
    outcome = SessionOutcome(
        run=run,
        telemetry=observer.kept,
        notes=session.notes,
        log_path=server_config.log_path if server_config else None,
        startup=session.startup,
        engine_version=session.version,
    )
    if session.deployment is None or config.output is None:
        return outcome
    deployment = outcome.deployment = session.deployed(session.deployment)
    if not run.points:
        if observer.records:  # warm-ups, failures or a cut-short point: still measured
            outcome.raw_records = keep_raw_records(config.output, observer.records)
        return outcome
    entry = None
    served = server_config.model if server_config else endpoint_model(config, session.facts)
    if served is not None:
        entry, entry_notes = entry_for_run(served, deployment.model.id, config.output)
        session.notes += entry_notes
    written = write_run(
        config.output,
        lambda: build_result(
            run,
            session.run_config,
            deployment,
            observer.kept,
            outcome.startup,
            session.provenance(),
        ),
        run.points,
        observer.records,
        config.options.raw_records,
        entry,
    )
    outcome.result, outcome.output = written.result, written.path
    outcome.raw_records = written.raw_records
    return outcome


def _hurry(server: VllmServer, notify: Notify) -> None:
    """A second Ctrl-C or SIGTERM: kill vLLM instead of waiting for its graceful exit."""
    notify("stop signal again: killing vLLM now; what was measured is still written")
    server.kill()


def _placed(
    deployment: Deployment | None,
    address: str,
    gpu_id: str | None,
    before: set[str],
    notify: Notify,
    held: tuple[str, ...] = (),
) -> Deployment | None:
    """The deployment with the nodes vLLM's ranks were actually placed on
    (`bench.launch.multinode`);
    EndpointError, before anything is measured, when a rank is on another GPU kind's node."""
    placed = check_placement(address, gpu_id, before, held)
    if placed is None:
        notify("vLLM's placement group cannot be told apart from others: its nodes are unchecked")
        return deployment
    split = placed.split
    shape = split_line(split) if split else f"{len(placed.node_ids)} nodes, unevenly"
    within = f", all held for it ({len(held)})" if held else ""
    notify(f"vLLM's ranks are on {shape}: Ray nodes {', '.join(placed.node_ids)}{within}")
    if deployment is None or split is None:
        return deployment
    spread = {"nodes": split.nodes, "gpus_per_node": split.gpus_per_node}
    return replace(deployment, gpu=deployment.gpu.model_copy(update=spread))
