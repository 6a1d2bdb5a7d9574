"""Errors of the harvesters.

Hierarchy (below `registry.errors.RegistryError`)::

    HarvestError            a source cannot be read, or is not in the shape its importer reads

`RowSkipped` is not an error of the harvest: one row of a source that makes no faithful result,
reported as skipped with its message as the reason.
"""

from typing import Any

from registry.builder import ResultBuildError, build_result
from registry.errors import RegistryError
from registry.models import Result


class HarvestError(RegistryError):
    """A source cannot be read or is not in the shape its importer reads; names file and field."""


class RowSkipped(Exception):
    """A source row that cannot be imported faithfully; the message is the reason."""


def validated_result(data: dict[str, Any]) -> Result:
    """The result `data` describes, with its content id, made by the one builder of results
    (`registry.builder`); a row it fails to be is skipped."""
    try:
        return build_result(data, "harvested result")
    except ResultBuildError as error:
        raise RowSkipped(f"not a valid result: {error.first_line()}") from None
