"""JSON text from outside (a file, a server, a command line, a form) parsed with one rule for
nesting: arrays and objects nested deeper than `MAX_DEPTH` are JSON that cannot be read, a
`json.JSONDecodeError` like any other.

The rule is a count, not the parser's own limit: CPython raises a RecursionError at about 1,000
levels, but in the browser (Pyodide) a few thousand levels overflow the JavaScript stack before
Python notices, and the calculator pages could only say they were unavailable. No input that
infermeter reads comes near `MAX_DEPTH` (a config.json or a streamed event is 3-6 levels deep).

An integer longer than Python converts (`sys.get_int_max_str_digits()`, 4,300 digits) is JSON that
cannot be read too: the parser's own ValueError is not a JSONDecodeError, and the readers that
catch only that one printed a traceback (`calc vram --model config.json`, `calc cost
--from-perf`) or the calculator pages said they were unavailable."""

from __future__ import annotations

import json
import re
import sys
from itertools import accumulate
from typing import Any

MAX_DEPTH = 100  # levels of arrays and objects
TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels"
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_DIGITS = re.compile(r"\d+")


def nesting(text: str) -> int:
    """The deepest nesting of arrays and objects in JSON `text` (brackets in strings do not
    count)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def _too_deep(text: str | bytes) -> bool:
    if isinstance(text, bytes):
        if text.count(b"[") + text.count(b"{") <= MAX_DEPTH:
            return False
        text = text.decode("latin-1")  # brackets and quotes are ASCII in every encoding of JSON
    elif text.count("[") + text.count("{") <= MAX_DEPTH:
        return False  # the common case: too few brackets to nest that deep
    return nesting(text) > MAX_DEPTH


def json_loads(text: str | bytes, **options: Any) -> Any:
    """`json.loads(text, **options)`; JSONDecodeError (a ValueError) for text nested deeper than
    `MAX_DEPTH`."""
    if _too_deep(text):
        raise json.JSONDecodeError(TOO_DEEP, "", 0)
    try:
        return json.loads(text, **options)
    except json.JSONDecodeError:
        raise
    except ValueError:
        _refuse_long_number(text)
        raise


def _refuse_long_number(text: str | bytes) -> None:
    """JSONDecodeError at the first number of `text` longer than Python converts to an int, if
    there is one (the parser's ValueError says neither where nor that it is the JSON's)."""
    limit = sys.get_int_max_str_digits()
    if isinstance(text, bytes):
        text = text.decode("latin-1")  # digits and quotes are ASCII in every encoding of JSON
    blanked = _STRING.sub(lambda string: " " * len(string[0]), text)  # offsets kept
    for run in _DIGITS.finditer(blanked):
        if limit and len(run[0]) > limit:
            message = f"a number of more than {limit:,} digits"
            raise json.JSONDecodeError(message, text, run.start()) from None
