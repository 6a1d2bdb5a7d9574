"""The highest load that meets an SLO: a bracket, then a bisection (MLPerf's Server scenario).

MLPerf's Server scenario asks for the highest Poisson arrival rate at which the p99 of TTFT and
of TPOT stay within stated bounds; infermeter finds it the way its submitters do, by measuring
probes. `MaxLoadSearch` decides which load to probe next from the outcomes so far; the runner
(`bench.run.runner`) measures each probe as an ordinary load point and feeds its summary back, so
every probe is a point of the result.

1. **Bracket.** Probe `start`; while probes meet the SLO, multiply the load by `growth` (2) until
   one misses; while they miss, divide it until one meets (down to `minimum`).
2. **Bisect** between the highest load that met and the lowest that missed, until
   hi / lo − 1 ≤ `precision` (5 %), or for concurrency until they are neighbours.
3. The answer is the highest load that met, with the probe that measured it.

A probe **meets** the SLO when its p99 TTFT, p99 TPOT and p99 E2E (each where bounded) are
within their bounds and at most 1 % of its requests failed (a failed request has no latency:
it counts as one beyond every bound). It **misses** otherwise, and also when the server was past
its knee: an open loop's completions fell behind the offered rate (`rate_not_reached`), or a
closed loop's higher concurrency brought less than `SATURATION_GAIN` (5 %) more throughput
than the last concurrency that met.
A probe the validity verdicts say cannot be trusted (the client, not the server, was the
limit: `client_send_lag`, `client_saturated`) decides nothing: it is measured once more, and
when the second probe cannot be trusted either, the search stops there and keeps its answer
so far. Probes need enough requests for a p99 (`PERCENTILE_MIN_REQUESTS`), so
a short one (`too_few_requests`, when not explained by failures) is not trusted either.

`past_knee` is the same saturation rule for a fixed sweep (`--stop-when-saturated`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from infermeter.bench.errors import BenchConfigError
from infermeter.bench.run.metrics import PERCENTILE_MIN_REQUESTS
from infermeter.bench.run.point_summary import PointSummary
from infermeter.calculators.plural import counted
from infermeter.registry.models import Slo

SearchKind = Literal["rate", "concurrency"]
Outcome = Literal["met", "missed", "untrusted"]

# Verdicts that say the client, not the server, limited the probe.
UNTRUSTED_VERDICTS = ("client_send_lag", "client_saturated")
# A load step that brought less than this relative throughput gain is past the knee.
SATURATION_GAIN = 0.05
SLO_PERCENTILE = 99


@dataclass(frozen=True)
class SearchSpec:
    """What to search: the highest `kind` (open-loop rate or closed-loop concurrency) whose
    p99 latencies meet `slo`; see the module docstring for the other fields."""

    kind: SearchKind
    slo: Slo
    start: float
    precision: float = 0.05
    max_probes: int = 16
    growth: float = 2.0
    minimum: float | None = None

    def __post_init__(self) -> None:
        option = "--find-max-rate" if self.kind == "rate" else "--find-max-concurrency"
        if self.slo.ttft_ms is None and self.slo.tpot_ms is None and self.slo.e2e_ms is None:
            raise BenchConfigError(
                "needs an SLO to meet: --slo-ttft-ms, --slo-tpot-ms and/or --slo-e2e-ms", option
            )
        if not self.start > 0 or (self.kind == "concurrency" and self.start != int(self.start)):
            raise BenchConfigError(f"cannot start at {self.start:g}", option)
        if not 0 < self.precision < 1:
            raise BenchConfigError("must lie between 0 and 1 (e.g. 0.05)", "--search-precision")
        if self.max_probes < 2:
            raise BenchConfigError("must be at least 2", "--max-probes")
        if not self.growth > 1:
            raise BenchConfigError("the bracket's growth factor must exceed 1", option)

    @property
    def lowest(self) -> float:
        """The smallest load the bracket may go down to."""
        if self.minimum is not None:
            return self.minimum
        return 1.0 if self.kind == "concurrency" else self.start / 1024


@dataclass(frozen=True)
class Probe:
    """One measured load of the search and what it showed."""

    load: float
    outcome: Outcome
    reason: str
    summary: PointSummary | None


@dataclass
class SearchResult:
    """Where the search ended: every probe, the answer (None when no load met the SLO)."""

    spec: SearchSpec
    probes: list[Probe] = field(default_factory=list)
    best: Probe | None = None
    lowest_missed: float | None = None
    stop_reason: str = ""

    @property
    def precision_reached(self) -> float | None:
        """hi / lo − 1 of the final bracket; None without both ends."""
        if self.best is None or self.lowest_missed is None:
            return None
        return self.lowest_missed / self.best.load - 1


def _throughput(summary: PointSummary) -> float:
    return summary.output_token_throughput or summary.request_throughput


def past_knee(previous: PointSummary, current: PointSummary, load_ratio: float) -> str | None:
    """Why `current` (at `load_ratio` × the load of `previous`) is past the knee, or None."""
    codes = [verdict.code for verdict in current.verdicts]
    if "rate_not_reached" in codes:
        return "past the knee: completions fell behind the offered rate"
    if current.concurrency is None:
        # An open loop's window throughput includes the tail of its last requests, so it
        # does not scale with a short probe's rate; its completions tell the knee instead.
        return None
    before, now = _throughput(previous), _throughput(current)
    if load_ratio > 1 + SATURATION_GAIN and before > 0 and now < before * (1 + SATURATION_GAIN):
        return (
            f"past the knee: {load_ratio:.2g}× the load brought {now / before - 1:+.1%} throughput"
        )
    return None


def judge(summary: PointSummary | None, slo: Slo) -> tuple[Outcome, str]:
    """Whether a probe met the SLO at p99 (see the module docstring), and why."""
    if summary is None:
        return "missed", "the server stopped answering"
    codes = {verdict.code: verdict.message for verdict in summary.verdicts}
    for code in UNTRUSTED_VERDICTS:
        if code in codes:
            return "untrusted", f"{code}: {codes[code]}"
    total = summary.completed + summary.failed
    allowed = (100 - SLO_PERCENTILE) / 100
    if total == 0:
        return "missed", "no request was measured"
    if summary.failed > allowed * total:
        return "missed", f"{summary.failed} of {total} requests failed"
    if summary.completed < PERCENTILE_MIN_REQUESTS["p99"]:
        return "untrusted", f"{counted(summary.completed, 'completed request')}: too few for a p99"
    for name, bound, measured in (
        ("TTFT", slo.ttft_ms, summary.ttft_ms.p99),
        ("TPOT", slo.tpot_ms, summary.tpot_ms.p99),
        ("E2E", slo.e2e_ms, summary.e2e_ms.p99),
    ):
        if bound is not None and measured is not None and measured > bound:
            return "missed", f"p99 {name} {measured:.1f} ms > {bound:g} ms"
    if "rate_not_reached" in codes:
        return "missed", f"rate_not_reached: {codes['rate_not_reached']}"
    return "met", "every bounded p99 within its bound"


class MaxLoadSearch:
    """The search's state: ask `next_load()`, measure it, tell `record(load, summary)`."""

    def __init__(self, spec: SearchSpec) -> None:
        self.spec = spec
        self.result = SearchResult(spec)
        self._next: float | None = self._round(spec.start)
        self._last_met: Probe | None = None

    def _round(self, load: float) -> float:
        if self.spec.kind == "concurrency":
            return float(max(1, round(load)))
        return float(f"{load:.4g}")

    def next_load(self) -> float | None:
        """The load to probe next, or None when the search is over."""
        if self._next is not None and len(self.result.probes) >= self.spec.max_probes:
            self._stop(f"used all {self.spec.max_probes} probes")
        return self._next

    def _stop(self, reason: str) -> None:
        self._next = None
        if not self.result.stop_reason:
            self.result.stop_reason = reason

    def record(self, load: float, summary: PointSummary | None) -> Probe:
        """Take the measured probe at `load` and choose the next load."""
        spec, result = self.spec, self.result
        outcome, reason = judge(summary, spec.slo)
        if outcome == "met" and summary is not None and self._last_met is not None:
            previous = self._last_met
            assert previous.summary is not None
            knee = past_knee(previous.summary, summary, load / previous.load)
            if knee is not None:
                outcome, reason = "missed", knee
        probe = Probe(load, outcome, reason, summary)
        result.probes.append(probe)
        if outcome == "untrusted":
            retried = len(result.probes) > 1 and result.probes[-2].load == load
            if retried or self._next is None:
                self._stop(f"the probe at {load:g} cannot be trusted ({reason})")
            else:
                self._next = load  # once more: a passing hiccup of the client's machine
            return probe
        if outcome == "met":
            if result.best is None or load > result.best.load:
                result.best = probe
            self._last_met = probe
        elif result.lowest_missed is None or load < result.lowest_missed:
            result.lowest_missed = load
        self._choose_next()
        return probe

    def _choose_next(self) -> None:
        spec, result = self.spec, self.result
        best, missed = result.best, result.lowest_missed
        if best is None:
            assert missed is not None
            lower = self._round(missed / spec.growth)
            if lower < spec.lowest or lower >= missed:
                self._stop(f"no load met the SLO, down to {missed:g}")
            else:
                self._next = lower
            return
        if missed is None:
            self._next = self._round(best.load * spec.growth)
            return
        if spec.kind == "concurrency" and missed - best.load <= 1:
            self._stop("the highest concurrency that met and the lowest that missed are neighbours")
            return
        if missed / best.load - 1 <= spec.precision:
            self._stop(f"bracket within {spec.precision:.0%}")
            return
        middle = self._round((best.load + missed) / 2)
        if not best.load < middle < missed or math.isclose(middle, best.load):
            self._stop("the bracket cannot be split further")
            return
        self._next = middle


def search_json(result: SearchResult) -> dict[str, object]:
    """The search as the `--json` object: every probe, the answer and why it stopped."""
    spec = result.spec
    return {
        "kind": spec.kind,
        "percentile": SLO_PERCENTILE,
        "slo": {
            "ttft_ms": spec.slo.ttft_ms,
            "tpot_ms": spec.slo.tpot_ms,
            "e2e_ms": spec.slo.e2e_ms,
        },
        "precision": spec.precision,
        "max_load": result.best.load if result.best is not None else None,
        "lowest_missed": result.lowest_missed,
        "precision_reached": result.precision_reached,
        "probes_used": len(result.probes),
        "stop_reason": result.stop_reason,
        "probes": [
            {"load": probe.load, "outcome": probe.outcome, "reason": probe.reason}
            for probe in result.probes
        ],
    }


def describe_search(result: SearchResult) -> list[str]:
    """The search in a reader's words: the answer with its SLO, then one line per probe."""
    spec = result.spec
    unit = " req/s" if spec.kind == "rate" else " concurrent requests"
    bounds = ", ".join(
        f"p{SLO_PERCENTILE} {name} ≤ {bound:g} ms"
        for name, bound in (
            ("TTFT", spec.slo.ttft_ms),
            ("TPOT", spec.slo.tpot_ms),
            ("E2E", spec.slo.e2e_ms),
        )
        if bound is not None
    )
    what = "rate" if spec.kind == "rate" else "concurrency"
    if result.best is None:
        head = f"max {what} at the SLO ({bounds}): none met it"
    else:
        head = f"max {what} at the SLO ({bounds}): {result.best.load:g}{unit}"
        if result.lowest_missed is not None and result.precision_reached is not None:
            head += f" (missed at {result.lowest_missed:g}: within {result.precision_reached:.1%})"
    head += f"; {len(result.probes)} probes, stopped: {result.stop_reason}"
    lines = [head]
    for number, probe in enumerate(result.probes, start=1):
        lines.append(f"  probe {number}: {probe.load:g}{unit} {probe.outcome} ({probe.reason})")
    return lines
