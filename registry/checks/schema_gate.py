"""A compiled JSON Schema check that proves a result valid fast, or sends it to the full check.

`jsonschema` (pure Python) walks the result schema in about 8 ms a file; with ten thousand
results that is most of a site build. `jsonschema-rs` checks the same schema in about 0.04 ms.
It is used as a *gate* only: a file it accepts has no schema problem; any other file (or any
failure of the gate) goes through `jsonschema`, whose errors are the ones reported, so the
messages never change and nothing is accepted that `jsonschema` would refuse.

The two differ in their regular expressions: the gate's are ECMA 262 ones, `jsonschema`'s are
Python's `re`. For the constructs this schema uses, ECMA is as strict or stricter (its `$` does
not match before a final newline; its `.` excludes more), except `\\s`: Python's also matches
U+001C–U+001F and U+0085. The gate's patterns add those to every `\\s`, so a gate pattern never
matches where Python's does not. A pattern with any other escape, a backreference or a flag
disables the gate (every file takes the full check): the rewrite is sound only for what it knows.
"""

from collections.abc import Callable
from typing import Any

_PYTHON_ONLY_SPACES = r"\x1c-\x1f\x85"
# Escapes whose meaning is the same in Python's `re` and ECMA 262 (a literal character: a
# punctuation mark, or `\n` the line feed of the one-line text pattern).
_LITERAL_ESCAPES = frozenset(r".-/+*?()[]{}^$|\\n")


class UnsupportedPatternError(ValueError):
    """A schema pattern uses a construct the gate cannot prove Python-equivalent."""


def ecma_pattern(pattern: str) -> str:
    """`pattern` (Python `re` syntax) as an ECMA 262 pattern that matches no string Python's
    does not; raises UnsupportedPatternError for a construct outside the known subset."""
    out: list[str] = []
    in_class = False
    position = 0
    while position < len(pattern):
        character = pattern[position]
        if character == "\\":
            escaped = pattern[position + 1 : position + 2]
            if escaped == "s":
                spaces = rf"\s{_PYTHON_ONLY_SPACES}"
                out.append(spaces if in_class else f"[{spaces}]")
            elif escaped in _LITERAL_ESCAPES and escaped:
                out.append("\\" + escaped)
            else:
                raise UnsupportedPatternError(f"pattern {pattern!r}: escape \\{escaped}")
            position += 2
            continue
        group = pattern[position : position + 3]
        if not in_class and group.startswith("(?") and group != "(?:":
            raise UnsupportedPatternError(f"pattern {pattern!r}: group flag or assertion")
        if character == "[" and not in_class:
            if pattern.startswith(("]", "^]"), position + 1):
                raise UnsupportedPatternError(f"pattern {pattern!r}: a class that starts with ]")
            in_class = True
        elif character == "]" and in_class:
            in_class = False
        out.append(character)
        position += 1
    return "".join(out)


def gate_schema(schema: Any) -> Any:
    """A copy of `schema` with every `pattern` rewritten by `ecma_pattern`."""
    if isinstance(schema, dict):
        return {
            key: (
                ecma_pattern(value)
                if key == "pattern" and isinstance(value, str)
                else gate_schema(value)
            )
            for key, value in schema.items()
        }
    if isinstance(schema, list):
        return [gate_schema(item) for item in schema]
    return schema


def compile_gate(schema: dict[str, Any]) -> Callable[[Any], bool] | None:
    """The gate for `schema` (a draft 2020-12 schema): a function that is True only for data
    the schema accepts; None when jsonschema-rs is not installed or a pattern is unsupported."""
    try:
        import jsonschema_rs  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return None
    try:
        rewritten = gate_schema(schema)
    except UnsupportedPatternError:
        return None
    # Formats are annotations in draft 2020-12 (`jsonschema` asserts none without a checker).
    validator = jsonschema_rs.Draft202012Validator(rewritten, validate_formats=False)

    def accepts(data: Any) -> bool:
        try:
            return bool(validator.is_valid(data))
        except Exception:  # anything the gate cannot take goes the slow way
            return False

    return accepts
