"""What the `infermeter calc …` commands share: their options generated from the calculators'
inputs (`field_options`, `calculators.inputs`: declared once for the CLI and the pages), library
errors as one-line CLI errors, `--json` printing, vLLM's engine options (`engine_options`), and a
command of them all (`calc_command`)."""

import functools
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar, cast

import click

import infermeter.calculators.api as api
from infermeter.bench.cli.oneline import (
    POSITIVE_FLOAT,
    FiniteFloatRange,
    OneLineCommand,
    UsageLine,
)
from infermeter.bench.cli.output_options import json_option
from infermeter.calculators.errors import CalculatorError, InputError
from infermeter.calculators.fields import (
    Field,
    FieldError,
    check_release,
    field_text,
    read_field,
    split_ids,
)
from infermeter.calculators.inputs import ENGINE
from infermeter.calculators.limits import MAX_TOKENS
from infermeter.registry.errors import RegistryError

F = TypeVar("F", bound=Callable[..., Any])

# Bounded where the calculators' own bounds (`calculators.limits`) would name the option less
# plainly; every float finite.
POSITIVE_INT = click.IntRange(min=1, max=MAX_TOKENS)
FRACTION = FiniteFloatRange(min=0, max=1, min_open=True)
_CLICK_TYPES: dict[str, Any] = {
    "int": POSITIVE_INT,
    "float": POSITIVE_FLOAT,
    "fraction": FRACTION,
    "rate": FiniteFloatRange(min=0, max=1, max_open=True),
    "nonneg": FiniteFloatRange(min=0),
}


def read_text(field: Field, text: str) -> str:
    """A text input (an id or a path, JSON, a vLLM release) without the spaces around it, as the
    page reads it (`fields.field_text`); a release is checked as the page checks it."""
    stripped = field_text(text)
    if field.kind == "release":
        check_release(field, stripped)
    return stripped


class FieldParam(click.ParamType[Any]):
    """An input of the calculators read on the command line by the page's own rule: the command
    line refuses what the page refuses, with the same message (`FieldError`). `read_text` for
    texts, `read_field` for the kinds without a click type of their own (the answer question's
    percentile and ms)."""

    def __init__(self, field: Field, name: str, read: Callable[[Field, str], Any]) -> None:
        self.field = field
        self.name = name
        self.read = read

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):  # a default already read
            return value
        try:
            return self.read(self.field, value)
        except FieldError as error:
            self.fail(error.reason, param, ctx)


@contextmanager
def library_errors() -> Iterator[None]:
    """Library errors become one-line CLI errors: bad numbers exit 2, bad files or ids exit 1."""
    try:
        yield
    except InputError as error:
        raise UsageLine(str(error)) from None
    except (CalculatorError, RegistryError) as error:
        raise click.ClickException(str(error)) from None


def print_json(payload: dict[str, Any]) -> None:
    click.echo(json.dumps(payload, indent=2, sort_keys=False))


def field_option(field: Field) -> Callable[[F], F]:
    """The click option of a calculator input (`calculators.inputs`): its name, short flag, type
    and range, default and help, all from the one declaration the page reads too."""
    flags = [field.option, *([field.short] if field.short else [])]
    text = field.help or field.label
    if field.kind == "bool":
        return click.option(*flags, field.name, is_flag=True, help=text)
    if field.kind == "ids":
        return click.option(
            *flags, field.name, multiple=True, type=_click_type(field), callback=_ids, help=text
        )
    kind = _click_type(field)
    if field.cli_required:  # click 8.3 takes default=None as a default given
        return click.option(*flags, field.name, type=kind, required=True, help=text)
    default = _typed_default(field)
    return click.option(
        *flags,
        field.name,
        type=kind,
        default=default,
        show_default=default is not None,
        help=text,
    )


class FieldChoice(click.Choice[str]):
    """One of a field's choices, its text read as the page reads it (`fields.field_text`)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return super().convert(field_text(value) if isinstance(value, str) else value, param, ctx)


def _click_type(field: Field) -> Any:
    if field.kind == "choice":
        return FieldChoice([c for c in field.choices if c])
    if field.kind in ("text", "id", "json", "release", "ids"):
        return FieldParam(field, "text", read_text)
    return _CLICK_TYPES.get(field.kind) or FieldParam(field, "number", read_field)


def _typed_default(field: Field) -> int | float | str | None:
    if not field.default:
        return None
    if field.kind == "int":
        return int(field.default)
    if field.kind in ("float", "fraction", "rate", "nonneg"):
        return float(field.default)
    return field.default


def field_options(fields: Iterable[Field], skip: Iterable[Field] = ()) -> Callable[[F], F]:
    """The click options of every input the command line takes, less `skip`."""
    skipped = {field.name for field in skip}
    chosen = [f for f in fields if f.where != "page" and f.name not in skipped]

    def decorate(function: F) -> F:
        for field in reversed(chosen):
            function = field_option(field)(function)
        return function

    return decorate


def calc_command(
    name: str,
    inputs: Iterable[Field],
    engine: bool = False,
    options: Sequence[Callable[[F], F]] = (),
) -> Callable[[Callable[..., Any]], click.Command]:
    """A `calc` command: an option per input (`field_options`; with `engine`, vLLM's engine
    options received as one `engine`, `engine_options`), then any other `options`, then --json."""

    def decorate(function: Callable[..., Any]) -> click.Command:
        function = json_option()(function)
        for option in reversed(options):
            function = option(function)
        if engine:
            function = engine_options(function)
        function = field_options(inputs, skip=ENGINE if engine else ())(function)
        return click.command(name=name, cls=OneLineCommand)(function)

    return decorate


def engine_options(function: F) -> F:
    """vLLM's own option names (`calculators.inputs.ENGINE`), shared by `calc vram` and `calc
    fit`: the command receives them as one `engine: api.EngineRequest`."""

    @functools.wraps(function)
    def with_engine(**given: Any) -> Any:
        engine = api.EngineRequest.from_fields(
            {field.name: given.pop(field.name) for field in ENGINE}
        )
        return function(engine=engine, **given)

    return cast(F, field_options(ENGINE)(with_engine))


def _ids(context: click.Context, parameter: click.Parameter, given: Any) -> tuple[str, ...]:
    """The ids of a repeated option, each value read as the page reads its one input."""
    return tuple(one for value in given for one in split_ids(value))
