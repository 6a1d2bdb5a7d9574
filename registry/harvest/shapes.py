"""Pieces of a harvested result that several sources' tables share, and the key read back.

A vendor table row states its prompt and output lengths as fixed numbers, and an offline
throughput cell states one figure for one point; each harvester builds the rest of its result
(identity, conditions, source) from its own page.
"""

import re
from typing import Any

from registry.models import Result


def fixed_lengths(input_len: int, output_len: int) -> dict[str, Any]:
    """The workload of a row with fixed prompt and output lengths, as the table states them."""
    return {
        "profile": "custom",
        "input_len": {"kind": "fixed", "value": input_len},
        "output_len": {"kind": "fixed", "value": output_len},
    }


def offline_point(output_tokens_per_s: float, sent: int | None) -> dict[str, Any]:
    """One offline point (every request queued at once) with its stated output throughput and,
    where the page gives it, the number of requests sent."""
    return {
        "load": {"arrival": "offline"},
        "requests": {"sent": sent} if sent else {},
        "tokens": {},
        "throughput": {"output_tokens_per_s": output_tokens_per_s},
    }


def marked_key(result: Result, marker: re.Pattern[str], layout: str) -> str | None:
    """The source key a harvester wrote into a result's conditions as `marker` (a pattern with a
    `cell` group), as `trtllm <revision> <layout> <cell>`; None for a result of another source."""
    source = result.source
    match = marker.search(getattr(source, "conditions", ""))
    revision = getattr(source, "revision", None)
    if match is None or revision is None:
        return None
    return f"trtllm {revision[:12]} {layout} {match['cell']}"
