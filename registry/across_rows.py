"""The index's figures that need every row: the replicate spread of a point's group
(`with_replicate_spread`) and the Pareto front of each GPU × count's load points
(`with_pareto_front`).
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
    """Rows with `on_pareto_front` set: the closed- (or open-) loop points of one model ×
    workload × GPU × count form one front when there are two or more of them, whichever results
    they come from. A run that published a single point counts too: left out, it could beat a
    point the front claims nothing of its GPU × count beats (InferenceX's API keeps only some
    concurrencies of a run, so many of its runs show one)."""
    flags = front_flags(rows, _sweep_group, _front_point)
    pairs = zip(rows, flags, strict=True)
    return [dataclasses.replace(row, on_pareto_front=flag) for row, flag in pairs]


def across_rows(rows: Iterable[IndexRow]) -> list[IndexRow]:
    """The rows in the index's order (file, point) with the figures that need all of them:
    the replicate spread and the Pareto front."""
    ordered = sorted(rows, key=lambda row: (row.file, row.point_index))
    return with_pareto_front(with_replicate_spread(ordered))
