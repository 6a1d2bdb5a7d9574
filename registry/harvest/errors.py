"""Errors of the harvesters.

Hierarchy (below `registry.errors.RegistryError`)::

    HarvestError            a source cannot be read, or is not in the shape its importer reads

`RowSkipped` is not an error of the harvest: one row of a source that makes no faithful result,
reported as skipped with its message as the reason. `shown` is how an error line quotes a value
read from a source (hostile: 10,000 characters, control characters).
"""

from infermeter.registry.errors import RegistryError


class HarvestError(RegistryError):
    """A source cannot be read or is not in the shape its importer reads; names file and field."""


class RowSkipped(Exception):
    """A source row that cannot be imported faithfully; the message is the reason."""


SHOWN_CHARACTERS = 40
"""The most characters of a source's value an error line quotes."""


def shown(value: object) -> str:
    """`value` as an error line quotes it: its repr, cut with its length when long."""
    text = repr(value)
    if len(text) <= SHOWN_CHARACTERS:
        return text
    length = f" ({len(value)} characters)" if isinstance(value, str) else ""
    return f"{text[:SHOWN_CHARACTERS]}…{length}"
