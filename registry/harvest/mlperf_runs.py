"""One MLPerf run, one result: a run submitted for both accuracy targets of a benchmark.

A submitter whose run meets the stricter target (`llama2-70b-99.9`) may submit the same run as
its `-99` result too. The results table then has two rows with one log: v4.1 lists both, each
with its own (byte-identical) logs; later rounds mark the `-99` row `UsedModel: …-99.9`. Shown
twice, the run would be counted twice, so the `-99` row is filed as the same run as the `-99.9`
row, whose result names both targets.
"""

from collections.abc import Sequence
from typing import Any

from infermeter.registry.harvest.mlperf_names import benchmark_family
from infermeter.registry.harvest.outcome import Harvested
from infermeter.registry.harvest.reported import replaced, reported_result
from infermeter.registry.models import ReportedSource, Result

STRICTER_SUFFIX = "-99.9"


def _run_group(row: dict[str, Any]) -> tuple[str, str, str]:
    # By submitter, not result ID: an open-division submitter may file the one run under two
    # IDs (v4.1-0113/0114, 5.1-0098/0099: byte-identical logs).
    return (str(row.get("Submitter")), benchmark_family(str(row["Model"])), str(row["Scenario"]))


def both_targets(result: Result, lenient: str) -> Result:
    """The stricter benchmark's result, saying that it is also the `lenient` benchmark's."""
    source = result.source
    assert isinstance(source, ReportedSource)
    assert source.mlperf is not None
    stricter = source.mlperf.benchmark
    workload = replaced(
        result.identity.workload,
        accuracy_target=f"MLPerf {stricter} and {lenient}: one run submitted for both; it meets "
        "99.9 % of the reference implementation's accuracy, and so 99 %",
    )
    both = replaced(
        source,
        conditions=source.conditions
        + f" The submitter filed this one run as both its {stricter} and its {lenient} result "
        "(the same logs); it is one result here, with both accuracy targets.",
    )
    identity = replaced(result.identity, workload=workload)
    return reported_result(identity, result.points, both)


def _same_run(
    lenient: int, stricter: int, rows: Sequence[dict[str, Any]], logs: Sequence[str | None]
) -> bool:
    used = str(rows[lenient].get("UsedModel", rows[lenient]["Model"]))
    same_id = rows[lenient].get("ID") == rows[stricter].get("ID")
    if same_id and used.replace("_", ".") == str(rows[stricter]["Model"]).replace("_", "."):
        return True
    return logs[lenient] is not None and logs[lenient] == logs[stricter]


def one_row_per_run(
    rows: Sequence[dict[str, Any]],
    logs: Sequence[str | None],
    harvested: Sequence[Harvested],
) -> list[Harvested]:
    """`harvested` (one per row, in order) with each `-99` row that is the same run as its
    `-99.9` row filed as that row's (`same_as`), and the `-99.9` result naming both targets."""
    groups: dict[tuple[str, str, str], list[int]] = {}
    for index, row in enumerate(rows):
        groups.setdefault(_run_group(row), []).append(index)
    merged = list(harvested)
    for members in groups.values():
        stricter = [i for i in members if str(rows[i]["Model"]).endswith(STRICTER_SUFFIX)]
        lenient_rows = [i for i in members if i not in stricter]
        for lenient in lenient_rows:
            found = [k for k in stricter if _same_run(lenient, k, rows, logs)]
            if len(found) != 1 or merged[found[0]].result is None:
                continue
            kept = found[0]
            result = merged[kept].result
            assert result is not None
            merged[kept] = Harvested(
                merged[kept].key, result=both_targets(result, str(rows[lenient]["Model"]))
            )
            merged[lenient] = Harvested(
                merged[lenient].key,
                skipped=f"the same run as {rows[kept]['Model']}"
                + (
                    ""
                    if rows[kept].get("ID") == rows[lenient].get("ID")
                    else f" {rows[kept]['ID']}"
                )
                + " (one run submitted for both accuracy targets: filed once, under the stricter)",
                same_as=merged[kept].key,
            )
    return merged
