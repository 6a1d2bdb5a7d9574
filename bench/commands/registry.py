"""`infermeter registry …`: validate, index and submit result files."""

import click


@click.group(name="registry")
def registry_group() -> None:
    """Work with the registry of result files and catalogs.

    \b
    Example:
      infermeter registry --help
    """
