"""Reading the registry's result files for the index and the site: each file read once and
checked against the committed JSON Schema, the model, the plain-text rule of its strings and
its place; every problem of every file, then one failure.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infermeter.registry.checks.rates import rate_findings
from infermeter.registry.checks.strings import string_findings
from infermeter.registry.checks.structure import result_schema_errors
from infermeter.registry.errors import InvalidFileError, Problem, json_path
from infermeter.registry.input_files import InputFileError, read_input_text
from infermeter.registry.models import (
    Result,
)
from infermeter.registry.store import (
    RESULTS_DIR,
    parse_json,
    parse_result_data,
    read_text,
    result_path,
)
from infermeter.registry.tree import walk_results


def result_files(root: Path) -> list[Path]:
    """Every result file under `<root>/registry/results/`, sorted by path: the files
    `registry validate` reads (`registry.tree`), never a link, FIFO or hidden file."""
    files = walk_results(root / RESULTS_DIR).files
    return sorted(files, key=lambda path: path.as_posix())


def _schema_problems(file: str, data: Any) -> list[Problem]:
    errors = sorted(result_schema_errors(data), key=lambda e: list(map(str, e.path)))
    return [
        Problem(file, json_path(error.absolute_path), f"schema: {error.message}")
        for error in errors
    ]


def check_result_text(text: str, file: str) -> Result:
    """Check the text of one result file against the committed JSON Schema, the model and the
    plain-text rule of its strings (`checks.strings`: what it says reaches pages and
    terminals)."""
    data = parse_json(text, file)
    problems = [*_schema_problems(file, data), *string_findings(file, data)]
    try:
        result = parse_result_data(data, file)
    except InvalidFileError as error:
        # The model's messages are the more precise; the schema's add what the model misses.
        seen = {problem.path for problem in error.problems}
        problems = [*error.problems, *(p for p in problems if p.path not in seen)]
    if problems:
        raise InvalidFileError(problems)
    return result


def read_valid_result(path: Path, file: str) -> Result:
    """Read one result file a user named and check it against the committed JSON Schema and
    the model. Only a regular file within the result file limit is read: a FIFO is not waited
    on, /dev/zero not read without end."""
    try:
        text = read_input_text(path, "result file")
    except InputFileError as error:
        raise InvalidFileError([Problem(file, "", error.reason)]) from None
    return check_result_text(text, file)


@dataclass(frozen=True)
class LoadedResult:
    """A valid result file as `load_result_files` read it."""

    file: str  # path relative to the registry root
    result: Result
    text: str


def load_result_files(root: Path, files: Sequence[Path]) -> list[LoadedResult]:
    """Validate `files` (paths under `root`), each read and parsed once; every problem of every
    file, then fail once."""
    # Swap point: `registry.validate` checks far more (physics, duplicates, catalogs); the index
    # needs only files that parse, pass the schema and the model, sit where they belong, and
    # state rates a cost can be worked out from (`checks.rates`).
    loaded: list[LoadedResult] = []
    problems: list[Problem] = []
    for path in files:
        relative = path.relative_to(root).as_posix()
        try:
            text = read_text(path, relative)
            result = check_result_text(text, relative)
        except InvalidFileError as error:
            problems.extend(error.problems)
            continue
        expected = result_path(result).as_posix()
        if relative != expected:
            problems.append(Problem(relative, "", f"path does not match its content: {expected}"))
            continue
        unpriced = rate_findings(relative, result)  # its figures are priced: no rate beyond
        if unpriced:
            problems.extend(unpriced)
            continue
        loaded.append(LoadedResult(relative, result, text))
    if problems:
        raise InvalidFileError(problems)
    return loaded


def load_results(root: Path, files: Sequence[Path]) -> list[tuple[str, Result]]:
    """Validate `files` (paths under `root`); every problem of every file, then fail once."""
    return [(loaded.file, loaded.result) for loaded in load_result_files(root, files)]
