"""JSON text from outside (a file, a server, a command line) parsed with one rule for nesting:
JSON nested deeper than Python's parser goes (about 1,000 levels) is JSON that cannot be read,
a `json.JSONDecodeError` like any other, not a RecursionError for each caller to catch."""

from __future__ import annotations

import json
from typing import Any

TOO_DEEP = "nested deeper than the JSON parser reads"


def json_loads(text: str | bytes, **options: Any) -> Any:
    """`json.loads(text, **options)`; JSONDecodeError (a ValueError) for text nested too deep."""
    try:
        return json.loads(text, **options)
    except RecursionError:
        raise json.JSONDecodeError(TOO_DEEP, "", 0) from None
