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
  A chunk is never counted as one token when it carries several. A request whose tokens all
  arrived at once (one chunk, or chunks read together) has no gap to spread: its TPOT and ITL
  samples are 0 and time nothing, and the `tokens_in_one_chunk` verdict counts such requests
  (AIPerf gives no inter-chunk latency below two chunks; vLLM's bench serve times no gap).

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

This module summarizes a point (`summarize_point`) and raises its verdicts; its parts, one
concept each: `request_figures` (one record's figures), `distribution` (n, mean, percentiles)
and `point_summary` (`VerdictThresholds`, `PointSummary`, `Verdict`, `PointRecords` and the
scalar figures worked out from it); the SLO a request is judged by is the result's own
(`registry.models.Slo`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from typing import Any

from infermeter.bench.client.request_record import RequestRecord
from infermeter.bench.run.distribution import Distribution, summarize
from infermeter.bench.run.point_summary import (
    LATENCIES,
    SCALARS,
    PointRecords,
    PointSummary,
    RequestTimes,
    Verdict,
    VerdictThresholds,
)
from infermeter.bench.run.request_figures import (
    USAGE_TOKENS_PER_CHUNK_TOLERANCE,
    e2e_s,
    output_token_count,
    tokens_in_one_chunk,
    tpot_s,
    ttft_s,
    usage_above_stream,
    usage_disagrees,
)
from infermeter.calculators.plural import counted
from infermeter.calculators.units import NS_PER_S
from infermeter.registry.models import Slo

__all__ = ["PERCENTILE_MIN_REQUESTS", "summarize_point", "too_few_requests"]

# The fewest completed requests for which a percentile is more than its maximum in disguise.
PERCENTILE_MIN_REQUESTS = {"p90": 10, "p95": 20, "p99": 100}


def too_few_requests(completed: int, stated: Collection[str]) -> str | None:
    """The `too_few_requests` verdict's message where `completed` requests are too few for a
    percentile of `stated` (names of `PERCENTILE_MIN_REQUESTS`), else None (and None for no
    request at all, which is a verdict of its own)."""
    short = [
        f"{name} needs >= {need}"
        for name, need in PERCENTILE_MIN_REQUESTS.items()
        if name in stated and completed < need
    ]
    if not short or completed == 0:
        return None
    return f"{counted(completed, 'completed request')}: " + ", ".join(short)


def _rate(count: int, first_ns: int, last_ns: int) -> float | None:
    """Events per second between the first and last of `count` events."""
    if count < 2 or last_ns <= first_ns:
        return None
    return (count - 1) * NS_PER_S / (last_ns - first_ns)


def _latencies(ok: Sequence[RequestRecord]) -> dict[str, Any]:
    """Each latency distribution of `PointSummary` over the completed requests."""
    return {
        name: summarize(sample for record in ok for sample in per_request(record))
        for name, per_request in LATENCIES.items()
    }


def summarize_point(
    records: Sequence[RequestRecord],
    *,
    concurrency: int | None = None,
    request_rate: float | None = None,
    # Both frozen dataclasses (bench.run.point_summary): one shared default is safe.
    slo: Slo = Slo(),  # noqa: B008
    client_cpu_s: float | None = None,
    thresholds: VerdictThresholds = VerdictThresholds(),  # noqa: B008
) -> PointSummary:
    """Summarize the measured (non-warm-up) records of one load point."""
    m = PointRecords.of(records, slo)
    ok, failed, window_s = m.ok, m.failed, m.window_s
    lag, send_rate, completion_rate, first_token_rate = _open_loop(request_rate, m.scheduled, ok)
    summary = PointSummary(
        concurrency=concurrency,
        request_rate=request_rate,
        failures_by_kind=dict(Counter(str(r.error) for r in failed)),
        failures_by_http_status=dict(
            Counter(str(r.http_status) for r in failed if r.http_status is not None)
        ),
        window_s=window_s,
        **{name: of(m) for name, of in SCALARS.items()},
        slo_attainment=len(m.accepted) / len(m.measured) if m.measured else None,
        **_latencies(ok),
        send_lag_ms=lag,
        achieved_send_rate=send_rate,
        achieved_completion_rate=completion_rate,
        usage_missing_requests=sum(1 for r in ok if r.output_tokens is None) - m.usage_rejected,
        usage_mismatch_requests=sum(1 for r in ok if usage_disagrees(r)),
        usage_rejected_requests=m.usage_rejected,
        usage_above_stream_requests=sum(1 for r in ok if usage_above_stream(r)),
        output_length_mismatch_requests=len(m.length_mismatch),
        client_cpu_fraction=(
            client_cpu_s / window_s if client_cpu_s is not None and window_s > 0 else None
        ),
        achieved_first_token_rate=first_token_rate,
        per_request=tuple(
            RequestTimes(output_token_count(r), ttft_s(r), tpot_s(r), e2e_s(r))
            for r in sorted(ok, key=lambda r: r.send_ns)
        ),
    )
    one_chunk = [r for r in ok if tokens_in_one_chunk(r)]
    summary.verdicts.extend(_verdicts(summary, m, one_chunk, thresholds))
    return summary


def _open_loop(
    request_rate: float | None, scheduled: Sequence[RequestRecord], ok: Sequence[RequestRecord]
) -> tuple[Distribution | None, float | None, float | None, float | None]:
    """An open loop's send lag, and its achieved send, completion and first-token rates."""
    if request_rate is None or not scheduled:
        return None, None, None, None
    send_lag = summarize(
        (r.send_ns - (r.intended_send_ns or r.send_ns) - r.slot_wait_ns) / NS_PER_S
        for r in scheduled
    )
    sends = sorted(r.send_ns for r in scheduled)
    ends = sorted(r.end_ns for r in ok)
    firsts = sorted(r.token_times_ns[0] for r in ok if r.token_times_ns)
    return (
        send_lag,
        _rate(len(sends), sends[0], sends[-1]),
        _rate(len(ends), ends[0], ends[-1]) if ends else None,
        _rate(len(firsts), firsts[0], firsts[-1]) if firsts else None,
    )


def _verdicts(
    summary: PointSummary,
    m: PointRecords,
    one_chunk: Sequence[RequestRecord],
    thresholds: VerdictThresholds,
) -> list[Verdict]:
    """What a reader must know before trusting the point's figures, in a fixed order."""
    verdicts: list[Verdict] = []
    if summary.completed == 0:
        verdicts.append(Verdict("no_successful_requests", "no request of this point succeeded"))
    too_few = too_few_requests(summary.completed, PERCENTILE_MIN_REQUESTS)
    if too_few is not None:
        verdicts.append(Verdict("too_few_requests", too_few))
    verdicts.extend(_usage_verdicts(summary, m.length_mismatch))
    if one_chunk:
        verdicts.append(_one_chunk_verdict(one_chunk, summary.completed))
    verdicts.extend(_load_verdicts(summary, m.scheduled, thresholds))
    return verdicts


def _one_chunk_verdict(one_chunk: Sequence[RequestRecord], completed: int) -> Verdict:
    """Requests that streamed every output token in one chunk: nothing timed their tokens."""
    most = max(output_token_count(r) for r in one_chunk)
    return Verdict(
        "tokens_in_one_chunk",
        f"{counted(len(one_chunk), 'request')} of {completed:,} received every output token at "
        f"once, in one chunk or in chunks read together (up to {counted(most, 'token')}): their "
        "E2E is their TTFT, and the TPOT and ITL of 0 ms they add are not measured times per token",
    )


def _usage_verdicts(
    summary: PointSummary, length_mismatch: Sequence[RequestRecord]
) -> list[Verdict]:
    """The output lengths and token counts that cannot be taken at face value."""
    verdicts: list[Verdict] = []
    if length_mismatch:
        example = length_mismatch[0]
        verdicts.append(
            Verdict(
                "output_length_not_honoured",
                f"{counted(len(length_mismatch), 'request')} did not get the output length asked "
                f"for (e.g. asked {example.expected_output_tokens}, "
                f"got {output_token_count(example)})",
            )
        )
    if summary.usage_missing_requests:
        verdicts.append(
            Verdict(
                "usage_missing",
                f"{counted(summary.usage_missing_requests, 'request')} reported no usage; "
                "their token counts are the client's",
            )
        )
    if summary.usage_rejected_requests:
        verdicts.append(
            Verdict(
                "usage_impossible",
                f"{counted(summary.usage_rejected_requests, 'request')} reported impossible usage "
                "(negative, or more tokens than max_tokens); their token counts are the client's",
            )
        )
    if summary.usage_above_stream_requests:
        verdicts.append(
            Verdict(
                "usage_above_stream",
                f"{counted(summary.usage_above_stream_requests, 'request')}: the server's usage "
                f"claims more than {USAGE_TOKENS_PER_CHUNK_TOLERANCE:g} tokens per streamed chunk; "
                "throughput and ITL rest on its count",
            )
        )
    if summary.usage_mismatch_requests:
        verdicts.append(
            Verdict(
                "usage_mismatch",
                f"{counted(summary.usage_mismatch_requests, 'request')}: the client's token count "
                "disagrees with the server's usage",
            )
        )
    return verdicts


def _load_verdicts(
    summary: PointSummary, scheduled: Sequence[RequestRecord], thresholds: VerdictThresholds
) -> list[Verdict]:
    """The load the client did not offer as asked: late sends, a rate not reached, a busy CPU."""
    verdicts: list[Verdict] = []
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
