"""The registry's exceptions: library code raises these, only the CLI turns them into exit codes.

Hierarchy::

    RegistryError                  every error the registry raises on purpose
    ├── InvalidFileError           a file cannot be read or does not match its model;
    │                              carries one Problem per finding (`file: json.path: message`)
    ├── ContentIdError             a result's `id` is not the id minted from its content
    ├── UnwritableError            a file cannot be written where it was asked to go
    └── RegistryNotFoundError      no registry checkout named or found (`registry.location`)

A `Problem` is one finding, printed as one line `file: json.path: message`; validation
collects every problem before it fails once. What a hostile file holds reaches a line in one of
two ways: `printable` (text of a line, its control characters escaped, cut) or `shown` (a value
quoted in a message: its repr, cut).
"""

import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails


@dataclass(frozen=True)
class Problem:
    """One finding about one file: where (a JSON path, "" for the whole file) and what."""

    file: str
    path: str
    message: str

    def __str__(self) -> str:
        file, message = printable(self.file), printable(self.message)
        line = f"{file}: {printable(self.path)}: {message}" if self.path else f"{file}: {message}"
        # A line starting with "::" is a workflow command to GitHub Actions: never print one.
        return "./" + line if line.startswith("::") else line


MESSAGE_CHARS = 300


def escaped(text: str) -> str:
    """`text` with its control characters (a newline, an ESC that would drive the terminal, a
    NUL, U+2028) written as escapes: it prints as one line and only as what it says."""
    return "".join(
        character if character.isprintable() else repr(character)[1:-1] for character in text
    )


def cut(text: str, limit: int = MESSAGE_CHARS) -> str:
    """`text`, or its first `limit` − 1 characters and "…" when it is longer."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def printable(text: str, limit: int = MESSAGE_CHARS) -> str:
    """`text` safe to print as part of one line: control characters (a newline in a file name
    would start a forged line) written as escapes (`escaped`), and cut to `limit` characters."""
    return cut(escaped(text), limit)


SHOWN_CHARACTERS = 40
"""The most characters of a value read from a file (a key, a name, a price) an error line quotes."""

KEY_CHARACTERS = 200
"""The most characters of a row's source key an error line quotes: whole, as a source's keys
are (AMD's 107, TensorRT-LLM's 66), for the reader to find the row by it."""


def shown(value: object, limit: int = SHOWN_CHARACTERS) -> str:
    """`value` as an error line quotes it: its repr (so control characters are escaped), cut
    to `limit` characters with its length when long (a 10,000-character key stays one short
    line)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    length = f" ({len(value)} characters)" if isinstance(value, str) else ""
    return f"{text[:limit]}…{length}"


class RegistryError(Exception):
    """Base class of every error the registry raises on purpose."""


def validator_message(detail: ErrorDetails) -> str:
    """A validation problem's message as a model's validator wrote it: without the
    `Value error, ` pydantic puts before it."""
    return detail["msg"].removeprefix("Value error, ")


class InvalidFileError(RegistryError):
    """A registry file cannot be read, parsed, or validated against its model."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(problem) for problem in self.problems))

    def one_line(self, file: str) -> str:
        """`file is not a valid result: …` naming the first problem, and how to see the rest."""
        first = self.problems[0]
        more = len(self.problems) - 1
        where = f"{first.path}: " if first.path else ""
        named = shlex.quote(file)
        hint = f" (and {more} more; run `infermeter registry validate {named}`)" if more else ""
        return f"{file} is not a valid result: {where}{first.message}{hint}"

    @classmethod
    def from_validation_error(
        cls, file: str, error: ValidationError, data: Any = None
    ) -> "InvalidFileError":
        """Turn pydantic's error into one problem per failing field, paths in JSON notation.

        `data` is the input that failed; with it, the tags that pydantic puts into the location
        of a discriminated union (`source.measured.url`) are left out (`source.url`).
        """
        return cls(
            [
                Problem(
                    file,
                    json_path(error_detail["loc"], data),
                    validator_message(error_detail),
                )
                for error_detail in error.errors(include_url=False)
            ]
        )


class ContentIdError(RegistryError):
    """A result's `id` differs from the id minted from its content."""


class UnwritableError(RegistryError):
    """A file cannot be written at `path`: its folder is read-only, or it is a folder, …"""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"cannot write {path}: {reason}")


def json_path(location: Iterable[int | str], data: Any = None) -> str:
    """Format a pydantic error location as `points[0].ttft_ms.p95`.

    Walking `data` alongside the location drops the tag that pydantic inserts for a
    discriminated union: a key that is absent from the object but equals its `kind`.
    """
    parts: list[str] = []
    current = data
    for element in location:
        if isinstance(element, int):
            parts.append(f"[{element}]")
            current = (
                current[element] if isinstance(current, list) and element < len(current) else None
            )
            continue
        if isinstance(current, dict) and element not in current and current.get("kind") == element:
            continue
        parts.append(f".{element}" if parts else element)
        current = current.get(element) if isinstance(current, dict) else None
    return "".join(parts)
