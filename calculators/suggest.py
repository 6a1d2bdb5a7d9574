"""Did you mean: the known names closest to a name that was typed, for every error that names an
unknown id, option or key (the CLI, the validator, the importers, the plan files, the browser).
Written once, so that every message suggests the same way."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CLOSEST = 5  # look-alikes an error names at most
KNOWN = 8  # known names an error lists, in order, when none looks like what was typed


def closest(
    wanted: str, known: Iterable[str], limit: int = CLOSEST, cutoff: float = 0.4
) -> list[str]:
    """Known names that contain what was typed (`a100` → every A100) first, then look-alikes."""
    typed = wanted.lower()
    ordered = sorted(known)
    containing = [name for name in ordered if typed and typed in name.lower()]
    similar = difflib.get_close_matches(typed, ordered, n=limit, cutoff=cutoff)
    return list(dict.fromkeys(containing + similar))[:limit]


def known_hint(wanted: str, known: Iterable[str]) -> str:
    """`; closest: a, b` for an error line, or, when no known name is near, `; known: a, b, …`
    (the first in order), so that the reader always sees what would have been accepted."""
    ordered = sorted(known)
    close = closest(wanted, ordered)
    if close:
        return f"; closest: {', '.join(close)}"
    more = ", …" if len(ordered) > KNOWN else ""
    return f"; known: {', '.join(ordered[:KNOWN])}{more}" if ordered else ""


def unknown_name(what: str, wanted: str, known: Iterable[str], among: str = "") -> str:
    """The one way an unknown name is refused: `unknown GPU id 'h100-sxn'; closest: h100-sxm`
    (`among`: where the known names are declared, said in brackets after the name)."""
    where = f" (not in {among})" if among else ""
    return f"unknown {what} {wanted!r}{where}{known_hint(wanted, known)}"
