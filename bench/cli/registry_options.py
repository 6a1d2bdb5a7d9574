"""`--registry PATH` (or INFERMETER_REGISTRY), shared by the commands that read a registry."""

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from infermeter.registry.location import REGISTRY_ENV, RegistryNotFoundError, locate_registry

CommandT = TypeVar("CommandT", bound=Callable[..., Any])


def registry_option(what: str) -> Callable[[CommandT], CommandT]:
    """`--registry PATH` (or INFERMETER_REGISTRY): the registry checkout a command reads."""
    return click.option(
        "--registry",
        "registry_root",
        type=click.Path(file_okay=False, exists=True, path_type=Path),
        envvar=REGISTRY_ENV,
        show_envvar=True,
        default=None,
        show_default="the checkout the current folder is in",
        help=f"Registry checkout: {what}.",
    )


def resolve_registry(explicit: Path | None) -> Path:
    """The registry checkout to use; a usage error naming --registry when there is none."""
    try:
        return locate_registry(explicit)
    except RegistryNotFoundError as error:
        raise click.BadParameter(str(error), param_hint="--registry") from None
