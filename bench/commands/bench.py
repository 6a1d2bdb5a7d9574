"""`infermeter bench …`: measure a live inference server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from bench.errors import BenchError
from bench.metrics import Distribution, PointSummary, Slo
from bench.workloads import PROFILES, LengthDistribution, parse_length


class OptionError(click.ClickException):
    """A bad option value: one line on stderr, exit 2 (usage)."""

    exit_code = 2


class _OneLineErrors(click.Command):
    """Reports every usage error as a single `Error: …` line instead of click's usage block."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
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


def _positive(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    if value is not None and not value > 0:
        option = "--" + (param.name or "").replace("_", "-")
        raise OptionError(f"{option}: must be greater than 0, got {value:g}")
    return value


@bench_group.command(name="run", cls=_OneLineErrors)
@click.option("--endpoint", metavar="URL", help="Root URL of a running OpenAI-compatible server.")
@click.option("--model", help="Model id to request (default: the first that /v1/models lists).")
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
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
def run_command(
    endpoint: str | None,
    model: str | None,
    profile: str,
    concurrency: tuple[int, ...],
    request_rate: tuple[float, ...],
    burstiness: float,
    num_requests: int | None,
    duration: float | None,
    warmup: int | None,
    input_len: LengthDistribution | None,
    output_len: LengthDistribution | None,
    dataset: Path | None,
    tokenizer: str | None,
    seed: int,
    prompt_salt: int,
    slo_ttft_ms: float | None,
    slo_tpot_ms: float | None,
    slo_e2e_ms: float | None,
    api: str,
    timeout: float,
    ignore_eos: bool,
    continuous_usage_stats: bool,
    as_json: bool,
) -> None:
    """Measure TTFT, ITL, TPOT, E2E and accepted throughput of a running server.

    Each load point is a closed loop at one --concurrency or an open loop at one
    --request-rate; failed requests count as SLO misses. Launching vLLM is not built
    yet: --endpoint is required.

    \b
    Example:
      infermeter bench run --endpoint http://127.0.0.1:8000 --concurrency 1,16 \\
          --num-requests 200 --input-len 512 --output-len 256 --slo-ttft-ms 500
    """
    from bench.runner import RunConfig, run_benchmark

    if endpoint is None:
        raise OptionError(
            "--endpoint: missing; launching vLLM from `bench run` is not built yet, so start "
            "a server and pass its URL, e.g. --endpoint http://127.0.0.1:8000"
        )
    config = RunConfig(
        endpoint=endpoint,
        model=model,
        api="chat" if api == "chat" else "completions",
        profile=profile,
        input_len=input_len,
        output_len=output_len,
        dataset=dataset,
        tokenizer=tokenizer,
        concurrency=concurrency,
        request_rates=request_rate,
        burstiness=burstiness,
        num_requests=num_requests,
        duration_s=duration,
        warmup_requests=warmup,
        seed=seed,
        prompt_salt=prompt_salt,
        timeout_s=timeout,
        slo=Slo(ttft_ms=slo_ttft_ms, tpot_ms=slo_tpot_ms, e2e_ms=slo_e2e_ms),
        ignore_eos=ignore_eos,
        continuous_usage_stats=continuous_usage_stats,
    )
    try:
        result = run_benchmark(config, on_point=lambda p: click.echo(_progress(p), err=True))
    except BenchError as error:
        if error.exit_code == 2:
            raise OptionError(error.one_line()) from None
        raise click.ClickException(error.one_line()) from None
    if as_json:
        click.echo(json.dumps(result.as_json(), indent=2, sort_keys=False))
    else:
        click.echo(
            f"model {result.model} at {result.endpoint} (profile {result.profile}, "
            f"api {result.api}, seed {result.seed})"
        )
        click.echo(format_table(result.points))
    if result.incomplete:
        raise click.ClickException(f"the run is incomplete: {result.stop_reason}")


def _point_name(point: PointSummary) -> str:
    if point.concurrency is not None:
        return f"c={point.concurrency}"
    return f"rate={point.request_rate:g}/s"


def _progress(point: PointSummary) -> str:
    return (
        f"{_point_name(point)}: {point.completed} done, {point.failed} failed, "
        f"{point.output_token_throughput:.1f} output tok/s"
    )


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
