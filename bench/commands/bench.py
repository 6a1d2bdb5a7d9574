"""`infermeter bench …`: measure a live inference server."""

from __future__ import annotations

import dataclasses
import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource
from pydantic import ValidationError

from bench.commands.oneline import UsageLine
from bench.errors import BenchError
from bench.interrupts import INTERRUPTED, TERMINATED, stop_reason
from bench.metrics import Distribution, PointSummary
from bench.progress import point_name
from bench.workloads import PROFILES, LengthDistribution, parse_length
from registry.secrets import redact

if TYPE_CHECKING:
    from bench.plan import RunOptions
    from bench.runner import RunProgress
    from bench.session import SessionConfig, SessionOutcome


class OptionError(UsageLine):
    """A bad option value: one line on stderr (values cut short), exit 2 (usage)."""


class _OneLineErrors(click.Command):
    """Reports every usage error as a single `Error: …` line instead of click's usage block."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        raw_args = list(args)  # click consumes the list; the result file keeps the command
        try:
            ctx = super().make_context(info_name, args, parent=parent, **extra)
            ctx.meta["infermeter.raw_args"] = raw_args
            return ctx
        except click.UsageError as error:
            raise OptionError(" ".join(error.format_message().split())) from None


@click.group(name="bench")
def bench_group() -> None:
    """Benchmark an inference server and write a result file.

    \b
    Example:
      infermeter bench run --endpoint http://127.0.0.1:8000 --concurrency 1,4,16
    """


def _int_list(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[int, ...]:
    if value is None:
        return ()
    try:
        numbers = tuple(int(part) for part in value.split(","))
    except ValueError:
        raise OptionError(
            f"--{param.name}: expected whole numbers like 1,4,16, got {value!r}"
        ) from None
    if any(number < 1 for number in numbers):
        raise OptionError(f"--{param.name}: every value must be at least 1, got {value!r}")
    return numbers


def _index_list(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[int, ...]:
    if value is None:
        return ()
    parts = value.split(",")
    if not all(part.strip().isdigit() for part in parts):
        raise OptionError(f"--gpu-indices: expected GPU indices like 0,1, got {value!r}")
    return tuple(int(part) for part in parts)


def _rate_list(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[float, ...]:
    if value is None:
        return ()
    try:
        rates = tuple(float(part) for part in value.split(","))
    except ValueError:
        raise OptionError(
            f"--request-rate: expected numbers like 1,2.5,10, got {value!r}"
        ) from None
    if any(not rate > 0 or rate == float("inf") for rate in rates):
        raise OptionError(f"--request-rate: every rate must be greater than 0, got {value!r}")
    return rates


def _length(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> LengthDistribution | None:
    if value is None:
        return None
    option = "--" + (param.name or "").replace("_", "-")
    try:
        return parse_length(value, option)
    except BenchError as error:
        raise OptionError(error.one_line()) from None


def _extra_body(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> dict[str, Any] | None:
    from bench.client import parse_extra_body

    if value is None:
        return None
    try:
        return parse_extra_body(value)
    except BenchError as error:
        raise OptionError(error.one_line()) from None


def _positive(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    if value is not None and not value > 0:
        option = "--" + (param.name or "").replace("_", "-")
        raise OptionError(f"{option}: must be greater than 0, got {value:g}")
    return value


@bench_group.command(name="run", cls=_OneLineErrors)
@click.option(
    "--endpoint",
    metavar="URL",
    help="Root URL of a running OpenAI-compatible server (default: launch vLLM with --model).",
)
@click.option(
    "--model",
    help="Model to serve with vLLM (Hugging Face id or path); with --endpoint, the model id "
    "to request (default: the first that /v1/models lists).",
)
@click.option(
    "--tensor-parallel-size",
    type=click.IntRange(min=1),
    help="vLLM: GPUs one replica is split over (also the result's GPU count with --endpoint).",
)
@click.option(
    "--pipeline-parallel-size",
    type=click.IntRange(min=1),
    help="vLLM: pipeline stages of one replica; GPUs = tensor × pipeline parallel size.",
)
@click.option(
    "--ray-address",
    metavar="HOST:PORT",
    help="Launch vLLM over this Ray cluster (--distributed-executor-backend ray, RAY_ADDRESS), "
    "its ranks across the nodes; the result records nodes and GPUs per node.",
)
@click.option("--max-model-len", type=click.IntRange(min=1), help="vLLM: longest sequence, tokens.")
@click.option(
    "--gpu-memory-utilization",
    type=click.FloatRange(min=0, max=1, min_open=True),
    help="vLLM: fraction of GPU memory it may use.",
)
@click.option("--quantization", help="vLLM: weight quantization method, e.g. fp8, awq.")
@click.option("--kv-cache-dtype", help="vLLM: KV cache dtype, e.g. auto, fp8.")
@click.option("--max-num-seqs", type=click.IntRange(min=1), help="vLLM: most sequences per batch.")
@click.option("--load-format", help="vLLM: weight loading, e.g. dummy for random weights.")
@click.option(
    "--vllm-arg",
    "vllm_args",
    multiple=True,
    metavar="ARG",
    help="Any other `vllm serve` argument, repeatable; split like a shell would "
    "(--vllm-arg '--max-num-batched-tokens 8192').",
)
@click.option(
    "--vllm-executable",
    metavar="PATH",
    help="The vllm executable to run (default: vllm on PATH).",
)
@click.option(
    "--port",
    type=click.IntRange(min=1, max=65535),
    help="Port for the launched vLLM (default: a free one).",
)
@click.option(
    "--startup-timeout",
    type=float,
    default=1800.0,
    show_default=True,
    callback=_positive,
    metavar="SECONDS",
    help="How long vLLM may take to answer /health.",
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Result file to write (launching vLLM: default ./infermeter-result.json; with "
    "--endpoint: none unless given). vLLM's log goes beside it as <stem>.vllm.log.",
)
@click.option(
    "--raw-records",
    is_flag=True,
    help="Also write every request's record as <stem>.requests.jsonl.gz beside the result.",
)
@click.option(
    "--gpu",
    "gpu_id",
    metavar="ID",
    help="GPU catalog id for the result (default: detected through NVML where obvious).",
)
@click.option(
    "--model-id",
    metavar="ID",
    help="Model catalog id for the result (default: the catalog entry of --model's repository).",
)
@click.option(
    "--gpu-indices",
    callback=_index_list,
    metavar="I[,I…]",
    help="With --endpoint: the GPUs the server runs on, as nvidia-smi numbers them, for GPU "
    "telemetry (default: CUDA_VISIBLE_DEVICES, else the only GPU or the busy ones).",
)
@click.option(
    "--engine",
    metavar="NAME",
    help="With --endpoint: the engine, e.g. sglang, tgi, llama.cpp, tensorrt-llm (default: what "
    "the server says; needed with --output when it says nothing).",
)
@click.option("--engine-version", metavar="V", help="With --engine: the engine's version.")
@click.option(
    "--server-command",
    metavar="COMMAND",
    help="With --endpoint: the command that started the server there, e.g. 'vllm serve MODEL "
    "--max-model-len 8192'; kept in the result, and its vLLM options are the serving settings.",
)
@click.option("--submitter", help="GitHub user name in the result (default: git's github.user).")
@click.option(
    "--price-per-hour",
    type=float,
    callback=_positive,
    metavar="USD",
    help="Price of one GPU-hour for the cost table (default: cheapest on-demand in the catalog).",
)
@click.option(
    "--utilization",
    type=click.FloatRange(min=0, max=1, min_open=True),
    default=1.0,
    show_default=True,
    help="Fraction of paid hours doing useful work, for the effective hourly cost.",
)
@click.option(
    "--profile",
    type=click.Choice(sorted(PROFILES)),
    default="chat",
    show_default=True,
    help="Traffic profile: its input/output length distributions and default sweep.",
)
@click.option(
    "--concurrency",
    callback=_int_list,
    metavar="N[,N…]",
    help="Closed loop: concurrent requests per point, e.g. 1,4,16,64.",
)
@click.option(
    "--request-rate",
    callback=_rate_list,
    metavar="R[,R…]",
    help="Open loop: requests per second per point, e.g. 1,5,10.",
)
@click.option(
    "--turns",
    callback=_length,
    metavar="SPEC",
    help="chat-multiturn: turns per session, same syntax as --input-len (default uniform:2:6).",
)
@click.option(
    "--think-time",
    type=click.FloatRange(min=0),
    metavar="SECONDS",
    help="chat-multiturn: mean pause between a reply and the next user message (default 2).",
)
@click.option(
    "--find-max-rate",
    is_flag=True,
    help="Search the highest open-loop rate whose p99 TTFT/TPOT/E2E meet the --slo-* bounds "
    "(MLPerf Server): a bracket from --search-start, then a bisection; every probe is a point.",
)
@click.option(
    "--find-max-concurrency",
    is_flag=True,
    help="The same search over closed-loop concurrency.",
)
@click.option(
    "--search-start",
    type=float,
    callback=_positive,
    metavar="LOAD",
    help="First probe of a search (default: 1 req/s, or concurrency 1).",
)
@click.option(
    "--search-precision",
    type=click.FloatRange(min=0, max=1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="A search stops when the load that met and the one that missed lie this close.",
)
@click.option(
    "--max-probes",
    type=click.IntRange(min=2),
    default=16,
    show_default=True,
    help="Most load points a search measures.",
)
@click.option(
    "--stop-when-saturated",
    is_flag=True,
    help="End a sweep past the knee: an open loop whose completions fall behind its rate, or "
    "a concurrency that brought under 5 % more throughput.",
)
@click.option(
    "--max-concurrency",
    type=click.IntRange(min=1),
    metavar="N",
    help="Open loop: at most N requests in flight; a request whose time has come waits for a "
    "free slot (as vllm bench serve --max-concurrency).",
)
@click.option(
    "--extra-body",
    callback=_extra_body,
    metavar="JSON",
    help='Extra fields for every request body, e.g. \'{"top_p": 0.9, "temperature": 0.7}\' '
    "(sampling parameters; not the fields the workload sets).",
)
@click.option(
    "--burstiness",
    type=float,
    default=1.0,
    show_default=True,
    callback=_positive,
    help="Open loop: gamma shape of the arrival gaps (1 = Poisson; < 1 burstier).",
)
@click.option(
    "--num-requests",
    type=click.IntRange(min=1),
    help="Measured requests per point (default: max(100, 4 × concurrency)).",
)
@click.option(
    "--duration",
    type=float,
    callback=_positive,
    metavar="SECONDS",
    help="Stop sending a point's requests after this long.",
)
@click.option(
    "--warmup",
    type=click.IntRange(min=0),
    help="Warm-up requests per point, excluded (default: one per concurrency slot).",
)
@click.option(
    "--input-len",
    callback=_length,
    metavar="SPEC",
    help="Prompt tokens: N, uniform:LO:HI, normal:MEAN:STD or lognormal:MEDIAN:SIGMA.",
)
@click.option(
    "--output-len",
    callback=_length,
    metavar="SPEC",
    help="Output tokens, same syntax as --input-len.",
)
@click.option(
    "--dataset",
    type=click.Path(dir_okay=False, path_type=Path),
    help="ShareGPT-format JSONL file to take prompts from.",
)
@click.option(
    "--tokenizer",
    metavar="PATH|ID",
    help="tokenizer.json (or a Hugging Face id) for exact prompt lengths.",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of lengths, prompts and arrival schedules.",
)
@click.option(
    "--prompt-salt",
    type=int,
    default=0,
    show_default=True,
    help="Changes the prompt text but not the lengths (defeats a warm prefix cache).",
)
@click.option("--slo-ttft-ms", type=float, callback=_positive, help="SLO: time to first token.")
@click.option("--slo-tpot-ms", type=float, callback=_positive, help="SLO: time per output token.")
@click.option("--slo-e2e-ms", type=float, callback=_positive, help="SLO: end-to-end latency.")
@click.option(
    "--api",
    type=click.Choice(["completions", "chat"]),
    default="completions",
    show_default=True,
    help="Which OpenAI API to call.",
)
@click.option(
    "--timeout",
    type=float,
    default=600.0,
    show_default=True,
    callback=_positive,
    metavar="SECONDS",
    help="Per-request timeout.",
)
@click.option(
    "--ignore-eos/--no-ignore-eos",
    default=True,
    show_default=True,
    help="Ask the server to generate exactly the requested output length.",
)
@click.option(
    "--continuous-usage-stats",
    is_flag=True,
    help="Ask for a token count in every chunk (vLLM): exact per-token timing.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    metavar="N",
    help="Client processes per load point, each with its share of the streams: for loads "
    "one process cannot parse (about 500k streamed tokens/s).",
)
@click.option(
    "--shared-prefix-tokens",
    type=click.IntRange(min=0),
    default=0,
    metavar="N",
    help="Start every prompt with the same N-token prefix (the rest unique), to measure "
    "prefix caching on purpose; the result's workload says so.",
)
@click.option(
    "--plan",
    "plan_path",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE.yaml",
    help="Run every run of a plan file in turn (see bench/plans/example.yaml); the other run "
    "options go in the file.",
)
@click.option(
    "--api-key",
    metavar="KEY",
    help="For a server that wants one: sent as `Authorization: Bearer KEY`, never stored or "
    "printed (default: $OPENAI_API_KEY; a launched vLLM's own --api-key).",
)
@click.option("--quiet", is_flag=True, help="No progress display on stderr.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
def run_command(plan_path: Path | None, quiet: bool, as_json: bool, **options: Any) -> None:
    """Measure TTFT, ITL, TPOT, E2E and accepted throughput, and write a result file.

    Without --endpoint it launches `vllm serve --model …` with the vLLM options given, waits
    for it, runs the load points, and stops it (also on Ctrl-C or failure). Each load point
    is a closed loop at one --concurrency or an open loop at one --request-rate; failed
    requests count as SLO misses. On a terminal a live line shows each point's progress
    (--quiet hides it). Exit 0 when every point ran; 1 when vLLM fails to start, the server
    is unreachable, or the run stopped early (Ctrl-C, a crashed server: the finished points
    are still written, marked incomplete); 2 for a bad option.

    With --plan FILE.yaml it runs every run the file lists, in order, each writing its own
    result; the file is checked before anything runs (exit 1 when it is not valid), a failing
    run is reported and the next one runs, and the exit is 1 when any run failed.

    \b
    Examples:
      infermeter bench run --model meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 \\
          --concurrency 1,16,64 --output result.json
      infermeter bench run --endpoint http://127.0.0.1:8000 --concurrency 1,16 \\
          --num-requests 200 --input-len 512 --output-len 256 --slo-ttft-ms 500
      infermeter bench run --plan bench/plans/example.yaml
    """
    from bench.plan import RunOptions, session_config
    from bench.progress import ProgressDisplay

    context = click.get_current_context()
    progress = None if quiet else ProgressDisplay(sys.stderr)
    if plan_path is not None:
        flags = {param.name: param.opts[0] for param in context.command.params}
        given = [
            flags[name]
            for name in options
            if context.get_parameter_source(name) == ParameterSource.COMMANDLINE
        ]
        if given:
            raise OptionError(
                f"--plan: the plan file holds the run options; drop {', '.join(given)} "
                "(or put it in the file)"
            )
        _run_plan(plan_path, as_json, progress)
        return
    raw = context.meta.get("infermeter.raw_args", [])
    try:
        run_options = RunOptions.model_validate(options)
        session = session_config(
            run_options, redact(shlex.join(["infermeter", "bench", "run", *raw]))
        )
    except ValidationError as error:
        raise OptionError(error.errors()[0]["msg"]) from None
    except BenchError as error:
        raise OptionError(error.one_line()) from None
    outcome = _execute(session, progress)
    result = outcome.run
    if as_json:
        click.echo(json.dumps(result.as_json(), indent=2, sort_keys=False))
    else:
        _print_tables(outcome, run_options)
    _print_notes(outcome)
    if result.incomplete:
        from bench.session import incomplete_line

        raise click.ClickException(incomplete_line(outcome, session.output))


def _execute(session: SessionConfig, progress: RunProgress | None) -> SessionOutcome:
    """`run_session` with its errors turned into click's (exit 2 for a bad option, else 1)."""
    from bench.server import ServerStartError
    from bench.session import run_session

    try:
        return run_session(
            session, notify=lambda line: click.echo(line, err=True), progress=progress
        )
    except ServerStartError as error:
        tail = "".join(f"\n  | {line}" for line in error.log_tail)
        heading = "\nlast lines of the vLLM log:" if tail else ""
        raise click.ClickException(error.one_line() + heading + tail) from None
    except BenchError as error:
        if error.exit_code == 2:
            raise OptionError(error.one_line()) from None
        raise click.ClickException(error.one_line()) from None
    except KeyboardInterrupt as stop:  # before the first point: nothing was measured
        raise click.ClickException(f"{stop_reason(stop)} before any load point ran") from None


def _print_tables(outcome: SessionOutcome, options: RunOptions) -> None:
    from bench.report import HourlyPrice, catalog_price, cost_rows, format_cost_table

    result = outcome.run
    click.echo(
        f"model {result.model} at {result.endpoint} (profile {result.profile}, "
        f"api {result.api}, seed {result.seed})"
    )
    click.echo(format_table(result.points))
    if result.search is not None:
        from bench.search import describe_search

        click.echo("")
        click.echo("\n".join(describe_search(result.search)))
    price = (
        HourlyPrice(options.price_per_hour, "given with --price-per-hour")
        if options.price_per_hour is not None
        else catalog_price(outcome.deployment.gpu_id or "")
        if outcome.deployment is not None
        else catalog_price(options.gpu_id)
        if options.gpu_id is not None
        else None
    )
    gpu_count = (
        outcome.deployment.gpu_count
        if outcome.deployment is not None
        else (options.tensor_parallel_size or 1) * (options.pipeline_parallel_size or 1)
    )
    rows = cost_rows(result.points, outcome.telemetry, price, gpu_count, options.utilization)
    click.echo("")
    click.echo(format_cost_table(rows, price))


def _print_notes(outcome: SessionOutcome) -> None:
    for note in outcome.notes:
        click.echo(note, err=True)
    if outcome.output is not None:
        click.echo(f"result written to {outcome.output}", err=True)
    if outcome.raw_records is not None:
        click.echo(f"raw records written to {outcome.raw_records}", err=True)


def _run_plan(path: Path, as_json: bool, progress: RunProgress | None) -> None:
    """Every run of the plan in turn; a failed run is reported and the next one runs."""
    from bench.plan import PlanError, load_plan

    try:
        runs = load_plan(path)
    except PlanError as error:
        raise click.ClickException("\n".join(error.problems)) from None
    summaries: list[dict[str, Any]] = []
    failed: list[str] = []
    for number, run in enumerate(runs, start=1):
        click.echo(f"run {number}/{len(runs)}: {run.label}", err=True)
        try:
            outcome = _execute(run.session, progress)
        except click.ClickException as error:
            message = error.format_message()
            click.echo(f"{run.label} failed: {message}", err=True)
            failed.append(run.label)
            summaries.append({"name": run.label, "output": None, "error": message, "points": []})
            continue
        result = outcome.run
        stop = f"incomplete: {result.stop_reason}" if result.incomplete else None
        output = str(outcome.output) if outcome.output is not None else None
        summaries.append({"name": run.label, "output": output, "error": stop, **result.as_json()})
        if not as_json:
            _print_tables(outcome, run.options)
        _print_notes(outcome)
        if result.incomplete:
            click.echo(f"{run.label} is {stop}", err=True)
            failed.append(run.label)
            if result.stop_reason in (INTERRUPTED, TERMINATED):
                break  # Ctrl-C stops the plan, not only the run
    if as_json:
        click.echo(json.dumps({"runs": summaries}, indent=2, sort_keys=False))
    if failed:
        raise click.ClickException(
            f"{len(failed)} of {len(runs)} runs failed or are incomplete: {', '.join(failed)}"
        )


def _point_name(point: PointSummary) -> str:
    return point_name(point.concurrency, point.request_rate)


def _pair(distribution: Distribution, first: str, second: str) -> str:
    values = [getattr(distribution, first), getattr(distribution, second)]
    return " / ".join("-" if v is None else f"{v:.1f}" for v in values)


def format_table(points: list[PointSummary]) -> str:
    """A readable table of the points, then their validity verdicts."""
    header = (
        "point",
        "done",
        "failed",
        "out tok/s",
        "accepted tok/s",
        "TTFT p50/p95 ms",
        "ITL p50/p95 ms",
        "TPOT p50/p95 ms",
        "E2E p50/p99 ms",
    )
    rows = [
        (
            _point_name(p),
            str(p.completed),
            str(p.failed),
            f"{p.output_token_throughput:.1f}",
            f"{p.accepted_output_token_throughput:.1f}",
            _pair(p.ttft_ms, "p50", "p95"),
            _pair(p.itl_ms, "p50", "p95"),
            _pair(p.tpot_ms, "p50", "p95"),
            _pair(p.e2e_ms, "p50", "p99"),
        )
        for p in points
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True))
        for row in [header, *rows]
    ]
    for p in points:
        if p.failures_by_kind:
            kinds = ", ".join(
                f"{kind} {count}" for kind, count in sorted(p.failures_by_kind.items())
            )
            lines.append(f"{_point_name(p)} failures: {kinds}")
        lines.extend(f"{_point_name(p)} {v.code}: {v.message}" for v in p.verdicts)
    return "\n".join(lines)


# --- bench import --------------------------------------------------------------------------------


@bench_group.command(name="import", cls=_OneLineErrors)
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--gpu", help="GPU catalog id, e.g. h100-sxm. Required.")
@click.option("--gpu-count", type=click.IntRange(min=1), help="GPUs that served. Required.")
@click.option("--model-id", help="Model catalog id, e.g. llama-3.1-8b-instruct. Required.")
@click.option("--engine-version", help="vLLM version of the server, e.g. 0.9.1. Required.")
@click.option(
    "--command",
    help="The exact benchmark command line (`vllm bench serve …`, `guidellm benchmark …`). "
    "Required unless the file states it (AIPerf).",
)
@click.option("--submitter", help="Your GitHub user name. Required.")
@click.option(
    "--timezone",
    help="Time zone of the benchmark host, e.g. UTC or +02:00. Required for vLLM and AIPerf "
    "files, whose times are local.",
)
@click.option("--input-len", metavar="SPEC", help="Prompt lengths: N, uniform:LO:HI, "
              "normal:MEAN:STD, dataset[:MAX]. Required.")  # fmt: skip
@click.option("--output-len", metavar="SPEC", help="Output lengths, as --input-len. Required.")
@click.option("--hf-repo", help="Hugging Face repository served (default: the file's model_id).")
@click.option("--revision", help="Revision of the weights.")
@click.option("--quantization", help="vLLM --quantization (omit for unquantized weights).")
@click.option("--dtype", type=click.Choice(["bfloat16", "float16", "float32"]))
@click.option("--kv-cache-dtype", help="vLLM --kv-cache-dtype.")
@click.option("--tensor-parallel-size", type=click.IntRange(min=1))
@click.option("--pipeline-parallel-size", type=click.IntRange(min=1))
@click.option("--max-model-len", type=click.IntRange(min=1))
@click.option("--gpu-memory-utilization", type=click.FloatRange(min=0, max=1, min_open=True))
@click.option("--max-num-seqs", type=click.IntRange(min=1))
@click.option("--max-num-batched-tokens", type=click.IntRange(min=1))
@click.option("--enable-prefix-caching/--no-enable-prefix-caching", default=None)
@click.option("--enable-chunked-prefill/--no-enable-chunked-prefill", default=None)
@click.option(
    "--profile",
    type=click.Choice(["chat", "rag", "batch", "custom"]),
    default="custom",
    show_default=True,
    help="infermeter traffic profile the run matches.",
)
@click.option("--dataset", help="Dataset the prompts came from, e.g. sharegpt or random.")
@click.option("--seed", type=int, help="vLLM --seed of the benchmark.")
@click.option("--slo-ttft-ms", type=float, callback=_positive, help="As vLLM's --goodput ttft:MS.")
@click.option("--slo-tpot-ms", type=float, callback=_positive, help="As vLLM's --goodput tpot:MS.")
@click.option("--slo-e2e-ms", type=float, callback=_positive, help="As vLLM's --goodput e2el:MS.")
@click.option("--server-command", help="The exact `vllm serve …` command line.")
@click.option("--gpu-sku", help="GPU name as nvidia-smi reports it (default: the catalog name).")
@click.option(
    "--tool-version",
    help="Version of the benchmark tool (default: the file's; for vLLM, --engine-version).",
)
@click.option(
    "--format",
    "file_format",
    type=click.Choice(["auto", "vllm", "guidellm", "aiperf"]),
    default="auto",
    show_default=True,
    help="Format of FILES (auto: recognised by their shape).",
)
@click.option(
    "--output",
    type=click.Path(path_type=Path),
    help="File (or folder) to write (default: <date>-<id>.json in the current folder).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
def import_command(
    files: tuple[Path, ...],
    output: Path | None,
    as_json: bool,
    file_format: str,
    **facts: Any,
) -> None:
    """Turn vLLM, GuideLLM or AIPerf benchmark files into a registry result file.

    FILES are `vllm bench serve --save-result` JSON (each object one load point), GuideLLM
    benchmarks.json reports (each benchmark one load point) or AIPerf
    profile_export_aiperf.json files (each one load point). Facts the files lack come from the
    options; a missing required one is named in the error.

    \b
    Example:
      infermeter bench import vllm-result.json --gpu h100-sxm --gpu-count 1 \\
          --model-id llama-3.1-8b-instruct --engine-version 0.9.1 --timezone UTC \\
          --input-len 1024 --output-len 128 --submitter octocat \\
          --command "vllm bench serve --model meta-llama/Llama-3.1-8B-Instruct --max-concurrency 16"
    """
    from bench.importers import ImportConfig, ImportFacts, import_result

    config = ImportConfig(
        files=files,
        facts=ImportFacts(**facts),
        output=output,
        file_format=None if file_format == "auto" else file_format,  # type: ignore[arg-type]
    )
    try:
        result, path = import_result(config)
    except BenchError as error:
        raise click.ClickException(error.one_line()) from None
    if as_json:
        report = {"path": str(path), "id": result.id, "points": len(result.points)}
        click.echo(json.dumps(report, indent=2))
        return
    click.echo(f"wrote {path} ({len(result.points)} load points, id {result.id})")


# --- bench compare -------------------------------------------------------------------------------


@bench_group.command(name="compare", cls=_OneLineErrors)
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
def compare_command(files: tuple[Path, ...], as_json: bool) -> None:
    """Compare result files side by side: per load point and at the SLO, with ratios.

    Prints output tokens/s per GPU, tokens/s per user, p99 TTFT/TPOT/E2E and $ per 1M output
    tokens (cheapest on-demand catalog price) of every result, and each one's ratio to the
    first. Results of different models, precisions or workloads are not ranked: exit 1 with
    every property that differs.

    \b
    Example:
      infermeter bench compare h100.json h200.json
    """
    from bench.compare import compare, format_comparison, read_results
    from registry.catalog import load_prices

    try:
        results = read_results(files)
        loads = compare(results, load_prices().values())
    except BenchError as error:
        raise click.ClickException(error.one_line()) from None
    if as_json:
        payload = {
            "results": [r.name for r in results],
            "loads": [
                {
                    "load": load.load,
                    "rows": [dataclasses.asdict(row) if row else None for row in load.rows],
                }
                for load in loads
            ],
        }
        click.echo(json.dumps(payload, indent=2))
        return
    click.echo(format_comparison(results, loads))


# --- bench report --------------------------------------------------------------------------------


@bench_group.command(name="report", cls=_OneLineErrors)
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--html",
    "html_path",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The page to write.",
)
def report_command(files: tuple[Path, ...], html_path: Path) -> None:
    """Write one self-contained HTML page for result files: charts and tables, no network.

    Throughput per GPU against tokens/s per user, cost at the catalog prices, and every load
    point's latency percentiles, drawn by the site's own chart code with uPlot inlined (a
    checkout after `npm ci`; a wheel install lacks them and says so).

    \b
    Example:
      infermeter bench report h100.json h200.json --html report.html
    """
    from bench.compare import read_results
    from bench.html_report import write_report
    from registry.catalog import load_prices

    try:
        results = read_results(files)
        write_report(results, load_prices().values(), html_path)
    except BenchError as error:
        raise click.ClickException(error.one_line()) from None
    except OSError as error:
        raise click.ClickException(f"--html: cannot write {html_path}: {error.strerror}") from None
    click.echo(f"wrote {html_path} ({len(results)} result{'' if len(results) == 1 else 's'})")
