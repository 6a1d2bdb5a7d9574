"""Strings: every string of a published file is plain text, a result's (`registry validate`)
as a catalog's (read by `registry.catalog.load_catalog`) and a harvested price's: no markup
or script, no control character but newline and tab, no line or paragraph separator, no
bidirectional control (`registry.plain_text`), no credential."""

import re
from collections.abc import Iterator
from typing import Any

from infermeter.registry.checks import Finding
from infermeter.registry.errors import json_path
from infermeter.registry.plain_text import BIDI_CONTROLS, LINE_BREAKS, unsafe_character
from infermeter.registry.secrets import REDACTED, find_secret

# A tag (attributes may follow a space or a slash: <img/src=x onerror=…>), an unclosed tag with
# an event handler, a script, a comment.
_HTML = re.compile(
    r"<\s*/?\s*[A-Za-z][A-Za-z0-9-]*(?:[\s/][^<>]*)?>|<\s*[A-Za-z][^<>]*[\s/]on[a-z]+\s*="
    r"|<\s*script|<!--",
    re.I,
)


def _strings(data: Any) -> Iterator[tuple[tuple[str | int, ...], str]]:
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), data)]
    while stack:
        location, value = stack.pop()
        if isinstance(value, str):
            yield location, value
        elif isinstance(value, dict):
            stack.extend(((*location, key), child) for key, child in value.items())
        elif isinstance(value, list):
            stack.extend(((*location, index), child) for index, child in enumerate(value))


def text_problem(text: str) -> str | None:
    """Why `text` may not be a string of a published file (an unsafe character, markup, a
    credential), or None."""
    character = unsafe_character(text)
    if character is not None:
        kind = "bidirectional control" if character in BIDI_CONTROLS else "control"
        kind = "line-breaking" if character in LINE_BREAKS else kind
        return f"contains the {kind} character U+{ord(character):04X}"
    match = _HTML.search(text)
    if match:
        return f"contains markup {match.group(0)[:40]!r}; strings are plain text"
    secret = find_secret(text)
    if secret is not None:
        return f"carries {secret}; replace it with {REDACTED} (results are public)"
    return None


def string_findings(file: str, data: Any) -> list[Finding]:
    """Strings are plain text: no HTML or script, no control characters but newline and tab."""
    findings = [
        Finding(file, json_path(location), problem, "strings")
        for location, text in _strings(data)
        if (problem := text_problem(text)) is not None
    ]
    return sorted(findings, key=lambda finding: finding.path)
