"""What `infermeter bench run` prints after a run: the points, the search, the cost table.

`format_run_summary` is the whole text: a heading line (model, endpoint, profile, api, seed),
`format_point_table` (throughput and latency percentiles per load point, then each point's
failures and validity verdicts), the search's story when the run searched a load, and the
buyer's cost table (`bench.result.report`) at `run_price` for `run_gpu_count` GPUs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from infermeter.bench.result.report import (
    HourlyPrice,
    catalog_price,
    cost_rows,
    format_cost_table,
    right_aligned,
)
from infermeter.bench.run.distribution import Distribution
from infermeter.bench.run.point_summary import PointSummary
from infermeter.bench.run.progress import point_name
from infermeter.calculators.parallel import ParallelLayout

if TYPE_CHECKING:
    from infermeter.bench.plan.options import RunOptions
    from infermeter.bench.session.config import SessionOutcome


def run_price(outcome: SessionOutcome, options: RunOptions) -> HourlyPrice | None:
    """The GPU-hour price of the cost table: --price-per-hour, else the catalog's cheapest
    on-demand price of the GPU the run used (or was told), else none."""
    if options.price_per_hour is not None:
        return HourlyPrice(options.price_per_hour, "given with --price-per-hour")
    if outcome.deployment is not None:
        return catalog_price(outcome.deployment.gpu.id or "")
    if options.gpu_id is not None:
        return catalog_price(options.gpu_id)
    return None


def run_gpu_count(outcome: SessionOutcome, options: RunOptions) -> int:
    """GPUs the price is paid for: the deployment's, else tensor × pipeline parallel size."""
    if outcome.deployment is not None:
        return outcome.deployment.gpu.count
    layout = ParallelLayout(options.tensor_parallel_size or 1, options.pipeline_parallel_size or 1)
    return layout.replica_gpus


def format_run_summary(outcome: SessionOutcome, options: RunOptions) -> str:
    """The text `bench run` prints on stdout for one finished run (not with --json)."""
    result = outcome.run
    sections = [
        f"model {result.model} at {result.endpoint} (profile {result.profile}, "
        f"api {result.api}, seed {result.seed})",
        format_point_table(result.points),
    ]
    if result.search is not None:
        from infermeter.bench.run.search import describe_search

        sections += ["", "\n".join(describe_search(result.search))]
    price = run_price(outcome, options)
    gpu_count = run_gpu_count(outcome, options)
    rows = cost_rows(result.points, outcome.telemetry, price, gpu_count, options.utilization)
    sections += ["", format_cost_table(rows, price)]
    return "\n".join(sections)


def _point_name(point: PointSummary) -> str:
    return point_name(point.concurrency, point.request_rate)


def _pair(distribution: Distribution, first: str, second: str) -> str:
    values = [getattr(distribution, first), getattr(distribution, second)]
    return " / ".join("-" if v is None else f"{v:.1f}" for v in values)


def format_point_table(points: list[PointSummary]) -> str:
    """A readable table of the points, then their validity verdicts."""
    header = (
        "point",
        "done",
        "failed",
        "out tok/s",
        "accepted tok/s",
        "TTFT p50/p95 ms",
        "ITL p50/p95 ms",
        "TPOT p50/p95 ms",
        "E2E p50/p99 ms",
    )
    rows = [
        (
            _point_name(p),
            str(p.completed),
            str(p.failed),
            f"{p.output_token_throughput:.1f}",
            f"{p.accepted_output_token_throughput:.1f}",
            _pair(p.ttft_ms, "p50", "p95"),
            _pair(p.itl_ms, "p50", "p95"),
            _pair(p.tpot_ms, "p50", "p95"),
            _pair(p.e2e_ms, "p50", "p99"),
        )
        for p in points
    ]
    lines = right_aligned([header, *rows])
    for p in points:
        if p.failures_by_kind:
            kinds = ", ".join(
                f"{kind} {count}" for kind, count in sorted(p.failures_by_kind.items())
            )
            lines.append(f"{_point_name(p)} failures: {kinds}")
        lines.extend(f"{_point_name(p)} {v.code}: {v.message}" for v in p.verdicts)
    return "\n".join(lines)
