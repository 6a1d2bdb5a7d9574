"""The registry's own data against what the issue's audit found wrong (issue 21): no run
counted twice, no replicate group across submitters or systems, no MLPerf scenario or division
merged with another. Each test reads the real registry/results/ through the index."""

import collections
from pathlib import Path

import pytest
from compare_pages import comparable_groups

from infermeter.registry.index import build_index
from infermeter.registry.index_row import IndexRow

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rows() -> list[IndexRow]:
    return build_index(REPOSITORY_ROOT)[0]


def test_no_replicate_group_spans_submitters_systems_or_results(rows: list[IndexRow]) -> None:
    owners: dict[str, set[tuple[str | None, ...]]] = collections.defaultdict(set)
    for row in rows:
        owners[row.replicate_key].add(
            (row.mlperf_submitter, row.mlperf_system, row.mlperf_result_id)
        )
    assert [key for key, found in owners.items() if len(found) > 1] == []


def test_an_mlperf_run_is_one_result(rows: list[IndexRow]) -> None:
    """A run submitted for both accuracy targets (-99, -99.9) is filed once: no two MLPerf
    results of one system and scenario have the same figures (separate runs for each target
    differ in every figure)."""
    runs = collections.Counter(
        (
            row.mlperf_round,
            row.mlperf_result_id,
            row.model,
            row.mlperf_scenario,
            row.output_tokens_per_s,
            row.ttft_ms_p99,
            row.e2e_ms_p99,
        )
        for row in rows
        if row.mlperf_result_id is not None and row.correction is None
    )
    assert [run for run, count in runs.items() if count > 1] == []


def test_mlperf_scenarios_and_divisions_never_share_a_table(rows: list[IndexRow]) -> None:
    by_model: dict[str, list[IndexRow]] = collections.defaultdict(list)
    for row in rows:
        by_model[row.model].append(row)
    for model_rows in by_model.values():
        for _key, members in comparable_groups(model_rows):
            kinds = {(m.lane, m.mlperf_scenario, m.mlperf_division) for m in members}
            mlperf = {kind for kind in kinds if kind[1] is not None}
            assert len(mlperf) <= 1, kinds
            assert not mlperf or len(kinds) == 1, kinds


def test_no_source_cell_is_imported_twice(rows: list[IndexRow]) -> None:
    """Two results of one model, GPU count, workload and load with the same printed figure from
    one publisher's table are one cell read twice (TensorRT-LLM 0.20's three B200 cells were,
    from NVIDIA's page and from a fork's copy). MLPerf results of different submitters are
    separate submissions and are left out here."""
    cells: dict[tuple[object, ...], set[str]] = collections.defaultdict(set)
    for row in rows:
        figure = row.output_tokens_per_s or row.total_tokens_per_s
        if row.lane != "reported" or figure is None or row.correction is not None:
            continue
        key = (row.model, row.gpu, row.gpu_count, row.workload_key, row.load_label, figure)
        cells[key].add(row.result_id)
    assert [key for key, ids in cells.items() if len(ids) > 1] == []


def test_no_point_beats_its_roofline_bound(rows: list[IndexRow]) -> None:
    """The bound is one no run can beat: a share above 100 % means the deployment is modelled
    wrong (disaggregated runs were drawn as one replica over every GPU: up to 1,403 %)."""
    over = [
        (r.result_id, r.point_index, r.roofline_pct) for r in rows if (r.roofline_pct or 0) > 100
    ]
    assert over == []
    assert sum(r.roofline_pct is not None for r in rows) > 2000


def test_open_division_evidence_is_a_lane_of_its_own() -> None:
    """The answer's evidence keeps MLPerf's open division apart from the closed (one function
    gives the index and the answer their lane)."""
    from infermeter.registry.evidence import result_lane
    from infermeter.registry.store import read_result

    lanes = collections.Counter()
    for path in (REPOSITORY_ROOT / "registry/results").rglob("*.json"):
        text = path.read_text(encoding="utf-8")
        if '"division": "open"' in text or '"division": "closed"' in text:
            result = read_result(path)
            division = result.source.mlperf.division  # type: ignore[union-attr]
            lanes[(division, result_lane(result))] += 1
    assert set(lanes) == {("closed", "mlperf"), ("open", "mlperf-open")}
