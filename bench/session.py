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

Its parts: `session_config` (`SessionConfig`, `SessionOutcome`), `deployment_plan` (the
deployment identity known before the run), `point_observer` (telemetry per point, the server's
watchdog) and `session_lines` (what it tells); this module re-exports their public names.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import shlex
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

from bench.deployment_plan import (
    endpoint_model,
    launched_gpu_count,
    plan_deployment,
    serving_options,
)
from bench.engine_metrics import server_cache_config
from bench.engines import identify_server
from bench.errors import BenchConfigError
from bench.host import client_info
from bench.interrupts import StopSignals
from bench.metrics import PointSummary
from bench.model_entry import entry_for_run
from bench.multinode import (
    NodeSplit,
    check_placement,
    cluster_node_gpus,
    placement_group_ids,
    split_over_nodes,
)
from bench.nvml import NvmlGpus, open_gpus
from bench.output import keep_raw_records, write_run
from bench.point_observer import SERVER_EXIT_GRACE_S, PointObserver
from bench.provenance import default_submitter, engine_host
from bench.result import Deployment, Provenance, build_result
from bench.runner import RunProgress, RunResult, plan_points, run_benchmark
from bench.served import endpoint_is_local, engine_of
from bench.server import VllmServer
from bench.session_config import Notify, SessionConfig, SessionOutcome
from bench.session_lines import incomplete_line, split_line, startup_line
from bench.telemetry import TelemetrySampler
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
        notify(f"vLLM over the Ray cluster at {address}: {split_line(split)}")
    endpoint = config.run.endpoint
    local = server_config is not None or endpoint_is_local(endpoint)
    facts = identify_server(endpoint) if server_config is None else None
    # An endpoint's memory plan, as vLLM states it in /metrics (a launched one's: its log too)
    endpoint_startup = server_cache_config(endpoint) if server_config is None else None
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
                host=engine_host(inventory, server is not None, local, engine_name, version),
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
                    f"{startup.startup_s or 0:.1f} s: {startup_line(startup)}"
                )
                run_config = replace(run_config, endpoint=server.url, model=server_config.model)
            if server is not None:
                engine_name, version = "vllm", server.version
            sampler = TelemetrySampler(gpus, engine_url=run_config.endpoint)
            # Every record is kept: the raw records are written on request, and whenever the
            # result cannot be.
            observer = PointObserver(sampler, server)

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
                            server.startup if server is not None else endpoint_startup,
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
        startup=server.startup if server is not None else endpoint_startup,
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
    served = server_config.model if server_config is not None else endpoint_model(config, facts)
    if served is not None:
        entry, entry_notes = entry_for_run(served, deployment.model_id, config.output)
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
    """The deployment with the nodes vLLM's ranks were actually placed on (`bench.multinode`);
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
    return replace(deployment, nodes=split.nodes, gpus_per_node=split.gpus_per_node)
