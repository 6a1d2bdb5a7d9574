"""Structure: a parsed result file against the committed JSON Schema and the models (its
strings: `registry.checks.strings`).

The JSON Schema is the contract contributors see, so its findings come first; the models add
what a schema cannot say (percentiles in order, a load's arrival and its parameters, calendar
dates, finite numbers) and are not repeated where the schema already found the field wrong.
"""

from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

# No stubs in the dev extras (types-jsonschema); the two names used are typed below.
from jsonschema import (  # type: ignore[import-untyped, unused-ignore]
    Draft202012Validator,
)
from jsonschema import (  # type: ignore[import-untyped, unused-ignore]
    ValidationError as SchemaError,
)
from pydantic import ValidationError

from infermeter.registry.checks import Finding
from infermeter.registry.checks.schema_gate import compile_gate
from infermeter.registry.errors import json_path, shown, validator_message
from infermeter.registry.models import SLUG_PATTERN, Result
from infermeter.registry.models.common import ONE_LINE_PATTERN
from infermeter.registry.models.result import CONTENT_ID_PATTERN
from infermeter.registry.schemas import load_schema


@cache
def result_validator() -> Draft202012Validator:
    """A validator of the committed `schemas/result.schema.json`."""
    return Draft202012Validator(load_schema("result.schema.json"))


@cache
def _result_gate() -> Callable[[Any], bool] | None:
    return compile_gate(load_schema("result.schema.json"))


def result_schema_errors(data: Any) -> list[SchemaError]:
    """Every error of `data` against the committed result schema, in document order; a file
    the compiled gate (`registry.checks.schema_gate`) accepts has none and skips the slow walk."""
    gate = _result_gate()
    if gate is not None and gate(data):
        return []
    return sorted(result_validator().iter_errors(data), key=lambda error: error.json_path)


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _schema_message(error: SchemaError) -> str:
    if error.validator == "pattern" and error.validator_value == SLUG_PATTERN:
        return f"{error.instance!r} is not a slug (lowercase letters and digits joined by - or .)"
    if error.validator == "pattern" and error.validator_value == ONE_LINE_PATTERN:
        return f"{shown(error.instance)} holds a line break; the field is one line of text"
    if error.validator == "pattern" and error.validator_value == CONTENT_ID_PATTERN:
        return f"{error.instance!r} is not a content id (12 lowercase hex digits)"
    if error.validator == "type" and not error.absolute_path:
        return f"expected a JSON object, got {type(error.instance).__name__}"
    message, value = str(error.message), repr(error.instance)
    if message.startswith(value):  # the value quoted short: the reason stays on the line
        return shown(error.instance) + message[len(value) :]
    return message


def _schema_findings(file: str, error: SchemaError) -> Iterator[Finding]:
    path = json_path(list(error.absolute_path))
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = error.schema.get("properties", {})
        for key in sorted(set(error.instance) - set(allowed)):
            yield Finding(file, _join(path, key), "unknown field", "schema")
        return
    if error.validator == "required" and isinstance(error.instance, dict):
        for key in error.validator_value:
            if key not in error.instance:
                yield Finding(file, _join(path, key), "required field missing", "schema")
        return
    discriminator = error.schema.get("discriminator") if error.validator == "oneOf" else None
    if isinstance(discriminator, dict) and isinstance(error.instance, dict):
        name = discriminator["propertyName"]
        mapping: dict[str, str] = discriminator["mapping"]
        tag = error.instance.get(name)
        if not isinstance(tag, str) or tag not in mapping:
            expected = ", ".join(sorted(mapping))
            yield Finding(
                file, _join(path, name), f"expected one of {expected}; got {tag!r}", "schema"
            )
            return
        branch = [option.get("$ref") for option in error.validator_value].index(mapping[tag])
        for sub_error in error.context or []:
            if sub_error.relative_schema_path and sub_error.relative_schema_path[0] == branch:
                yield from _schema_findings(file, sub_error)
        return
    if error.validator in ("anyOf", "oneOf") and error.instance is not None:
        # An optional field (`X | None`): report why the value is not a valid X.
        branches = [
            index
            for index, option in enumerate(error.validator_value)
            if option != {"type": "null"}
        ]
        if len(branches) == 1:
            for sub_error in error.context or []:
                if sub_error.relative_schema_path[0] == branches[0]:
                    yield from _schema_findings(file, sub_error)
            return
    yield Finding(file, path, _schema_message(error), "schema")


def schema_findings(file: str, data: Any) -> list[Finding]:
    """One finding per JSON Schema error, at its JSON path, in document order. jsonschema gives
    one `required` error per missing field, each with the whole list: a finding is kept once."""
    findings = (
        finding for error in result_schema_errors(data) for finding in _schema_findings(file, error)
    )
    return list(dict.fromkeys(findings))


def _related(path: str, other: str) -> bool:
    """Whether one path is the other or lies inside it."""
    shorter, longer = sorted((path, other), key=len)
    return longer == shorter or not shorter or longer.startswith((shorter + ".", shorter + "["))


def model_findings(
    file: str, data: Any, schema_problems: list[Finding]
) -> tuple[Result | None, list[Finding]]:
    """The result if the models accept it, else the models' findings the schema did not make."""
    try:
        return Result.model_validate(data), []
    except ValidationError as error:
        findings = []
        for detail in error.errors(include_url=False):
            path = json_path(detail["loc"], data)
            if any(_related(path, problem.path) for problem in schema_problems):
                continue
            message = validator_message(detail)
            findings.append(Finding(file, path, message, "model"))
        return None, findings
