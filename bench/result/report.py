"""The buyer's-guide table of a run: what an accepted token costs at each load point.

Per point: the deployment's hourly price (per-GPU price × GPUs), the effective hourly cost
(price / utilization, `calculators.cost.effective_cost`; failed requests are not charged here
because the accepted throughput already leaves them out), accepted output tokens per hour,
$ per 1M accepted output tokens, TTFT p95, E2E p95/p99, failure rate and mean GPU utilization.
The price is `--price-per-hour` (per GPU) or the catalog's on-demand price of the GPU that the
site's figures use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from infermeter.bench.result.points import PointTelemetry
from infermeter.bench.run.point_summary import PointSummary
from infermeter.calculators.hourly_cost import effective_cost
from infermeter.calculators.token_cost import usd_per_million_accepted_tokens
from infermeter.calculators.units import SECONDS_PER_HOUR


@dataclass(frozen=True)
class HourlyPrice:
    """A price of one GPU-hour and where it came from."""

    usd_per_gpu_hour: float
    source: str


@dataclass(frozen=True)
class CostRow:
    """One load point in the buyer's table; None where a figure is not available."""

    point: str
    usd_per_hour: float | None
    effective_usd_per_hour: float | None
    accepted_tokens_per_hour: float
    usd_per_million_accepted: float | None
    ttft_p95_ms: float | None
    e2e_p95_ms: float | None
    e2e_p99_ms: float | None
    failure_rate: float | None
    gpu_utilization_pct_mean: float | None


def catalog_price(gpu_id: str) -> HourlyPrice | None:
    """The on-demand price of `gpu_id` that the catalog's figures use, if it has one."""
    from infermeter.registry.lookup import cheapest_prices

    price = cheapest_prices(gpu_id).get("on_demand")
    if price is None:
        return None
    return HourlyPrice(
        price.usd_per_gpu_hour, f"{price.provider} on-demand, {price.as_of} (price catalog)"
    )


def point_name(point: PointSummary) -> str:
    """`c=4` for a closed-loop point, `rate=2/s` for an open-loop one."""
    if point.concurrency is not None:
        return f"c={point.concurrency}"
    return f"rate={point.request_rate:g}/s"


def cost_rows(
    points: Sequence[PointSummary],
    telemetry: Sequence[PointTelemetry | None],
    price: HourlyPrice | None,
    gpu_count: int,
    utilization: float = 1.0,
) -> list[CostRow]:
    """The buyer's table, one row per point."""
    rows = []
    for index, point in enumerate(points):
        usd_per_hour = price.usd_per_gpu_hour * gpu_count if price is not None else None
        effective = (
            effective_cost(usd_per_hour, utilization).effective_usd_per_hour
            if usd_per_hour is not None
            else None
        )
        accepted = point.accepted_output_token_throughput
        per_million = (
            usd_per_million_accepted_tokens(effective, accepted)
            if effective is not None and accepted > 0
            else None
        )
        sent = point.completed + point.failed
        point_telemetry = telemetry[index] if index < len(telemetry) else None
        gpu = point_telemetry.gpu if point_telemetry is not None else None
        rows.append(
            CostRow(
                point=point_name(point),
                usd_per_hour=usd_per_hour,
                effective_usd_per_hour=effective,
                accepted_tokens_per_hour=accepted * SECONDS_PER_HOUR,
                usd_per_million_accepted=per_million,
                ttft_p95_ms=point.ttft_ms.p95,
                e2e_p95_ms=point.e2e_ms.p95,
                e2e_p99_ms=point.e2e_ms.p99,
                failure_rate=point.failed / sent if sent else None,
                gpu_utilization_pct_mean=gpu.gpu_utilization_pct_mean if gpu else None,
            )
        )
    return rows


def _cell(value: float | None, template: str) -> str:
    return "-" if value is None else template.format(value)


def right_aligned(rows: Sequence[Sequence[str]]) -> list[str]:
    """Text table lines: each column right-aligned to its widest cell, two spaces apart."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]


def format_cost_table(rows: Sequence[CostRow], price: HourlyPrice | None) -> str:
    """The table as text, with the price's source under it."""
    header = (
        "point",
        "$/h",
        "effective $/h",
        "accepted tok/h",
        "$/1M accepted",
        "TTFT p95 ms",
        "E2E p95/p99 ms",
        "failed",
        "GPU util",
    )
    body = [
        (
            row.point,
            _cell(row.usd_per_hour, "{:.2f}"),
            _cell(row.effective_usd_per_hour, "{:.2f}"),
            f"{row.accepted_tokens_per_hour:,.0f}",
            _cell(row.usd_per_million_accepted, "{:.3f}"),
            _cell(row.ttft_p95_ms, "{:.1f}"),
            f"{_cell(row.e2e_p95_ms, '{:.1f}')} / {_cell(row.e2e_p99_ms, '{:.1f}')}",
            _cell(row.failure_rate, "{:.1%}"),
            _cell(row.gpu_utilization_pct_mean, "{:.0f}%"),
        )
        for row in rows
    ]
    lines = right_aligned([header, *body])
    if price is None:
        lines.append(
            "no price: pass --price-per-hour (USD per GPU-hour) or --gpu with a catalog price"
        )
    else:
        lines.append(f"price: ${price.usd_per_gpu_hour:g} per GPU-hour ({price.source})")
    return "\n".join(lines)
