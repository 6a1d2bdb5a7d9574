"""What the `infermeter bench …` commands share: their one-line usage errors and the option
callbacks that check a value as click parses it (a bad one is an `OptionError`, exit 2)."""

from __future__ import annotations

from typing import Any

import click

from infermeter.bench.cli.oneline import UsageLine


class OptionError(UsageLine):
    """A bad option value: one line on stderr (values cut short), exit 2 (usage)."""


class OneLineErrors(click.Command):
    """Reports every usage error as a single `Error: …` line instead of click's usage block."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        raw_args = list(args)  # click consumes the list; the result file keeps the command
        try:
            ctx = super().make_context(info_name, args, parent=parent, **extra)
            ctx.meta["infermeter.raw_args"] = raw_args
            return ctx
        except click.UsageError as error:
            raise OptionError(" ".join(error.format_message().split())) from None

