"""Did you mean: the known names closest to a name that was typed, for every error that names an
unknown id, option or key (the CLI, the validator, the importers, the plan files, the browser).
Written once, so that every message suggests the same way."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(wanted: str, known: Iterable[str], limit: int = 5, cutoff: float = 0.4) -> list[str]:
    """Known names that contain what was typed (`a100` → every A100) first, then look-alikes."""
    typed = wanted.lower()
    ordered = sorted(known)
    containing = [name for name in ordered if typed and typed in name.lower()]
    similar = difflib.get_close_matches(typed, ordered, n=limit, cutoff=cutoff)
    return list(dict.fromkeys(containing + similar))[:limit]


def closest_hint(wanted: str, known: Iterable[str], limit: int = 5) -> str:
    """`; closest: a, b` for an error line, or nothing when no known name is near."""
    close = closest(wanted, known, limit)
    return f"; closest: {', '.join(close)}" if close else ""
