"""The registry's results and prices as the answer's plain data (`calculators.accepted.Point`,
`calculators.answer.Price`): what the index, the site build, the browser and the CLI hand to
the one piece of code that computes answers (`calculators.answer`).

- A point's *precision* is its weights' quantization, or `16-bit` for unquantized weights.
- Its answer *scenario*: `offline` (every request queued at once), `mlperf_server` and
  `mlperf_interactive` (MLPerf's two SLOs, never ranked together), `server_at_slo` (our own
  searches), `static_batch`, `closed` or `open`.
- A price's *confidence* is `registry.prices.confidence` (how many recent providers and offers
  agree with it, whether it is the provider's official list price); its date is `undated` where
  only the day its source was read is known.
- Only the prices figures use (`registry.prices.tier_prices`) and only current points (not
  corrected, not withdrawn, not interrupted) are evidence.
"""

from collections.abc import Iterable, Mapping

from infermeter.calculators.accepted import Point, Records, Slo
from infermeter.calculators.answer import Price
from infermeter.calculators.price_tiers import MARKET_TIER
from infermeter.registry.estimate import shortest_tokens, workload_dataset, workload_tokens
from infermeter.registry.index_row import IndexRow
from infermeter.registry.models import FixedLength, LatencyStats, LoadPoint, PriceEntry, Result
from infermeter.registry.models.measurements import INTERRUPTED_VERDICT
from infermeter.registry.prices import (
    above_market,
    confidence,
    market_floor,
    shown_as_of,
    tier_prices,
)
from infermeter.registry.workloads import scenario, workload_key, workload_label

UNQUANTIZED = "16-bit"


def precision(quantization: str | None) -> str:
    """A point's weight precision as a question names it."""
    return quantization or UNQUANTIZED


def result_lane(result: Result) -> str:
    """`mlperf` (MLPerf's closed division), `mlperf-open` (its open division, which may change
    the model or the rules: never compared with closed results), else the source's kind."""
    mlperf = getattr(result.source, "mlperf", None)
    if mlperf is not None:
        return "mlperf" if mlperf.division == "closed" else "mlperf-open"
    return result.source.kind


def answer_scenario(result: Result, point: LoadPoint) -> str:
    """The scenario one answer is homogeneous in (module docstring)."""
    mlperf = getattr(result.source, "mlperf", None)
    if point.load.arrival == "offline":
        return "offline"
    if mlperf is not None and mlperf.scenario in ("Server", "Interactive"):
        return f"mlperf_{mlperf.scenario.lower()}"
    return scenario(point.load)


def _latency(point: LoadPoint) -> dict[str, dict[str, float]]:
    latency: dict[str, dict[str, float]] = {}
    for metric in ("ttft_ms", "tpot_ms", "e2e_ms"):
        stats: LatencyStats | None = getattr(point, metric)
        if stats is None:
            continue
        stated = stats.model_dump(exclude={"n"}, exclude_none=True)
        if stated:
            latency[metric] = stated
    return latency


def _records(result: Result, point: LoadPoint) -> tuple[Slo | None, float | None, float | None]:
    """The per-request records' accepted figures: (the SLO they are for, accepted tokens/s,
    accepted share of requests); Nones where the result has none."""
    slo = result.slo
    accepted = point.throughput.accepted_output_tokens_per_s
    completed, failed = point.requests.completed or 0, point.requests.failed or 0
    if result.source.kind != "measured" or accepted is None or point.requests.accepted is None:
        return None, None, None
    if slo.ttft_ms is None and slo.tpot_ms is None and slo.e2e_ms is None:
        return None, None, None
    share = point.requests.accepted / (completed + failed) if completed + failed else None
    return Slo(100.0, slo.ttft_ms, slo.tpot_ms, slo.e2e_ms), accepted, share


def _request_records(result: Result, point: LoadPoint) -> Records | None:
    """A measured point's per-request records (`calculators.accepted.Records`), where its file
    keeps each request's figures."""
    figures = point.request_figures
    if result.source.kind != "measured" or figures is None:
        return None
    return Records(
        point.requests.failed or 0,
        tuple(figures.output_tokens),
        tuple(figures.ttft_ms),
        tuple(figures.tpot_ms),
        tuple(figures.e2e_ms),
    )


def point_evidence(result: Result, index: int, file_url: str | None = None) -> Point:
    """One load point of a result as evidence."""
    point = result.points[index]
    identity = result.identity
    search = point.load.slo_search
    records_slo, records_tokens, records_share = _records(result, point)
    output_len = identity.workload.output_len
    tokens = workload_tokens(identity.workload)
    mlperf = getattr(result.source, "mlperf", None)
    return Point(
        result_id=result.id,
        point_index=index,
        lane=result_lane(result),
        model=identity.model.id,
        workload_key=workload_key(identity.workload),
        workload=workload_label(identity.workload),
        precision=precision(identity.model.quantization),
        scenario=answer_scenario(result, point),
        gpu=identity.gpu.id,
        gpu_count=identity.gpu.count,
        load=point.load.label(),
        input_tokens=None if tokens is None else tokens[0],
        output_tokens=None if tokens is None else tokens[1],
        shortest_output_tokens=shortest_tokens(output_len),
        dataset=workload_dataset(result) or None,
        output_tokens_per_s=point.throughput.output_tokens_per_s or None,
        latency=_latency(point),
        own_slo=(
            None
            if search is None
            else Slo(search.percentile, search.ttft_ms, search.tpot_ms, search.e2e_ms)
        ),
        records_slo=records_slo,
        records_accepted_tokens_per_s=records_tokens,
        records_accepted_share=records_share,
        records=_request_records(result, point),
        static_batch_size=point.load.concurrency if point.load.arrival == "static_batch" else None,
        static_output_tokens=output_len.value if isinstance(output_len, FixedLength) else None,
        source_url=file_url or getattr(result.source, "url", None),
        mlperf_result_id=None if mlperf is None else mlperf.entry(),
    )


def current(point: LoadPoint, correction: object | None) -> bool:
    """Whether a point is evidence: not corrected or withdrawn, not cut short."""
    return correction is None and not any(v.code == INTERRUPTED_VERDICT for v in point.validity)


def evidence(rows: Iterable[IndexRow], results: Mapping[str, Result]) -> list[Point]:
    """Every current point of the index's rows as evidence, in the index's order."""
    return [
        point_evidence(results[row.result_id], row.point_index)
        for row in rows
        if row.correction is None and not row.interrupted and row.result_id in results
    ]


def answer_prices(prices: Iterable[PriceEntry]) -> list[Price]:
    """Per GPU and tier, the price figures use (`registry.prices.tier_prices`: usable prices,
    a GPU's tiers from one provider) as the answer's plain data, sorted by id."""
    entries = list(prices)
    tiers = {gpu: tier_prices(gpu, entries) for gpu in sorted({price.gpu for price in entries})}
    found = [
        _answer_price(price, entries) for chosen in tiers.values() for price in chosen.values()
    ]
    found += [
        _market_price(chosen["on_demand"], entries)
        for chosen in tiers.values()
        if "on_demand" in chosen
    ]
    return sorted(found, key=lambda p: (p.id, p.tier))


def _market_price(on_demand: PriceEntry, entries: list[PriceEntry]) -> Price:
    """A GPU's price in the answers' market tier (`calculators.price_tiers.MARKET_TIER`): its
    on-demand market floor, or its chosen on-demand price where that is lower or none is."""
    floor = market_floor(on_demand.gpu, "on_demand", entries)
    entry = (
        floor[0]
        if floor is not None and floor[0].usd_per_gpu_hour < on_demand.usd_per_gpu_hour
        else on_demand
    )
    return Price(
        id=entry.id,
        gpu=entry.gpu,
        tier=MARKET_TIER,
        usd_per_gpu_hour=entry.usd_per_gpu_hour,
        provider=entry.provider,
        as_of=shown_as_of(entry),
        confidence=confidence(entry, entries).level,
        source_url=str(entry.source.url),
    )


def _answer_price(price: PriceEntry, entries: list[PriceEntry]) -> Price:
    """A chosen price as the answer's plain data, with the market floor where it is well above
    it (`registry.prices.above_market`)."""
    market = above_market(price, entries)
    return Price(
        id=price.id,
        gpu=price.gpu,
        tier=price.tier,
        usd_per_gpu_hour=price.usd_per_gpu_hour,
        provider=price.provider,
        as_of=shown_as_of(price),
        confidence=confidence(price, entries).level,
        source_url=str(price.source.url),
        market_usd_per_gpu_hour=None if market is None else market[0].usd_per_gpu_hour,
        market_providers=None if market is None else ", ".join(market[1]),
        market_price_id=None if market is None else market[0].id,
    )
