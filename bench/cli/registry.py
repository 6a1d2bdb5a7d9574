"""`infermeter registry …`: validate, index and submit result files."""

from pathlib import Path
from typing import TYPE_CHECKING

import click

from infermeter.bench.cli.oneline import OneLineCommand
from infermeter.bench.cli.output_options import json_option
from infermeter.bench.cli.registry_options import registry_option, resolve_registry
from infermeter.calculators.plural import counted
from infermeter.registry.location import find_registry
from infermeter.registry.schemas import schema_drift, write_schemas

if TYPE_CHECKING:
    from infermeter.registry.submit import SubmitOutcome


@click.group(name="registry")
def registry_group() -> None:
    """Work with the registry of result files and catalogs.

    \b
    Example:
      infermeter registry --help
    """


@registry_group.command(name="schemas", cls=OneLineCommand)
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 naming each schema file that differs from the models.",
)
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    show_default="schemas/ of the registry checkout",
    help="Folder of the JSON Schema files.",
)
@registry_option("its schemas/ folder is written or checked")
def schemas_command(check: bool, directory: Path | None, registry_root: Path | None) -> None:
    """Write the JSON Schemas of the registry's files (schemas/ of the registry checkout) from
    its models; never into the installed package.

    \b
    Example:
      infermeter registry schemas --check
    """
    if directory is None:
        from infermeter.registry.location import RegistryNotFoundError
        from infermeter.registry.schemas import checkout_schemas_dir

        try:
            directory = checkout_schemas_dir(resolve_registry(registry_root))
        except RegistryNotFoundError as error:
            raise click.BadParameter(str(error), param_hint="--registry") from None
    if check:
        problems = schema_drift(directory)
        if problems:
            lines = [str(problem) for problem in problems]
            lines.append("run `infermeter registry schemas` to update them")
            raise click.ClickException("\n".join(lines))
        click.echo("schemas are up to date")
        return
    from infermeter.registry.errors import UnwritableError
    from infermeter.registry.store import check_writable

    try:
        check_writable(directory, folder=True)
    except UnwritableError as error:
        raise click.ClickException(f"--dir: {error}") from None
    try:
        changed = write_schemas(directory)
    except OSError as error:  # a full disk, a file size limit (ulimit -f)
        raise click.ClickException(f"--dir: cannot write: {error.strerror or error}") from None
    for path in changed:
        click.echo(f"updated {path}")
    if not changed:
        click.echo("schemas are up to date")


@registry_group.command(name="validate", cls=OneLineCommand)
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--base",
    metavar="REV",
    help="Git revision to compare with: results merged there must be unchanged unless "
    "registry/corrections.yaml records a correction or withdrawal.",
)
@registry_option(
    "the files are checked against its catalogs, corrections and results (duplicates); "
    "files named without one found are checked against the package's catalogs"
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="`json`: one object {ok, files_checked, problems: [{file, path, message, check}]}.",
)
def validate_command(
    paths: tuple[Path, ...], base: str | None, registry_root: Path | None, output_format: str
) -> None:
    """Check result files (default: all of registry/results/); exit 1 listing every problem.

    Each problem is one line `file: json.path: message`. In a folder of `bench fleet` results,
    the lost attempts' points under `partial/` are not results to submit: they are skipped and
    named (`registry validate FOLDER/partial/FILE` checks one).

    \b
    Example:
      infermeter registry validate --base origin/main
    """
    import json

    from infermeter.registry.checks.history import GitError, UnknownRevisionError
    from infermeter.registry.validate import validate_paths

    root: Path | None
    if registry_root is None and paths and base is None:
        # A contributor's own file, checked wherever it is: against the checkout the current
        # folder is in, else on its own against the package's catalogs.
        root = find_registry(Path.cwd())
    else:
        root = resolve_registry(registry_root)
    try:
        report = validate_paths(paths, base=base, registry_root=root)
    except UnknownRevisionError as error:
        raise click.BadParameter(str(error).removeprefix("--base: "), param_hint="--base") from None
    except GitError as error:
        raise click.ClickException(str(error)) from None
    if output_format == "json":
        click.echo(json.dumps(report.as_json(), indent=2, ensure_ascii=False))
    else:
        for problem in report.problems:
            click.echo(str(problem))
        for name in report.skipped:
            click.echo(f"{name}: skipped: a lost fleet attempt's partial points, not a result")
        click.echo(report.summary)
    if not report.ok:
        raise SystemExit(1)


@registry_group.command(name="index", cls=OneLineCommand)
@registry_option("results under registry/results/, prices in registry/catalogs/")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("build/index"),
    show_default=True,
    help="Folder for index.json and the content-hashed index-<sha>.json and .csv.",
)
@json_option("text")
def index_command(registry_root: Path | None, out_dir: Path, as_json: bool) -> None:
    """Write the index of every result × load point, with $ figures at current prices.

    \b
    Example:
      infermeter registry index --out build/index
    """
    import json

    from infermeter.registry.errors import RegistryError, UnwritableError
    from infermeter.registry.index import write_index
    from infermeter.registry.store import check_writable

    root = resolve_registry(registry_root)
    try:
        check_writable(out_dir, folder=True)
    except UnwritableError as error:
        raise click.ClickException(f"--out: {error}") from None
    try:
        written = write_index(root, out_dir)
    except RegistryError as error:
        raise click.ClickException(str(error)) from None
    except OSError as error:  # a full disk, a file size limit (ulimit -f)
        raise click.ClickException(f"--out: cannot write: {error.strerror or error}") from None
    if as_json:
        report = {
            "manifest": str(written.manifest),
            "json": str(written.json_file),
            "csv": str(written.csv_file),
            "results": written.results,
            "rows": written.rows,
            "cpu_results": written.cpu_results,
        }
        click.echo(json.dumps(report, indent=2))
        return
    click.echo(f"indexed {counted(written.results, 'result')}, {counted(written.rows, 'row')}")
    if written.cpu_results:
        click.echo(
            f"note: {counted(written.cpu_results, 'result')} ran on the CPU (identity.gpu.id "
            "cpu): kept out of the GPU comparison, without rows"
        )
    for path in (written.json_file, written.csv_file, written.manifest):
        click.echo(f"wrote {path}")


@registry_group.command(name="submit", cls=OneLineCommand)
@click.argument(
    "result_files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path)
)
@click.option(
    "--registry-checkout",
    "checkout",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default="the current folder",
    help="Your clone of your fork of the registry repository.",
)
@click.option("--remote", default="origin", show_default=True, help="Your fork's git remote.")
@click.option("--branch", help="Branch to create (default: result/<gpu>/<model>/<id>).")
@click.option("--base", default="main", show_default=True, help="Branch the pull request targets.")
@click.option("--dry-run", is_flag=True, help="Change nothing; print the commands it would run.")
@json_option("text")
def submit_command(
    result_files: tuple[Path, ...],
    checkout: Path,
    remote: str,
    branch: str | None,
    base: str,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Validate a result, commit it on a new branch, push it to your fork, open a pull request.

    The pull request is opened with `gh` when it is installed; otherwise the exact commands
    to open it are printed. Several files (a fleet's results) are validated together and go
    in one commit, on one branch, in one pull request.

    \b
    Examples:
      infermeter registry submit result.json --registry-checkout ~/src/infermeter
      infermeter registry submit fleet-results/*.json
    """
    from infermeter.registry.errors import RegistryError
    from infermeter.registry.submit import SubmitConfig, submit

    config = SubmitConfig(
        result_file=result_files[0],
        more_files=result_files[1:],
        checkout=checkout,
        remote=remote,
        branch=branch,
        base=base,
        dry_run=dry_run,
    )
    try:
        outcome = submit(config)
    except RegistryError as error:
        raise click.ClickException(" ".join(str(error).split())) from None
    _print_submitted(outcome, remote, dry_run, as_json)


def _print_submitted(outcome: "SubmitOutcome", remote: str, dry_run: bool, as_json: bool) -> None:
    """What `registry submit` did, or would do, and the commands left for you to run."""
    import json

    if as_json:
        report = {
            "branch": outcome.branch,
            "path": outcome.path.as_posix(),
            "paths": [path.as_posix() for path in outcome.paths],
            "commit": outcome.commit,
            "pushed": outcome.pushed,
            "pull_request_url": outcome.pull_request_url,
            "remaining_commands": list(outcome.remaining_commands),
        }
        click.echo(json.dumps(report, indent=2))
        return
    if dry_run:
        click.echo("dry run, nothing changed; submit would run:")
    else:
        placed = outcome.path if len(outcome.paths) < 2 else f"{len(outcome.paths)} results"
        click.echo(
            f"committed {placed} on branch {outcome.branch} "
            f"({(outcome.commit or '')[:12]}) and pushed it to {remote}"
        )
        if outcome.pull_request_url:
            click.echo(f"opened {outcome.pull_request_url}")
        else:
            click.echo("gh is not installed; to open the pull request, run:")
    for command in outcome.remaining_commands:
        click.echo(command)
