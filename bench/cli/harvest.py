"""`infermeter registry harvest …`: public benchmark results turned into result files."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from infermeter.bench.cli.oneline import FiniteFloatRange
from infermeter.bench.cli.registry_options import registry_option, resolve_registry
from infermeter.registry.harvest.outcome import HarvestReport

if TYPE_CHECKING:
    from infermeter.registry.harvest.run import HarvestOptions


def _common(function: click.decorators.FC) -> click.decorators.FC:
    function = click.option(
        "--dry-run", is_flag=True, help="Write nothing; print what would be added or changed."
    )(function)
    function = click.option(
        "--json", "as_json", is_flag=True, help="Print one JSON object instead of text."
    )(function)
    function = click.option(
        "--retrieved",
        metavar="YYYY-MM-DD",
        default=None,
        help="Retrieval date of rows not harvested before (default: today, UTC).",
    )(function)
    return registry_option("the result files are written into its registry/results/")(function)


def _from_option(help_text: str) -> Callable[[click.decorators.FC], click.decorators.FC]:
    """`--from`: the source read, a file or folder (what it must be, `help_text`)."""
    return click.option(
        "--from", "source", required=True, type=click.Path(path_type=Path), help=help_text
    )


def _page_options(function: click.decorators.FC) -> click.decorators.FC:
    """`--commit` and `--url` of a source that is one page of a repository."""
    function = click.option(
        "--url", default=None, help="Public URL of the page read (default: the file on GitHub)."
    )(function)
    return click.option(
        "--commit",
        default=None,
        help="Commit to read (default HEAD); for a file, the commit it was taken from.",
    )(function)


def _run(
    harvest: "Callable[[HarvestOptions], HarvestReport]",
    registry_root: Path | None,
    dry_run: bool,
    retrieved: str | None,
    as_json: bool,
) -> None:
    """Run one source's harvest with the options every source takes and print its report; a
    bad source (the registry's own errors, or a file that cannot be read) is one line."""
    from infermeter.registry.errors import RegistryError
    from infermeter.registry.harvest.run import HarvestOptions

    root = resolve_registry(registry_root)
    try:
        options = HarvestOptions(root, dry_run=dry_run, today=retrieved)
        report = harvest(options)
    except (RegistryError, OSError) as error:
        raise click.ClickException(str(error)) from None
    except RecursionError:  # a source's JSON nested deeper than Python's parser goes
        raise click.ClickException(
            "a source file is nested too deeply to read (JSON or YAML thousands of levels deep)"
        ) from None
    if as_json:
        click.echo(json.dumps(report.as_json(), indent=2, ensure_ascii=False))
        return
    for line in report.lines():
        click.echo(line)


@click.group(name="harvest")
def harvest_group() -> None:
    """Turn a public benchmark source into result files; rerunning changes nothing.

    Each source prints the files it added or changed, the rows it skipped with the reason,
    and a summary.

    \b
    Example:
      infermeter registry harvest mlperf --round 5.1 --from ./inference_results_v5.1
    """


@harvest_group.command(name="mlperf")
@click.option("--round", "round_text", required=True, help="MLPerf Inference round, e.g. 5.1.")
@_from_option(
    "Checkout (or bare mirror) of mlcommons/inference_results_v<round>.",
)
@click.option(
    "--commit",
    default=None,
    help="Commit to read (default HEAD); for a plain folder, the commit it was copied from.",
)
@click.option(
    "--repository-url",
    default=None,
    help="Public URL of the repository read (default: mlcommons/inference_results_v<round>).",
)
@click.option(
    "--read-from",
    default=None,
    help="Where the bytes were read when not from the repository cited (a fork that holds its "
    "commit); stated in every result's conditions.",
)
@_common
def mlperf_command(
    round_text: str,
    source: Path,
    commit: str | None,
    repository_url: str | None,
    read_from: str | None,
    registry_root: Path | None,
    dry_run: bool,
    as_json: bool,
    retrieved: str | None,
) -> None:
    """MLPerf Inference datacenter LLM results, closed and open division (Offline, Server,
    Interactive).

    \b
    Example:
      infermeter registry harvest mlperf --round 5.1 --from ./inference_results_v5.1
    """
    from infermeter.registry.harvest.run import harvest_mlperf

    _run(
        lambda options: harvest_mlperf(
            source,
            round_text,
            options,
            commit=commit,
            repository_url=repository_url,
            read_from=read_from,
        ),
        registry_root,
        dry_run,
        retrieved,
        as_json,
    )


@harvest_group.command(name="trtllm")
@_from_option(
    "Checkout of NVIDIA/TensorRT-LLM, the perf-overview.md file of one version, or a folder "
    "of such files, each headed '<!-- Excerpt of PATH in OWNER/REPO at commit SHA'.",
)
@_page_options
@click.option(
    "--engine-version",
    default=None,
    help="The TensorRT-LLM release the page documents, where the page names it elsewhere.",
)
@_common
def trtllm_command(
    source: Path,
    commit: str | None,
    url: str | None,
    engine_version: str | None,
    registry_root: Path | None,
    dry_run: bool,
    as_json: bool,
    retrieved: str | None,
) -> None:
    """TensorRT-LLM performance overview: every throughput table of one version or a folder of them.

    \b
    Example:
      infermeter registry harvest trtllm --from ./TensorRT-LLM --commit 03e27c7d5ff0
      infermeter registry harvest trtllm --from tests/data/harvest/trtllm
    """
    from infermeter.registry.harvest.run import harvest_trtllm

    _run(
        lambda options: harvest_trtllm(
            source, options, commit=commit, url=url, engine_version=engine_version
        ),
        registry_root,
        dry_run,
        retrieved,
        as_json,
    )


@harvest_group.command(name="amd")
@_from_option(
    "Checkout of ROCm/vllm, or the docs/dev-docker/README.md file of one version.",
)
@_page_options
@_common
def amd_command(
    source: Path,
    commit: str | None,
    url: str | None,
    registry_root: Path | None,
    dry_run: bool,
    as_json: bool,
    retrieved: str | None,
) -> None:
    """AMD ROCm vLLM docker performance results: the throughput and latency tables of one
    image release's README.

    \b
    Example:
      infermeter registry harvest amd --from ./vllm --commit f94ec9beeca1
    """
    from infermeter.registry.harvest.run import harvest_amd

    _run(
        lambda options: harvest_amd(source, options, commit=commit, url=url),
        registry_root,
        dry_run,
        retrieved,
        as_json,
    )


@harvest_group.command(name="inferencex")
@_from_option(
    "Folder of an InferenceX database dump (configs.json, workflow_runs.json, "
    "benchmark_results.json).",
)
@click.option(
    "--range-ratio",
    type=FiniteFloatRange(min=0, max=1),
    default=None,
    help="--random-range-ratio of the runs (default 0.8, InferenceX's workflow templates).",
)
@_common
def inferencex_command(
    source: Path,
    range_ratio: float | None,
    registry_root: Path | None,
    dry_run: bool,
    as_json: bool,
    retrieved: str | None,
) -> None:
    """InferenceX results from a dump of its database; rows not from the official
    SemiAnalysisAI/InferenceX repository are labelled unofficial.

    \b
    Example:
      infermeter registry harvest inferencex --from ./inferencex-dump-2026-11-30
    """
    from infermeter.registry.harvest.run import harvest_inferencex

    _run(
        lambda options: harvest_inferencex(source, options, range_ratio=range_ratio),
        registry_root,
        dry_run,
        retrieved,
        as_json,
    )


@harvest_group.command(name="skypilot")
@_from_option(
    "A pinned excerpt of a SkyPilot catalog file (catalogs/v8/<cloud>/vms.csv), or a folder "
    "of them, each headed '# Excerpt of PATH in OWNER/REPO at commit SHA' with its date.",
)
@_common
def skypilot_command(
    source: Path,
    registry_root: Path | None,
    dry_run: bool,
    as_json: bool,
    retrieved: str | None,
) -> None:
    """Cloud GPU prices from SkyPilot's catalog files: on-demand and spot per GPU-hour, with
    provider, region, date and the file's commit, into registry/catalogs/prices-skypilot.yaml.

    \b
    Example:
      infermeter registry harvest skypilot --from tests/data/harvest/skypilot
    """
    from infermeter.registry.harvest.skypilot import harvest_skypilot

    _run(
        lambda options: harvest_skypilot(source, options),
        registry_root,
        dry_run,
        retrieved,
        as_json,
    )
