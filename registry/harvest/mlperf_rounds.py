"""The MLPerf Inference rounds the harvester reads, and the check that a source is the round
asked for.

Each round's source differs (v4.0 has no results table, v6.1's is `summary.json` with fields of
its own), so a round is read only once its source has been read and checked on a pinned excerpt
(`tests/data/harvest/mlperf-v*`). A results table states its round on every row (`version`):
harvested as another round, every row would be cited under that round's name and repository.
"""

import re
from collections.abc import Iterable
from typing import Any

from infermeter.registry.harvest.errors import HarvestError, HarvestOptionError

ROUNDS = ("v4.0", "v4.1", "v5.1", "v6.0", "v6.1")


def _known() -> str:
    return f"the rounds it reads: {', '.join(ROUNDS)}"


def round_name(text: str) -> str:
    """`5.1` or `v5.1` → `v5.1`; HarvestOptionError for anything else, or a round not in
    ROUNDS."""
    match = re.fullmatch(r"v?([0-9]+\.[0-9]+)", text.strip())
    if not match:
        raise HarvestOptionError(
            f"--round: {text!r} is not an MLPerf round such as 5.1 ({_known()})"
        )
    name = f"v{match.group(1)}"
    if name not in ROUNDS:
        raise HarvestOptionError(
            f"--round: {name} is not a round this harvester reads ({_known()})"
        )
    return name


def check_table_round(rows: Iterable[dict[str, Any]], name: str) -> None:
    """HarvestError when a row of the results table states a round (`version`) other than
    `name`."""
    stated = sorted({str(row["version"]) for row in rows if row.get("version") is not None})
    if stated and stated != [name]:
        raise HarvestError(
            f"--round: {name}, but the results table read is of {', '.join(stated)} ({_known()})"
        )
