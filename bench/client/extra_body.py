"""`--extra-body`: extra fields for every request body, never those the benchmark sets."""

from __future__ import annotations

import json
from typing import Any

from infermeter.bench.errors import BenchConfigError
from infermeter.calculators.json_text import json_loads
from infermeter.registry.store import reject_duplicate_keys

# Request fields the benchmark itself sets: `--extra-body` may not replace them, or the run
# would not measure what its workload says (another model, prompt or length, no stream).
RESERVED_BODY_FIELDS = frozenset(
    {"model", "prompt", "messages", "max_tokens", "max_completion_tokens", "stream",
     "stream_options", "ignore_eos"}
)  # fmt: skip


def extra_body(value: object) -> dict[str, Any]:
    """`--extra-body`'s JSON object (sampling parameters such as `top_p`, `temperature`), given
    as text (the command line) or as a mapping (a plan file); raises BenchConfigError for
    anything else or for a field the benchmark sets itself."""
    body = value
    if isinstance(value, str):
        try:
            # a field given twice would be sent once, with one of the two values
            body = json_loads(value, object_pairs_hook=reject_duplicate_keys)
        except ValueError as error:
            raise BenchConfigError(f"not JSON: {error}", "--extra-body") from None
    if not isinstance(body, dict):
        raise BenchConfigError('expected a JSON object such as {"top_p": 0.9}', "--extra-body")
    try:
        json.dumps(body, allow_nan=False)
    except ValueError:  # NaN or Infinity: Python writes them, JSON has no such number
        raise BenchConfigError(
            "NaN and Infinity are not JSON numbers: every request would carry one", "--extra-body"
        ) from None
    return _check_extra_body(dict(body))


def _check_extra_body(body: dict[str, Any]) -> dict[str, Any]:
    """`body` when none of its fields is one the benchmark sets itself (BenchConfigError)."""
    reserved = sorted(RESERVED_BODY_FIELDS & set(body))
    if reserved:
        raise BenchConfigError(
            f"{', '.join(reserved)} is set by the benchmark from its workload and options; "
            "use those instead",
            "--extra-body",
        )
    return body
