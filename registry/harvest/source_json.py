"""JSON a source file holds, parsed for a reader: what is not JSON, or not the object a reader
expects, is one line naming the file (`HarvestError`, or `RowSkipped` where the file is one
row's), never a traceback."""

import json
from typing import Any

from infermeter.registry.harvest.errors import HarvestError


def parsed_json(text: str, where: str, error: type[Exception] = HarvestError) -> Any:
    """`text` parsed as JSON; `error` `<where>: not JSON (…)` when it is not."""
    try:
        return json.loads(text)
    except ValueError as problem:
        raise error(f"{where}: not JSON ({problem})") from None


def json_object(text: str, where: str, error: type[Exception] = HarvestError) -> dict[str, Any]:
    """`text` as a JSON object; `error` naming `where` when it is not JSON or not an object."""
    data = parsed_json(text, where, error)
    if not isinstance(data, dict):
        raise error(f"{where}: expected a JSON object")
    return data
