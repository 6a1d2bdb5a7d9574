"""What "accepted" output tokens are, for each kind of evidence the registry holds.

A reader's SLO bounds TTFT, TPOT and end-to-end latency (each optional) at one percentile; an
SLO with no bound asks the batch question. A load point's accepted output tokens/s for that SLO:

- **per-request records** (infermeter's own runs): the output tokens of the requests that
  succeeded and met every bound of the reader's SLO, per second (the point's output tokens/s ×
  those requests' share of its output tokens), when at least the reader's percentile of the
  requests (failed ones included) met every bound. A result file keeps each successful
  request's output tokens, TTFT, TPOT and E2E (`Records`), so this holds at any SLO. An older
  file keeps only the accepted count at the run's own SLO: it answers a reader's SLO as loose
  or looser on every bound (a looser SLO accepts at least those requests);
- **a server at an SLO** (MLPerf Server and Interactive, a max-rate or max-concurrency search):
  its whole throughput, for a reader SLO as loose or looser on every bound *and* percentile
  than the point's own; for a tighter one, only as latency percentiles (below) prove it: the
  percentiles it states were measured at that load;
- **latency percentiles only** (sweeps, static batches): the point's throughput, when its stated
  percentile of each bounded metric meets the bound. A p95 bound takes p95 or a stricter
  statistic (p99, max), never a mean. A fixed-length static batch states the whole batch's time:
  every request ran from its start to its end, so each request's E2E is that time, its TTFT is
  at most that time and its TPOT at most that time ÷ (output tokens − 1); such values are
  marked as derived;
- **offline maximum throughput**: accepted only for the batch question (no latency bound).

A point that qualifies nowhere is a miss, with the bound it missed by the most (`Miss.ratio`,
measured ÷ bound), so a page can show the nearest miss. Pure functions over plain data; stdlib
only (this module runs in the browser through Pyodide).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

METRICS: tuple[str, ...] = ("ttft_ms", "tpot_ms", "e2e_ms")
METRIC_NAMES = {"ttft_ms": "TTFT", "tpot_ms": "TPOT", "e2e_ms": "E2E"}

# Statistics that prove a percentile, with the percentile they stand for (max: all requests).
PERCENTILE_STATS: tuple[tuple[str, float], ...] = (
    ("p50", 50.0),
    ("p90", 90.0),
    ("p95", 95.0),
    ("p99", 99.0),
    ("max", 100.0),
)

OFFLINE = "offline"
"""The answer scenario of offline points: they answer the batch question only."""


def bound_text(ms: float) -> str:
    """A latency bound in ms as the reader set it: whole ms grouped (`1,000`), else its
    fraction kept (`7.5`, `0.1`), never rounded to another bound."""
    return f"{ms:,.0f}" if ms == round(ms) else f"{ms:,.6g}"


@dataclass(frozen=True)
class Slo:
    """Latency bounds at one percentile (e.g. 95 = p95); no bound at all is the batch question."""

    percentile: float = 99.0
    ttft_ms: float | None = None
    tpot_ms: float | None = None
    e2e_ms: float | None = None

    @property
    def is_batch(self) -> bool:
        return not self.bounds()

    def bounds(self) -> dict[str, float]:
        """The bounded metrics and their bounds, ms."""
        values = {"ttft_ms": self.ttft_ms, "tpot_ms": self.tpot_ms, "e2e_ms": self.e2e_ms}
        return {name: value for name, value in values.items() if value is not None}

    def bounds_within(self, other: Slo) -> bool:
        """Whether a request that meets `self`'s bounds meets `other`'s: `self` bounds every
        metric `other` bounds, each as tightly or more."""
        mine = self.bounds()
        return all(name in mine and mine[name] <= bound for name, bound in other.bounds().items())

    def within(self, other: Slo) -> bool:
        """Whether meeting `self` proves meeting `other`: as tight or tighter on every bound of
        `other`, at a percentile at least as high."""
        return self.percentile >= other.percentile and self.bounds_within(other)

    def text(self) -> str:
        """The SLO in a reader's words, e.g. `p95 TTFT ≤ 1,000 ms`, or `none (batch)`."""
        bounds = [f"{METRIC_NAMES[m]} ≤ {bound_text(v)} ms" for m, v in self.bounds().items()]
        return f"p{self.percentile:g} " + ", ".join(bounds) if bounds else "none (batch)"

    def as_dict(self) -> dict[str, Any] | None:
        """JSON data: null for the batch question."""
        if self.is_batch:
            return None
        return {"percentile": self.percentile, **{m: getattr(self, m) for m in METRICS}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Slo:
        if not data:
            return cls()
        return cls(
            float(data.get("percentile") or 99.0),
            *(None if data.get(m) is None else float(data[m]) for m in METRICS),
        )


@dataclass(frozen=True)
class Records:
    """A measured point's per-request records as the answer needs them: each successful
    request's output tokens, TTFT, TPOT (None: a one-token reply, which meets any TPOT bound)
    and E2E in ms, in columns; `failed` requests are never accepted."""

    failed: int
    output_tokens: tuple[int, ...]
    ttft_ms: tuple[float, ...]
    tpot_ms: tuple[float | None, ...]
    e2e_ms: tuple[float, ...]

    @property
    def requests(self) -> int:
        return len(self.output_tokens) + self.failed

    def met(self, slo: Slo) -> list[int]:
        """The successful requests that met every bound of `slo`, by position."""
        bounds = slo.bounds()
        columns = [(getattr(self, metric), bound) for metric, bound in bounds.items()]
        return [
            i
            for i in range(len(self.output_tokens))
            if all(column[i] is None or column[i] <= bound for column, bound in columns)
        ]

    def at_percentile(self, metric: str, percentile: float) -> float | None:
        """The least value that at least `percentile` % of all requests are at or under
        (a failed request is over any value); None where the failures alone exceed the rest."""
        values = sorted(value or 0.0 for value in getattr(self, metric))
        rank = math.ceil(percentile / 100.0 * self.requests) - 1
        return values[max(rank, 0)] if rank < len(values) else None

    def as_dict(self) -> dict[str, Any]:
        return {
            name: list(value) if isinstance(value, tuple) else value
            for name, value in self.__dict__.items()
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Records:
        return cls(
            int(data["failed"]),
            *(tuple(data[name]) for name in ("output_tokens", "ttft_ms", "tpot_ms", "e2e_ms")),
        )


@dataclass(frozen=True)
class Point:
    """One load point as evidence, in plain data (the index builds it; the browser reads it
    from JSON). `latency`: metric → statistic (`p50` … `max`, `mean`) → ms, as stated."""

    result_id: str
    point_index: int
    lane: str  # `measured`, `reported` or `mlperf`
    model: str
    workload_key: str
    workload: str
    precision: str
    scenario: str  # `offline`, `static_batch`, `server_at_slo`, `closed`, `open`, `mlperf_server` …
    gpu: str
    gpu_count: int
    load: str
    input_tokens: int | None = None  # the workload's typical request, where stated
    output_tokens: int | None = None
    shortest_output_tokens: int | None = None  # the workload's shortest output, where stated
    # where the workload states its lengths only as a data set's: the data set (MLPerf's
    # benchmark), whose mean lengths `calculators.perf_datasets` may know
    dataset: str | None = None
    output_tokens_per_s: float | None = None
    latency: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    own_slo: Slo | None = None  # a server at an SLO: the bounds it met
    records_slo: Slo | None = None  # per-request records: the SLO its accepted count is for
    records_accepted_tokens_per_s: float | None = None
    records_accepted_share: float | None = None  # accepted ÷ all requests, 0–1
    records: Records | None = None  # each request's figures: any reader SLO, exactly
    static_batch_size: int | None = None  # a fixed-length static batch: requests in it
    static_output_tokens: int | None = None  # and each request's output tokens
    source_url: str | None = None
    mlperf_result_id: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON data; fields at their default are left out (the browser downloads every point)."""
        data = {name: getattr(self, name) for name in self.__dataclass_fields__}
        data["latency"] = {m: dict(stats) for m, stats in self.latency.items()}
        for name in ("own_slo", "records_slo"):
            slo = data[name]
            data[name] = None if slo is None else {"percentile": slo.percentile, **slo.bounds()}
        data["records"] = None if self.records is None else self.records.as_dict()
        return {name: value for name, value in data.items() if value not in (None, {})}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Point:
        values = dict(data)
        for name in ("own_slo", "records_slo"):
            values[name] = None if values.get(name) is None else Slo.from_dict(values[name])
        if values.get("records") is not None:
            values["records"] = Records.from_dict(values["records"])
        return cls(**values)


@dataclass(frozen=True)
class Miss:
    """Why a point does not answer: the bound it missed by the most, where figures show it."""

    reason: str
    metric: str | None = None
    measured_ms: float | None = None
    bound_ms: float | None = None

    @property
    def ratio(self) -> float | None:
        """Measured ÷ bound (above 1: how far it missed); None where nothing was measured."""
        if self.measured_ms is None or not self.bound_ms:
            return None
        return self.measured_ms / self.bound_ms


@dataclass(frozen=True)
class Acceptance:
    """A point's accepted output tokens/s for one SLO, and on what basis; or its miss."""

    accepted_tokens_per_s: float | None
    basis: str
    derived: bool = False
    miss: Miss | None = None


def static_batch_tokens_per_s(point: Point) -> float | None:
    """A fixed-length static batch's output tokens/s: its stated throughput, else derived as
    batch size × output tokens ÷ the batch's time."""
    if point.output_tokens_per_s:
        return point.output_tokens_per_s
    batch_ms = point.latency.get("e2e_ms", {}).get("mean")
    if not batch_ms or not point.static_batch_size or not point.static_output_tokens:
        return None
    return point.static_batch_size * point.static_output_tokens / (batch_ms / 1000.0)


@dataclass(frozen=True)
class _Figure:
    """The statistic that proves a percentile: its ms and its name; `derived` from a fixed-length
    static batch's time, and `at_most` where that only bounds the metric from above (every
    request's TTFT and TPOT; its E2E is the batch's time exactly)."""

    ms: float
    statistic: str
    derived: bool = False
    at_most: bool = False


def _stated(point: Point, metric: str, percentile: float) -> _Figure | None:
    """The least statistic of `metric` that proves `percentile`, or None."""
    stats = point.latency.get(metric, {})
    for name, covers in PERCENTILE_STATS:
        if covers >= percentile and stats.get(name) is not None:
            return _Figure(float(stats[name]), name)
    batch_ms = point.latency.get("e2e_ms", {}).get("mean")
    if point.scenario != "static_batch" or not batch_ms or not point.static_output_tokens:
        return None
    # Every request of a fixed-length static batch runs the whole batch (module docstring).
    if metric == "tpot_ms":
        if point.static_output_tokens < 2:
            return None
        per_token = batch_ms / (point.static_output_tokens - 1)
        return _Figure(per_token, "batch time ÷ (output − 1)", derived=True, at_most=True)
    return _Figure(batch_ms, "the batch's time", derived=True, at_most=metric == "ttft_ms")


def _by_percentiles(point: Point, slo: Slo, throughput: float | None) -> Acceptance:
    misses, derived, proofs = [], False, []
    for metric, bound in slo.bounds().items():
        figure = _stated(point, metric, slo.percentile)
        if figure is None:
            misses.append(Miss(f"{METRIC_NAMES[metric]} at p{slo.percentile:g} not stated"))
            continue
        derived = derived or figure.derived
        proofs.append(f"{METRIC_NAMES[metric]} {figure.statistic} {figure.ms:,.0f} ms")
        if figure.ms > bound:
            misses.append(_above(metric, figure, bound, slo.percentile))
    if misses:
        return Acceptance(None, "", derived, _worst(misses))
    if throughput is None:
        return Acceptance(None, "", derived, Miss("throughput not stated"))
    basis = "its stated percentiles meet every bound: " + ", ".join(proofs)
    if derived:
        basis += " (derived: every request of a fixed-length static batch runs the whole batch)"
    return Acceptance(throughput, basis, derived)


def _above(metric: str, figure: _Figure, bound: float, percentile: float) -> Miss:
    """A figure above the bound: a miss by measured ÷ bound, unless it only bounds the metric
    from above; then it proves nothing either way, and the miss is said as not stated, with no
    figure to show or rank by."""
    name = METRIC_NAMES[metric]
    if figure.at_most:
        return Miss(
            f"{name} at p{percentile:g} not stated: {figure.statistic} ({figure.ms:,.0f} ms) "
            "bounds it only from above"
        )
    return Miss(f"{name} {figure.statistic} above the bound", metric, figure.ms, bound)


def _worst(misses: list[Miss]) -> Miss:
    measured = [miss for miss in misses if miss.ratio is not None]
    if len(measured) < len(misses):  # an unstated figure proves nothing: it decides the miss
        return next(miss for miss in misses if miss.ratio is None)
    return max(measured, key=lambda miss: miss.ratio or 0.0)


def _by_records(records: Records, slo: Slo, throughput: float | None) -> Acceptance:
    """Tokens of the requests that met every bound, when at least the reader's percentile of
    all requests did (module docstring)."""
    met = records.met(slo)
    share = len(met) / records.requests if records.requests else 0.0
    if share * 100.0 < slo.percentile:
        return Acceptance(None, "", False, _records_miss(records, slo, share))
    if throughput is None:
        return Acceptance(None, "", False, Miss("throughput not stated"))
    total = sum(records.output_tokens)
    accepted = sum(records.output_tokens[i] for i in met)
    bounds = ", ".join(f"{METRIC_NAMES[m]} ≤ {v:,.0f} ms" for m, v in slo.bounds().items())
    basis = (
        f"tokens of the {len(met)} of {records.requests} requests that met {bounds} "
        "(per-request records)"
    )
    return Acceptance(throughput * accepted / total if total else 0.0, basis)


def _records_miss(records: Records, slo: Slo, share: float) -> Miss:
    """Why too few requests met the SLO: the bound whose reader's percentile over all requests
    missed by the most; else (each bound met alone, not all at once) the share that met."""
    misses = []
    for metric, bound in slo.bounds().items():
        value = records.at_percentile(metric, slo.percentile)
        if value is None:
            failed = f"{records.failed} of {records.requests} requests failed"
            return Miss(f"{failed}, more than p{slo.percentile:g} allows")
        if value > bound:
            name = f"{METRIC_NAMES[metric]} p{slo.percentile:g} of the requests"
            misses.append(Miss(f"{name} above the bound", metric, value, bound))
    if misses:
        return _worst(misses)
    return Miss(f"{share:.1%} of the requests met every bound at once, below p{slo.percentile:g}")


def _at_own_slo(point: Point, own: Slo, slo: Slo) -> Acceptance:
    if own.within(slo) and point.output_tokens_per_s:
        # its load (`Point.load`, beside the basis wherever it is shown) states those bounds
        basis = "the whole throughput at its own SLO, as tight as yours or tighter"
        return Acceptance(point.output_tokens_per_s, basis)
    if point.output_tokens_per_s is None:
        return Acceptance(None, "", False, Miss("throughput not stated"))
    # A tighter SLO than its own: the percentiles it measured at that load may still prove it.
    stated = _by_percentiles(point, slo, point.output_tokens_per_s)
    if stated.miss is None or stated.miss.ratio is not None:
        return stated
    if own.percentile < slo.percentile:
        return Acceptance(
            None, "", False, Miss(f"its SLO is at p{own.percentile:g}, below p{slo.percentile:g}")
        )
    misses = []
    for metric, bound in slo.bounds().items():
        mine = own.bounds().get(metric)
        if mine is None:
            misses.append(Miss(f"{METRIC_NAMES[metric]} not bounded by its SLO"))
        elif mine > bound:
            name = METRIC_NAMES[metric]
            misses.append(Miss(f"its SLO's {name} bound is looser", metric, mine, bound))
    return Acceptance(None, "", False, _worst(misses))


def accept(point: Point, slo: Slo) -> Acceptance:
    """`point`'s accepted output tokens/s for the reader's `slo` (see the module docstring)."""
    throughput = (
        static_batch_tokens_per_s(point)
        if point.scenario == "static_batch"
        else point.output_tokens_per_s
    )
    if slo.is_batch:
        if throughput is None:
            return Acceptance(None, "", False, Miss("throughput not stated"))
        derived = point.scenario == "static_batch" and not point.output_tokens_per_s
        return Acceptance(throughput, "no latency bound: its whole throughput", derived)
    if point.scenario == OFFLINE:
        return Acceptance(
            None, "", False, Miss("offline maximum throughput: answers the batch question only")
        )
    if point.records is not None:
        return _by_records(point.records, slo, point.output_tokens_per_s)
    if point.own_slo is not None:
        return _at_own_slo(point, point.own_slo, slo)
    records = point.records_slo
    share = point.records_accepted_share
    if (
        records is not None
        and point.records_accepted_tokens_per_s is not None
        and records.bounds_within(slo)  # the reader's bounds are as loose or looser
        and share is not None
        and share * 100.0 >= slo.percentile
    ):
        met = ", ".join(f"{METRIC_NAMES[m]} ≤ {v:,.0f} ms" for m, v in records.bounds().items())
        basis = f"tokens of the requests that met {met} (per-request records)"
        return Acceptance(point.records_accepted_tokens_per_s, basis)
    return _by_percentiles(point, slo, throughput)


def own_slo(point: Point) -> Slo | None:
    """The SLO a point's own evidence is for: a server's bounds, the per-request records' SLO,
    or what a static batch's stated time proves (every request's E2E at most that time);
    None where the point proves no latency (offline, or no latency stated)."""
    if point.own_slo is not None:
        return point.own_slo
    if point.records_slo is not None and point.records_accepted_tokens_per_s is not None:
        return point.records_slo
    batch_ms = point.latency.get("e2e_ms", {}).get("mean")
    if point.scenario == "static_batch" and batch_ms and point.static_output_tokens:
        return Slo(100.0, e2e_ms=batch_ms)
    return None


def accepted_at_own_slo(point: Point) -> Acceptance | None:
    """A point's accepted output tokens/s at its own SLO (`own_slo`); None where it has none."""
    slo = own_slo(point)
    if slo is None:
        return None
    if point.records_slo is slo:  # the records' share decides, not a reader's percentile
        return Acceptance(point.records_accepted_tokens_per_s, "per-request records")
    acceptance = accept(point, slo)
    return acceptance if acceptance.accepted_tokens_per_s is not None else None
