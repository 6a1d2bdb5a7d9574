"""Where an MLPerf results-table row's run lies in the round's repository: its `Location`.

The table writes the folder as `./closed/AMD/results/<system>/<benchmark>/<scenario>` (v4.1–v5.1)
or that folder's `/performance/run_1` (from v6.0); every reader of a row's files starts from it.
"""

import re
from typing import Any

from infermeter.registry.harvest.errors import HarvestError


def location(row: dict[str, Any]) -> str:
    """The row's `Location` as a path from the repository root, without `./` or a trailing `/`:
    `closed/AMD/results/8xMI355X_2xEPYC_9575F/gpt-oss-120b/Server/performance/run_1`."""
    return str(row["Location"]).removeprefix("./").rstrip("/")


def results_folder(row: dict[str, Any]) -> str:
    """The row's scenario folder under `results/`: its `Location` less a `/performance/run_<n>`
    the later rounds end it with."""
    return re.sub(r"/performance/run_\d+$", "", location(row))


def submission_root(row: dict[str, Any]) -> str:
    """`closed/AMD`: the division and submitter folders the row's submission lies in."""
    return "/".join(location(row).split("/")[:2])


def system_folder(row: dict[str, Any]) -> str:
    """`H200-SXM-141GBx8_TRT_MaxQ`: the system folder of a row located at
    `closed/NVIDIA/results/<it>/…`; HarvestError for a `Location` not laid out so (the table is
    not what the harvest reads)."""
    parts = location(row).split("/")
    if len(parts) < 4 or parts[2] != "results" or not parts[3]:
        raise HarvestError(
            f"Location {row['Location']!r}: expected <division>/<submitter>/results/<system>/…"
        )
    return parts[3]
