"""`infermeter bench import|compare|report`: the commands over result files.

`import` turns other tools' benchmark files into a result file (`bench.importers`), `compare`
sets results side by side (`bench.result.compare`), `report` writes them as one HTML page
(`bench.result.html_report`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from infermeter.bench.cli.bench_options import OneLineErrors
from infermeter.bench.cli.bench_run_options import F, model_options, parse_model
from infermeter.bench.cli.output_options import json_option
from infermeter.bench.errors import BenchError
from infermeter.bench.importers import FORMATS, ImportConfig, import_result
from infermeter.bench.importers.common import ImportFacts
from infermeter.calculators.plural import counted

# --- bench import --------------------------------------------------------------------------------


def _import_options(command: F) -> F:
    """`bench import`'s facts as options, generated from `ImportFacts`' fields."""
    for option in reversed(model_options(ImportFacts)):
        command = option(command)
    return command


@click.command(name="import", cls=OneLineErrors)
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@_import_options
@click.option(
    "--format",
    "file_format",
    type=click.Choice(["auto", *FORMATS]),
    default="auto",
    show_default=True,
    help="Format of FILES (auto: recognised by their shape).",
)
@click.option(
    "--output",
    type=click.Path(path_type=Path),
    help="File (or folder) to write (default: <date>-<id>.json in the current folder).",
)
@json_option("text")
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
    config = ImportConfig(
        files=files,
        facts=parse_model(ImportFacts, facts),
        output=output,
        file_format=None if file_format == "auto" else file_format,
    )
    try:
        result, path = import_result(config)
    except BenchError as error:
        raise click.ClickException(error.one_line()) from None
    if as_json:
        report = {"path": str(path), "id": result.id, "points": len(result.points)}
        click.echo(json.dumps(report, indent=2))
        return
    click.echo(f"wrote {path} ({counted(len(result.points), 'load point')}, id {result.id})")


# --- bench compare -------------------------------------------------------------------------------


@click.command(name="compare", cls=OneLineErrors)
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@json_option("a table")
def compare_command(files: tuple[Path, ...], as_json: bool) -> None:
    """Compare result files side by side: per load point and at the SLO, with ratios.

    Prints output tokens/s per GPU, tokens/s per user, p99 TTFT/TPOT/E2E and $ per 1M output
    tokens (the catalog's on-demand price, as the site's figures use it) of every result, and
    each one's ratio to the first. Results of different models, precisions or workloads are not
    ranked: exit 1 with every property that differs.

    \b
    Example:
      infermeter bench compare h100.json h200.json
    """
    from infermeter.bench.result.compare import (
        compare,
        comparison_json,
        format_comparison,
        read_results,
    )
    from infermeter.registry.catalog import load_prices

    try:
        results = read_results(files)
        loads = compare(results, load_prices().values())
    except BenchError as error:
        raise click.ClickException(error.one_line()) from None
    if as_json:
        click.echo(json.dumps(comparison_json(results, loads), indent=2))
        return
    click.echo(format_comparison(results, loads))


# --- bench report --------------------------------------------------------------------------------


@click.command(name="report", cls=OneLineErrors)
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
    from infermeter.bench.result.compare import read_results
    from infermeter.bench.result.html_report import write_report
    from infermeter.registry.catalog import load_prices

    try:
        results = read_results(files)
        write_report(results, load_prices().values(), html_path)
    except BenchError as error:
        raise click.ClickException(error.one_line()) from None
    except OSError as error:
        raise click.ClickException(f"--html: cannot write {html_path}: {error.strerror}") from None
    click.echo(f"wrote {html_path} ({counted(len(results), 'result')})")
