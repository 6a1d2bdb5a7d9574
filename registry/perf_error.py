"""Fitting the performance predictor's factors and measuring its error on results it was not
fitted on, by the protocol of benchmarks/PERF_PROTOCOL.md (`error_report`), and the generated
calculators/perf_fit.py that carries the result to the CLI, the site and the browser.

The fit (`fit`): passes of a coordinate search, each base factor (`memory`, `compute`,
`tensor_parallel`, `step_overhead_ms`) by golden section over its interval on the offline rows'
mean absolute log error, then the factors per GPU generation, precision and engine family by
least squares on log(measured / predicted), each shrunk toward 1 as if `SHRINK_ROWS` more rows
had a ratio of 1, until no factor moves by more than `FIT_TOLERANCE`.
"""

import json
import math
import pprint
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from infermeter.calculators.errors import CalculatorError
from infermeter.calculators.predict import Factors, Prepared, predict_prepared, prepare
from infermeter.registry.perf_cases import PerfCase, perf_cases

SHRINK_ROWS = 4
TARGETS_PCT = {"offline": 20.0, "server": 30.0, "latency": 25.0}
KINDS = ("offline", "server", "latency")
FIT_KINDS = ("offline", "server")
GROUPS = ("generation", "precision", "engine")


@dataclass(frozen=True)
class Ready:
    """A case with its efficiency-free prediction worked out."""

    case: PerfCase
    prepared: Prepared

    def group(self, name: str) -> str:
        return str(getattr(self.prepared, name))


def predicted(ready: Ready, factors: Factors) -> float | None:
    """The predictor's figure for the case's measured one (None: it predicts none)."""
    case = ready.case
    if case.kind == "server":
        at_slo = predict_prepared(ready.prepared, case.load, factors, case.slo)
        return at_slo.output_tokens_per_s_at_slo or None
    prediction = predict_prepared(ready.prepared, case.load, factors)
    if case.measured_name == "e2e_ms":
        return prediction.e2e_ms_p50
    return prediction.output_tokens_per_s


def log_ratio(ready: Ready, factors: Factors) -> float | None:
    """log(measured / predicted) of a throughput (predicted / measured of a time): positive when
    the prediction is too slow."""
    value = predicted(ready, factors)
    if not value:
        return None
    ratio = ready.case.measured / value
    return -math.log(ratio) if ready.case.measured_name == "e2e_ms" else math.log(ratio)


def fit_loss(rows: Sequence[Ready], factors: Factors) -> float:
    """What the fit minimises: the rows' mean absolute log(measured / predicted)."""
    ratios = [log_ratio(ready, factors) for ready in rows]
    # A case with no prediction (its SLO missed even by one request) counts as a ratio of e.
    return sum(1.0 if value is None else abs(value) for value in ratios) / max(1, len(ratios))


def _group_round(rows: Sequence[Ready], factors: Factors, group: str) -> Factors:
    sums: dict[str, float] = defaultdict(float)
    counts: Counter[str] = Counter()
    for ready in rows:
        value = log_ratio(ready, factors)
        if value is not None:
            sums[ready.group(group)] += value
            counts[ready.group(group)] += 1
    current: dict[str, float] = dict(getattr(factors, group))
    for name, total in sums.items():
        current[name] = current.get(name, 1.0) * math.exp(total / (counts[name] + SHRINK_ROWS))
    if group == "generation":
        return replace(factors, generation=current)
    if group == "precision":
        return replace(factors, precision=current)
    return replace(factors, engine=current)


def fit(rows: Sequence[Ready]) -> Factors:
    """The factors fitted on `rows` (their throughput kinds only), with each one's row count:
    passes of a coordinate search (each base factor by golden section on the offline rows'
    `fit_loss`, then each group's factors by least squares on every fitting row) until no
    factor moves by more than `FIT_TOLERANCE` (at most `FIT_PASSES`), then the base factors
    once more. The loss is flat along a ridge (a longer step overhead against a higher share of
    bandwidth), so the passes are bounded and the result is the search's, not a unique one."""
    fitting = [ready for ready in rows if ready.case.kind in FIT_KINDS]
    if not fitting:
        return _start()
    # The base factors on the offline rows (fast); the groups on every fitting row.
    offline = [ready for ready in fitting if ready.case.kind == "offline"] or fitting
    factors = _start()
    for _ in range(FIT_PASSES):
        previous = factors
        factors = _base_search(offline, factors)
        for group in GROUPS:
            factors = _group_round(fitting, factors, group)
        if _moved(previous, factors) <= FIT_TOLERANCE:
            break
    # The base factors once more: the fit ends at their minimum given the groups' factors.
    factors = _base_search(offline, factors)
    counts: Counter[str] = Counter(
        {
            "memory": len(fitting),
            "compute": len(fitting),
            "tensor_parallel": sum(r.prepared.tensor_parallel_size > 1 for r in fitting),
            "step_overhead_ms": len(fitting),
        }
    )
    for ready in fitting:
        counts.update(f"{group}:{ready.group(group)}" for group in GROUPS)
    return replace(factors, rows=dict(sorted(counts.items())))


# Each base factor's search interval (efficiencies searched on a log scale, the overhead on a
# linear one), where the search starts, and when it stops.
BASE_BOUNDS: dict[str, tuple[float, float]] = {
    "memory": (0.2, 1.0),
    "compute": (0.1, 1.0),
    "tensor_parallel": (0.6, 1.0),
    "step_overhead_ms": (0.0, 12.0),
}
BASE_START: dict[str, float] = {
    "memory": 0.6,
    "compute": 0.5,
    "tensor_parallel": 0.9,
    "step_overhead_ms": 1.0,
}
LINEAR_BASE = ("step_overhead_ms",)
GOLDEN_STEPS = 10  # the interval shrinks to 0.618^10 (under 1 %) of its width
FIT_PASSES = 3
FIT_TOLERANCE = 0.005  # the largest relative move of any factor in a pass that ends the search
_INVERSE_PHI = (math.sqrt(5) - 1) / 2


def _one(name: str, value: float) -> dict[str, Any]:
    return {name: value}


def _start() -> Factors:
    return Factors(
        memory=BASE_START["memory"],
        compute=BASE_START["compute"],
        tensor_parallel=BASE_START["tensor_parallel"],
        step_overhead_ms=BASE_START["step_overhead_ms"],
    )


def _base_search(rows: Sequence[Ready], factors: Factors) -> Factors:
    for name in BASE_BOUNDS:
        factors = _golden(rows, factors, name)
    return factors


def _golden(rows: Sequence[Ready], factors: Factors, name: str) -> Factors:
    """`factors` with `name` set to the minimum of the rows' loss over its interval (golden
    section search, the others held), the current value kept where it is no worse."""
    low, high = BASE_BOUNDS[name]
    linear = name in LINEAR_BASE
    to_value = (lambda x: x) if linear else math.exp
    a, b = (low, high) if linear else (math.log(low), math.log(high))

    def loss(x: float) -> float:
        return fit_loss(rows, replace(factors, **_one(name, to_value(x))))

    c, d = b - _INVERSE_PHI * (b - a), a + _INVERSE_PHI * (b - a)
    loss_c, loss_d = loss(c), loss(d)
    for _ in range(GOLDEN_STEPS):
        if loss_c <= loss_d:
            b, d, loss_d = d, c, loss_c
            c = b - _INVERSE_PHI * (b - a)
            loss_c = loss(c)
        else:
            a, c, loss_c = c, d, loss_d
            d = a + _INVERSE_PHI * (b - a)
            loss_d = loss(d)
    best, best_loss = (c, loss_c) if loss_c <= loss_d else (d, loss_d)
    if best_loss > fit_loss(rows, factors):
        return factors
    return replace(factors, **_one(name, to_value(best)))


def _moved(before: Factors, after: Factors) -> float:
    """The largest relative change of any factor between two passes."""
    pairs: list[tuple[float, float]] = [
        (float(getattr(before, name)), float(getattr(after, name))) for name in BASE_BOUNDS
    ]
    for group in GROUPS:
        old, new = getattr(before, group), getattr(after, group)
        pairs += [(old.get(key, 1.0), value) for key, value in new.items()]
    return max(abs(new - old) / max(abs(old), 1e-3) for old, new in pairs)


@dataclass(frozen=True)
class Scored:
    """One held-out case's prediction and its absolute error (None: nothing predicted)."""

    case: PerfCase
    predicted: float | None

    @property
    def error_pct(self) -> float:
        if not self.predicted:
            return 100.0
        return abs(self.predicted - self.case.measured) / self.case.measured * 100


@dataclass
class SplitResult:
    """A split's fitted factors (one set per fold) and its held-out predictions."""

    name: str
    scored: list[Scored] = field(default_factory=list)
    factors: list[Factors] = field(default_factory=list)


def _score(rows: Iterable[Ready], factors: Factors) -> list[Scored]:
    return [Scored(ready.case, predicted(ready, factors)) for ready in rows]


def _leave_one_out(name: str, rows: Sequence[Ready], key: Callable[[PerfCase], str]) -> SplitResult:
    split = SplitResult(name)
    for value in sorted({key(ready.case) for ready in rows}):
        train = [ready for ready in rows if key(ready.case) != value]
        factors = fit(train)
        split.factors.append(factors)
        split.scored += _score((ready for ready in rows if key(ready.case) == value), factors)
    return split


def ready_cases(root: Path) -> tuple[list[Ready], Counter[str]]:
    """The registry's cases, prepared; the ones the memory plan refuses counted as left out."""
    cases, skipped = perf_cases(root)
    rows = []
    for case in cases:
        try:
            rows.append(Ready(case, prepare(case.deployment, case.workload)))
        except CalculatorError:
            skipped["the memory plan does not fit"] += 1
    return rows, skipped


@dataclass
class ErrorReport:
    """Every split's result, the time split's factors (the published ones) and what was left out."""

    splits: list[SplitResult]
    factors: Factors
    skipped: Counter[str]


def error_report(root: Path) -> ErrorReport:
    """Fit and test every split of the protocol on the registry checkout at `root`."""
    rows, skipped = ready_cases(root)
    factors = fit([ready for ready in rows if ready.case.fitting])
    time_split = SplitResult(
        "time", _score((ready for ready in rows if not ready.case.fitting), factors), [factors]
    )
    splits = [
        time_split,
        _leave_one_out("leave-one-GPU-out", rows, lambda case: case.gpu),
        _leave_one_out("leave-one-model-family-out", rows, lambda case: case.family),
    ]
    return ErrorReport(splits, factors, skipped)


@dataclass(frozen=True)
class Summary:
    """Median absolute percentage error and the share within 25 % of a set of cases."""

    rows: int
    median_pct: float | None
    within_25_pct: float | None

    @classmethod
    def of(cls, scored: Sequence[Scored]) -> "Summary":
        if not scored:
            return cls(0, None, None)
        errors = [item.error_pct for item in scored]
        within = sum(1 for error in errors if error <= 25) / len(errors) * 100
        return cls(len(errors), round(statistics.median(errors), 1), round(within, 1))

    def as_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "median_pct": self.median_pct,
            "within_25_pct": self.within_25_pct,
        }


def by_kind(split: SplitResult) -> dict[str, Summary]:
    return {kind: Summary.of([s for s in split.scored if s.case.kind == kind]) for kind in KINDS}


def breakdown(split: SplitResult, kind: str, attribute: str) -> dict[str, Summary]:
    """A split's error for one kind, per value of a case attribute (gpu, scenario, precision)."""
    groups: dict[str, list[Scored]] = defaultdict(list)
    for item in split.scored:
        if item.case.kind == kind:
            groups[str(getattr(item.case, attribute))].append(item)
    return {name: Summary.of(items) for name, items in sorted(groups.items())}


def held_out(report: ErrorReport) -> dict[str, dict[str, Any]]:
    """Per kind, the held-out error the site states: the time split's where it has rows, else
    the leave-one-out splits' pooled; the GPUs its rows were measured on (`gpus`: a prediction
    for another GPU carries no measured error); its target; each held-out split's median
    (`splits`) and whether the target holds on every one of them (the protocol: a miss on any
    held-out split shows the bound)."""
    figures: dict[str, dict[str, Any]] = {}
    time_split, *others = report.splits
    for kind in KINDS:
        rows = [s for s in time_split.scored if s.case.kind == kind]
        basis = "time split (later releases)"
        if not rows:
            rows = [s for split in others for s in split.scored if s.case.kind == kind]
            basis = "leave-one-GPU-out and leave-one-model-family-out"
        summary = Summary.of(rows)
        target = TARGETS_PCT[kind]
        medians = {
            split.name: by_kind(split)[kind].median_pct
            for split in report.splits
            if by_kind(split)[kind].rows
        }
        met = bool(medians) and all(m is not None and m <= target for m in medians.values())
        figures[kind] = {
            **summary.as_dict(),
            "basis": basis,
            "gpus": sorted({s.case.gpu for s in rows}),
            "target_pct": target,
            "met": met,
            "splits": medians,
        }
    return figures


def format_report(report: ErrorReport, detailed: bool = False) -> str:
    """The printed tables: per split and kind, then (detailed) per GPU, scenario, precision."""
    lines = ["split | kind | rows | median abs error % | within 25 %"]
    for split in report.splits:
        for kind, summary in by_kind(split).items():
            lines.append(
                f"{split.name} | {kind} | {summary.rows} | {summary.median_pct} | "
                f"{summary.within_25_pct}"
            )
    if detailed:
        for split in report.splits:
            for kind in KINDS:
                for attribute in ("gpu", "scenario", "precision"):
                    for name, summary in breakdown(split, kind, attribute).items():
                        lines.append(
                            f"{split.name} | {kind} | {attribute}={name} | {summary.rows} | "
                            f"{summary.median_pct} | {summary.within_25_pct}"
                        )
    lines.append("left out: " + ", ".join(f"{n} {r}" for r, n in sorted(report.skipped.items())))
    return "\n".join(lines)


def _literal(value: Any, indent: int) -> str:
    text = pprint.pformat(value, width=96 - indent, sort_dicts=True)
    return text.replace("\n", "\n" + " " * indent)


def _factors_source(factors: Factors) -> str:
    def rounded(values: Mapping[str, float]) -> dict[str, float]:
        return {name: round(value, 4) for name, value in values.items()}

    return (
        "Factors(\n"
        f"    memory={round(factors.memory, 4)},\n"
        f"    compute={round(factors.compute, 4)},\n"
        f"    tensor_parallel={round(factors.tensor_parallel, 4)},\n"
        f"    step_overhead_ms={round(factors.step_overhead_ms, 4)},\n"
        f"    generation={_literal(rounded(factors.generation), 4)},\n"
        f"    precision={_literal(rounded(factors.precision), 4)},\n"
        f"    engine={_literal(rounded(factors.engine), 4)},\n"
        f"    rows={_literal(dict(factors.rows), 4)},\n"
        ")"
    )


def split_tables(report: ErrorReport) -> dict[str, dict[str, dict[str, Any]]]:
    """Per split and kind, the summary the site's error page shows."""
    return {
        split.name: {kind: summary.as_dict() for kind, summary in by_kind(split).items()}
        for split in report.splits
    }


def fit_file_text(report: ErrorReport) -> str:
    """calculators/perf_fit.py: the time split's factors and every split's held-out error."""
    return (
        '"""Generated by benchmarks/perf_error.py --write (the protocol: benchmarks/\n'
        "PERF_PROTOCOL.md); do not edit. The predictor's factors fitted on the time split's\n"
        "fitting rows, and its error on the rows it was not fitted on\n"
        '(tests/test_perf_fit.py holds both to the script)."""\n\n'
        "from typing import Any\n\nfrom infermeter.calculators.predict import Factors\n\n"
        f"FITTED = {_factors_source(report.factors)}\n\n"
        f"HELD_OUT: dict[str, dict[str, Any]] = (\n    {_literal(held_out(report), 4)}\n)\n\n"
        "SPLITS: dict[str, dict[str, dict[str, Any]]] = (\n"
        f"    {_literal(split_tables(report), 4)}\n)\n"
    )


HELD_OUT_FILE = "registry/perf_held_out.json"
"""Every held-out prediction of every split, written by benchmarks/perf_error.py --write."""


def held_out_rows(report: ErrorReport) -> list[dict[str, Any]]:
    """One row per held-out prediction: its split, the case, measured, predicted, error."""
    rows = []
    for split in report.splits:
        for item in split.scored:
            case = item.case
            rows.append(
                {
                    "split": split.name,
                    "case": case.case_id,
                    "result_id": case.case_id.split("#")[0],
                    "kind": case.kind,
                    "gpu": case.gpu,
                    "model": case.model,
                    "scenario": case.scenario,
                    "precision": case.precision,
                    "source": case.source,
                    "measured_name": case.measured_name,
                    "measured": round(case.measured, 4),
                    "predicted": None if item.predicted is None else round(item.predicted, 4),
                    "error_pct": round(item.error_pct, 2),
                }
            )
    return sorted(rows, key=lambda row: (row["split"], row["kind"], row["case"]))


def held_out_file_text(report: ErrorReport) -> str:
    """The held-out rows as deterministic JSON (one row per line)."""
    lines = [json.dumps(row, sort_keys=True) for row in held_out_rows(report)]
    return '{"rows": [\n' + ",\n".join(lines) + "\n]}\n"
