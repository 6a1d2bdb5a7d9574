"""Errors of the harvesters.

Hierarchy (below `registry.errors.RegistryError`)::

    HarvestError            a source cannot be read, or is not in the shape its importer reads
    └── HarvestOptionError  a value given to an option is not one the option takes, whatever
                            the source holds (`--round five`, `--retrieved 2026-13-01`): a
                            usage error

`RowSkipped` is not an error of the harvest: one row of a source that makes no faithful result,
reported as skipped with its message as the reason. A value read from a source (hostile: 10,000
characters, control characters) is quoted in a message by `registry.errors.shown`.
"""

from infermeter.registry.errors import RegistryError


class HarvestError(RegistryError):
    """A source cannot be read or is not in the shape its importer reads; names file and field."""


class HarvestOptionError(HarvestError):
    """An option's value is not one the option takes (a usage error, as the CLI's own option
    checks are); names the option."""


class RowSkipped(Exception):
    """A source row that cannot be imported faithfully; the message is the reason."""
