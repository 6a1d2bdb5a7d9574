"""The compiled schema gate proves a result valid only where the full `jsonschema` check agrees:
on every example, on strings where ECMA and Python regular expressions part, and on the
registry's own files; a pattern it cannot translate turns it off."""

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from infermeter.registry.checks.schema_gate import (
    UnsupportedPatternError,
    compile_gate,
    ecma_pattern,
)
from infermeter.registry.checks.structure import result_schema_errors, result_validator
from infermeter.registry.schemas import load_schema

EXAMPLES = Path(__file__).parent.parent / "examples"
REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
SCHEMA = load_schema("result.schema.json")
GATE = compile_gate(SCHEMA)
MEASURED = json.loads((EXAMPLES / "valid/results/measured-two-points.json").read_text())
REPORTED = json.loads((EXAMPLES / "valid/results/reported-throughput-only.json").read_text())


def _parses(path: Path) -> bool:
    try:
        json.loads(path.read_text())
    except (ValueError, RecursionError):
        return False
    return True


def _examples() -> list[Path]:
    """Every example the JSON parser reads (the others never reach a schema check)."""
    return [path for path in sorted(EXAMPLES.rglob("*.json")) if _parses(path)]


def _python_valid(data: Any) -> bool:
    return not list(result_validator().iter_errors(data))


def test_gate_is_on_for_the_committed_result_schema() -> None:
    assert GATE is not None


@pytest.mark.parametrize("path", _examples(), ids=lambda path: path.stem)
def test_gate_accepts_only_what_jsonschema_accepts(path: Path) -> None:
    assert GATE is not None
    data = json.loads(path.read_text())
    if GATE(data):
        assert _python_valid(data)
    # Whatever the gate says, the errors reported are jsonschema's own.
    expected = sorted(result_validator().iter_errors(data), key=lambda error: error.json_path)
    assert [e.message for e in result_schema_errors(data)] == [e.message for e in expected]


def test_gate_accepts_the_valid_examples_and_registry_sample() -> None:
    assert GATE is not None
    files = sorted((EXAMPLES / "valid/results").glob("*.json"))
    files += sorted((REPOSITORY_ROOT / "registry/results").rglob("*.json"))[::50]
    assert len(files) > 10
    for path in files:
        assert GATE(json.loads(path.read_text())), path


# Python's `\s` matches U+001C–U+001F and U+0085, ECMA's does not: a URL holding one is refused
# by jsonschema, so the gate must refuse it too (it sends the file to the full check).
@pytest.mark.parametrize("character", ["\x1c", "\x1f", "\x85", " ", "\u2028"])
def test_gate_refuses_a_url_python_refuses(character: str) -> None:
    assert GATE is not None
    data = copy.deepcopy(REPORTED)
    assert GATE(data)
    data["source"]["url"] = f"https://example.org/a{character}b"
    assert not _python_valid(data)
    assert not GATE(data)


def test_gate_refuses_what_python_accepts_only_before_a_final_newline() -> None:
    """Python's `$` matches before a final newline; the gate is stricter, never looser."""
    assert GATE is not None
    data = copy.deepcopy(MEASURED)
    data["identity"]["gpu"]["id"] = data["identity"]["gpu"]["id"] + "\n"
    assert not GATE(data)
    assert result_schema_errors(data) == list(result_validator().iter_errors(data))


def test_ecma_pattern_adds_pythons_spaces_inside_and_outside_a_class() -> None:
    assert ecma_pattern(r"^https?://[^\s]+$") == r"^https?://[^\s\x1c-\x1f\x85]+$"
    assert ecma_pattern(r"a\sb") == r"a[\s\x1c-\x1f\x85]b"
    assert ecma_pattern(r"^v?[0-9]+\.[0-9]+(?:-x)?$") == r"^v?[0-9]+\.[0-9]+(?:-x)?$"
    assert ecma_pattern(r"^[^\n]*$") == r"^[^\n]*$"  # a line feed in both


@pytest.mark.parametrize(
    "pattern", [r"\w+", r"\d", r"(?i)abc", r"(?=a)", r"(a)\1", "\\", r"[]\s]", r"[^]a]"]
)
def test_an_untranslatable_pattern_turns_the_gate_off(pattern: str) -> None:
    with pytest.raises(UnsupportedPatternError):
        ecma_pattern(pattern)
    schema = {"type": "object", "properties": {"name": {"type": "string", "pattern": pattern}}}
    assert compile_gate(schema) is None
