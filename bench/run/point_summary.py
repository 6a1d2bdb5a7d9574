"""What a load point's figures are judged by (the result's `Slo`, `VerdictThresholds`) and
what they are (`PointSummary`, with its `Verdict`s), and what a scalar figure is worked out
from (each stored field's own function of the point's `PointRecords`);
`bench.run.metrics.summarize_point` fills them in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any

from infermeter.bench.client.request_record import RequestRecord
from infermeter.bench.run.attributes import attributes
from infermeter.bench.run.distribution import Distribution
from infermeter.bench.run.request_figures import (
    e2e_s,
    length_not_honoured,
    meets_slo,
    output_token_count,
    token_gaps_s,
    tpot_s,
    ttft_s,
)
from infermeter.calculators.units import NS_PER_S
from infermeter.registry.models import Slo

if TYPE_CHECKING:
    from infermeter.bench.workloads.conversation import TurnSummary
    from infermeter.bench.workloads.trace_replay import CachedShareSummary


@dataclass(frozen=True)
class RequestTimes:
    """One successful request's figures an SLO bounds: output tokens, TTFT, TPOT (None for a
    one-token reply, which has none) and E2E, in seconds."""

    output_tokens: int
    ttft_s: float
    tpot_s: float | None
    e2e_s: float


@dataclass(frozen=True)
class VerdictThresholds:
    """When a validity verdict is raised."""

    send_lag_p99_ms: float = 10.0
    rate_fraction: float = 0.9
    client_cpu_fraction: float = 0.9


@dataclass(frozen=True)
class Verdict:
    """A reason to doubt (part of) a load point's figures."""

    code: str
    message: str


def _samples(per_request: Callable[[RequestRecord], Iterable[float]]) -> dict[str, Any]:
    """A latency distribution's field metadata: the point's completed requests each give
    `per_request`'s samples, in seconds. `summarize_point` fills it, and the `--json` point and
    the result's load point state it whole (`LATENCIES`)."""
    return {"per_request": per_request}


def _stored(
    of: Callable[[PointRecords], float | None], path: str, digits: int | None = None
) -> dict[str, Any]:
    """A figure's field metadata: `of` works it out from the point's records (`summarize_point`
    fills it so), and the result's load point states it at `path` (dotted,
    `throughput.requests_per_s`), rounded to `digits` decimals (None: as it is)."""
    return {"of": of, "stored": (path, digits)}


def _stated(seconds: float | None) -> tuple[float, ...]:
    return () if seconds is None else (seconds,)


@dataclass(frozen=True)
class PointRecords:
    """A point's records (`records`, warm-up included), the measured (non-warm-up) ones sorted
    into what its summary counts: what a figure of the point is worked out from."""

    records: Sequence[RequestRecord]
    measured: list[RequestRecord]
    ok: list[RequestRecord]
    failed: list[RequestRecord]
    window_s: float
    output_tokens: int
    input_tokens: int
    accepted: list[RequestRecord]  # successful and within every declared SLO
    accepted_tokens: int
    scheduled: list[RequestRecord]  # an open loop's: sent at an intended time
    length_mismatch: list[RequestRecord]
    usage_rejected: int

    @classmethod
    def of(cls, records: Sequence[RequestRecord], slo: Slo) -> PointRecords:
        measured = [r for r in records if not r.warmup]
        ok = [r for r in measured if r.ok]
        window_s = 0.0
        if measured:
            start_ns = min(r.send_ns for r in measured)
            end_ns = max(r.end_ns for r in measured)
            window_s = max(end_ns - start_ns, 0) / NS_PER_S
        accepted = [r for r in ok if meets_slo(r, slo)]
        expected = [r for r in ok if r.expected_output_tokens is not None]
        return cls(
            records=records,
            measured=measured,
            ok=ok,
            failed=[r for r in measured if not r.ok],
            window_s=window_s,
            output_tokens=sum(output_token_count(r) for r in ok),
            input_tokens=sum(
                r.prompt_tokens if r.prompt_tokens is not None else r.input_tokens for r in ok
            ),
            accepted=accepted,
            accepted_tokens=sum(output_token_count(r) for r in accepted),
            scheduled=[r for r in measured if r.intended_send_ns is not None],
            length_mismatch=[r for r in expected if length_not_honoured(r)],
            usage_rejected=sum(1 for r in ok if r.usage_rejected is not None),
        )

    def per_second(self, amount: float) -> float:
        return amount / self.window_s if self.window_s > 0 else 0.0

    def _in_window_ns(self, record: RequestRecord) -> int:
        """How long `record` was in flight inside the measured window, ns."""
        start_ns = min(r.send_ns for r in self.measured)
        end_ns = max(r.end_ns for r in self.measured)
        return max(min(record.end_ns, end_ns) - max(record.send_ns, start_ns), 0)

    def mean_in_flight(self) -> float | None:
        """Time-weighted mean of requests in flight over the measured window (warm-up
        included)."""
        if not self.measured or self.window_s <= 0:
            return None
        busy_ns = sum(self._in_window_ns(r) for r in self.records)
        return busy_ns / NS_PER_S / self.window_s

    def warmup_in_flight(self) -> int | None:
        """Warm-up requests in flight for some of the measured window (`mean_in_flight` counts
        them)."""
        if not self.measured or self.window_s <= 0:
            return None
        return sum(1 for r in self.records if r.warmup and self._in_window_ns(r) > 0)


@dataclass(frozen=True)
class PointSummary:
    """The figures of one load point (closed loop: `concurrency`; open loop: `request_rate`)."""

    concurrency: int | None
    request_rate: float | None
    completed: int = field(metadata=_stored(lambda m: len(m.ok), "requests.completed"))
    failed: int = field(metadata=_stored(lambda m: len(m.failed), "requests.failed"))
    failures_by_kind: dict[str, int]
    failures_by_http_status: dict[str, int]
    window_s: float
    output_tokens: int = field(metadata=_stored(lambda m: m.output_tokens, "tokens.output"))
    input_tokens: int = field(metadata=_stored(lambda m: m.input_tokens, "tokens.input"))
    accepted_requests: int = field(metadata=_stored(lambda m: len(m.accepted), "requests.accepted"))
    accepted_output_tokens: int = field(
        metadata=_stored(lambda m: m.accepted_tokens, "tokens.accepted_output")
    )
    request_throughput: float = field(
        metadata=_stored(lambda m: m.per_second(len(m.ok)), "throughput.requests_per_s", 3)
    )
    output_token_throughput: float = field(
        metadata=_stored(
            lambda m: m.per_second(m.output_tokens), "throughput.output_tokens_per_s", 3
        )
    )
    total_token_throughput: float = field(
        metadata=_stored(
            lambda m: m.per_second(m.output_tokens + m.input_tokens),
            "throughput.total_tokens_per_s",
            3,
        )
    )
    accepted_output_token_throughput: float = field(
        metadata=_stored(
            lambda m: m.per_second(m.accepted_tokens), "throughput.accepted_output_tokens_per_s", 3
        )
    )
    slo_attainment: float | None
    ttft_ms: Distribution = field(metadata=_samples(lambda record: (ttft_s(record),)))
    itl_ms: Distribution = field(metadata=_samples(token_gaps_s))
    tpot_ms: Distribution = field(metadata=_samples(lambda record: _stated(tpot_s(record))))
    e2e_ms: Distribution = field(metadata=_samples(lambda record: (e2e_s(record),)))
    send_lag_ms: Distribution | None
    achieved_send_rate: float | None
    achieved_completion_rate: float | None
    usage_missing_requests: int
    usage_mismatch_requests: int
    output_length_mismatch_requests: int
    client_cpu_fraction: float | None
    achieved_first_token_rate: float | None = None
    achieved_concurrency_mean: float | None = field(
        default=None, metadata=_stored(PointRecords.mean_in_flight, "concurrency_mean", 3)
    )
    warmup_in_flight: int | None = field(
        default=None, metadata=_stored(PointRecords.warmup_in_flight, "requests.warmup_in_flight")
    )
    verdicts: list[Verdict] = field(default_factory=list)
    # Multi-turn points (`bench.workloads.conversation`): TTFT and prompt length by turn index.
    turns: tuple[TurnSummary, ...] = ()
    usage_rejected_requests: int = 0
    usage_above_stream_requests: int = 0
    # Trace replays (`bench.workloads.trace_replay`): TTFT by the share of the prompt a cache could
    # serve.
    cached_shares: tuple[CachedShareSummary, ...] = ()
    # Each successful request's figures an SLO bounds, in send order, so an SLO other than the
    # run's own can be checked request by request (not in `as_json`: the result file has them).
    per_request: tuple[RequestTimes, ...] = ()

    def as_json(self) -> dict[str, Any]:
        """The summary as the `--json` point object (key names are a public contract)."""
        return {
            **attributes(self, "concurrency", "request_rate", "completed", "failed"),
            "failures_by_kind": dict(sorted(self.failures_by_kind.items())),
            "failures_by_http_status": dict(sorted(self.failures_by_http_status.items())),
            "duration_s": self.window_s,
            **attributes(
                self,
                "output_tokens",
                "input_tokens",
                "accepted_requests",
                "accepted_output_tokens",
                "request_throughput",
                "output_token_throughput",
                "total_token_throughput",
                "accepted_output_token_throughput",
                "slo_attainment",
            ),
            **{name: getattr(self, name).as_json() for name in LATENCIES},
            "send_lag_ms": self.send_lag_ms.as_json() if self.send_lag_ms else None,
            **attributes(
                self,
                "achieved_send_rate",
                "achieved_completion_rate",
                "usage_missing_requests",
                "usage_mismatch_requests",
                "usage_rejected_requests",
                "usage_above_stream_requests",
                "output_length_mismatch_requests",
                "client_cpu_fraction",
                "achieved_first_token_rate",
                "achieved_concurrency_mean",
                "warmup_in_flight",
            ),
            "verdicts": [{"code": v.code, "message": v.message} for v in self.verdicts],
            "turns": [asdict(turn) for turn in self.turns],
            "ttft_by_cached_share": [asdict(bucket) for bucket in self.cached_shares],
        }


LATENCIES: dict[str, Callable[[RequestRecord], Iterable[float]]] = {
    column.name: column.metadata["per_request"]
    for column in fields(PointSummary)
    if "per_request" in column.metadata
}
"""The latency distributions of a point (`ttft_ms`, `itl_ms`, `tpot_ms`, `e2e_ms`), each with
the samples (seconds) one request gives."""

SCALARS: dict[str, Callable[[PointRecords], Any]] = {
    column.name: column.metadata["of"] for column in fields(PointSummary) if "of" in column.metadata
}
"""The figures of a point worked out from its records alone: field → how."""

STORED: dict[str, tuple[str, int | None]] = {
    column.name: column.metadata["stored"]
    for column in fields(PointSummary)
    if "stored" in column.metadata
}
"""The figures the result's load point states as they are: field → (dotted path, decimals)."""
