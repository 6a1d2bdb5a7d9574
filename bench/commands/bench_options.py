"""What the `infermeter bench …` commands share: their one-line usage errors and the option
callbacks that check a value as click parses it (a bad one is an `OptionError`, exit 2)."""

from __future__ import annotations

from typing import Any

import click

from bench.commands.oneline import UsageLine
from bench.errors import BenchError
from bench.workloads import LengthDistribution, parse_length


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


def int_list(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[int, ...]:
    if value is None:
        return ()
    try:
        numbers = tuple(int(part) for part in value.split(","))
    except ValueError:
        raise OptionError(
            f"--{param.name}: expected whole numbers like 1,4,16, got {value!r}"
        ) from None
    if any(number < 1 for number in numbers):
        raise OptionError(f"--{param.name}: every value must be at least 1, got {value!r}")
    return numbers


def index_list(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[int, ...]:
    if value is None:
        return ()
    parts = value.split(",")
    if not all(part.strip().isdigit() for part in parts):
        raise OptionError(f"--gpu-indices: expected GPU indices like 0,1, got {value!r}")
    return tuple(int(part) for part in parts)


def rate_list(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[float, ...]:
    if value is None:
        return ()
    try:
        rates = tuple(float(part) for part in value.split(","))
    except ValueError:
        raise OptionError(
            f"--request-rate: expected numbers like 1,2.5,10, got {value!r}"
        ) from None
    if any(not rate > 0 or rate == float("inf") for rate in rates):
        raise OptionError(f"--request-rate: every rate must be greater than 0, got {value!r}")
    return rates


def length(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> LengthDistribution | None:
    if value is None:
        return None
    option = "--" + (param.name or "").replace("_", "-")
    try:
        return parse_length(value, option)
    except BenchError as error:
        raise OptionError(error.one_line()) from None


def extra_body(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> dict[str, Any] | None:
    from bench.extra_body import parse_extra_body

    if value is None:
        return None
    try:
        return parse_extra_body(value)
    except BenchError as error:
        raise OptionError(error.one_line()) from None


def positive(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    if value is not None and not value > 0:
        option = "--" + (param.name or "").replace("_", "-")
        raise OptionError(f"{option}: must be greater than 0, got {value:g}")
    return value
