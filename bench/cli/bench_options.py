"""What the `infermeter bench …` commands share: their one-line usage errors and the option
callbacks that check a value as click parses it (a bad one is an `OptionError`, exit 2)."""

from __future__ import annotations

import click

from infermeter.bench.cli.oneline import OneLineCommand, UsageLine


class OptionError(UsageLine):
    """A bad option value: one line on stderr (values cut short), exit 2 (usage)."""


class OneLineErrors(OneLineCommand):
    """Reports every usage error as a single `Error: …` line instead of click's usage block,
    white space folded (`OptionError`)."""

    def usage_line(self, error: click.UsageError) -> click.ClickException:
        return OptionError(" ".join(error.format_message().split()))
