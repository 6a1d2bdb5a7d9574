"""A metric's distribution over a load point: n, mean, p50/p90/p95/p99 and max, in milliseconds.

Percentiles use linear interpolation between closest ranks (numpy's default, "linear"); see
`bench.run.metrics`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from typing import Any

from infermeter.calculators.units import MS_PER_S


@dataclasses.dataclass(frozen=True)
class Distribution:
    """Summary statistics of one metric over a load point, in milliseconds."""

    n: int
    mean: float | None
    p50: float | None
    p90: float | None
    p95: float | None
    p99: float | None
    max: float | None

    def as_json(self) -> dict[str, Any]:
        """The distribution as a plain JSON object (its fields, in order)."""
        return dataclasses.asdict(self)


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-th percentile (0–100) of already sorted values, by linear interpolation."""
    if not sorted_values:
        raise ValueError("percentile of no values")
    rank = (len(sorted_values) - 1) * q / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(sorted_values) - 1)
    fraction = rank - low
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * fraction


def summarize(values_s: Iterable[float]) -> Distribution:
    """n, mean, p50/p90/p95/p99 and max of values in seconds, reported in milliseconds."""
    ordered = sorted(values_s)
    if not ordered:
        return Distribution(0, None, None, None, None, None, None)

    def ms(value: float) -> float:
        return value * MS_PER_S

    return Distribution(
        n=len(ordered),
        mean=ms(math.fsum(ordered) / len(ordered)),
        p50=ms(percentile(ordered, 50)),
        p90=ms(percentile(ordered, 90)),
        p95=ms(percentile(ordered, 95)),
        p99=ms(percentile(ordered, 99)),
        max=ms(ordered[-1]),
    )
