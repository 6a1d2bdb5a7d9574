"""The corrections file: the only way a merged result changes, appended to, never edited.

`registry/corrections.yaml` lists entries in the order they were made. A `correction` says a
result was wrong and names the result that replaces it (`replaced_by`); a `withdrawal` says a
result should no longer be shown. A merged result file is never edited or deleted without such
an entry, and an entry, once merged, is never edited or removed.
"""

from pathlib import Path
from typing import Literal, Self

import yaml
from pydantic import Field, ValidationError, model_validator

from infermeter.registry.catalog import CatalogLoader
from infermeter.registry.errors import InvalidFileError, Problem
from infermeter.registry.input_files import InputFileError, read_input_text
from infermeter.registry.models.common import FullDate, SchemaVersion, StrictModel, Text
from infermeter.registry.models.result import ContentId
from infermeter.registry.store import display_path

CORRECTIONS_FILE = "registry/corrections.yaml"
"""Where the corrections file lives, relative to the repository root."""


class CorrectionEntry(StrictModel):
    """One correction or withdrawal of a merged result."""

    result_id: ContentId = Field(description="Content id of the result concerned.")
    kind: Literal["correction", "withdrawal"] = Field(
        description="`correction`: replaced by `replaced_by`; `withdrawal`: no longer shown."
    )
    date: FullDate = Field(description="When the entry was made, YYYY-MM-DD.")
    reason: Text = Field(description="Why, for a reader.")
    replaced_by: ContentId | None = Field(
        None, description="Content id of the result that replaces it (corrections only)."
    )

    @model_validator(mode="after")
    def _replacement_fits_kind(self) -> Self:
        if self.kind == "correction" and self.replaced_by is None:
            raise ValueError("a correction needs replaced_by (the id of the corrected result)")
        if self.kind == "withdrawal" and self.replaced_by is not None:
            raise ValueError("a withdrawal takes no replaced_by")
        if self.replaced_by == self.result_id:
            raise ValueError("replaced_by names the result itself")
        return self


class CorrectionsFile(StrictModel):
    """registry/corrections.yaml: corrections and withdrawals, oldest first."""

    schema_version: SchemaVersion = Field(description="Version of this file format.")
    corrections: list[CorrectionEntry] = Field(description="The entries, oldest first.")


def parse_corrections(text: str, file: str) -> list[CorrectionEntry]:
    """The entries of a corrections file's text; InvalidFileError lists every problem."""
    try:
        # The catalogs' loader: dates stay strings and a key given twice is an error.
        data = yaml.load(text, Loader=CatalogLoader)  # a SafeLoader: no arbitrary objects
    except yaml.YAMLError as error:
        message = " ".join(str(error).split())
        raise InvalidFileError([Problem(file, "", f"invalid YAML: {message}")]) from None
    try:
        return CorrectionsFile.model_validate(data).corrections
    except ValidationError as error:
        raise InvalidFileError.from_validation_error(file, error, data) from None


def corrections_text(path: Path, file: str | None = None) -> str | None:
    """The text of the corrections file at `path` (None: there is none), read as an input file
    is (`read_input_text`): a FIFO or a folder in its place is refused, never waited on, and
    text that is not UTF-8 is named by its byte; InvalidFileError names `file` (default: its
    display path)."""
    if not path.exists() and not path.is_symlink():
        return None
    try:
        return read_input_text(path, "corrections file")
    except InputFileError as error:
        problem = Problem(file or display_path(path), "", error.reason)
        raise InvalidFileError([problem]) from None


def load_corrections(path: Path) -> list[CorrectionEntry]:
    """The entries of the corrections file at `path`; a missing file has none."""
    text = corrections_text(path)
    return [] if text is None else parse_corrections(text, display_path(path))


def latest_entries(entries: list[CorrectionEntry]) -> dict[str, CorrectionEntry]:
    """Result id → the last entry about it (a later entry supersedes an earlier one)."""
    return {entry.result_id: entry for entry in entries}


def final_replacement(entries: list[CorrectionEntry], result_id: str) -> str | None:
    """The result that now stands for `result_id`: its `replaced_by`, followed through later
    corrections of that replacement (the file is append-only, so a result corrected twice is
    a chain, never an edited entry); None for a withdrawn result."""
    latest = latest_entries(entries)
    current: str | None = result_id
    seen: set[str] = set()
    while current is not None and current in latest and current not in seen:
        seen.add(current)
        current = latest[current].replaced_by
    return current


def append_only_problems(
    base: list[CorrectionEntry], current: list[CorrectionEntry], file: str
) -> list[Problem]:
    """Problems where `current` does not start with every entry of `base`, unchanged."""
    problems = [
        Problem(file, f"corrections[{index}]", "an entry merged before was changed (append only)")
        for index, (old, new) in enumerate(zip(base, current, strict=False))
        if old != new
    ]
    if len(current) < len(base):
        removed = len(base) - len(current)
        problems.append(
            Problem(file, "corrections", f"{removed} entries merged before were removed")
        )
    return problems
