"""A price entry built from one row of a price source (SkyPilot's, Google Cloud's, Azure's).

A source's row is hostile input: a price of NaN or 1e400, an empty or 10,000-character instance
or region name, a date that is no date. `positive_number` is what every price source reads as a
price or a count (a finite number above 0); `validated_price` builds the entry and turns what
the schema refuses into one `HarvestError` line naming the file, the row and each field, never a
pydantic traceback.
"""

import math
from typing import Any

from pydantic import ValidationError

from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.models import PriceEntry

SHOWN_CHARACTERS = 40
"""The most characters of a source's value an error line quotes."""


def positive_number(value: object) -> float | None:
    """`value` as a finite number above 0; None for anything else (no number, a boolean, 0,
    negative, NaN, infinite, an integer beyond a float's range)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) and number > 0 else None


def shown(value: object) -> str:
    """`value` as an error line quotes it: its repr, cut with its length when long."""
    text = repr(value)
    if len(text) <= SHOWN_CHARACTERS:
        return text
    length = f" ({len(value)} characters)" if isinstance(value, str) else ""
    return f"{text[:SHOWN_CHARACTERS]}…{length}"


def validated_price(fields: dict[str, Any], where: str) -> PriceEntry:
    """The price entry of `fields`, read from the source row `where` (its file and row);
    HarvestError naming `where` and each field the schema refuses, with the value read."""
    try:
        return PriceEntry.model_validate(fields)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in problem['loc'])}: {problem['msg']} "
            f"(read {shown(problem['input'])})"
            for problem in error.errors()
        )
        raise HarvestError(f"{where}: {problems}") from None
