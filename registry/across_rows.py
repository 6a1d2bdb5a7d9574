"""The index's figures that need every row: the replicate spread of a point's group
(`with_replicate_spread`) and the Pareto front of real sweeps (`with_pareto_front`).
"""

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

from infermeter.registry.index_row import IndexRow
from infermeter.registry.pareto import front_flags


def _stands_alone(row: IndexRow) -> bool:
    return row.correction is not None or row.interrupted


def with_replicate_spread(rows: Sequence[IndexRow]) -> list[IndexRow]:
    """Rows with the replicate count and the output-throughput spread of their group; a
    corrected or withdrawn result, and an interrupted point, is no replicate of anything (it
    stands alone)."""
    groups: dict[str, list[IndexRow]] = {}
    for row in rows:
        if _stands_alone(row):
            continue
        groups.setdefault(row.replicate_key, []).append(row)
    spread = []
    for row in rows:
        group = [row] if _stands_alone(row) else groups[row.replicate_key]
        values = [r.output_tokens_per_s for r in group if r.output_tokens_per_s is not None]
        spread.append(
            dataclasses.replace(
                row,
                replicates=len(group),
                output_tokens_per_s_min=min(values) if values else None,
                output_tokens_per_s_max=max(values) if values else None,
            )
        )
    return spread


def _sweep_group(row: IndexRow) -> tuple[Any, ...] | None:
    if row.scenario not in ("closed", "open"):
        return None
    return (row.model, row.workload_key, row.gpu, row.gpu_count, row.scenario, row.lane)


def _front_point(row: IndexRow) -> tuple[float, float] | None:
    if row.interrupted:  # a point cut short is no point of the sweep's curve
        return None
    if row.tokens_per_s_per_user is None or row.output_tokens_per_s_per_gpu is None:
        return None
    return (row.tokens_per_s_per_user, row.output_tokens_per_s_per_gpu)


def with_pareto_front(rows: Sequence[IndexRow]) -> list[IndexRow]:
    """Rows with `on_pareto_front` set, from real sweeps only: a result's closed- or open-loop
    points count when it has two or more of them."""
    in_sweep: dict[str, int] = {}
    for row in rows:
        if _sweep_group(row) is not None and _front_point(row) is not None:
            in_sweep[row.result_id] = in_sweep.get(row.result_id, 0) + 1
    swept = [row for row in rows if in_sweep.get(row.result_id, 0) >= 2]
    flags = dict(zip(map(id, swept), front_flags(swept, _sweep_group, _front_point), strict=True))
    return [dataclasses.replace(row, on_pareto_front=flags.get(id(row))) for row in rows]


def across_rows(rows: Iterable[IndexRow]) -> list[IndexRow]:
    """The rows in the index's order (file, point) with the figures that need all of them:
    the replicate spread and the Pareto front."""
    ordered = sorted(rows, key=lambda row: (row.file, row.point_index))
    return with_pareto_front(with_replicate_spread(ordered))
