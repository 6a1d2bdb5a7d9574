"""Errors of the harvesters.

Hierarchy (below `registry.errors.RegistryError`)::

    HarvestError            a source cannot be read, or is not in the shape its importer reads

`RowSkipped` is not an error of the harvest: one row of a source that makes no faithful result,
reported as skipped with its message as the reason.
"""

from typing import Any

from pydantic import ValidationError

from registry.errors import RegistryError
from registry.models import Result
from registry.store import with_content_id


class HarvestError(RegistryError):
    """A source cannot be read or is not in the shape its importer reads; names file and field."""


class RowSkipped(Exception):
    """A source row that cannot be imported faithfully; the message is the reason."""


def validated_result(data: dict[str, Any]) -> Result:
    """The result `data` describes, with its content id; a row it fails to be is skipped."""
    try:
        return with_content_id(Result.model_validate(data))
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"])
        raise RowSkipped(f"not a valid result: {where}: {first['msg']}") from None
