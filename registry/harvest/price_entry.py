"""A price entry built from one row of a price source (SkyPilot's, Google Cloud's, Azure's).

A source's row is hostile input: a price of NaN, 1e400 or 1e300, an empty or 10,000-character
instance or region name, one holding NUL, a date that is no date, one instance type priced twice.
`positive_number` is what every price source reads as a price or a count (a finite number above
0); `validated_price` builds the entry and turns what the schema refuses (a price above the
catalog's `MAX_USD_PER_GPU_HOUR` among it) and a string no published string may hold
(`registry.plain_text`) into one `HarvestError` line naming the file, the row and each field
(of a string, the field the row gave, not the notes written around it), never a pydantic
traceback or a file written; `one_price_each` refuses a source that prices one thing twice,
differently.
"""

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from infermeter.registry.checks.strings import string_findings
from infermeter.registry.errors import shown
from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.models import PriceEntry

WRITTEN_AROUND = frozenset({"notes", "source.title"})
"""The fields a price source writes around what a row gave (its regions, its file's name): a
character they may not hold came from a field of the row, and the error names that field."""


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


def validated_price(fields: dict[str, Any], where: str) -> PriceEntry:
    """The price entry of `fields`, read from the source row `where` (its file and row);
    HarvestError naming `where` and each field the schema refuses (a price per GPU-hour above
    the catalog's `MAX_USD_PER_GPU_HOUR` among them), with the value read, or a string a
    published string may not hold."""
    try:
        entry = PriceEntry.model_validate(fields)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in problem['loc'])}: {problem['msg']} "
            f"(read {shown(problem['input'])})"
            for problem in error.errors()
        )
        raise HarvestError(f"{where}: {problems}") from None
    # The rule `registry validate` holds every published string to: no control character.
    findings = string_findings("", entry.model_dump(mode="json"))
    named = [finding for finding in findings if finding.path not in WRITTEN_AROUND] or findings
    if named:
        raise HarvestError(
            f"{where}: " + "; ".join(f"{finding.path}: {finding.message}" for finding in named)
        )
    return entry


def one_price_each(file: Path, prices: Iterable[tuple[str, str, float]]) -> None:
    """HarvestError naming both rows where the source's rows in `file` give one thing two
    prices; `prices` are (what is priced, as an error line may quote it; the row that prices
    it; the price as the row states it). The same price twice is one price (a row repeated
    verbatim is harmless); of two prices, none is picked silently."""
    first: dict[str, tuple[str, float]] = {}
    for priced, row, price in prices:
        row_before, price_before = first.setdefault(priced, (row, price))
        if price != price_before:
            raise HarvestError(
                f"{file}: {row_before} and {row} give {priced} differently "
                f"({price_before:g} and {price:g}); a source gives one price each"
            )
