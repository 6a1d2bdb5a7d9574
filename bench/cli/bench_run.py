"""`infermeter bench run`: measure a server (or a plan file's runs) and write result files.

The command turns its options (`bench_run_options`) into a `RunOptions`, runs the session
(`bench.session.session.run_session`) and prints `bench.run.summary`'s text; library errors become
click's here (exit 2 for a bad option, else 1).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from infermeter.bench.cli.bench_options import OneLineErrors, OptionError
from infermeter.bench.cli.bench_run_options import parse_options, run_options
from infermeter.bench.errors import BenchError
from infermeter.bench.session.interrupts import stop_reason
from infermeter.registry.secrets import redact

if TYPE_CHECKING:
    from infermeter.bench.plan.options import RunOptions
    from infermeter.bench.run.hooks import RunProgress
    from infermeter.bench.session.config import SessionConfig, SessionOutcome


@click.command(name="run", cls=OneLineErrors)
@run_options
def run_command(plan_path: Path | None, quiet: bool, as_json: bool, **options: Any) -> None:
    """Measure TTFT, ITL, TPOT, E2E and accepted throughput, and write a result file.

    Without --endpoint it launches `vllm serve --model …` with the vLLM options given, waits
    for it, runs the load points, and stops it (also on Ctrl-C or failure). Each load point
    is a closed loop at one --concurrency or an open loop at one --request-rate; failed
    requests count as SLO misses. On a terminal a live line shows each point's progress;
    elsewhere a line every 30 s and one per finished point (--quiet hides them). Exit 0 when
    every point ran; 1 when vLLM fails to start, the server is unreachable, or the run
    stopped early (Ctrl-C, a crashed server: the finished points are still written, marked
    incomplete); 2 for a bad option.

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
    from infermeter.bench.run.progress import ProgressDisplay
    from infermeter.bench.session.builder import session_config

    context = click.get_current_context()
    progress = None if quiet else ProgressDisplay(sys.stderr)
    if plan_path is not None:
        _no_run_options_with_plan(context, options)
        _run_plan(plan_path, as_json, progress)
        return
    raw = context.meta.get("infermeter.raw_args", [])
    try:
        run_options = parse_options(options)
        session = session_config(
            run_options, redact(shlex.join(["infermeter", "bench", "run", *raw]))
        )
    except BenchError as error:
        raise OptionError(error.one_line()) from None
    outcome = _execute(session, progress)
    result = outcome.run
    if as_json:
        click.echo(json.dumps(result.as_json(), indent=2, sort_keys=False))
    else:
        _print_summary(outcome, run_options)
    _print_notes(outcome)
    if result.incomplete:
        from infermeter.bench.session.lines import incomplete_line

        raise click.ClickException(incomplete_line(outcome, session.output))


def _no_run_options_with_plan(context: click.Context, options: dict[str, Any]) -> None:
    """Refuse run options given on the command line beside --plan: the file holds them."""
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


def _execute(session: SessionConfig, progress: RunProgress | None) -> SessionOutcome:
    """`run_session` with its errors turned into click's (exit 2 for a bad option, else 1)."""
    from infermeter.bench.launch.server import ServerStartError
    from infermeter.bench.result.partial import PartialResult
    from infermeter.bench.session.session import run_session

    partial = PartialResult(session.output) if session.output is not None else None
    try:
        outcome = run_session(
            session,
            notify=lambda line: click.echo(line, err=True),
            progress=progress,
            checkpoint=partial.write if partial is not None else None,
        )
        if partial is not None:
            partial.remove()
        return outcome
    except ServerStartError as error:
        tail = "".join(f"\n  | {line}" for line in error.log_tail)
        heading = "\nlast lines of the vLLM log:" if tail else ""
        raise click.ClickException(error.one_line() + heading + tail) from None
    except BenchError as error:
        if partial is not None and getattr(error, "kept", None) is not None:
            partial.remove()  # a file holds the points: the rejected copy (or the result)
        if error.exit_code == 2:
            raise OptionError(error.one_line()) from None
        unsaved = getattr(error, "unsaved", None)
        if unsaved:  # no file could be written: the measured points on stdout, last resort
            click.echo(unsaved, nl=False)
        raise click.ClickException(error.one_line()) from None
    except KeyboardInterrupt as stop:  # before the first point: nothing was measured
        raise click.ClickException(f"{stop_reason(stop)} before any load point ran") from None


def _print_summary(outcome: SessionOutcome, options: RunOptions) -> None:
    from infermeter.bench.run.summary import format_run_summary

    click.echo(format_run_summary(outcome, options))


def _print_notes(outcome: SessionOutcome) -> None:
    for note in outcome.notes:
        click.echo(note, err=True)
    if outcome.output is not None:
        click.echo(f"result written to {outcome.output}", err=True)
    if outcome.raw_records is not None:
        click.echo(f"raw records written to {outcome.raw_records}", err=True)


def _run_plan(path: Path, as_json: bool, progress: RunProgress | None) -> None:
    """Every run of the plan in turn; a failed run is reported and the next one runs."""
    from infermeter.bench.plan.file import PlanError, load_plan
    from infermeter.bench.plan.report import PlanReport, stops_plan

    try:
        runs = load_plan(path)
    except PlanError as error:
        raise click.ClickException("\n".join(error.problems)) from None
    report = PlanReport(len(runs))
    for number, run in enumerate(runs, start=1):
        click.echo(f"run {number}/{len(runs)}: {run.label}", err=True)
        try:
            outcome = _execute(run.session, progress)
        except click.ClickException as error:
            message = error.format_message()
            click.echo(f"{run.label} failed: {message}", err=True)
            report.add_failure(run.label, message)
            continue
        stop = report.add(run.label, outcome)
        if not as_json:
            _print_summary(outcome, run.options)
        _print_notes(outcome)
        if stop is not None:
            click.echo(f"{run.label} is {stop}", err=True)
            if stops_plan(outcome):
                break
    if as_json:
        click.echo(json.dumps(report.as_json(), indent=2, sort_keys=False))
    failure = report.failure_line()
    if failure is not None:
        raise click.ClickException(failure)
