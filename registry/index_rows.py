"""The index rows of one result: its identity, measurements and the figures derived from them
at current prices (`index_rows`): $/1M output and accepted tokens and tokens per dollar per
price tier, tokens/s per GPU and per user, tokens per joule, the roofline share.

A figure whose inputs are missing is null, never estimated; derived figures are rounded to 6
significant digits.
"""

import hashlib
import json
import math
from typing import Any

from infermeter.calculators.accepted import accepted_at_own_slo
from infermeter.calculators.token_cost import tokens_per_dollar, usd_per_million_tokens
from infermeter.registry.corrections import (
    CorrectionEntry,
)
from infermeter.registry.evidence import point_evidence, result_lane
from infermeter.registry.index_row import STATED_COLUMNS, IndexRow, TierColumns
from infermeter.registry.models import (
    LatencyStats,
    LoadPoint,
    PriceEntry,
    Result,
    comparability_key,
    load_point_key,
)
from infermeter.registry.models.common import CPU_DEVICE_ID
from infermeter.registry.models.measurements import INTERRUPTED_VERDICT
from infermeter.registry.prices import TIERS, Confidence, GpuPrices, PriceBook, dated
from infermeter.registry.roofline_share import RooflineBounds, RooflineShare
from infermeter.registry.workloads import scenario, workload_key, workload_label

_SIGNIFICANT_DIGITS = 6


def _rounded(value: float | None) -> float | None:
    # Derived figures carry no more precision than their inputs; fewer digits, calmer diffs.
    if value is None:
        return None
    return float(f"{value:.{_SIGNIFICANT_DIGITS}g}")


def _positive(value: float | None) -> float | None:
    return value if value is not None and value > 0 and math.isfinite(value) else None


def _stat(stats: LatencyStats | None, name: str) -> float | None:
    return None if stats is None else getattr(stats, name)


def _failure_rate(point: LoadPoint) -> float | None:
    completed, failed = point.requests.completed, point.requests.failed
    if completed is None or failed is None or completed + failed == 0:
        return None
    return failed / (completed + failed)


def _per_user(
    point: LoadPoint, output_tokens_per_s: float | None
) -> tuple[float | None, str | None]:
    load = point.load
    if load.arrival == "closed" and load.concurrency is not None and output_tokens_per_s:
        return output_tokens_per_s / load.concurrency, "concurrency"
    tpot = _positive(_stat(point.tpot_ms, "mean")) or _positive(_stat(point.tpot_ms, "p50"))
    if tpot is not None:
        return 1000.0 / tpot, "tpot"
    return None, None


def _tokens_per_joule(point: LoadPoint) -> float | None:
    gpu = point.telemetry.gpu if point.telemetry is not None else None
    if gpu is None:
        return None
    energy_j, output_tokens = _positive(gpu.energy_j), point.tokens.output
    if energy_j is not None and output_tokens is not None:
        return output_tokens / energy_j
    power_w, throughput = _positive(gpu.power_w_mean), point.throughput.output_tokens_per_s
    if power_w is not None and throughput is not None:
        return throughput / power_w
    return None


def _tier_columns(
    price: PriceEntry | None,
    gpu_count: int,
    output_tokens_per_s: float | None,
    accepted_tokens_per_s: float | None,
    trust: Confidence | None = None,
) -> TierColumns:
    """A row's figures at `price` (None: the tier has no price for the GPU)."""
    if price is None:
        return TierColumns()
    hourly = price.usd_per_gpu_hour * gpu_count
    output, accepted = output_tokens_per_s, accepted_tokens_per_s
    return TierColumns(
        price_id=price.id,
        # A derived price says so, with its rule, wherever its figures show their provider.
        price_provider=(
            price.provider
            if price.derived is None
            else f"{price.provider}, derived: {price.derived.rule}"
        ),
        price_as_of=dated(price),
        price_confidence=trust.level if trust is not None else None,
        usd_per_hour=_rounded(hourly),
        usd_per_million_output_tokens=(
            None if output is None else _rounded(usd_per_million_tokens(hourly, output))
        ),
        usd_per_million_accepted_tokens=(
            None if accepted is None else _rounded(usd_per_million_tokens(hourly, accepted))
        ),
        output_tokens_per_dollar=(
            None if output is None else _rounded(tokens_per_dollar(hourly, output))
        ),
    )


def _tiers(
    priced: GpuPrices,
    gpu_count: int,
    output_tokens_per_s: float | None,
    accepted_tokens_per_s: float | None,
) -> dict[str, Any]:
    """A row's `TierColumns` at each price tier's cheapest price (`priced`), by tier
    (`IndexRow`'s field of it)."""
    return {
        tier: _tier_columns(
            priced.cheapest.get(tier),
            gpu_count,
            output_tokens_per_s,
            accepted_tokens_per_s,
            priced.trust.get(tier),
        )
        for tier in TIERS
    }


def _roofline_columns(share: RooflineShare | None) -> dict[str, Any]:
    if share is None:
        return {"roofline_tokens_per_s": None, "roofline_pct": None, "roofline_basis": None}
    bound = share.bound_tokens_per_s
    return {
        "roofline_tokens_per_s": None if bound is None else _rounded(bound),
        "roofline_pct": _rounded(share.pct),
        "roofline_basis": share.basis,
    }


def _replicate_key(
    result: Result, point: LoadPoint, result_key: tuple[Any, ...] | None = None
) -> str:
    text = json.dumps(load_point_key(result, point, result_key), sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def ran_on_cpu(result: Result) -> bool:
    """True for a run without a GPU (`identity.gpu.id` is `cpu`)."""
    return result.identity.gpu.id == CPU_DEVICE_ID


def _mlperf_columns(result: Result) -> dict[str, Any]:
    """What MLPerf's guidelines require beside its results; null for other sources."""
    mlperf = getattr(result.source, "mlperf", None)
    return {
        "mlperf_result_id": mlperf.entry() if mlperf is not None else None,
        "mlperf_round": mlperf.round if mlperf is not None else None,
        "mlperf_division": mlperf.division if mlperf is not None else None,
        "mlperf_category": mlperf.availability if mlperf is not None else None,
        "mlperf_scenario": mlperf.scenario if mlperf is not None else None,
        "mlperf_submitter": mlperf.submitter if mlperf is not None else None,
        "mlperf_system": mlperf.system if mlperf is not None else None,
    }


def _identity_columns(result: Result) -> dict[str, Any]:
    identity = result.identity
    return {
        "gpu": identity.gpu.id,
        "gpu_count": identity.gpu.count,
        "model": identity.model.id,
        "quantization": identity.model.quantization,
        "engine": identity.engine.name,
        "engine_version": identity.engine.version,
        "tensor_parallel_size": identity.serving.tensor_parallel_size,
        "profile": identity.workload.profile,
        "workload": workload_label(identity.workload),
        "workload_key": workload_key(identity.workload),
    }


def _load_columns(point: LoadPoint) -> dict[str, Any]:
    search = point.load.slo_search
    return {
        "scenario": scenario(point.load),
        "arrival": point.load.arrival,
        "concurrency": point.load.concurrency,
        "request_rate": point.load.request_rate,
        "load_label": point.load.label(),
        "rate_search_percentile": search.percentile if search is not None else None,
        "rate_search_ttft_ms": search.ttft_ms if search is not None else None,
        "rate_search_tpot_ms": search.tpot_ms if search is not None else None,
        "rate_search_e2e_ms": search.e2e_ms if search is not None else None,
    }


def _correction_columns(correction: CorrectionEntry | None) -> dict[str, Any]:
    return {
        "correction": correction.kind if correction is not None else None,
        "correction_date": correction.date if correction is not None else None,
        "correction_reason": correction.reason if correction is not None else None,
        "replaced_by": correction.replaced_by if correction is not None else None,
    }


def _measured_columns(point: LoadPoint) -> dict[str, Any]:
    """The point's figures as measured or published (latencies, counts, telemetry): each
    column's `stated` field of the point (`registry.index_row`)."""
    return {
        "interrupted": any(v.code == INTERRUPTED_VERDICT for v in point.validity),
        **{column: _stated(point, path) for column, path in STATED_COLUMNS.items()},
    }


def _stated(point: LoadPoint, path: str) -> Any:
    """The point's figure at a dotted path (`telemetry.gpu.energy_j`); None where a part of
    the path is not stated."""
    value: Any = point
    for name in path.split("."):
        value = getattr(value, name)
        if value is None:
            return None
    return value


def derived_columns(
    point: LoadPoint, gpu_count: int, accepted_tokens_per_s: float | None
) -> dict[str, Any]:
    """The figures derived from the point's (per GPU, per user, per joule, failure rate)."""
    output_tokens_per_s = _positive(point.throughput.output_tokens_per_s)
    per_user, per_user_basis = _per_user(point, output_tokens_per_s)
    return {
        "failure_rate": _rounded(_failure_rate(point)),
        "accepted_output_tokens_per_s": _rounded(accepted_tokens_per_s),
        "output_tokens_per_s_per_gpu": _rounded(
            None if output_tokens_per_s is None else output_tokens_per_s / gpu_count
        ),
        "tokens_per_s_per_user": _rounded(per_user),
        "tokens_per_s_per_user_basis": per_user_basis,
        "output_tokens_per_joule": _rounded(_tokens_per_joule(point)),
    }


def index_rows(
    result: Result,
    file: str,
    prices: PriceBook,
    correction: CorrectionEntry | None = None,
    bounds: RooflineBounds | None = None,
) -> list[IndexRow]:
    """The rows of one result: one per load point, priced from `prices`, marked with the
    corrections file's entry for it (`correction`) when there is one, each with its share of
    the roofline bound when `bounds` (the GPU and model catalogs) are given. A run on the CPU
    has none: every row is a GPU comparison's."""
    if ran_on_cpu(result):
        return []
    shares = bounds.shares(result) if bounds is not None else [None] * len(result.points)
    gpu_count = result.identity.gpu.count
    priced = prices.of(result.identity.gpu.id)
    result_key = comparability_key(result)  # once per result: its points share it
    result_columns: dict[str, Any] = (
        {
            "result_id": result.id,
            "file": file,
            "source_kind": result.source.kind,
            "lane": result_lane(result),
            "unofficial": bool(getattr(result.source, "unofficial", None)),
        }
        | _mlperf_columns(result)
        | _identity_columns(result)
        | _correction_columns(correction)
    )
    rows = []
    for point_index, point in enumerate(result.points):
        output_tokens_per_s = _positive(point.throughput.output_tokens_per_s)
        accepted = accepted_at_own_slo(point_evidence(result, point_index))
        accepted_tokens_per_s = None if accepted is None else accepted.accepted_tokens_per_s
        rows.append(
            IndexRow(
                point_index=point_index,
                replicate_key=_replicate_key(result, point, result_key),
                replicates=1,
                on_pareto_front=None,
                **result_columns,
                **_load_columns(point),
                **_measured_columns(point),
                **derived_columns(point, gpu_count, accepted_tokens_per_s),
                **_roofline_columns(shares[point_index]),
                **_tiers(priced, gpu_count, output_tokens_per_s, accepted_tokens_per_s),
            )
        )
    return rows
