"""`--json`, which every command that prints a report takes: one JSON object on stdout instead
of the text (`as_json`); what the text is instead of, per command, in its help."""

from collections.abc import Callable
from typing import Any, TypeVar

import click

CommandT = TypeVar("CommandT", bound=Callable[..., Any])


def json_option(instead_of: str = "") -> Callable[[CommandT], CommandT]:
    """`--json`: "Print one JSON object[ instead of `instead_of`]."."""
    rest = f" instead of {instead_of}" if instead_of else ""
    return click.option("--json", "as_json", is_flag=True, help=f"Print one JSON object{rest}.")
