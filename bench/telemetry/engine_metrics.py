"""The engine's own view of a load point, from vLLM's Prometheus `/metrics`.

Scraped before and after each point (counters are differenced between the two) and sampled
during it (gauges, averaged over the samples inside the measured window). vLLM has renamed some
metrics; both names are read:

- KV cache usage: `vllm:kv_cache_usage_perc` (older: `vllm:gpu_cache_usage_perc`), a 0–1
  gauge: mean and max;
- preemptions: the counter `vllm:num_preemptions_total`, after − before;
- prefix cache hit rate: Δ`vllm:prefix_cache_hits_total` / Δ`vllm:prefix_cache_queries_total`
  (older: `vllm:gpu_prefix_cache_…`), in tokens: vLLM's V1 engine declares the counters
  `vllm:prefix_cache_queries` and `vllm:prefix_cache_hits` ("in terms of number of queried
  tokens") in `vllm/v1/metrics/loggers.py`, and prometheus_client exports a counter with
  `_total` appended;
- queue time: the `vllm:request_queue_time_seconds` histogram, Δsum / Δcount (mean only);
- requests running and waiting: the gauges `vllm:num_requests_running`, `…_waiting`.

vLLM's memory plan, without its log: the labels of the info gauge `vllm:cache_config_info`
(`cache_config_figures`): `kv_cache_size_tokens`, `kv_cache_memory_bytes`,
`kv_cache_max_concurrency`, `block_size` (128 on the CPU build, 16 on a GPU by default).

Counters cover the whole point, its warm-up requests included (the engine does not know which
requests are measured). Series with several label sets (one per engine) are summed, except the
KV cache usage, which is averaged. The queue-time histogram gives no exact percentiles, so only
its mean and count are reported.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass

from infermeter.bench.client.small_get import small_get
from infermeter.bench.launch.vllm_log import StartupFigures

KV_USAGE = ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")
PREEMPTIONS = ("vllm:num_preemptions_total",)
PREFIX_QUERIES = ("vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total")
PREFIX_HITS = ("vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total")
QUEUE_SUM = ("vllm:request_queue_time_seconds_sum",)
QUEUE_COUNT = ("vllm:request_queue_time_seconds_count",)
RUNNING = ("vllm:num_requests_running",)
WAITING = ("vllm:num_requests_waiting",)
_AVERAGED = frozenset(KV_USAGE)


@dataclass(frozen=True)
class MetricsSample:
    """One scrape: metric name → value (label sets combined), at a monotonic time."""

    time_ns: int
    values: dict[str, float]

    def first(self, names: Sequence[str]) -> float | None:
        """The value of the first of `names` that the engine exports."""
        for name in names:
            if name in self.values:
                return self.values[name]
        return None


@dataclass(frozen=True)
class EngineWindow:
    """The engine's figures for one load point; None where the engine does not export them."""

    kv_cache_usage_pct_mean: float | None
    kv_cache_usage_pct_max: float | None
    preemptions: int | None
    prefix_cache_hit_rate: float | None
    queued_requests: int | None
    queue_ms_mean: float | None
    requests_running_mean: float | None
    requests_waiting_max: float | None


def parse_prometheus(text: str) -> dict[str, float]:
    """Metric name → value from Prometheus text format; histogram buckets are skipped."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if "{" in line:
            name, _, rest = line.partition("{")
            _, _, value_part = rest.rpartition("}")
        else:
            name, _, value_part = line.partition(" ")
        if name.endswith("_bucket"):
            continue
        fields = value_part.split()
        if not fields:
            continue
        try:
            value = float(fields[0])
        except ValueError:
            continue
        if not math.isfinite(value):
            continue
        sums[name] = sums.get(name, 0.0) + value
        counts[name] = counts.get(name, 0) + 1
    return {
        name: total / counts[name] if name in _AVERAGED else total for name, total in sums.items()
    }


CACHE_CONFIG = "vllm:cache_config_info"
_LABEL = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"')


def series_labels(text: str, name: str) -> dict[str, str] | None:
    """The labels of the first series of `name` in Prometheus text, or None without one."""
    for line in text.splitlines():
        if line.startswith(name + "{"):
            inside = line[len(name) + 1 :].rpartition("}")[0]
            return dict(_LABEL.findall(inside))
    return None


def _number(labels: dict[str, str], name: str) -> float | None:
    try:
        value = float(labels.get(name, ""))
    except ValueError:
        return None  # "None", or absent
    return value if math.isfinite(value) else None


def cache_config_figures(text: str) -> StartupFigures | None:
    """vLLM's KV cache plan from `vllm:cache_config_info`'s labels; None when it exports none."""
    labels = series_labels(text, CACHE_CONFIG)
    if labels is None:
        return None
    tokens = _number(labels, "kv_cache_size_tokens")
    memory_bytes = _number(labels, "kv_cache_memory_bytes")
    block_size = _number(labels, "block_size")
    return StartupFigures(
        available_kv_cache_gib=memory_bytes / 2**30 if memory_bytes is not None else None,
        kv_cache_tokens=round(tokens) if tokens is not None else None,
        max_concurrency=_number(labels, "kv_cache_max_concurrency"),
        block_size=round(block_size) if block_size is not None else None,
    )


# The most of a /metrics text read: vLLM's is some 100 KiB.
_METRICS_BYTES = 16 * 1024 * 1024


def metrics_text(url: str, timeout_s: float = 2.0) -> str | None:
    """`GET {url}/metrics`'s text, or None when the server has none or does not answer (whole,
    within `timeout_s` and `_METRICS_BYTES`)."""
    answer = small_get(url + "/metrics", timeout_s, _METRICS_BYTES)
    return answer.body.decode("utf-8", errors="replace") if answer is not None else None


def server_cache_config(url: str) -> StartupFigures | None:
    """`cache_config_figures` of the server at `url`; None when it says nothing."""
    text = metrics_text(url, timeout_s=5.0)
    return cache_config_figures(text) if text is not None else None


def scrape_metrics(url: str, timeout_s: float = 2.0) -> MetricsSample | None:
    """`GET {url}/metrics` parsed, or None when the server has none or does not answer."""
    text = metrics_text(url, timeout_s)
    if text is None:
        return None
    values = parse_prometheus(text)
    return MetricsSample(time.monotonic_ns(), values) if values else None


def _difference(
    before: MetricsSample | None, after: MetricsSample | None, names: Sequence[str]
) -> float | None:
    if before is None or after is None:
        return None
    start, end = before.first(names), after.first(names)
    if start is None or end is None:
        return None
    return max(end - start, 0.0)


def engine_window(
    before: MetricsSample | None,
    after: MetricsSample | None,
    samples: Sequence[MetricsSample],
    start_ns: int,
    end_ns: int,
) -> EngineWindow | None:
    """The point's engine figures; None when the engine exported nothing we read."""
    inside = [s for s in samples if start_ns <= s.time_ns <= end_ns] or list(samples)

    def gauge(names: Sequence[str]) -> list[float]:
        return [v for v in (s.first(names) for s in inside) if v is not None]

    usage_pct = [100.0 * min(max(v, 0.0), 1.0) for v in gauge(KV_USAGE)]
    running = gauge(RUNNING)
    waiting = gauge(WAITING)
    preemptions = _difference(before, after, PREEMPTIONS)
    queries = _difference(before, after, PREFIX_QUERIES)
    hits = _difference(before, after, PREFIX_HITS)
    queue_count = _difference(before, after, QUEUE_COUNT)
    queue_sum = _difference(before, after, QUEUE_SUM)
    window = EngineWindow(
        kv_cache_usage_pct_mean=math.fsum(usage_pct) / len(usage_pct) if usage_pct else None,
        kv_cache_usage_pct_max=max(usage_pct) if usage_pct else None,
        preemptions=round(preemptions) if preemptions is not None else None,
        prefix_cache_hit_rate=(min(hits / queries, 1.0) if hits is not None and queries else None),
        queued_requests=round(queue_count) if queue_count is not None else None,
        queue_ms_mean=(
            queue_sum / queue_count * 1000 if queue_sum is not None and queue_count else None
        ),
        requests_running_mean=math.fsum(running) / len(running) if running else None,
        requests_waiting_max=max(waiting) if waiting else None,
    )
    if all(value is None for value in window.__dict__.values()):
        return None
    return window
