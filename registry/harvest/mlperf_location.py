"""Where an MLPerf results-table row's run lies in the round's repository: its `Location`.

The table writes the folder as `./closed/AMD/results/<system>/<benchmark>/<scenario>` (v4.1–v5.1)
or that folder's `/performance/run_1` (from v6.0); every reader of a row's files starts from it.
"""

from typing import Any


def location(row: dict[str, Any]) -> str:
    """The row's `Location` as a path from the repository root, without `./` or a trailing `/`:
    `closed/AMD/results/8xMI355X_2xEPYC_9575F/gpt-oss-120b/Server/performance/run_1`."""
    return str(row["Location"]).removeprefix("./").rstrip("/")
