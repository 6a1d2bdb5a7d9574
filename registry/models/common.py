"""Building blocks shared by every persisted model: the base class and constrained scalar types."""

import datetime as dt
from typing import Annotated, Final, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, BeforeValidator, ConfigDict, Field

from infermeter.calculators.limits import MAX_CONFIG_INTEGER
from infermeter.registry.homoglyphs import disguised_name

__all__ = ["RESULT_SCHEMA_VERSION", "SLUG_PATTERN", "StrictModel"]

SLUG_PATTERN = r"^[a-z0-9]+(?:[-.][a-z0-9]+)*$"
PARTIAL_DATE_PATTERN = r"^[0-9]{4}(?:-(?:0[1-9]|1[0-2])(?:-(?:0[1-9]|[12][0-9]|3[01]))?)?$"
FULL_DATE_PATTERN = r"^[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])$"
URL_PATTERN = r"^https?://[^\s/?#@]+(?:[/?#][^\s]*)?$"
"""An http(s) URL without user information (`user:password@host`): a cited address carries
no credentials (an '@' later in the path, `/@scope`, is fine)."""
HF_REPO_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$"


class StrictModel(BaseModel):
    """Base of every registry model: unknown fields are errors, no type coercion, immutable."""

    # strict: "5" is not 5 and 1 is not True, so pydantic agrees with the exported JSON Schema.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _is_text_or_datetime(value: object) -> object:
    # Lax datetime parsing would also take a number of seconds; the JSON Schema says string.
    if not isinstance(value, str | dt.datetime):
        raise ValueError("expected an RFC 3339 date-time string")
    return value


def _is_calendar_date(value: str) -> str:
    # The pattern bounds month and day; this catches the rest (2025-02-30).
    if len(value) == 10:
        dt.date.fromisoformat(value)
    return value


Slug = Annotated[str, Field(pattern=SLUG_PATTERN, max_length=100)]
"""An identifier: lowercase letters and digits, joined by single `-` or `.`."""

PartialDate = Annotated[str, Field(pattern=PARTIAL_DATE_PATTERN), AfterValidator(_is_calendar_date)]
"""A date as precise as its source: `YYYY`, `YYYY-MM` or `YYYY-MM-DD`."""

FullDate = Annotated[str, Field(pattern=FULL_DATE_PATTERN), AfterValidator(_is_calendar_date)]
"""A calendar date `YYYY-MM-DD`."""

Timestamp = Annotated[AwareDatetime, BeforeValidator(_is_text_or_datetime), Field(strict=False)]
"""An instant with its time zone, RFC 3339 (`2025-05-01T12:00:00Z`)."""

Url = Annotated[str, Field(pattern=URL_PATTERN, max_length=2000)]
"""An http(s) URL, kept exactly as written."""

HfRepo = Annotated[str, Field(pattern=HF_REPO_PATTERN, max_length=200)]
"""A Hugging Face repository, `owner/name`."""

Sha256Hex = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
"""A SHA-256 digest in lowercase hex, 64 digits."""

ONE_LINE_PATTERN = r"^[^\n]*$"
"""A `Text` holds no line break: a name, a version or a title is one line wherever it is shown
(a line break in a dataset's name started a forged line of `registry answer`'s output). The
JSON Schema states it by this pattern; the model by `_is_one_line` (a pattern's `$` may match
before a final line break)."""


def _is_one_line(value: str) -> str:
    if "\n" in value:
        raise ValueError("holds a line break; the field is one line of text")
    return value


Text = Annotated[
    str,
    Field(min_length=1, max_length=2000, json_schema_extra={"pattern": ONE_LINE_PATTERN}),
    AfterValidator(_is_one_line),
]
"""A short non-empty plain-text string of one line."""


def _reads_as_itself(value: str) -> str:
    problem = disguised_name(value)
    if problem is not None:
        raise ValueError(f"{problem}; write a name in one script")
    return value


Name = Annotated[Text, AfterValidator(_reads_as_itself)]
"""A `Text` that names something to a reader (a GPU, a model, a provider): it may not pass
for another name in Latin letters by Cyrillic or Greek look-alikes (`registry.homoglyphs`)."""

LongText = Annotated[str, Field(min_length=1, max_length=20000)]
"""A non-empty plain-text string that may run to paragraphs (commands, conditions, notes)."""

DocumentTitle = Annotated[Text, Field(description="Title of the page or document.")]
"""The title of a cited page or document (a catalog's source, a reported result's)."""

NonNegativeFloat = Annotated[float, Field(ge=0, allow_inf_nan=False)]
PositiveFloat = Annotated[float, Field(gt=0, allow_inf_nan=False)]
# A count is at most 2**53, exact as a float and in JavaScript: the index and the answers
# divide by counts (a concurrency of 10**308 ended `registry index` in an OverflowError).
NonNegativeInt = Annotated[int, Field(ge=0, le=MAX_CONFIG_INTEGER)]
PositiveInt = Annotated[int, Field(ge=1, le=MAX_CONFIG_INTEGER)]
Seed = Annotated[int, Field(ge=-MAX_CONFIG_INTEGER, le=MAX_CONFIG_INTEGER)]
"""A random seed: any whole number a JSON reader (JavaScript's too) holds exactly, so that two
seeds never read as one."""
Percent = Annotated[float, Field(ge=0, le=100, allow_inf_nan=False)]
Fraction = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]

FormFactor = Literal["pcie", "sxm", "oam", "superchip"]
CPU_DEVICE_ID: Final = "cpu"
"""`identity.gpu.id` (and `form_factor`) of a run that had no GPU: the engine served on the
host's CPU (vLLM's CPU build). Such a result is valid, is useful to the bench's own tests and to
the calculators' error report, and is kept out of every GPU comparison."""
DeviceFormFactor = FormFactor | Literal["cpu"]
"""What a result's GPU is: a board form factor, or `cpu` for a run without a GPU."""
SchemaVersion = Literal[1]
"""Version of a catalog or corrections file (result files have their own, below)."""

RESULT_SCHEMA_VERSION: Final = 2
"""Version of the result file format that infermeter writes.

1: the first format. 2: a load point may be `offline` (every request queued at once) or an open
loop at a `constant` rate, and an open loop may carry a `rate_search` (server at an SLO);
`registry.migration` turns a version-1 file into version 2.
"""

ResultSchemaVersion = Literal[2]
