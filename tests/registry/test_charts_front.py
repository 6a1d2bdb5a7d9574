"""The compare pages' speed chart (`registry.charts.chart_data`) on the registry's own
DeepSeek-R1 results, where one GPU × count holds many InferenceX deployments: each line is its
GPU × count's Pareto front (faster per user means fewer tokens per GPU, never a zigzag), no
point on a line is beaten by another point of its GPU × count (a run's only point included),
and `bench report`'s whole sweeps keep every point."""

import itertools
from collections import defaultdict

import pytest
from registry_helpers import REPOSITORY_ROOT

from infermeter.registry.across_rows import across_rows
from infermeter.registry.charts import chart_data, default_label
from infermeter.registry.index_row import IndexRow
from infermeter.registry.index_rows import index_rows
from infermeter.registry.prices import PriceBook
from infermeter.registry.result_reader import load_results

ONE_K = "819–1,024 → 819–1,024 tokens, random"


@pytest.fixture(scope="module")
def rows() -> list[IndexRow]:
    files = sorted((REPOSITORY_ROOT / "registry" / "results").glob("*/deepseek-r1/*.json"))
    loaded = load_results(REPOSITORY_ROOT, files)
    indexed = across_rows(
        row for file, result in loaded for row in index_rows(result, file, PriceBook([]))
    )
    return [row for row in indexed if row.workload == ONE_K and row.scenario == "closed"]


def _by_label(rows: list[IndexRow]) -> dict[str, list[tuple[float, float]]]:
    """Every point of each GPU × count with both speeds, from every result (one-point runs too)."""
    points: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for row in rows:
        if row.tokens_per_s_per_user is not None and row.output_tokens_per_s_per_gpu is not None:
            points[default_label(row)].append(
                (row.tokens_per_s_per_user, row.output_tokens_per_s_per_gpu)
            )
    return points


def test_charts_each_line_is_its_gpu_and_count_front(rows: list[IndexRow]) -> None:
    lines = chart_data(rows)["pareto"]
    every = _by_label(rows)
    assert len(lines) >= 20  # the busiest chart: every GPU × count with a sweep has its line
    assert set(lines) == {label for label, points in every.items() if len(points) >= 2}
    for label, line in lines.items():
        xs = [x for x, _y, _front in line]
        ys = [y for _x, y, _front in line]
        assert xs == sorted(xs), label
        # a front: faster per user, fewer tokens per GPU; today's lines through every point of
        # 8 × mi355x's seven runs rise and fall again
        assert all(a > b for a, b in itertools.pairwise(ys)), (label, line)
        for x, y, front in line:
            assert front is True
            # beaten by no point of its GPU × count, one-point runs included (8 × h200-sxm's
            # one-point run at 69.0 tok/s per user and 138 per GPU beats a point of its sweeps)
            beaten_by = [(ox, oy) for ox, oy in every[label] if ox >= x and oy >= y]
            assert beaten_by == [(x, y)], (label, x, y, beaten_by)
    # every undominated point is drawn: the line is the whole front, not a sample of it
    drawn = sum(len(line) for line in lines.values())
    assert drawn == sum(1 for row in rows if row.on_pareto_front)


def test_charts_leave_the_beaten_512_user_point_of_8_mi355x_off_its_line(
    rows: list[IndexRow],
) -> None:
    # InferenceX run 26829715287 (ATOM, FP8, MTP) published 25.3 output tok/s per GPU at 512
    # users: 0.39 tok/s per user, beaten by its own run's 32-user point (81.1 and 324.5)
    (odd,) = [row for row in rows if row.gpu == "mi355x" and row.concurrency == 512]
    (own,) = [row for row in rows if row.result_id == odd.result_id and row.concurrency == 32]
    assert odd.tokens_per_s_per_user == pytest.approx(0.395, abs=0.001)
    assert own.tokens_per_s_per_user is not None
    assert own.output_tokens_per_s_per_gpu is not None
    assert own.tokens_per_s_per_user > 80
    assert own.output_tokens_per_s_per_gpu > 300
    assert odd.on_pareto_front is False
    line = chart_data(rows)["pareto"]["8 × mi355x"]
    assert [odd.tokens_per_s_per_user, odd.output_tokens_per_s_per_gpu, False] not in line
    assert min(x for x, _y, _front in line) > 30  # the slowest drawn point: 33.4 tok/s per user


def test_charts_whole_sweeps_keep_every_point_of_a_run(rows: list[IndexRow]) -> None:
    by_result = chart_data(rows, lambda row: row.result_id, whole_sweeps=True)["pareto"]
    assert sum(map(len, by_result.values())) == sum(
        1 for row in rows if row.on_pareto_front is not None
    )
    assert any(not front for line in by_result.values() for _x, _y, front in line)
