"""The one way a result is made: its parts as the registry's typed models in, the validated
`Result` with its content id out, in memory.

A live run (`bench.result.assemble`), every importer (`bench.importers.common`) and every
harvester (`registry.harvest.reported`) build the typed parts (`Identity`, `LoadPoint`s, `Slo`,
`Startup`, a `MeasuredSource` or `ReportedSource`) and call `build_from_parts`. Nothing else
constructs a `Result` (tests/registry/test_builder.py checks the source tree). The builder sets
`schema_version` and the content id and leaves out null fields, so no caller states them; the
registry's checks of a built result (`registry.validate.check_result`) run in memory too,
nothing is written to disk.

Errors (below `registry.errors.InvalidFileError`)::

    ResultBuildError    the data is not a result; one Problem per failing field
"""

from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from infermeter.registry.errors import InvalidFileError
from infermeter.registry.models import (
    RESULT_SCHEMA_VERSION,
    Identity,
    LoadPoint,
    Result,
    Slo,
    Startup,
)
from infermeter.registry.models.provenance import Source
from infermeter.registry.store import CONTENT_ID_LENGTH, with_content_id

M = TypeVar("M", bound=BaseModel)


def unchecked(model: type[M], /, **fields: Any) -> M:
    """A part of a result, a `model` of `fields` as the source gave them, not checked here:
    `build_from_parts` checks the whole result once, and names the field it refuses."""
    return model.model_construct(**fields)


class ResultBuildError(InvalidFileError):
    """The data does not make a valid result; `problems` names every failing field."""

    def first_line(self) -> str:
        """The first problem, with how many more there are: `points[0].x: … (and 2 more)`."""
        first = self.problems[0]
        more = len(self.problems) - 1
        where = f"{first.path}: " if first.path else ""
        return f"{where}{first.message}" + (f" (and {more} more)" if more else "")


def build_from_parts(
    identity: Identity,
    points: Sequence[LoadPoint],
    source: Source,
    *,
    slo: Slo | None = None,
    startup: Startup | None = None,
    file: str = "result",
) -> Result:
    """The `Result` of parts built as the registry's typed models, with its content id
    (`slo`: none given, no limit). A part may be built `unchecked`, as a live
    run and an importer state what they measured or read: the whole result is validated here,
    once, so a refused figure is named by its path in the result (`points[0].ttft_ms.p95`).
    Null fields are left out. `file` names the result in problems. Raises ResultBuildError (a
    result needs at least one point)."""
    draft = Result.model_construct(
        schema_version=RESULT_SCHEMA_VERSION,
        id="0" * CONTENT_ID_LENGTH,
        identity=identity,
        slo=slo or Slo(),
        points=list(points),
        startup=startup,
        source=source,
    )
    # Unchecked values are dumped as given (no serializer warnings): validation names a bad one.
    body = draft.model_dump(exclude_none=True, warnings=False)
    try:
        result = Result.model_validate(body)
    except ValidationError as error:
        raise ResultBuildError.from_validation_error(file, error, body) from None
    return with_content_id(result)
