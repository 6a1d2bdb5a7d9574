"""MLPerf Inference v6.1's results table, `summary.json`, read as the earlier rounds' rows.

From v6.1 the table is `summary.json`, not `summary_results.json`: an object of rows keyed
`"0"`, `"1"` …, each with its own field names (`Organization`, `Division`, `SystemName`,
`accelerator_model_name`, `number_of_nodes`, `accelerators_per_node`, `framework`, `Result`,
`Units`) and no result ID. Each row is renamed to the fields the row reader takes
(`registry.harvest.mlperf`); the run is then named by its `Location`, the path of its
`performance/run_1` folder (`mlperf_location.location`), which the results cite with the
submitter and system.
"""

from typing import Any

from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.harvest.source_json import parsed_json

SUMMARY_JSON = "summary.json"

RENAMED: dict[str, str] = {
    "Organization": "Submitter",
    "Division": "Category",
    "SystemType": "Suite",
    "SystemName": "System",
    "accelerator_model_name": "Accelerator",
    "number_of_nodes": "Nodes",
    "accelerators_per_node": "a#",
    "host_processor_model_name": "Processor",
    "framework": "Software",
    "Result": "Performance_Result",
    "Units": "Performance_Units",
}
"""v6.1's field names → the names of `summary_results.json` (v4.1–v6.0)."""

_TEXT_FIELDS = ("Organization", "Division", "SystemName", "Model", "Scenario", "Location")


def as_earlier_row(row: dict[str, Any]) -> dict[str, Any]:
    """A v6.1 row under the earlier rounds' field names, with no result ID (`ID` None)."""
    renamed = {RENAMED.get(field, field): value for field, value in row.items()}
    renamed["ID"] = None
    return renamed


def read_summary_json(text: str) -> list[dict[str, Any]]:
    """The rows of v6.1's `summary.json` in its key order, renamed; HarvestError when the file
    is not an object of row objects or a row lacks a text field the reader needs."""
    table = parsed_json(text, SUMMARY_JSON)
    if not isinstance(table, dict) or not all(isinstance(row, dict) for row in table.values()):
        raise HarvestError(f"{SUMMARY_JSON}: expected an object of row objects")
    rows = []
    for key, row in table.items():
        for field in _TEXT_FIELDS:
            if not isinstance(row.get(field), str):
                raise HarvestError(f"{SUMMARY_JSON}: [{key}].{field}: expected a string")
        rows.append(as_earlier_row(row))
    return rows
