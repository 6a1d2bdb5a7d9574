"""The MLCommons endpoints harness's `result_summary.json`: one MLPerf run measured without
LoadGen's `mlperf_log_summary.txt`.

From v6.1 a submitter may measure a run with the endpoints harness (LoadGen++ talking to the
system's HTTP endpoints). Its run folder holds `performance/result_summary.json` instead of
`performance/run_1/mlperf_log_summary.txt` (NVIDIA's Vera Rubin NVL72 preview rows), with:

- `n_samples_issued`, `n_samples_completed`, `n_samples_failed`, `state`, `complete`;
- `ttft`, `tpot`, `latency`: each `min`, `max`, `avg`, `median` and `percentiles` (`"99.0"` …)
  and `early_stopping_percentiles`, in ns (an Offline run states no TTFT or TPOT: `{}`);
- `qps` and `tps`: completed samples and output tokens per second, the table's `Result`;
- `run_config.load_pattern`: `max_throughput` (Offline) or `poisson` at `target_qps`.

The file states no latency bounds. A Server or Interactive point is filed at an SLO only with
the bounds LoadGen printed (`ttft_latency`, `tpot_latency`) in every other log of the same
benchmark and scenario of the round, where those agree (`round_bounds`), and only when the
run's early-stopping p99 TTFT and TPOT, which MLPerf judges a run by, are within them.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from infermeter.registry.harvest.errors import RowSkipped
from infermeter.registry.harvest.mlperf_location import location
from infermeter.registry.harvest.mlperf_log import (
    NS_PER_MS,
    SAMPLE_UNITS,
    log_number,
    parse_log_summary,
    table_agrees,
)
from infermeter.registry.harvest.mlperf_names import benchmark_family
from infermeter.registry.harvest.reported import table_point
from infermeter.registry.harvest.source_json import json_object
from infermeter.registry.models import LatencyStats, Load, LoadPoint, RateSearch, Throughput

RESULT_SUMMARY = "result_summary.json"

_STATISTICS = {"mean": "avg", "p50": "50.0", "p90": "90.0", "p95": "95.0", "p99": "99.0"}
"""LatencyStats field → the file's key (`avg`) or percentile name."""


@dataclass(frozen=True)
class EndpointsRun:
    """What a `result_summary.json` states of one run."""

    summary: dict[str, Any]
    where: str

    def number(self, *path: str) -> float | None:
        """The number at `path` (None: absent, null or not a number)."""
        value: Any = self.summary
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return float(value)

    def latency_ms(self, metric: str) -> LatencyStats | None:
        """The file's statistics of one latency (`ttft`, `tpot`, `latency`) in ms, n the
        completed samples; None where it states none (an Offline run's TTFT and TPOT)."""
        stats = {
            name: value / NS_PER_MS
            for name, key in _STATISTICS.items()
            if (value := self.number(metric, key) or self.number(metric, "percentiles", key))
            is not None
        }
        largest = self.number(metric, "max")
        if not stats or largest is None:
            return None
        completed = self.number("n_samples_completed")
        return LatencyStats(
            n=int(completed) if completed else None, max=largest / NS_PER_MS, **stats
        )


def summary_path(row: dict[str, Any]) -> str:
    """The run's `result_summary.json`: beside the `run_1` folder the row's `Location` names."""
    folder = location(row)
    performance = re.sub(r"/run_\d+$", "", folder)
    return f"{performance}/{RESULT_SUMMARY}"


def read_run(text: str, where: str) -> EndpointsRun:
    """A `result_summary.json` as a run; RowSkipped when it is not a whole, failure-free run."""
    summary = json_object(text, where, RowSkipped)
    run = EndpointsRun(summary, where)
    issued, completed = run.number("n_samples_issued"), run.number("n_samples_completed")
    if summary.get("complete") is not True or summary.get("state") != "complete":
        raise RowSkipped(f"{where}: the run is not complete (state {summary.get('state')!r})")
    if run.number("n_samples_failed") != 0 or not issued or completed != issued:
        raise RowSkipped(
            f"{where}: {completed} of {issued} samples completed, "
            f"{summary.get('n_samples_failed')} failed"
        )
    return run


def round_bounds(
    rows: Sequence[dict[str, Any]], logs: Sequence[str | None]
) -> dict[tuple[str, str], RateSearch]:
    """The p99 TTFT and TPOT bounds LoadGen printed for each benchmark family and scenario
    (Server, Interactive) of a round, where every log of it that states them agrees."""
    seen: dict[tuple[str, str], set[tuple[float, float]]] = {}
    for row, text in zip(rows, logs, strict=True):
        if text is None or row.get("Scenario") == "Offline":
            continue
        log = parse_log_summary(text)
        ttft_ns, tpot_ns = (
            log_number(log, "ttft_latency (ns)"),
            log_number(log, "tpot_latency (ns)"),
        )
        if ttft_ns and tpot_ns:
            key = (benchmark_family(str(row["Model"])), str(row["Scenario"]))
            seen.setdefault(key, set()).add((ttft_ns, tpot_ns))
    return {
        key: RateSearch(percentile=99.0, ttft_ms=ttft_ns / NS_PER_MS, tpot_ms=tpot_ns / NS_PER_MS)
        for key, pairs in seen.items()
        if len(pairs) == 1
        for ttft_ns, tpot_ns in pairs
    }


def _throughput(row: dict[str, Any], run: EndpointsRun) -> Throughput:
    """The file's output tokens/s (`tps`) and samples/s (`qps`), the one the table states
    (Tokens/s; Samples/s or Queries/s for a benchmark measured in samples) checked against it."""
    tokens_per_s, samples_per_s = run.number("tps"), run.number("qps")
    units = row.get("Performance_Units")
    key, figure = ("tps", tokens_per_s) if units == "Tokens/s" else ("qps", samples_per_s)
    stated = row.get("Performance_Result")
    if units not in ("Tokens/s", *SAMPLE_UNITS) or figure is None:
        raise RowSkipped(f"{run.where}: no figure in the table's unit {units}")
    if not table_agrees(stated, figure):
        raise RowSkipped(
            f"{run.where}: the table's {stated} {units} disagrees with the file's {key} {figure}"
        )
    return Throughput(output_tokens_per_s=tokens_per_s, requests_per_s=samples_per_s)


def _within(run: EndpointsRun, bounds: RateSearch) -> None:
    """RowSkipped unless the run's early-stopping p99 TTFT and TPOT meet the bounds."""
    for metric, bound_ms in (("ttft", bounds.ttft_ms), ("tpot", bounds.tpot_ms)):
        p99_ns = run.number(metric, "early_stopping_percentiles", "99.0")
        if p99_ns is None or bound_ms is None or p99_ns / NS_PER_MS > bound_ms:
            raise RowSkipped(
                f"{run.where}: early-stopping p99 {metric.upper()} {p99_ns} ns is not within "
                f"the round's bound of {bound_ms} ms"
            )


def endpoints_point(
    row: dict[str, Any], run: EndpointsRun, bounds: dict[tuple[str, str], RateSearch]
) -> LoadPoint:
    """The row's one load point from its endpoints run (`bounds`: `round_bounds`)."""
    pattern = run.summary.get("run_config", {}).get("load_pattern", {})
    scenario = str(row["Scenario"])
    expected = "max_throughput" if scenario == "Offline" else "poisson"
    if pattern.get("type") != expected:
        raise RowSkipped(f"{run.where}: load pattern {pattern.get('type')!r}, not {expected}")
    throughput = _throughput(row, run)
    e2e_ms = run.latency_ms("latency")
    if scenario == "Offline":
        issued = int(run.number("n_samples_issued") or 0)
        return table_point(Load(arrival="offline"), issued, throughput, e2e_ms=e2e_ms)
    bound = bounds.get((benchmark_family(str(row["Model"])), scenario))
    target_qps = run.number("run_config", "load_pattern", "target_qps")
    if bound is None or not target_qps:
        raise RowSkipped(
            f"{run.where}: no target_qps, or no TTFT/TPOT bounds that the round's LoadGen logs "
            f"of {row['Model']} {scenario} state alike"
        )
    _within(run, bound)
    return table_point(
        Load(arrival="poisson", request_rate=target_qps, rate_search=bound),
        None,
        throughput,
        e2e_ms=e2e_ms,
        ttft_ms=run.latency_ms("ttft"),
        tpot_ms=run.latency_ms("tpot"),
    )


def endpoints_rules(row: dict[str, Any], run: EndpointsRun) -> str:
    """The scenario's load and validity rules as the endpoints harness ran them, for the
    result's conditions."""
    issued = int(run.number("n_samples_issued") or 0)
    harness = (
        f"Measured with MLCommons' endpoints harness (LoadGen++ sending requests to the "
        f"system's HTTP endpoints): the run has no mlperf_log_summary.txt, and its figures are "
        f"those of {run.where}: {issued} samples issued, all completed, none failed."
    )
    if row.get("Performance_Units") in SAMPLE_UNITS:
        harness += (
            f" The benchmark is measured in samples: the results table lists "
            f"{row.get('Performance_Result')} {row.get('Performance_Units')}, the file's qps; "
            "its tps, the output tokens per second the harness reports, is stored beside it."
        )
    if row["Scenario"] == "Offline":
        return f"{harness} Offline: every sample issued at once (load pattern max_throughput)."
    return (
        f"{harness} {row['Scenario']}: Poisson arrivals at the submitter's target_qps "
        f"{run.number('run_config', 'load_pattern', 'target_qps')}. The file states no latency "
        "bounds: those stored are the ones LoadGen printed in every log of this benchmark and "
        "scenario read from the round, and the run's early-stopping p99 TTFT and TPOT are "
        "within them. Latency statistics are the harness's over all samples of the run; its "
        "TPOT is MLPerf's time per output token."
    )
