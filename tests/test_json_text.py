"""`calculators.json_text.json_loads`: JSON from outside, with one rule for nesting (MAX_DEPTH
levels), counted rather than left to the parser, whose own limit differs between CPython and the
browser's Pyodide (tests/site/test_browser.py shows the calculator pages refusing it)."""

from __future__ import annotations

import json

import pytest

from infermeter.calculators.json_text import MAX_DEPTH, TOO_DEEP, json_loads, nesting


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("1", 0),
        ("[]", 1),
        ('{"a": [1, {"b": []}]}', 4),
        ('["[[[[", "]]"]', 1),  # brackets in strings do not count
        ('["\\"[[[[\\\\", "{"]', 1),  # nor after escaped quotes and backslashes
        ("[" + ", ".join(["{}"] * 500) + "]", 2),  # many brackets, shallow
        ('{"a": "x\ny[[["}', 1),
    ],
)
def test_nesting_counts_levels_outside_strings(text: str, depth: int) -> None:
    assert nesting(text) == depth


def test_json_loads_reads_up_to_max_depth_and_refuses_one_more() -> None:
    assert json_loads(_nested(MAX_DEPTH)) == json.loads(_nested(MAX_DEPTH))
    for text in (_nested(MAX_DEPTH + 1), _nested(MAX_DEPTH + 1).encode(), _nested(100_000)):
        with pytest.raises(json.JSONDecodeError, match=TOO_DEEP):
            json_loads(text)


def test_json_loads_refuses_deep_text_that_is_not_closed() -> None:
    with pytest.raises(json.JSONDecodeError, match=TOO_DEEP):
        json_loads('{"a": ' * 5_000)


def test_json_loads_reads_many_shallow_brackets_and_bracket_strings() -> None:
    rows = [{"prompt": "[" * 300, "n": [i]} for i in range(1_000)]
    text = json.dumps(rows)
    assert json_loads(text) == rows
    assert json_loads(text.encode()) == rows


LONG = "9" * 5_000  # more digits than Python converts to an int (4,300)


@pytest.mark.parametrize("as_bytes", [False, True], ids=["text", "bytes"])
def test_json_loads_refuses_an_integer_too_long_to_convert_where_it_is(as_bytes: bool) -> None:
    text = '{"note": "' + LONG + '",\n "x": -' + LONG + "}"  # the digits in a string are text
    with pytest.raises(json.JSONDecodeError, match="a number of more than 4,300 digits") as error:
        json_loads(text.encode() if as_bytes else text)
    assert (error.value.lineno, error.value.colno) == (2, 8)
    assert json_loads(f'["{LONG}", 1.{LONG}]') == [LONG, float(f"1.{LONG}")]
