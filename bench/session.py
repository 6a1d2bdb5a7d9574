"""One `bench run` from start to finish: launch vLLM (or use an endpoint), measure, write.

`run_session` resolves what the result file will need before anything slow starts (the GPU's
and the model's catalog ids), starts vLLM when no endpoint is given, runs the load points with
telemetry (NVML and the engine's `/metrics`, see `bench.telemetry`), stops the server whatever
happens, then assembles, validates and writes the result. A server that dies mid-run ends the
run: the point it died in is discarded, the finished points are kept and the result is marked
incomplete (so is a run cut by Ctrl-C or SIGTERM, see `bench.interrupts`, which also keeps the
point under way with the requests that finished, marked `interrupted`, see
`bench.interrupted`; a second signal kills vLLM at once and still lets the result be written).
An `--output` that cannot be written is refused before anything starts. When no point has a
completed measured request there is no result: only the raw records of the requests that
finished are written, if any did (`SessionOutcome.raw_records`).

Default paths: the result goes to `--output` (a launched run without it writes
`./infermeter-result.json`); vLLM's log to `<stem>.vllm.log` and the raw records to
`<stem>.requests.jsonl.gz` beside it.

Its parts: `session_config` (`SessionConfig`, `SessionOutcome`) and `deployment_plan` (the
deployment identity known before the run); this module re-exports their public names.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import getpass
import shlex
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path

from bench.client import RequestRecord
from bench.deployment_plan import launched_gpu_count, plan_deployment, serving_options
from bench.engine_metrics import MetricsSample, engine_window, scrape_metrics
from bench.engines import identify_server
from bench.errors import BenchConfigError
from bench.host import HostInfo, client_info, host_info
from bench.interrupts import StopSignals
from bench.load import PointPlan
from bench.metrics import PointSummary
from bench.model_entry import entry_for_run
from bench.multinode import (
    NodeSplit,
    check_placement,
    cluster_node_gpus,
    placement_group_ids,
    split_over_nodes,
)
from bench.nvml import GpuInventory, NvmlGpus, open_gpus
from bench.output import keep_raw_records, write_run
from bench.result import Deployment, PointTelemetry, Provenance, build_result
from bench.runner import RunProgress, RunResult, plan_points, run_benchmark
from bench.served import endpoint_is_local, engine_of
from bench.server import VllmServer
from bench.session_config import Notify, SessionConfig, SessionOutcome
from bench.telemetry import TelemetrySampler, gpu_window
from bench.vllm_log import StartupFigures
from registry.models import Result
from registry.secrets import redact

__all__ = [
    "DEFAULT_OUTPUT",
    "SERVER_EXIT_GRACE_S",
    "UNFINISHED",
    "Notify",
    "SessionConfig",
    "SessionOutcome",
    "default_submitter",
    "incomplete_line",
    "launched_gpu_count",
    "plan_deployment",
    "run_session",
    "serving_options",
]

DEFAULT_OUTPUT = Path("infermeter-result.json")

# How long to wait for vLLM to exit once every request of a point failed.
SERVER_EXIT_GRACE_S = 2.0
# The stop reason of a checkpoint: the result as it stood when its last point ended.
UNFINISHED = "the run had not finished: the points measured before its last checkpoint"


def default_submitter() -> str:
    """`git config github.user`, else the login name."""
    try:
        completed = subprocess.run(
            ["git", "config", "--get", "github.user"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
        if completed.returncode == 0 and completed.stdout.strip():
            return completed.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


class _Observer:
    """Telemetry per point, and the watchdog of a launched server."""

    def __init__(self, sampler: TelemetrySampler, server: VllmServer | None) -> None:
        self.sampler = sampler
        self.server = server
        self.before: MetricsSample | None = None
        self.kept: list[PointTelemetry | None] = []
        self.records: list[tuple[int, bool, Sequence[RequestRecord]]] = []

    def point_started(self, plan: PointPlan) -> None:
        url = self.sampler.engine_url
        self.before = scrape_metrics(url) if url else None
        self.sampler.start()

    def point_ended(
        self, records: Sequence[RequestRecord], summary: PointSummary | None
    ) -> str | None:
        self.sampler.stop()
        url = self.sampler.engine_url
        after = scrape_metrics(url) if url and records else None
        died = self.server.exit_code() if self.server is not None else None
        measured_records = [r for r in records if not r.warmup]
        if (
            died is None
            and self.server is not None
            and measured_records
            and not any(r.ok for r in measured_records)
        ):
            # Every request failed: the connection may reset before the process has exited.
            died = self.server.wait_exit(SERVER_EXIT_GRACE_S)
        kept = summary is not None and died is None
        if records:
            self.records.append((len(self.records) + 1, kept, list(records)))
        if died is not None:
            assert self.server is not None
            log = self.server.config.log_path
            return f"vLLM exited with code {died} during the run (log: {log})"
        if summary is None:
            return None
        measured = [r for r in records if not r.warmup]
        start_ns = min((r.send_ns for r in measured), default=0)
        end_ns = max((r.end_ns for r in measured), default=0)
        gpu = gpu_window(self.sampler.gpu_samples, start_ns, end_ns)
        engine = engine_window(self.before, after, self.sampler.engine_samples, start_ns, end_ns)
        self.kept.append(PointTelemetry(gpu, engine) if gpu or engine else None)
        return None


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
    meanwhile, and no signal stops the result being written (`bench.interrupts`)."""
    plan_points(config.run)  # a bad load option fails before a model is loaded
    if config.output is not None:
        _check_output(config.output)
    with StopSignals() as signals:
        return _run_session(config, on_point, notify, progress, signals, checkpoint)


def _check_output(output: Path) -> None:
    """Refuse an output that cannot be written before anything is started or sent."""
    from registry.errors import UnwritableError
    from registry.store import check_writable

    try:
        check_writable(output)
    except UnwritableError as error:
        message = f"{error}; name a file in a folder you can write"
        raise BenchConfigError(message, "--output") from None


def _run_session(
    config: SessionConfig,
    on_point: Callable[[PointSummary], None] | None,
    notify: Notify,
    progress: RunProgress | None,
    signals: StopSignals,
    checkpoint: Callable[[Result], None] | None = None,
) -> SessionOutcome:
    started_at = dt.datetime.now(dt.UTC)
    server_config = config.server
    gpu_count = launched_gpu_count(server_config) if server_config is not None else None
    split: NodeSplit | None = None
    if server_config is not None and server_config.ray_address and gpu_count is not None:
        address = server_config.ray_address
        node_gpus = cluster_node_gpus(address, config.gpu_id)
        split = split_over_nodes(gpu_count, node_gpus, address)
        notify(f"vLLM over the Ray cluster at {address}: {_split_line(split)}")
    endpoint = config.run.endpoint
    local = server_config is not None or endpoint_is_local(endpoint)
    facts = identify_server(endpoint) if server_config is None else None
    gpus: NvmlGpus | None = None
    reason: str | None = "telemetry is off"
    if config.telemetry and not local and not config.gpu_indices:
        reason = f"{endpoint} is on another host; name its GPUs here with --gpu-indices if not"
    elif config.telemetry:
        # On several hosts NVML sees this one's GPUs only: a node's share.
        gpus, reason = open_gpus(split.gpus_per_node if split else gpu_count, config.gpu_indices)
    notes = [f"no GPU telemetry: {reason}"] if gpus is None else []
    inventory = gpus.inventory if gpus else None
    engine_name = facts.engine if facts is not None else "unknown"
    version = facts.version if facts is not None else None
    try:
        if config.output is not None and server_config is None:
            engine_name, version, engine_notes = engine_of(
                facts, config.engine, config.engine_version, endpoint
            )
            notes += engine_notes
        deployment = (
            plan_deployment(config, inventory, notify, facts, split)
            if config.output is not None
            else None
        )
        server = VllmServer(server_config) if server_config is not None else None
        if server is not None:
            signals.on_repeat = partial(_hurry, server, notify)

        def provenance() -> Provenance:
            return Provenance(
                command=redact(config.command),  # no API key or token is ever stored
                server_command=(
                    redact(shlex.join(server.command))
                    if server is not None
                    else redact(config.server_command)
                    if config.server_command
                    else None
                ),
                started_at=started_at,
                finished_at=dt.datetime.now(dt.UTC),
                submitter=config.submitter or default_submitter(),
                host=_host(inventory, server is not None, local, engine_name, version),
                client=client_info(),
                server=facts,
            )

        run_config = config.run
        try:
            if server is not None:
                assert server_config is not None
                notify(f"starting vLLM (log: {server_config.log_path}) …")
                ray_address = server_config.ray_address if split is not None else None
                groups = placement_group_ids(ray_address) if ray_address else set()
                server.start()
                if ray_address:
                    deployment = _placed(
                        deployment, ray_address, config.gpu_id, groups, notify,
                        server_config.ray_nodes,
                    )  # fmt: skip
                startup = server.startup
                notify(
                    f"vLLM {server.version or '?'} ready at {server.url} in "
                    f"{startup.startup_s or 0:.1f} s: {_startup_line(startup)}"
                )
                run_config = replace(run_config, endpoint=server.url, model=server_config.model)
            if server is not None:
                engine_name, version = "vllm", server.version
            sampler = TelemetrySampler(gpus, engine_url=run_config.endpoint)
            # Every record is kept: the raw records are written on request, and whenever the
            # result cannot be.
            observer = _Observer(sampler, server)

            def keep_so_far(so_far: RunResult) -> None:
                if checkpoint is None or deployment is None:
                    return
                partial_run = replace(
                    so_far, points=list(so_far.points), incomplete=True, stop_reason=UNFINISHED
                )
                deployed = replace(
                    deployment, engine_version=version or "unknown", engine_name=engine_name
                )
                with contextlib.suppress(Exception):  # a copy: the run goes on without it
                    checkpoint(
                        build_result(
                            partial_run,
                            run_config,
                            deployed,
                            observer.kept[: len(partial_run.points)],
                            server.startup if server is not None else None,
                            provenance(),
                        )
                    )

            run = run_benchmark(
                run_config,
                on_point=on_point,
                observer=observer,
                progress=progress,
                on_run=keep_so_far if checkpoint is not None else None,
            )
            signals.finishing()  # from here a signal hurries the stop; it never skips the write
        finally:
            if server is not None:
                server.stop()
    finally:
        if gpus is not None:
            gpus.close()
    outcome = SessionOutcome(
        run=run,
        telemetry=observer.kept,
        notes=notes,
        log_path=server_config.log_path if server_config else None,
        startup=server.startup if server is not None else None,
        engine_version=version,
    )
    if deployment is None or config.output is None:
        return outcome
    deployment = replace(deployment, engine_version=version or "unknown", engine_name=engine_name)
    outcome.deployment = deployment
    if not run.points:
        if observer.records:  # warm-ups, failures or a cut-short point: still measured
            outcome.raw_records = keep_raw_records(config.output, observer.records)
        return outcome
    entry = None
    if server_config is not None:
        entry, entry_notes = entry_for_run(server_config.model, deployment.model_id, config.output)
        notes += entry_notes
    written = write_run(
        config.output,
        lambda: build_result(
            run, run_config, deployment, observer.kept, outcome.startup, provenance()
        ),
        run.points,
        observer.records,
        config.raw_records,
        entry,
    )
    outcome.result, outcome.output = written.result, written.path
    outcome.raw_records = written.raw_records
    return outcome


def incomplete_line(outcome: SessionOutcome, output: Path | None) -> str:
    """Why an incomplete run stopped, and what of it was written where (`output`: the
    result's path the run was given, None when it was to write none)."""
    line = f"the run is incomplete: {outcome.run.stop_reason}"
    if outcome.output is not None:
        return f"{line}; the measured points are in {outcome.output}"
    if output is None:
        return line
    if outcome.raw_records is not None:
        return (
            f"{line}; no measured request of a load point completed, so there is no result; "
            f"the raw records of the requests that finished are in {outcome.raw_records}"
        )
    return f"{line}; no request finished, so nothing was written"


def _hurry(server: VllmServer, notify: Notify) -> None:
    """A second Ctrl-C or SIGTERM: kill vLLM instead of waiting for its graceful exit."""
    notify("stop signal again: killing vLLM now; what was measured is still written")
    server.kill()


def _host(
    inventory: GpuInventory | None,
    launched: bool,
    local: bool,
    engine: str,
    version: str | None,
) -> HostInfo:
    """The engine's host: this machine's facts only where it is that host, and versions
    installed here only where this environment launched the engine."""
    vllm_version = version if engine == "vllm" else None
    return host_info(inventory, vllm_version, this_machine=local, own_environment=launched)


def _startup_line(startup: StartupFigures) -> str:
    parts = []
    if startup.weights_gib is not None:
        parts.append(f"weights {startup.weights_gib:g} GiB")
    if startup.available_kv_cache_gib is not None:
        parts.append(f"KV cache memory {startup.available_kv_cache_gib:g} GiB")
    if startup.kv_cache_tokens is not None:
        parts.append(f"KV cache {startup.kv_cache_tokens:,} tokens")
    if startup.max_concurrency is not None:
        tokens = startup.max_concurrency_tokens
        at = f" at {tokens:,} tokens" if tokens else ""
        parts.append(f"max concurrency {startup.max_concurrency:g}x{at}")
    if startup.cuda_graph_gib is not None:
        parts.append(f"CUDA graphs {startup.cuda_graph_gib:g} GiB")
    return ", ".join(parts) or "no startup figures in the log"


def _placed(
    deployment: Deployment | None,
    address: str,
    gpu_id: str | None,
    before: set[str],
    notify: Notify,
    held: tuple[str, ...] = (),
) -> Deployment | None:
    """The deployment with the nodes vLLM's ranks were actually placed on (`bench.multinode`);
    EndpointError, before anything is measured, when a rank is on another GPU kind's node."""
    placed = check_placement(address, gpu_id, before, held)
    if placed is None:
        notify("vLLM's placement group cannot be told apart from others: its nodes are unchecked")
        return deployment
    split = placed.split
    shape = _split_line(split) if split else f"{len(placed.node_ids)} nodes, unevenly"
    within = f", all held for it ({len(held)})" if held else ""
    notify(f"vLLM's ranks are on {shape}: Ray nodes {', '.join(placed.node_ids)}{within}")
    if deployment is None or split is None:
        return deployment
    return replace(deployment, nodes=split.nodes, gpus_per_node=split.gpus_per_node)


def _split_line(split: NodeSplit) -> str:
    nodes = f"{split.nodes} node{'' if split.nodes == 1 else 's'}"
    return f"{nodes} × {split.gpus_per_node} GPUs"
