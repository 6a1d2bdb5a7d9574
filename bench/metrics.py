"""From per-request records to the figures of one load point (definitions: DESIGN.md).

Per request (successful ones only):
- **TTFT** = first chunk that carries output text − send time.
- **E2E** = last chunk that carries output text − send time.
- **TPOT** = (E2E − TTFT) / (output tokens − 1); undefined for a one-token output.
- **ITL**, one sample per token after the first. Tokens per text chunk, in order of preference:
  1. the server's running count in every chunk (vLLM `continuous_usage_stats`): exact;
  2. otherwise, when the server's `usage.completion_tokens` exceeds the number of text chunks,
     the tokens are split over the chunks in proportion to each chunk's text length
     (largest-remainder rounding, each chunk at least one token);
  3. otherwise one token per text chunk.
  A chunk that carries k tokens and arrived a gap g after the previous text chunk yields k
  samples of g / k; the extra tokens of the *first* chunk arrived with the first token and
  yield samples of 0. So a request with N tokens yields N − 1 samples whose mean is its TPOT.
  A chunk is never counted as one token when it carries several.

Token counts come from the server's usage; the client's own count (text chunks, or a tokenizer
when one is given) is compared with it and a disagreement is reported, never substituted. Without
a tokenizer the chunk count is only a lower bound (a chunk may carry several tokens), so only a
chunk count *above* the usage count is a disagreement.

Percentiles use linear interpolation between closest ranks (numpy's default, "linear"): for
sorted values x[0..n-1] and q in [0, 100], rank r = (n − 1)·q/100, value
x[⌊r⌋] + (x[⌈r⌉] − x[⌊r⌋])·(r − ⌊r⌋).

A chunk count without usage or a tokenizer is a lower bound too, so it shows an output length
that was not honoured only when it is *above* the length asked for.

Verdicts about the load: `rate_not_reached` compares the rate at which an open loop's requests
got their first token with the rate its schedule offered (completions are not used: the
drain of the last requests, longest outputs last, stretches their span even when the server
keeps up; a server that falls behind queues requests, which delays their first token);
`client_saturated` compares the busiest client process's CPU time with the window (one event
loop uses one core, so several worker processes are judged each on its own). The achieved mean
concurrency is the time-weighted number of requests in flight (warm-up requests included)
over the measured window; the drain at a closed-loop point's end lowers it below the target.

Throughputs use the measured window: from the first measured request's send to the end of the
last measured request. Warm-up requests are excluded everywhere. A failed request counts as an
SLO miss; the accepted output tokens are those of successful requests that met every declared
SLO.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bench.client import RequestRecord

if TYPE_CHECKING:
    from bench.conversation import TurnSummary

NS_PER_S = 1e9
MS_PER_S = 1e3

# The fewest completed requests for which a percentile is more than its maximum in disguise.
PERCENTILE_MIN_REQUESTS = {"p90": 10, "p95": 20, "p99": 100}


@dataclass(frozen=True)
class Slo:
    """Latency limits a request must meet to be accepted; None means no limit."""

    ttft_ms: float | None = None
    tpot_ms: float | None = None
    e2e_ms: float | None = None


@dataclass(frozen=True)
class VerdictThresholds:
    """When a validity verdict is raised."""

    send_lag_p99_ms: float = 10.0
    rate_fraction: float = 0.9
    client_cpu_fraction: float = 0.9


@dataclass(frozen=True)
class Distribution:
    """Summary statistics of one metric over a load point, in milliseconds."""

    n: int
    mean: float | None
    p50: float | None
    p90: float | None
    p95: float | None
    p99: float | None
    max: float | None

    def as_json(self) -> dict[str, Any]:
        """The distribution as a plain JSON object."""
        return {
            "n": self.n,
            "mean": self.mean,
            "p50": self.p50,
            "p90": self.p90,
            "p95": self.p95,
            "p99": self.p99,
            "max": self.max,
        }


@dataclass(frozen=True)
class Verdict:
    """A reason to doubt (part of) a load point's figures."""

    code: str
    message: str


@dataclass(frozen=True)
class PointSummary:
    """The figures of one load point (closed loop: `concurrency`; open loop: `request_rate`)."""

    concurrency: int | None
    request_rate: float | None
    completed: int
    failed: int
    failures_by_kind: dict[str, int]
    failures_by_http_status: dict[str, int]
    window_s: float
    output_tokens: int
    input_tokens: int
    accepted_requests: int
    accepted_output_tokens: int
    request_throughput: float
    output_token_throughput: float
    total_token_throughput: float
    accepted_output_token_throughput: float
    slo_attainment: float | None
    ttft_ms: Distribution
    itl_ms: Distribution
    tpot_ms: Distribution
    e2e_ms: Distribution
    send_lag_ms: Distribution | None
    achieved_send_rate: float | None
    achieved_completion_rate: float | None
    usage_missing_requests: int
    usage_mismatch_requests: int
    output_length_mismatch_requests: int
    client_cpu_fraction: float | None
    achieved_first_token_rate: float | None = None
    achieved_concurrency_mean: float | None = None
    verdicts: list[Verdict] = field(default_factory=list)
    # Multi-turn points (`bench.conversation`): TTFT and prompt length by turn index.
    turns: tuple[TurnSummary, ...] = ()
    usage_rejected_requests: int = 0
    usage_above_stream_requests: int = 0

    def as_json(self) -> dict[str, Any]:
        """The summary as the `--json` point object (key names are a public contract)."""
        return {
            "concurrency": self.concurrency,
            "request_rate": self.request_rate,
            "completed": self.completed,
            "failed": self.failed,
            "failures_by_kind": dict(sorted(self.failures_by_kind.items())),
            "failures_by_http_status": dict(sorted(self.failures_by_http_status.items())),
            "duration_s": self.window_s,
            "output_tokens": self.output_tokens,
            "input_tokens": self.input_tokens,
            "accepted_requests": self.accepted_requests,
            "accepted_output_tokens": self.accepted_output_tokens,
            "request_throughput": self.request_throughput,
            "output_token_throughput": self.output_token_throughput,
            "total_token_throughput": self.total_token_throughput,
            "accepted_output_token_throughput": self.accepted_output_token_throughput,
            "slo_attainment": self.slo_attainment,
            "ttft_ms": self.ttft_ms.as_json(),
            "itl_ms": self.itl_ms.as_json(),
            "tpot_ms": self.tpot_ms.as_json(),
            "e2e_ms": self.e2e_ms.as_json(),
            "send_lag_ms": self.send_lag_ms.as_json() if self.send_lag_ms else None,
            "achieved_send_rate": self.achieved_send_rate,
            "achieved_completion_rate": self.achieved_completion_rate,
            "usage_missing_requests": self.usage_missing_requests,
            "usage_mismatch_requests": self.usage_mismatch_requests,
            "usage_rejected_requests": self.usage_rejected_requests,
            "usage_above_stream_requests": self.usage_above_stream_requests,
            "output_length_mismatch_requests": self.output_length_mismatch_requests,
            "client_cpu_fraction": self.client_cpu_fraction,
            "achieved_first_token_rate": self.achieved_first_token_rate,
            "achieved_concurrency_mean": self.achieved_concurrency_mean,
            "verdicts": [{"code": v.code, "message": v.message} for v in self.verdicts],
            "turns": [turn.as_json() for turn in self.turns],
        }


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-th percentile (0–100) of already sorted values, by linear interpolation."""
    if not sorted_values:
        raise ValueError("percentile of no values")
    rank = (len(sorted_values) - 1) * q / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(sorted_values) - 1)
    fraction = rank - low
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * fraction


def summarize(values_s: Iterable[float]) -> Distribution:
    """n, mean, p50/p90/p95/p99 and max of values in seconds, reported in milliseconds."""
    ordered = sorted(values_s)
    if not ordered:
        return Distribution(0, None, None, None, None, None, None)

    def ms(value: float) -> float:
        return value * MS_PER_S

    return Distribution(
        n=len(ordered),
        mean=ms(math.fsum(ordered) / len(ordered)),
        p50=ms(percentile(ordered, 50)),
        p90=ms(percentile(ordered, 90)),
        p95=ms(percentile(ordered, 95)),
        p99=ms(percentile(ordered, 99)),
        max=ms(ordered[-1]),
    )


def output_token_count(record: RequestRecord) -> int:
    """The request's output tokens: the server's usage, else the client's count."""
    return record.output_tokens if record.output_tokens is not None else record.client_output_tokens


def chunk_token_counts(record: RequestRecord) -> list[int]:
    """Tokens carried by each text chunk, by the rule in the module docstring."""
    chunks = len(record.token_times_ns)
    if record.chunk_tokens is not None and len(record.chunk_tokens) == chunks:
        return list(record.chunk_tokens)
    total = record.output_tokens
    if total is None or total <= chunks or chunks == 0:
        return [1] * chunks
    return _split_proportionally(total, record.chunk_chars)


def _split_proportionally(total: int, weights: Sequence[int]) -> list[int]:
    """`total` as integers in proportion to `weights`, each at least 1 (total >= len)."""
    if sum(weights) <= 0:
        weights = [1] * len(weights)
    weight_sum = sum(weights)
    shares = [total * weight / weight_sum for weight in weights]
    counts = [max(1, math.floor(share)) for share in shares]
    missing = total - sum(counts)
    # Largest remainders first gain a token; the largest counts give one back if over.
    by_remainder = sorted(range(len(counts)), key=lambda i: (counts[i] - shares[i], i))
    for index in by_remainder[: max(missing, 0)]:
        counts[index] += 1
    while missing < 0:
        reducible = [i for i in range(len(counts)) if counts[i] > 1]
        largest = max(reducible, key=lambda i: (counts[i] - shares[i], counts[i]))
        counts[largest] -= 1
        missing += 1
    return counts


def token_gaps_s(record: RequestRecord) -> list[float]:
    """One inter-token latency sample (seconds) per output token after the first."""
    times = record.token_times_ns
    if not times:
        return []
    counts = chunk_token_counts(record)
    gaps = [0.0] * max(counts[0] - 1, 0)
    previous_ns = times[0]
    for arrived_ns, tokens in zip(times[1:], counts[1:], strict=True):
        if tokens <= 0:
            continue  # no token in this chunk: its gap goes to the next chunk's tokens
        gap = (arrived_ns - previous_ns) / NS_PER_S / tokens
        gaps.extend([gap] * tokens)
        previous_ns = arrived_ns
    return gaps


def ttft_s(record: RequestRecord) -> float:
    """Send → first output text, in seconds (the record must have output)."""
    return (record.token_times_ns[0] - record.send_ns) / NS_PER_S


def e2e_s(record: RequestRecord) -> float:
    """Send → last output text, in seconds (the record must have output)."""
    return (record.token_times_ns[-1] - record.send_ns) / NS_PER_S


def tpot_s(record: RequestRecord) -> float | None:
    """(E2E − TTFT) / (output tokens − 1), in seconds; None for fewer than two tokens."""
    tokens = output_token_count(record)
    if tokens < 2:
        return None
    return (record.token_times_ns[-1] - record.token_times_ns[0]) / NS_PER_S / (tokens - 1)


def meets_slo(record: RequestRecord, slo: Slo) -> bool:
    """True when the request succeeded and met every declared limit."""
    if not record.ok:
        return False
    if slo.ttft_ms is not None and ttft_s(record) * MS_PER_S > slo.ttft_ms:
        return False
    if slo.e2e_ms is not None and e2e_s(record) * MS_PER_S > slo.e2e_ms:
        return False
    tpot = tpot_s(record)
    return not (slo.tpot_ms is not None and tpot is not None and tpot * MS_PER_S > slo.tpot_ms)


def usage_disagrees(record: RequestRecord) -> bool:
    """True when the client's token count contradicts the server's usage."""
    if record.output_tokens is None:
        return False
    if record.client_count_exact:
        return record.client_output_tokens != record.output_tokens
    return record.client_output_tokens > record.output_tokens


# vLLM streams one token per chunk unless it decodes several per step (speculative decoding);
# a usage above this many tokens per received text chunk is not what was streamed.
USAGE_TOKENS_PER_CHUNK_TOLERANCE = 1.5


def usage_above_stream(record: RequestRecord) -> bool:
    """True when the server's usage claims more tokens than the stream plausibly carried:
    above `USAGE_TOKENS_PER_CHUNK_TOLERANCE` per text chunk, with no per-chunk counts."""
    if record.output_tokens is None or record.chunk_tokens is not None:
        return False
    chunks = len(record.token_times_ns)
    return record.output_tokens > USAGE_TOKENS_PER_CHUNK_TOLERANCE * max(chunks, 1)


def _rate(count: int, first_ns: int, last_ns: int) -> float | None:
    """Events per second between the first and last of `count` events."""
    if count < 2 or last_ns <= first_ns:
        return None
    return (count - 1) * NS_PER_S / (last_ns - first_ns)


def summarize_point(
    records: Sequence[RequestRecord],
    *,
    concurrency: int | None = None,
    request_rate: float | None = None,
    slo: Slo = Slo(),
    client_cpu_s: float | None = None,
    thresholds: VerdictThresholds = VerdictThresholds(),
) -> PointSummary:
    """Summarize the measured (non-warm-up) records of one load point."""
    measured = [r for r in records if not r.warmup]
    ok = [r for r in measured if r.ok]
    failed = [r for r in measured if not r.ok]
    window_s = 0.0
    if measured:
        start_ns = min(r.send_ns for r in measured)
        end_ns = max(r.end_ns for r in measured)
        window_s = max(end_ns - start_ns, 0) / NS_PER_S

    def per_second(amount: float) -> float:
        return amount / window_s if window_s > 0 else 0.0

    output_tokens = sum(output_token_count(r) for r in ok)
    input_tokens = sum(
        r.prompt_tokens if r.prompt_tokens is not None else r.input_tokens for r in ok
    )
    accepted = [r for r in ok if meets_slo(r, slo)]
    accepted_tokens = sum(output_token_count(r) for r in accepted)
    itl_samples: list[float] = []
    for record in ok:
        itl_samples.extend(token_gaps_s(record))
    tpots = [t for t in (tpot_s(r) for r in ok) if t is not None]

    send_lag = None
    achieved_send_rate = None
    achieved_completion_rate = None
    achieved_first_token_rate = None
    scheduled = [r for r in measured if r.intended_send_ns is not None]
    if request_rate is not None and scheduled:
        send_lag = summarize(
            (r.send_ns - (r.intended_send_ns or r.send_ns) - r.slot_wait_ns) / NS_PER_S
            for r in scheduled
        )
        sends = sorted(r.send_ns for r in scheduled)
        achieved_send_rate = _rate(len(sends), sends[0], sends[-1])
        ends = sorted(r.end_ns for r in ok)
        achieved_completion_rate = _rate(len(ends), ends[0], ends[-1]) if ends else None
        firsts = sorted(r.token_times_ns[0] for r in ok if r.token_times_ns)
        achieved_first_token_rate = _rate(len(firsts), firsts[0], firsts[-1]) if firsts else None

    expected = [r for r in ok if r.expected_output_tokens is not None]
    length_mismatch = [r for r in expected if _length_not_honoured(r)]
    usage_rejected = sum(1 for r in ok if r.usage_rejected is not None)
    usage_missing = sum(1 for r in ok if r.output_tokens is None) - usage_rejected
    usage_mismatch = sum(1 for r in ok if usage_disagrees(r))
    above_stream = sum(1 for r in ok if usage_above_stream(r))
    cpu_fraction = client_cpu_s / window_s if client_cpu_s is not None and window_s > 0 else None

    summary = PointSummary(
        concurrency=concurrency,
        request_rate=request_rate,
        completed=len(ok),
        failed=len(failed),
        failures_by_kind=dict(Counter(str(r.error) for r in failed)),
        failures_by_http_status=dict(
            Counter(str(r.http_status) for r in failed if r.http_status is not None)
        ),
        window_s=window_s,
        output_tokens=output_tokens,
        input_tokens=input_tokens,
        accepted_requests=len(accepted),
        accepted_output_tokens=accepted_tokens,
        request_throughput=per_second(len(ok)),
        output_token_throughput=per_second(output_tokens),
        total_token_throughput=per_second(output_tokens + input_tokens),
        accepted_output_token_throughput=per_second(accepted_tokens),
        slo_attainment=len(accepted) / len(measured) if measured else None,
        ttft_ms=summarize(ttft_s(r) for r in ok),
        itl_ms=summarize(itl_samples),
        tpot_ms=summarize(tpots),
        e2e_ms=summarize(e2e_s(r) for r in ok),
        send_lag_ms=send_lag,
        achieved_send_rate=achieved_send_rate,
        achieved_completion_rate=achieved_completion_rate,
        usage_missing_requests=usage_missing,
        usage_mismatch_requests=usage_mismatch,
        usage_rejected_requests=usage_rejected,
        usage_above_stream_requests=above_stream,
        output_length_mismatch_requests=len(length_mismatch),
        client_cpu_fraction=cpu_fraction,
        achieved_first_token_rate=achieved_first_token_rate,
        achieved_concurrency_mean=_mean_in_flight(records, window_s),
    )
    summary.verdicts.extend(_verdicts(summary, scheduled, length_mismatch, thresholds))
    return summary


def _length_not_honoured(record: RequestRecord) -> bool:
    """True when the request's output length provably differs from the one asked for."""
    expected = record.expected_output_tokens
    if expected is None:
        return False
    if record.output_tokens is not None:
        return record.output_tokens != expected
    if record.client_count_exact:
        return record.client_output_tokens != expected
    return record.client_output_tokens > expected  # chunks are a lower bound on tokens


def _mean_in_flight(records: Sequence[RequestRecord], window_s: float) -> float | None:
    """Time-weighted mean of requests in flight over the measured window (warm-up included)."""
    measured = [r for r in records if not r.warmup]
    if not measured or window_s <= 0:
        return None
    start_ns = min(r.send_ns for r in measured)
    end_ns = max(r.end_ns for r in measured)
    busy_ns = sum(max(min(r.end_ns, end_ns) - max(r.send_ns, start_ns), 0) for r in records)
    return busy_ns / NS_PER_S / window_s


def _verdicts(
    summary: PointSummary,
    scheduled: Sequence[RequestRecord],
    length_mismatch: Sequence[RequestRecord],
    thresholds: VerdictThresholds,
) -> list[Verdict]:
    verdicts: list[Verdict] = []
    if summary.completed == 0:
        verdicts.append(Verdict("no_successful_requests", "no request of this point succeeded"))
    short = [
        f"{name} needs >= {need}"
        for name, need in PERCENTILE_MIN_REQUESTS.items()
        if summary.completed < need
    ]
    if short and summary.completed > 0:
        verdicts.append(
            Verdict(
                "too_few_requests",
                f"{summary.completed} completed requests: " + ", ".join(short),
            )
        )
    if length_mismatch:
        example = length_mismatch[0]
        verdicts.append(
            Verdict(
                "output_length_not_honoured",
                f"{len(length_mismatch)} requests did not get the output length asked for "
                f"(e.g. asked {example.expected_output_tokens}, got {output_token_count(example)})",
            )
        )
    if summary.usage_missing_requests:
        verdicts.append(
            Verdict(
                "usage_missing",
                f"{summary.usage_missing_requests} requests reported no usage; "
                "their token counts are the client's",
            )
        )
    if summary.usage_rejected_requests:
        verdicts.append(
            Verdict(
                "usage_impossible",
                f"{summary.usage_rejected_requests} requests reported impossible usage "
                "(negative, or more tokens than max_tokens); their token counts are the client's",
            )
        )
    if summary.usage_above_stream_requests:
        verdicts.append(
            Verdict(
                "usage_above_stream",
                f"{summary.usage_above_stream_requests} requests: the server's usage claims more "
                f"than {USAGE_TOKENS_PER_CHUNK_TOLERANCE:g} tokens per streamed chunk; "
                "throughput and ITL rest on its count",
            )
        )
    if summary.usage_mismatch_requests:
        verdicts.append(
            Verdict(
                "usage_mismatch",
                f"{summary.usage_mismatch_requests} requests: the client's token count "
                "disagrees with the server's usage",
            )
        )
    lag = summary.send_lag_ms
    if lag is not None and lag.p99 is not None and lag.p99 > thresholds.send_lag_p99_ms:
        verdicts.append(
            Verdict(
                "client_send_lag",
                f"requests left {lag.p99:.1f} ms after their scheduled time at p99 "
                f"(limit {thresholds.send_lag_p99_ms:g} ms)",
            )
        )
    if summary.request_rate is not None and len(scheduled) >= 2:
        intended = sorted(r.intended_send_ns or 0 for r in scheduled)
        schedule_rate = _rate(len(intended), intended[0], intended[-1])
        achieved = summary.achieved_first_token_rate
        if schedule_rate is not None and (
            achieved is None or achieved < thresholds.rate_fraction * schedule_rate
        ):
            shown = f"{achieved:.2f}" if achieved is not None else "no"
            verdicts.append(
                Verdict(
                    "rate_not_reached",
                    f"requests got their first token at {shown} req/s against "
                    f"{schedule_rate:.2f} req/s offered",
                )
            )
    cpu = summary.client_cpu_fraction
    if cpu is not None and cpu > thresholds.client_cpu_fraction:
        verdicts.append(
            Verdict(
                "client_saturated",
                f"the busiest client process used {cpu:.0%} of a CPU core during the window",
            )
        )
    return verdicts
