"""The JSON objects bench prints whose keys are the attributes' own names."""

from __future__ import annotations

from typing import Any


def attributes(of: object, *names: str) -> dict[str, Any]:
    """`{name: of.name}` for each name, in the order given (the `--json` key order)."""
    return {name: getattr(of, name) for name in names}
