"""`infermeter registry migrate`: rewrite older-format result files in the current format."""

from pathlib import Path

import click

from infermeter.bench.cli.oneline import OneLineCommand
from infermeter.bench.cli.registry_options import registry_option, resolve_registry
from infermeter.calculators.plural import counted


@click.command(name="migrate", cls=OneLineCommand)
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@registry_option("its registry/results/ is migrated when no PATHS are given")
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 naming each file that is of an older format.",
)
def migrate_command(paths: tuple[Path, ...], registry_root: Path | None, check: bool) -> None:
    """Upgrade result files of an older schema_version (default: all of registry/results/).

    An upgraded result has a new content id: inside registry/results/ it moves to its new path
    and the old file is removed; elsewhere it is rewritten in place. Running it twice changes
    nothing. Commit the renames: `registry validate --base` accepts them.

    \b
    Example:
      infermeter registry migrate
    """
    from infermeter.registry.errors import InvalidFileError
    from infermeter.registry.migrate import migrate_paths, pending_migrations
    from infermeter.registry.store import display_path

    root = resolve_registry(registry_root)
    try:
        if check:
            pending = pending_migrations(list(paths), root)
            for path in pending:
                click.echo(f"{display_path(path)}: older format, run `infermeter registry migrate`")
            if pending:
                raise SystemExit(1)
            click.echo("every result file is of the current format")
            return
        migrated = migrate_paths(list(paths), root)
    except InvalidFileError as error:
        raise click.ClickException("\n".join(str(problem) for problem in error.problems)) from None
    for item in migrated:
        click.echo(
            f"migrated {display_path(item.old_path)} (version {item.from_version}) → "
            f"{display_path(item.new_path)} "
            f"(version {item.to_version})"
        )
    click.echo(f"{counted(len(migrated), 'file')} migrated")
