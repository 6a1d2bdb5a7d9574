"""Errors of the harvesters.

Hierarchy (below `registry.errors.RegistryError`)::

    HarvestError            a source cannot be read, or is not in the shape its importer reads

`RowSkipped` is not an error of the harvest: one row of a source that makes no faithful result,
reported as skipped with its message as the reason. A value read from a source (hostile: 10,000
characters, control characters) is quoted in a message by `registry.errors.shown`.
"""

from infermeter.registry.errors import RegistryError


class HarvestError(RegistryError):
    """A source cannot be read or is not in the shape its importer reads; names file and field."""


class RowSkipped(Exception):
    """A source row that cannot be imported faithfully; the message is the reason."""
