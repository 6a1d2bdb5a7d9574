"""Which characters a published string may hold, and a copy of a string without the others.

Results are published: their strings reach web pages, JSON data files and the terminals of
whoever reads them. A string may not hold control characters other than newline and tab
(NUL, ESC and its terminal sequences, DEL, the C1 range with its NEL, U+0085), the line and
paragraph separators U+2028 and U+2029 (a browser's text, JavaScript and many terminals and
editors break a line at each, so a one-line name would show a line of its own), the
bidirectional controls that reorder text on screen (the "Trojan Source" family, U+202A–U+202E
and U+2066–U+2069), or lone surrogates (which no UTF-8 file can hold). `registry validate`
refuses a file whose strings hold one (`unsafe_character`, in registry.checks.strings); the
site replaces each by U+FFFD (`plain_text`) wherever a string is shown, so a file that got
past validation still cannot break a page.
"""

from __future__ import annotations

import html
import re
from typing import Any

ALLOWED_CONTROLS = frozenset("\n\t")
BIDI_CONTROLS = frozenset(chr(code) for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A)))
LINE_BREAKS = frozenset("\x85\u2028\u2029")
"""The characters beyond the line feed and carriage return at which text breaks a line: NEL
and the line and paragraph separators."""
REPLACEMENT = "\ufffd"

_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def unsafe_character(text: str) -> str | None:
    """The first character of `text` that a published string may not hold, or None."""
    found = _UNSAFE.search(text)
    return found.group(0) if found else None


def plain_text(text: str) -> str:
    """`text` with every character a published string may not hold replaced by U+FFFD."""
    return _UNSAFE.sub(REPLACEMENT, text)


def html_text(text: str) -> str:
    """`text` as HTML text: `plain_text`, then HTML-escaped (quotes too, for attributes)."""
    return html.escape(plain_text(text))


def plain_data(value: Any) -> Any:
    """A copy of JSON data with every string, keys included, as `plain_text` leaves it."""
    if isinstance(value, str):
        return plain_text(value)
    if isinstance(value, dict):
        return {plain_text(str(key)): plain_data(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain_data(item) for item in value]
    return value
