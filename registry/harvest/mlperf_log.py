"""LoadGen's `mlperf_log_summary.txt`: its `key : value` lines, and one row's load point.

`load_point` checks the log against the results table (VALID, the scenario, tokens per second
within 0.5 % of `Performance_Result`) and raises `RowSkipped` with the reason otherwise.
Latencies are in ns in the log and in ms in the result.
"""

import re
from typing import Any

from infermeter.registry.harvest.errors import RowSkipped
from infermeter.registry.harvest.reported import table_point
from infermeter.registry.models import (
    LatencyStats,
    Load,
    LoadPoint,
    RateSearch,
    Throughput,
)

NS_PER_MS = 1e6

_LOG_LINE = re.compile(r"^\s*([^:]+?)\s*:\s*(.+?)\s*$")


def parse_log_summary(text: str) -> dict[str, str]:
    """The `key : value` lines of an `mlperf_log_summary.txt` (first occurrence wins)."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        match = _LOG_LINE.match(line)
        if match and match.group(1) not in values:
            values[match.group(1)] = match.group(2)
    return values


def log_number(log: dict[str, str], key: str) -> float | None:
    """The log's value of `key` as a number (None: absent or not a number)."""
    value = log.get(key)
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None


LATENCY_KEYS = {
    # registry field: (LoadGen's mean/max name, its percentile name)
    "e2e_ms": ("latency", "latency"),
    "ttft_ms": ("First Token latency", "first token latency"),
    "tpot_ms": ("Time to Output Token", "time to output token"),
}


def latency_ms(log: dict[str, str], field: str) -> LatencyStats | None:
    """LoadGen's statistics of one latency in ms (its lines are in ns)."""
    extreme, percentile = LATENCY_KEYS[field]
    keys = {
        "mean": f"Mean {extreme} (ns)",
        "max": f"Max {extreme} (ns)",
        "p50": f"50.00 percentile {percentile} (ns)",
        "p90": f"90.00 percentile {percentile} (ns)",
        "p95": f"95.00 percentile {percentile} (ns)",
        "p99": f"99.00 percentile {percentile} (ns)",
    }
    stats = {}
    for name, key in keys.items():
        value = log_number(log, key)
        if value is not None:
            stats[name] = value / NS_PER_MS
    return LatencyStats.model_validate(stats) if stats else None


SAMPLE_UNITS = ("Samples/s", "Queries/s")
"""Units of a benchmark measured in samples, not tokens (v6.0's qwen3-vl-235b-a22b: one
answer per product image and text; its logs count no tokens)."""


TABLE_TOLERANCE = 0.005
"""How far the table's `Performance_Result` may be from the figure a run's file states (the
table rounds it: 24593.77 → 24593.8)."""


def table_agrees(stated: object, figure: float) -> bool:
    """Whether the table's `Performance_Result` (`stated`) is `figure` within
    `TABLE_TOLERANCE`; text, null, NaN or infinity never is (NaN is no farther than any
    tolerance, so it is asked to be within, not refused for being beyond)."""
    if not isinstance(stated, int | float) or isinstance(stated, bool):
        return False
    return abs(stated - figure) <= TABLE_TOLERANCE * figure


def _check_table(row: dict[str, Any], logged: float, what: str, where: str) -> None:
    """RowSkipped unless the table's `Performance_Result` is the log's `logged` figure (`what`
    it is, in the reason) within `TABLE_TOLERANCE`."""
    value = row.get("Performance_Result")
    if not table_agrees(value, logged):
        raise RowSkipped(
            f"{where}: the table's {value} {row.get('Performance_Units')} disagrees with the "
            f"log's {logged} {what}"
        )


def inferred_tokens_per_s(log: dict[str, str]) -> float | None:
    """The tokens per second a log states as inferred (GPT-J: LoadGen multiplies samples/s by
    the fixed `token_latency_scaling_factor` of `mlperf.conf`), None where it states none."""
    for key in ("Tokens per second (inferred)", "Completed tokens per second (inferred)"):
        value = log_number(log, key)
        if value is not None:
            return value
    return None


def _samples_only(
    row: dict[str, Any], log: dict[str, str], samples_per_s: float, where: str
) -> Throughput:
    """The samples/s of a benchmark that counts no tokens, checked against the table: a
    sample-measured one's (v6.0's qwen3-vl) Samples/s, or, where the log infers tokens from
    samples by a fixed factor (GPT-J), the table's Tokens/s against that inferred figure. The
    inferred tokens are not stored."""
    inferred = inferred_tokens_per_s(log)
    if inferred is not None:
        _check_table(row, inferred, "tokens per second (inferred)", where)
    elif row.get("Performance_Units") in SAMPLE_UNITS:
        _check_table(row, samples_per_s, "samples per second", where)
    else:
        raise RowSkipped(f"{where}: the log states no tokens per second")
    return Throughput(requests_per_s=samples_per_s)


def _checked_throughput(row: dict[str, Any], log: dict[str, str], where: str) -> Throughput:
    """The log's output tokens/s (unrounded) and samples/s, checked against the table's
    `Performance_Result` (Tokens/s within 0.5 %)."""
    offline = row["Scenario"] == "Offline"
    tokens_per_s = log_number(
        log, "Tokens per second" if offline else "Completed tokens per second"
    )
    samples_per_s = log_number(
        log, "Samples per second" if offline else "Completed samples per second"
    )
    if tokens_per_s is None:
        if samples_per_s is None:
            raise RowSkipped(f"{where}: the log states no tokens per second")
        return _samples_only(row, log, samples_per_s, where)
    if row.get("Performance_Units") == "Tokens/s":
        _check_table(row, tokens_per_s, "tokens per second", where)
    # The log's figure, unrounded; the results table rounds it.
    return Throughput(output_tokens_per_s=tokens_per_s, requests_per_s=samples_per_s)


def _offline_point(log: dict[str, str], throughput: Throughput) -> LoadPoint:
    samples = log_number(log, "samples_per_query")
    sent = int(samples) if samples is not None and samples.is_integer() else None
    return table_point(Load(arrival="offline"), sent, throughput)


def _bounds(log: dict[str, str], percentile: float | None, where: str) -> RateSearch:
    """The p99 TTFT and TPOT bounds of an LLM benchmark; for one without token latencies,
    the end-to-end `target_latency` at the percentile its `mlperf.conf` sets (`percentile`)."""
    ttft_bound_ns, tpot_bound_ns = (
        log_number(log, "ttft_latency (ns)"),
        log_number(log, "tpot_latency (ns)"),
    )
    if ttft_bound_ns is not None and tpot_bound_ns is not None:
        return RateSearch(
            percentile=99.0, ttft_ms=ttft_bound_ns / NS_PER_MS, tpot_ms=tpot_bound_ns / NS_PER_MS
        )
    e2e_bound_ns = log_number(log, "target_latency (ns)")
    if ttft_bound_ns is None and tpot_bound_ns is None and e2e_bound_ns and percentile:
        return RateSearch(percentile=percentile, e2e_ms=e2e_bound_ns / NS_PER_MS)
    raise RowSkipped(f"{where}: the log lacks target_qps or the TTFT/TPOT bounds")


def _server_point(
    log: dict[str, str], throughput: Throughput, where: str, percentile: float | None
) -> LoadPoint:
    """LoadGen's Poisson arrivals at `target_qps`, the rate that met the p99 bounds."""
    target_qps = log_number(log, "target_qps")
    if not target_qps:
        raise RowSkipped(f"{where}: the log lacks target_qps or the TTFT/TPOT bounds")
    bounds = _bounds(log, percentile, where)
    return table_point(
        Load(arrival="poisson", request_rate=target_qps, rate_search=bounds),
        None,
        throughput,
        e2e_ms=latency_ms(log, "e2e_ms"),
        ttft_ms=latency_ms(log, "ttft_ms"),
        tpot_ms=latency_ms(log, "tpot_ms"),
    )


def load_point(
    row: dict[str, Any], log: dict[str, str], where: str, percentile: float | None = None
) -> LoadPoint:
    """The row's one load point from its log (`where`: the log's path, for the reasons;
    `percentile`: a latency bound's percentile from the run's `mlperf.conf`, for a benchmark
    bounded end to end)."""
    scenario = row["Scenario"]
    if log.get("Result is") != "VALID":
        raise RowSkipped(f"{where}: LoadGen result is {log.get('Result is')!r}, not VALID")
    # LoadGen runs Interactive as a Server scenario with tighter bounds.
    expected = "Server" if scenario == "Interactive" else scenario
    if log.get("Scenario") != expected:
        raise RowSkipped(f"{where}: the log's scenario {log.get('Scenario')!r} is not {expected}")
    throughput = _checked_throughput(row, log, where)
    if scenario == "Offline":
        return _offline_point(log, throughput)
    return _server_point(log, throughput, where, percentile)


_CONF_PERCENTILE = re.compile(
    r"^\s*(?P<model>[^.\s#]+)\.(?P<scenario>[^.\s]+)\.target_latency_percentile\s*=\s*"
    r"(?P<value>[0-9.]+)\s*(?:#.*)?$",
    re.M,
)


def conf_percentile(conf: str | None, benchmark: str, scenario: str) -> float | None:
    """The `target_latency_percentile` LoadGen's `mlperf.conf` sets for a benchmark and
    scenario (the benchmark's own line before `*`'s, the scenario's before `*`'s)."""
    if conf is None:
        return None
    found: dict[tuple[bool, bool], float] = {}
    for match in _CONF_PERCENTILE.finditer(conf):
        model, stated = match.group("model"), match.group("scenario")
        if model in (benchmark, "*") and stated in (scenario, "*"):
            found[(model == benchmark, stated == scenario)] = float(match.group("value"))
    for rank in ((True, True), (True, False), (False, True), (False, False)):
        if rank in found:
            return found[rank]
    return None
