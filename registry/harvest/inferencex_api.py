"""InferenceX™ (SemiAnalysis) results from a response of the InferenceX app's public API.

`GET /api/v1/benchmarks?model=…` of the InferenceX app (SemiAnalysisAI/InferenceX-app,
`packages/app/src/app/api/v1/benchmarks/route.ts`) answers with one JSON array: for each
configuration, concurrency and ISL/OSL, the newest successful `benchmark_results` row
(`getLatestBenchmarks` in `packages/db/src/queries/benchmarks.ts`, the `latest_benchmarks`
view), flattened with its configuration's columns, its `date`, and `run_url`: the workflow
run's page with `/attempts/<n>`. The rows of one configuration can come from several runs, and
a saved response may hold only some concurrencies of a run.

The rows are turned back into the tables of a database dump (a workflow run per `run_url`, a
configuration per distinct set of configuration columns) and harvested as a dump is
(`inferencex.harvest_dump`), so a run, configuration and ISL/OSL has the same source key from
either. The app's loader writes every row as `benchmark_type` `single_turn`
(`packages/db/src/etl/benchmark-ingest.ts`). The response does not carry the run's commit.
"""

import re
from pathlib import Path
from typing import Any

from infermeter.registry.errors import shown
from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.harvest.outcome import Harvested
from infermeter.registry.harvest.source_json import json_rows
from infermeter.registry.harvest.sources import FileCitation

CONFIG_COLUMNS = (
    "hardware", "framework", "model", "precision", "spec_method", "disagg", "is_multinode",
    "prefill_tp", "prefill_ep", "prefill_dp_attention", "prefill_num_workers",
    "decode_tp", "decode_ep", "decode_dp_attention", "decode_num_workers",
    "num_prefill_gpu", "num_decode_gpu",
)  # fmt: skip
"""The configuration columns of a row (`BenchmarkRow`; the `configs` table)."""

ROW_COLUMNS = ("isl", "osl", "conc", "image", "metrics", "date", "run_url")
BENCHMARK_TYPE = "single_turn"
_RUN_URL = re.compile(r"(?P<page>https://github\.com/[^/]+/[^/]+/actions/runs/(?P<id>[0-9]+))"
                      r"/attempts/(?P<attempt>[0-9]+)")  # fmt: skip

Tables = dict[str, list[dict[str, Any]]]


def read_api_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a saved `/api/v1/benchmarks` response; HarvestError names the first row and
    column that is not as the API writes it."""
    rows = json_rows(path, "a JSON array of /api/v1/benchmarks rows")
    check_rows(
        path, rows, (*CONFIG_COLUMNS, *ROW_COLUMNS), (*CONFIG_COLUMNS, "image"), "an API row"
    )
    return rows


def check_rows(
    path: Path,
    rows: list[dict[str, Any]],
    needed: tuple[str, ...],
    keys: tuple[str, ...],
    what: str,
) -> None:
    """HarvestError naming the first row of `path` without a `needed` column, or with a list or
    object in one of the `keys` columns (those that group or join rows: ids, a configuration)."""
    for number, row in enumerate(rows):
        missing = [column for column in needed if column not in row]
        if missing:
            raise HarvestError(f"{path}: row {number}: no {missing[0]!r}; not {what}")
        for column in keys:
            if isinstance(row.get(column), list | dict):
                raise HarvestError(
                    f"{path}: row {number}: {column} is {shown(row[column])}; expected a "
                    "string, number, true, false or null"
                )


def _run(row: dict[str, Any]) -> dict[str, Any] | None:
    """The workflow run of a row, as the dump's `workflow_runs` table holds it (None: the row
    names none)."""
    match = _RUN_URL.fullmatch(str(row.get("run_url") or ""))
    if match is None:
        return None
    return {
        "github_run_id": int(match["id"]),
        "run_attempt": int(match["attempt"]),
        "html_url": match["page"],
        "head_sha": None,
        "date": row["date"],
    }


def api_tables(rows: list[dict[str, Any]]) -> tuple[Tables, list[Harvested]]:
    """The dump tables the rows make, and the rows skipped because they name no workflow run."""
    configs: dict[tuple[Any, ...], dict[str, Any]] = {}
    runs: dict[tuple[Any, ...], dict[str, Any]] = {}
    results: list[dict[str, Any]] = []
    skipped: list[Harvested] = []
    for number, row in enumerate(rows):
        run = _run(row)
        if run is None:
            reason = f"run_url {row.get('run_url')!r} names no workflow run attempt"
            skipped.append(Harvested(f"inferencex api row {number}", skipped=reason))
            continue
        run_key = (run["github_run_id"], run["run_attempt"])
        run_id = runs.setdefault(run_key, {"id": len(runs) + 1, **run})["id"]
        config_key = tuple(row[column] for column in CONFIG_COLUMNS)
        config = {"id": len(configs) + 1} | {column: row[column] for column in CONFIG_COLUMNS}
        config_id = configs.setdefault(config_key, config)["id"]
        results.append({
            "id": number, "workflow_run_id": run_id, "config_id": config_id,
            "benchmark_type": BENCHMARK_TYPE, "error": None,
            **{column: row[column] for column in ROW_COLUMNS if column != "run_url"},
        })  # fmt: skip
    tables = {
        "configs": list(configs.values()),
        "workflow_runs": list(runs.values()),
        "benchmark_results": results,
    }
    return tables, skipped


def response_tables(source: Path, cited: FileCitation) -> tuple[Tables, list[Harvested], str]:
    """The dump tables of a saved InferenceX API response, its rows that name no run, and the
    sentence that says where it was read."""
    if cited.url is None:
        raise HarvestError(
            f"--from: {source} is a file; name where it is published with --url and the "
            "commit it was taken from with --commit"
        )
    cited.file_commit(source, "where it is published with --url and ")
    tables, skipped = api_tables(read_api_rows(source))
    read_at = (
        f"Read from the InferenceX API response saved as {cited.url} at commit {cited.commit} "
        "(GET /api/v1/benchmarks: the newest successful row of each configuration, "
        "concurrency and ISL/OSL, so a run may show only some of its concurrencies)"
        + (f"; bytes read from {cited.read_from}." if cited.read_from else ".")
    )
    return tables, skipped, read_at
