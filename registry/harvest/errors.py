"""Errors of the harvesters.

Hierarchy (below `registry.errors.RegistryError`)::

    HarvestError            a source cannot be read, or is not in the shape its importer reads
"""

from registry.errors import RegistryError


class HarvestError(RegistryError):
    """A source cannot be read or is not in the shape its importer reads; names file and field."""
