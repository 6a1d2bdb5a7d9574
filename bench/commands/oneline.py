"""Usage errors as one line: `Error: …` on stderr, exit 2, without click's usage block.

Scripts and CI logs read the last line; a hostile value (a 400-digit number, a newline) must
not turn into a screenful. Every value shown is cut to `SHOWN_CHARS` characters.
"""

from __future__ import annotations

import math
from typing import Any

import click

SHOWN_CHARS = 200


def one_line(text: str) -> str:
    """`text` on one line (whitespace runs become one space), cut to `SHOWN_CHARS`."""
    flat = " ".join(text.split())
    return flat if len(flat) <= SHOWN_CHARS else flat[: SHOWN_CHARS - 1] + "…"


class UsageLine(click.ClickException):
    """A bad option value: one line on stderr, exit 2 (usage)."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))


class OneLineCommand(click.Command):
    """A command whose usage errors (click's own too) are one `Error: …` line."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as error:
            raise UsageLine(error.format_message()) from None


class OneLineGroup(click.Group):
    """The root group: every usage error below it, click's own included (an unknown command,
    a missing argument, a bad value), reaches the terminal as one `Error: …` line, exit 2.

    Usage errors raised while a subcommand parses or runs propagate through the root's
    `make_context` and `invoke`, so the root alone converts them. Asking a group for its
    commands without naming one still prints its help.
    """

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as error:
            raise UsageLine(error.format_message()) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as error:
            raise UsageLine(error.format_message()) from None


class FiniteFloatRange(click.FloatRange):
    """click's FloatRange without NaN and infinities (which FloatRange lets through)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"expected a finite number, got {value!r}", param, ctx)
        return number
