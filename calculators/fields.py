"""One calculator input (`Field`): declared once, it is both an option of `infermeter calc …`
(bench/cli/calc_options.py generates the click option) and a form field of the calculator
page (site/hooks/calc_pages.py), read by the same rule (`parse_field`). The inputs themselves are
declared in `calculators.inputs` and `calculators.perf_inputs`."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, TypeVar

from infermeter.calculators.errors import InputError
from infermeter.calculators.limits import MAX_LATENCY_MS, MAX_TOKENS
from infermeter.calculators.vllm_settings import parse_version


class _Dataclass(Protocol):
    __dataclass_fields__: ClassVar[dict[str, Any]]


TargetT = TypeVar("TargetT", bound=_Dataclass)

# How a field's text is read: its kind → the domain a number must lie in (an integer's is the
# command line's too: bench/cli/calc_options.py's POSITIVE_INT).
NUMBER_DOMAINS = {
    "int": f"an integer from 1 to {MAX_TOKENS:,}",
    "float": "a number > 0",
    "fraction": "a number in (0, 1]",
    "rate": "a number in [0, 1)",
    "nonneg": "a number >= 0",
    "percentile": "a number in (0, 100]",
    "ms": f"a number of milliseconds in (0, {MAX_LATENCY_MS:,.0f}]",
}


class FieldError(ValueError):
    """A bad value in one input; the page shows the message next to it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message

    @property
    def reason(self) -> str:
        """The message without the field's name (the command line names its option)."""
        return self.message.split(": ", 1)[-1]


@dataclass(frozen=True)
class Field:
    """One input. `name` is the page's query key and, with `-` for `_`, the CLI option (unless
    `flag` names another); `kind` is one of int, float, fraction, rate, nonneg, percentile, ms
    (numbers: `NUMBER_DOMAINS`), choice, bool, text, id (a catalog id), json (a pasted
    config.json), release (a vLLM release), ids (several catalog ids).
    `default` applies wherever the input is left out; `example` only fills the page's form (the
    command line asks for it). `required`: "" (optional), "always", "cli" (the page offers
    another way) or "page" (the command line offers another way). `where`: "both", "page" or
    "cli". Inputs of one `group` are alternatives (perf's load: a concurrency, a rate, offline
    or a static batch): a query that names one leaves the others blank, not at their example
    (`query_text`), so a link naming only a request rate is an open loop at that rate."""

    name: str
    label: str
    kind: str
    default: str = ""
    required: str = ""
    choices: tuple[str, ...] = ()
    help: str = ""
    catalog: str = ""  # "models" or "gpus": the page offers the catalog's ids
    blank: str = "(from the checkpoint)"  # how a choice shows its empty value
    short: str = ""  # the CLI's short flag, e.g. -tp
    example: str = ""
    where: str = "both"
    flag: str = ""  # the CLI option where it is not the name's, e.g. --slo-ttft-ms
    group: str = ""  # inputs of one group are alternatives (see above)

    @property
    def prefill(self) -> str:
        """What the page's form holds before the reader types."""
        return self.example or self.default

    @property
    def page_required(self) -> bool:
        return self.required in ("always", "page")

    @property
    def cli_required(self) -> bool:
        return self.required in ("always", "cli")

    @property
    def option(self) -> str:
        """The CLI option, e.g. --max-model-len."""
        return self.flag or f"--{self.name.replace('_', '-')}"


# A page's address holds its inputs; one longer than LINK_CHARS characters is refused by common
# static web servers (nginx and Apache read a request line of about 8 KB; Python's http.server,
# which `make demo` runs, 64 KiB: 414 URI Too Long). The page's script then leaves the longest
# inputs out of the address and names them in LEFT_OUT, and says so beside the form; a page
# opened from such a link asks for each of them again (`left_out_errors`).
LINK_CHARS = 8000
LEFT_OUT = "left_out"


def left_out_errors(fields: tuple[Field, ...], query: Mapping[str, str]) -> dict[str, str]:
    """The inputs a link left out (too long for it) and the reader has not given again."""
    named = {name.strip() for name in query.get(LEFT_OUT, "").split(",")}
    return {
        field.name: f"{field.name}: the link left this out, as it was longer than a link can "
        f"carry ({LINK_CHARS:,} characters); paste it again"
        for field in fields
        if field.name in named and not field_text(query.get(field.name, ""))
    }


def query_text(fields: tuple[Field, ...], query: Mapping[str, str]) -> dict[str, str]:
    """Each field's text as a page's query gives it: the query's value, else blank where the
    query names another input of its group, else what the form holds before the reader types
    (`Field.prefill`). The page's script reads its address by the same rule (calculators.js)."""
    named = {field.group for field in fields if field.group and field.name in query}
    return {
        field.name: query.get(field.name, "" if field.group in named else field.prefill)
        for field in fields
    }


def field_text(raw: str) -> str:
    """An input's text as both skins read it: the spaces around it (a pasted value, a quoted
    option) are not part of it."""
    return raw.strip()


def split_ids(text: str) -> tuple[str, ...]:
    """Several catalog ids in one text, as both skins read them: separated by commas (the page's
    one input; the command line also repeats its option), each as `field_text` reads it."""
    return tuple(field_text(part) for part in text.split(",") if field_text(part))


def parse_field(field: Field, raw: str) -> Any:
    """The field's value from its text, or None when empty and optional."""
    text = field_text(raw)
    if field.kind == "bool":
        return text.lower() in ("1", "true", "on", "yes")
    if not text:
        if field.page_required:
            raise FieldError(field.name, f"{field.name}: required")
        return None
    if field.kind == "ids":
        return split_ids(text) or None
    if field.kind in ("text", "id", "json"):
        return text
    if field.kind == "release":
        return check_release(field, text)
    if field.kind == "choice":
        if text not in field.choices:
            raise FieldError(
                field.name,
                f"{field.name}: expected one of {', '.join(c for c in field.choices if c)}",
            )
        return text
    return _number(field, text)


def read_field(field: Field, raw: str) -> Any:
    """The field's value from its text, its default where the text is blank."""
    return parse_field(field, field_text(raw) or field.default)


def check_release(field: Field, text: str) -> str:
    """A vLLM release such as 0.11 or 0.10.1.1 (not '', nor a number such as 0.9e9) that the
    plan models (`vllm_settings.parse_version`)."""
    try:
        parse_version(text)
    except InputError as error:
        raise FieldError(field.name, str(error)) from None
    return text


def _number(field: Field, text: str) -> int | float:
    try:
        number = int(text) if field.kind == "int" else float(text)
    except ValueError:
        expected = "an integer" if field.kind == "int" else "a number"
        raise FieldError(
            field.name, f"{field.name}: expected {expected}, got {_shown(text)}"
        ) from None
    if number != number or number in (float("inf"), float("-inf")):
        raise FieldError(field.name, f"{field.name}: expected a finite number, got {text!r}")
    inside = {
        "int": 1 <= number <= MAX_TOKENS,
        "float": number > 0,
        "fraction": 0 < number <= 1,
        "rate": 0 <= number < 1,
        "nonneg": number >= 0,
        "percentile": 0 < number <= 100,
        "ms": 0 < number <= MAX_LATENCY_MS,
    }[field.kind]
    if not inside:
        expected = NUMBER_DOMAINS[field.kind]
        raise FieldError(field.name, f"{field.name}: expected {expected}, got {_shown(text)}")
    return number


def _shown(text: str) -> str:
    """A field's text in a message: whole up to 40 characters, else its start and length."""
    return repr(text) if len(text) <= 40 else f"{text[:20]!r}… ({len(text):,} characters)"


def same_named(target: type[TargetT], values: Mapping[str, Any], **given: Any) -> TargetT:
    """`target` (a dataclass) with each field that `values` names the same taken as it is
    there (`seed` → `seed`), and the rest (renamed, converted or worked out) from `given`."""
    names = {field.name for field in dataclasses.fields(target)} - given.keys()
    return target(**{name: values[name] for name in names if name in values}, **given)
