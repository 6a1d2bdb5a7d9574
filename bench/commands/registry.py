"""`infermeter registry …`: validate, index and submit result files."""

from pathlib import Path

import click

from registry.schemas import SCHEMAS_DIR, schema_drift, write_schemas


@click.group(name="registry")
def registry_group() -> None:
    """Work with the registry of result files and catalogs.

    \b
    Example:
      infermeter registry --help
    """


@registry_group.command(name="schemas")
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 naming each schema file that differs from the models.",
)
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=SCHEMAS_DIR,
    show_default="schemas/ of this checkout",
    help="Folder of the JSON Schema files.",
)
def schemas_command(check: bool, directory: Path) -> None:
    """Write the JSON Schemas of the registry's files (schemas/*.json) from its models.

    \b
    Example:
      infermeter registry schemas --check
    """
    if check:
        problems = schema_drift(directory)
        if problems:
            lines = [str(problem) for problem in problems]
            lines.append("run `infermeter registry schemas` to update them")
            raise click.ClickException("\n".join(lines))
        click.echo("schemas are up to date")
        return
    changed = write_schemas(directory)
    for path in changed:
        click.echo(f"updated {path}")
    if not changed:
        click.echo("schemas are up to date")
