"""`infermeter registry harvest …`: public benchmark results turned into result files, one
command per source declared in `registry/harvest/sources.py`."""

import json
from pathlib import Path
from typing import Any

import click

from infermeter.bench.cli.oneline import FiniteFloatRange, OneLineCommand, UsageLine
from infermeter.bench.cli.output_options import json_option
from infermeter.bench.cli.registry_options import registry_option, resolve_registry
from infermeter.registry.harvest.sources import SOURCES, HarvestSource, SourceOption


def _common(function: click.decorators.FC) -> click.decorators.FC:
    function = click.option(
        "--dry-run", is_flag=True, help="Write nothing; print what would be added or changed."
    )(function)
    function = json_option("text")(function)
    function = click.option(
        "--retrieved",
        metavar="YYYY-MM-DD",
        default=None,
        help="Retrieval date of rows not harvested before (default: today, UTC).",
    )(function)
    return registry_option("the result files are written into its registry/results/")(function)


def _option(option: SourceOption) -> click.Option:
    kind = FiniteFloatRange(min=0, max=1) if option.ratio else None
    return click.Option(
        [option.flag, option.keyword],
        required=option.required,
        type=kind,
        default=None,
        help=option.help,
    )


def _run(
    source: HarvestSource,
    path: Path,
    keywords: dict[str, Any],
    *,
    registry_root: Path | None,
    dry_run: bool,
    retrieved: str | None,
    as_json: bool,
) -> None:
    """Run one source's harvest with the options every source takes and print its report; a
    bad source (the registry's own errors, or a file that cannot be read) is one line, exit 1,
    and a value an option does not take (`--round five`) one line, exit 2 (usage)."""
    from infermeter.registry.errors import RegistryError
    from infermeter.registry.harvest.errors import HarvestOptionError
    from infermeter.registry.harvest.options import HarvestOptions

    root = resolve_registry(registry_root)
    try:
        options = HarvestOptions.given(root, dry_run=dry_run, retrieved=retrieved)
        report = source.run(path, options, keywords)
    except HarvestOptionError as error:
        raise UsageLine(str(error)) from None
    except RegistryError as error:
        raise click.ClickException(str(error)) from None
    except OSError as error:  # a file of the registry in the way (a folder where one goes …)
        named = error.filename2 or error.filename  # a rename's: the file it would replace
        line = f"{named}: {error.strerror}" if named and error.strerror else str(error)
        raise click.ClickException(line) from None
    except RecursionError:  # a source's JSON nested deeper than Python's parser goes
        raise click.ClickException(
            "a source file is nested too deeply to read (JSON or YAML thousands of levels deep)"
        ) from None
    if as_json:
        click.echo(json.dumps(report.as_json(), indent=2, ensure_ascii=False))
        return
    for line in report.lines():
        click.echo(line)


def _command(source: HarvestSource) -> click.Command:
    """The `infermeter registry harvest NAME` command of one source."""

    def harvest(
        source_path: Path,
        registry_root: Path | None,
        dry_run: bool,
        as_json: bool,
        retrieved: str | None,
        **keywords: Any,
    ) -> None:
        _run(
            source,
            source_path,
            keywords,
            registry_root=registry_root,
            dry_run=dry_run,
            retrieved=retrieved,
            as_json=as_json,
        )

    command = click.command(name=source.name, help=source.help, cls=OneLineCommand)(
        _common(harvest)
    )
    from_option = click.Option(
        ["--from", "source_path"], required=True, type=click.Path(path_type=Path), help=source.reads
    )
    required = [_option(option) for option in source.options if option.required]
    optional = [_option(option) for option in source.options if not option.required]
    command.params[:0] = [*required, from_option, *optional]  # then the options every source takes
    return command


@click.group(name="harvest")
def harvest_group() -> None:
    """Turn a public benchmark source into result files; rerunning changes nothing.

    Each source prints the files it added or changed, the rows it skipped with the reason,
    and a summary.

    \b
    Example:
      infermeter registry harvest mlperf --round 5.1 --from ./inference_results_v5.1
    """


for _source in SOURCES:
    harvest_group.add_command(_command(_source))
