"""JSON a source file holds, parsed for a reader: what is not JSON, or not the object a reader
expects, is one line naming the file (`HarvestError`, or `RowSkipped` where the file is one
row's), never a traceback."""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from infermeter.calculators.json_text import json_loads
from infermeter.registry.errors import shown
from infermeter.registry.harvest.errors import HarvestError, RowSkipped
from infermeter.registry.input_files import read_input_text


def parsed_json(
    text: str, where: str, error: type[Exception] = HarvestError, unparsed: str = "not JSON"
) -> Any:
    """`text` parsed as JSON; `error` `<where>: <unparsed> (…)` when it is not JSON or nests too
    deeply to parse."""
    try:
        return json_loads(text)
    except ValueError as problem:
        raise error(f"{where}: {unparsed} ({problem})") from None


def json_object(text: str, where: str, error: type[Exception] = HarvestError) -> dict[str, Any]:
    """`text` as a JSON object; `error` naming `where` when it is not JSON or not an object."""
    data = parsed_json(text, where, error)
    if not isinstance(data, dict):
        raise error(f"{where}: expected a JSON object")
    return data


def json_rows(path: Path, expected: str, unparsed: str = "not JSON") -> list[dict[str, Any]]:
    """The rows of the source file `path`, a JSON array of objects; HarvestError `<path>:
    <unparsed> (…)` when it is not JSON or nests too deeply to parse, `<path>: expected
    <expected>` when it is not an array of objects."""
    rows = parsed_json(read_input_text(path, "source table"), str(path), unparsed=unparsed)
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise HarvestError(f"{path}: expected {expected}")
    return rows


def whole_number(row: Mapping[str, Any], field: str, least: int = 1) -> int:
    """A count a source row states: `row[field]` as a whole number of at least `least` (a float
    that is one, `8.0`, reads as 8); else `RowSkipped` saying what it is instead."""
    value = row.get(field)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        wanted = "a positive whole number" if least == 1 else f"a whole number >= {least}"
        raise RowSkipped(f"{field} is {shown(value)}, not {wanted}")
    return value
