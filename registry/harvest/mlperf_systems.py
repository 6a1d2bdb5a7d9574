"""A round read without its results table: rows built from system descriptions and run logs.

MLPerf Inference v4.0's repository (`mlcommons/inference_results_v4.0`) is too large to bring
here whole, and no `summary_results.json` of it was found; its files can be read one by one.
Each submission describes its systems in `<division>/<submitter>/systems/<system>.json` and
keeps each run's LoadGen summary at
`<division>/<submitter>/results/<system>/<benchmark>/<scenario>/performance/run_1/
mlperf_log_summary.txt`. One row per such log is built under the results table's field names
(`registry.harvest.mlperf`), from the system description (`submitter`, `division`,
`system_type`, `system_name`, `accelerator_model_name`, `number_of_nodes`,
`accelerators_per_node`, `framework`, `status`) and the log's path (benchmark, scenario).

What only the table states is absent, and said so: there is no result ID (the run is named by its
path, with submitter and system, as v6.1's rows are), no declared `weight_data_types` (the
precision comes from the submission's own configurations, `mlperf_precision`), no accuracy line
and no `Performance_Result` to check the log against: the log's own figures are stored.
"""

import re
from typing import Any

from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.harvest.source_json import json_object
from infermeter.registry.harvest.tree import SourceTree

RUN_LOG = re.compile(
    r"^(?P<division>closed|open)/(?P<submitter>[^/]+)/results/(?P<system>[^/]+)/"
    r"(?P<benchmark>[^/]+)/(?P<scenario>Offline|Server|Interactive)/performance/run_1/"
    r"mlperf_log_summary\.txt$"
)
NO_TABLE = (
    "not read: the round's results table is not read here (the row is built from the system "
    "description and the run's log)"
)
_DESCRIPTION_FIELDS = ("submitter", "division", "system_type", "system_name")


def system_path(match: re.Match[str]) -> str:
    """The system description of a run log's path."""
    return f"{match['division']}/{match['submitter']}/systems/{match['system']}.json"


def _description(path: str, text: str | None) -> dict[str, Any]:
    if text is None:
        raise HarvestError(f"{path}: no such file (the system description of a run read)")
    data = json_object(text, path)
    for field in _DESCRIPTION_FIELDS:
        if not isinstance(data.get(field), str):
            raise HarvestError(f"{path}: {field}: expected a string")
    return data


def system_row(match: re.Match[str], system: dict[str, Any], round_name: str) -> dict[str, Any]:
    """One run as a results-table row (`ID` None, `Location` the run's folder)."""
    location = match.group(0).rsplit("/", 1)[0]
    return {
        "ID": None,
        "from_table": False,
        "Submitter": system["submitter"],
        "Availability": system.get("status"),
        "Category": match["division"],
        "Suite": system["system_type"],
        "System": system["system_name"],
        "Platform": match["system"],
        "UsedModel": match["benchmark"],
        "Model": match["benchmark"],
        "Scenario": match["scenario"],
        "Accuracy": NO_TABLE,
        "Nodes": system.get("number_of_nodes"),
        "Processor": system.get("host_processor_model_name"),
        "Accelerator": system.get("accelerator_model_name"),
        "a#": system.get("accelerators_per_node"),
        "Location": location,
        "Software": system.get("framework", ""),
        "operating_system": system.get("operating_system"),
        "version": round_name,
        "weight_data_types": None,
        "Performance_Result": None,
        "Performance_Units": None,
    }


def read_runs(tree: SourceTree, round_name: str) -> list[dict[str, Any]]:
    """A row for every run log of the round's closed and open divisions, in path order;
    HarvestError when a run's system description is missing or malformed."""
    matches = [
        match
        for path in tree.files_under(["closed", "open"])
        if (match := RUN_LOG.match(path)) is not None
    ]
    descriptions = tree.read_many(sorted({system_path(match) for match in matches}))
    rows = []
    for match in matches:
        path = system_path(match)
        if match["division"] != _description(path, descriptions[path])["division"]:
            raise HarvestError(f"{path}: division is not {match['division']!r}, its folder's")
        rows.append(system_row(match, _description(path, descriptions[path]), round_name))
    return rows
