"""The options of `infermeter bench run`, generated from `bench.plan.options.RunOptions` (and
`bench import`'s from `bench.importers.common.ImportFacts`, by the same `model_options`).

Each field with a `Cli` is one option: `--` and its alias, the help, metavar and short name of
its `Cli`, the click type its annotation implies (a flag for a bool, a number for an int or a
float, a comma list for a tuple of them, a file for a Path, a choice for a Literal, text for
the rest), its default, and its range in the help. Click only reads each word as its type;
`RunOptions` checks the values (ranges, patterns, lengths), once, for the command line and a
plan file alike, and `parse_options` names a bad one's option. --plan, --quiet and --json
steer the command itself and are not run options.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

import click
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from infermeter.bench.cli.bench_options import OptionError
from infermeter.bench.cli.output_options import json_option
from infermeter.bench.plan.options import Cli, RunOptions, option_error

F = TypeVar("F", bound=Callable[..., Any])
M = TypeVar("M", bound=BaseModel)

_COMMAND_OPTIONS = (
    click.option(
        "--plan",
        "plan_path",
        type=click.Path(dir_okay=False, path_type=Path),
        metavar="FILE.yaml",
        help="Run every run of a plan file in turn (see bench/plans/example.yaml); the other run "
        "options go in the file.",
    ),
    click.option("--quiet", is_flag=True, help="No progress display on stderr."),
    json_option("a table"),
)

_NUMBERS: dict[Any, click.ParamType[Any, Any]] = {int: click.INT, float: click.FLOAT}


class _CommaList(click.ParamType[tuple[Any, ...], Any]):
    """Numbers given as one comma-separated word (`1,4,16`), read as `number` reads each."""

    def __init__(self, number: type[int] | type[float]) -> None:
        self.number = number
        self.example = "whole numbers like 1,4,16" if number is int else "numbers like 1,2.5,10"
        self.name = f"{number.__name__} list"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, tuple):
            return value
        try:
            return tuple(self.number(part) for part in str(value).split(","))
        except ValueError:
            self.fail(f"expected {self.example}, got {value!r}", param, ctx)


def model_options(model: type[BaseModel]) -> list[Callable[[F], F]]:
    """The click options of `model`'s fields that have a `Cli`, in the order of the fields."""
    return [
        _option(name, field, cli)
        for name, field in model.model_fields.items()
        if (cli := _cli(field)) is not None
    ]


def run_options(command: F) -> F:
    """`command` with every `bench run` option, in the order of `RunOptions`' fields."""
    for option in reversed([*model_options(RunOptions), *_COMMAND_OPTIONS]):
        command = option(command)
    return command


def parse_options(values: Mapping[str, Any]) -> RunOptions:
    """The `RunOptions` of the command line's values, validated by the model; OptionError, one
    line naming the option, for a bad one."""
    return parse_model(RunOptions, values)


def parse_model(model: type[M], values: Mapping[str, Any]) -> M:
    """`model` of a command's option values, validated once; OptionError, one line naming the
    option as the command line spells it, for a bad one."""
    try:
        return model.model_validate(values)
    except ValidationError as error:
        raise OptionError(option_error(error, model)) from None


def _cli(field: FieldInfo) -> Cli | None:
    return next((item for item in field.metadata if isinstance(item, Cli)), None)


def _scalar(annotation: Any) -> tuple[Any, bool]:
    """The type under `Annotated`, `| None` and `tuple[…, ...]`, and whether it is a tuple."""
    listed = False
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            annotation = next(a for a in get_args(annotation) if a is not type(None))
        elif origin is tuple:
            listed, annotation = True, get_args(annotation)[0]
        else:
            return annotation, listed


def _option(name: str, field: FieldInfo, cli: Cli) -> Callable[[F], F]:
    flag = "--" + (field.alias or name)
    scalar, listed = _scalar(field.annotation)
    declared = [flag, *([cli.short] if cli.short else []), name]
    help_text = cli.help + _range_text([field.annotation, *field.metadata])
    if scalar is bool:  # --x/--no-x where given-or-not is a third answer (default None)
        pair = f"{flag}/--no-{flag[2:]}" if field.default is not False else flag
        return click.option(pair, name, is_flag=True, default=field.default,
                            show_default=bool(field.default), help=help_text)  # fmt: skip
    shown = field.default not in (None, ())
    common: dict[str, Any] = {
        "default": field.default if shown else None,
        "show_default": shown,
        "help": help_text,
    }
    if listed and scalar is str:
        return click.option(*declared, multiple=True, metavar=cli.metavar, **common)
    if listed:  # not given: no values
        return click.option(*declared, type=_CommaList(scalar), metavar=cli.metavar,
                            callback=_none_is_empty, **common)  # fmt: skip
    if scalar is Path:
        path = click.Path(dir_okay=False, path_type=Path)
        return click.option(*declared, type=path, metavar=cli.metavar, **common)
    if get_origin(scalar) is Literal:
        choice = click.Choice([str(value) for value in get_args(scalar)])
        return click.option(*declared, type=choice, metavar=cli.metavar, **common)
    kind = _NUMBERS.get(scalar, click.STRING)
    return click.option(*declared, type=kind, metavar=cli.metavar, **common)


def _none_is_empty(context: click.Context, parameter: click.Parameter, value: Any) -> Any:
    return () if value is None else value


def _range_text(annotations: list[Any]) -> str:
    """The bounds of a number, as click shows a range: `  [x>=1]`, `  [0<x<=1]`."""
    low = high = ""
    stack = list(annotations)
    while stack:
        item = stack.pop()
        if isinstance(item, FieldInfo):
            stack.extend(item.metadata)
        elif _bound(item, "ge") is not None:
            low = f"{_bound(item, 'ge')}<="
        elif _bound(item, "gt") is not None:
            low = f"{_bound(item, 'gt')}<"
        elif _bound(item, "le") is not None:
            high = f"<={_bound(item, 'le')}"
        elif _bound(item, "lt") is not None:
            high = f"<{_bound(item, 'lt')}"
        else:
            stack.extend(get_args(item))
    if not high:  # a lower bound alone reads x>=1, as click writes it
        return f"  [x>{'=' if low.endswith('=') else ''}{low.rstrip('<=')}]" if low else ""
    return f"  [{low}x{high}]"


def _bound(item: object, name: str) -> object:
    """A bound among a field's constraints (pydantic keeps `Field(ge=1)` as an object with a
    `ge`), not an attribute of a type."""
    return None if isinstance(item, type) else getattr(item, name, None)
