"""Turn other tools' result files into registry results.

Formats, one module each, which declares its `ImportFormat` (bench/importers/common.py) for
`FORMATS` to find; a file's format is picked by its shape (or named with `--format`):

- `vllm`: `vllm bench serve --save-result` JSON (bench/importers/vllm.py);
- `guidellm`: GuideLLM's `benchmarks.json` report (bench/importers/guidellm.py);
- `aiperf`: AIPerf's `profile_export_aiperf.json` (bench/importers/aiperf.py).

Every importer fills in only what the file states, converts units explicitly, and takes what the
file does not say — GPU, engine version, model catalog id, serving settings, length
distributions, who ran it — from `ImportFacts`, i.e. the command's flags; a missing required
fact raises `MissingFactError` naming its flag (bench/importers/common.py has the errors).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from infermeter.bench.importers.aiperf import AIPERF_FORMAT, AIPERF_TOOL
from infermeter.bench.importers.common import (
    ImportFacts,
    ImportFormat,
    MissingFactError,
    ResultImportError,
    parse_length,
    read_json_values,
    refused,
)
from infermeter.bench.importers.guidellm import GUIDELLM_FORMAT
from infermeter.bench.importers.vllm import VLLM_FORMAT, VLLM_TOOL, read_vllm_objects
from infermeter.registry.models import Result
from infermeter.registry.store import dumps_result, result_path, write_output
from infermeter.registry.validate import check_result

__all__ = [
    "AIPERF_TOOL",
    "FORMATS",
    "VLLM_TOOL",
    "ImportConfig",
    "ImportFacts",
    "ImportFormat",
    "MissingFactError",
    "ResultImportError",
    "detect_format",
    "import_files",
    "import_result",
    "parse_length",
    "read_vllm_objects",
]

FORMATS: dict[str, ImportFormat] = {
    file_format.name: file_format for file_format in (VLLM_FORMAT, GUIDELLM_FORMAT, AIPERF_FORMAT)
}
"""The formats `bench import` reads, by `--format` name, in the order a file is tried."""


def detect_format(path: Path) -> str:
    """Which tool wrote `path` (its format's name), from its shape; ResultImportError naming
    what was expected."""
    values = read_json_values(path)
    for name, file_format in FORMATS.items():
        if file_format.looks_like(values):
            return name
    expected = ", ".join(file_format.description for file_format in FORMATS.values())
    raise ResultImportError(f"{path}: not a known benchmark file; expected {expected}")


def import_files(
    files: Sequence[Path], facts: ImportFacts, file_format: str | None = None
) -> Result:
    """One result from `files`, all in `file_format` (None: detected, and the same for all)."""
    if file_format is not None:
        return FORMATS[file_format].import_files(files, facts)
    found = {path: detect_format(path) for path in files}
    if len(set(found.values())) > 1:
        kinds = ", ".join(f"{path} is {kind}" for path, kind in found.items())
        raise ResultImportError(f"the files are of different formats ({kinds})")
    return FORMATS[next(iter(found.values()))].import_files(files, facts)


@dataclass(frozen=True)
class ImportConfig:
    """What `infermeter bench import` was asked to do."""

    files: tuple[Path, ...]
    facts: ImportFacts
    output: Path | None = None
    file_format: str | None = None  # a FORMATS name; None: detected


def import_result(config: ImportConfig) -> tuple[Result, Path]:
    """Import the files and write the result (default: its canonical file name, here), once
    the registry's checks pass on it in memory: a file `registry validate` would reject is
    never written (ResultImportError names the files and the first problem)."""
    files = ", ".join(str(path) for path in config.files)
    try:
        result = import_files(config.files, config.facts, config.file_format)
    except (OverflowError, ArithmeticError) as error:  # a figure no float or clock can take
        raise ResultImportError(f"{files}: a number is out of range ({error})") from None
    problems = check_result(result).problems
    if problems:
        first = problems[0]
        where = f"{first.path}: " if first.path else ""
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ResultImportError(refused(config.files, f"{where}{first.message}{more}"))
    output = config.output or Path(result_path(result).name)
    try:
        if output.is_dir():  # which raises for a name too long
            output = output / result_path(result).name
        write_output(output, dumps_result(result))
    except OSError as error:
        raise ResultImportError(f"{output}: cannot write: {error.strerror}", "--output") from None
    return result, output
