"""Measurements: what was observed at each load point, and what the engine reported at startup.

Values are stored as measured or as published; a figure a source does not state is null.
"""

import itertools
from typing import Annotated, Literal, Self

from pydantic import Field, model_validator

from infermeter.registry.models.common import (
    Fraction,
    NonNegativeFloat,
    NonNegativeInt,
    Percent,
    PositiveFloat,
    PositiveInt,
    StrictModel,
    Text,
)

__all__ = [
    "OPEN_ARRIVALS",
    "Arrival",
    "CachedShareStats",
    "EngineTelemetry",
    "FailureCounts",
    "GpuTelemetry",
    "LatencyStats",
    "Load",
    "LoadPoint",
    "RateSearch",
    "RequestCounts",
    "RequestFigures",
    "Startup",
    "Telemetry",
    "Throughput",
    "TokenCounts",
    "TurnStats",
    "Verdict",
]

Arrival = Literal["closed", "poisson", "gamma", "constant", "offline", "static_batch"]
"""How requests were offered; see `Load.arrival`."""

OPEN_ARRIVALS: tuple[str, ...] = ("poisson", "gamma", "constant")
"""Arrivals at a rate, regardless of completions (an open loop)."""


class RateSearch(StrictModel):
    """Server at an SLO: the point's `request_rate` is the highest rate found whose latency
    percentile stayed within these bounds (MLPerf's Server and Interactive scenarios, or a
    max-rate search of infermeter's own); as a `concurrency_search`, the point's `concurrency`
    is the highest closed-loop concurrency found that kept them. The measured percentiles are
    the point's own `ttft_ms`, `tpot_ms` and `e2e_ms`."""

    percentile: Annotated[float, Field(gt=0, lt=100, allow_inf_nan=False)] = Field(
        description="The percentile the bounds apply to, e.g. 99 for p99."
    )
    ttft_ms: PositiveFloat | None = Field(
        None, description="Bound on that percentile of time to first token, ms; null if none."
    )
    tpot_ms: PositiveFloat | None = Field(
        None, description="Bound on that percentile of time per output token, ms; null if none."
    )
    e2e_ms: PositiveFloat | None = Field(
        None, description="Bound on that percentile of end-to-end latency, ms; null if none."
    )

    @model_validator(mode="after")
    def _has_a_bound(self) -> Self:
        if self.ttft_ms is None and self.tpot_ms is None and self.e2e_ms is None:
            raise ValueError("a rate search needs at least one bound (ttft_ms, tpot_ms, e2e_ms)")
        return self


class Load(StrictModel):
    """How requests were offered.

    - `closed`: a fixed number in flight (`concurrency`); a new request as soon as one finishes.
    - `poisson`, `gamma`, `constant`: an open loop; requests arrive at `request_rate`
      regardless of completions (`concurrency`, if given, caps the requests in flight).
      With `rate_search`, the rate is the highest one found that met the stated bounds.
      A closed loop's `concurrency_search` says the same of its concurrency.
    - `offline`: every request queued at once and the engine's batching decides how many run
      together; there is neither a concurrency level nor a rate, so no per-user rate either.
    - `static_batch`: `concurrency` requests started together and run as one batch to the end
      (vLLM's `bench latency`); the point's latency is the batch's, not a served request's.
    """

    concurrency: PositiveInt | None = Field(
        None,
        description="Requests in flight: the level for `closed` arrival (with "
        "`concurrency_search`, the highest level that met its bounds), an upper cap for open; "
        "for an agent DAG replay (`workload.trace.format` `aiperf_dag`), the root "
        "conversations at once, whose subagents run beside them.",
    )
    request_rate: PositiveFloat | None = Field(
        None,
        description="Arrival rate in requests per second (open arrival only): the target, or "
        "with `rate_search` the highest rate that met its bounds.",
    )
    arrival: Arrival = Field(
        description="`closed`: a new request as soon as one finishes; `poisson`, `gamma` or "
        "`constant`: requests arrive at `request_rate` regardless of completions; `offline`: "
        "every request queued at once; `static_batch`: `concurrency` requests started together "
        "as one batch."
    )
    burstiness: PositiveFloat | None = Field(
        None, description="Shape of the gamma arrival process (1 = Poisson); `gamma` only."
    )
    rate_search: RateSearch | None = Field(
        None,
        description="Server at an SLO: the bounds that `request_rate` is the highest rate to "
        "meet; open arrival only.",
    )
    concurrency_search: RateSearch | None = Field(
        None,
        description="Server at an SLO, closed loop: the bounds that `concurrency` is the "
        "highest concurrency to meet; closed arrival only.",
    )

    @model_validator(mode="after")
    def _arrival_has_its_parameters(self) -> Self:
        if self.arrival in ("closed", "static_batch"):
            if self.concurrency is None:
                raise ValueError(f"{self.arrival} arrival needs concurrency")
            if self.request_rate is not None:
                raise ValueError(f"{self.arrival} arrival takes no request_rate")
        elif self.arrival == "offline":
            if self.concurrency is not None or self.request_rate is not None:
                raise ValueError(
                    "offline arrival takes neither concurrency nor request_rate "
                    "(every request is queued at once)"
                )
        elif self.request_rate is None:
            raise ValueError(f"{self.arrival} arrival needs request_rate")
        if self.burstiness is not None and self.arrival != "gamma":
            raise ValueError("burstiness applies to gamma arrival only")
        if self.rate_search is not None and self.arrival not in OPEN_ARRIVALS:
            raise ValueError("rate_search applies to open arrival (poisson, gamma, constant) only")
        if self.concurrency_search is not None and self.arrival != "closed":
            raise ValueError("concurrency_search applies to closed arrival only")
        return self

    @property
    def slo_search(self) -> RateSearch | None:
        """The bounds of a server-at-SLO point (a rate or a concurrency search), or None."""
        return self.rate_search or self.concurrency_search

    def label(self) -> str:
        """The load in a reader's words, e.g. `concurrency 64` or `offline`."""
        if self.arrival == "offline":
            return "offline (all requests queued at once)"
        if self.arrival == "static_batch":
            return f"static batch of {self.concurrency} (started together)"
        if self.arrival == "closed":
            level = f"concurrency {self.concurrency}"
        else:
            cap = f", max {self.concurrency} in flight" if self.concurrency is not None else ""
            level = f"rate {self.request_rate:g} req/s {self.arrival}{cap}"
        search = self.slo_search
        if search is None:
            return level.removeprefix("rate ")
        bounds = slo_bounds_text(search.percentile, search.ttft_ms, search.tpot_ms, search.e2e_ms)
        return f"highest {level} with {bounds}"


def slo_bounds_text(
    percentile: float, ttft_ms: float | None, tpot_ms: float | None, e2e_ms: float | None
) -> str:
    """A server-at-SLO search's bounds in a reader's words, e.g. `p99 TTFT ≤ 200 ms, TPOT ≤ 50
    ms` (the bounds not set left out)."""
    bounds = [
        f"{name} ≤ {value:g} ms"
        for name, value in (("TTFT", ttft_ms), ("TPOT", tpot_ms), ("E2E", e2e_ms))
        if value is not None
    ]
    return f"p{percentile:g} {', '.join(bounds)}"


class RequestCounts(StrictModel):
    """Requests in the measured window."""

    sent: NonNegativeInt | None = Field(None, description="Requests sent.")
    completed: NonNegativeInt | None = Field(
        None, description="Requests that finished successfully."
    )
    failed: NonNegativeInt | None = Field(
        None, description="Requests that failed (any kind in `failures`)."
    )
    accepted: NonNegativeInt | None = Field(
        None, description="Completed requests that also met every limit in `slo`."
    )
    warmup_in_flight: NonNegativeInt | None = Field(
        None,
        description="Warm-up requests (sent before the measured window, not counted in `sent`) "
        "still in flight during it: they load the server, and `concurrency_mean` counts them. "
        "Null if not stated.",
    )


class FailureCounts(StrictModel):
    """Failed requests by kind; each failed request counts once."""

    timeout: NonNegativeInt = Field(0, description="Requests that timed out on the client.")
    http_status: NonNegativeInt = Field(
        0, description="Requests answered with an HTTP error status."
    )
    disconnect: NonNegativeInt = Field(0, description="Requests whose connection dropped mid-way.")
    server_error: NonNegativeInt = Field(
        0, description="Requests the server reported as failed inside a 200 response."
    )
    out_of_memory: NonNegativeInt = Field(0, description="Requests failed by a GPU out-of-memory.")
    malformed_stream: NonNegativeInt = Field(
        0, description="Requests whose response stream could not be parsed."
    )


class TokenCounts(StrictModel):
    """Tokens in the measured window, from the server's `usage` counts."""

    input: NonNegativeInt | None = Field(None, description="Prompt tokens of completed requests.")
    output: NonNegativeInt | None = Field(None, description="Output tokens of completed requests.")
    accepted_output: NonNegativeInt | None = Field(
        None, description="Output tokens of accepted requests (completed and within `slo`)."
    )


class Throughput(StrictModel):
    """Throughput of the whole deployment (all its GPUs) over the measured window."""

    requests_per_s: NonNegativeFloat | None = Field(
        None, description="Completed requests per second."
    )
    output_tokens_per_s: NonNegativeFloat | None = Field(
        None, description="Output tokens per second."
    )
    total_tokens_per_s: NonNegativeFloat | None = Field(
        None, description="Prompt plus output tokens per second."
    )
    accepted_output_tokens_per_s: NonNegativeFloat | None = Field(
        None, description="Output tokens of accepted requests per second."
    )


class LatencyStats(StrictModel):
    """Distribution of one latency over the requests of a load point, in milliseconds.

    Values are stored as measured or published; any may be null when a source does not state it.
    """

    n: NonNegativeInt | None = Field(None, description="Number of samples the statistics cover.")
    mean: NonNegativeFloat | None = Field(None, description="Arithmetic mean, ms.")
    p50: NonNegativeFloat | None = Field(None, description="Median, ms.")
    p90: NonNegativeFloat | None = Field(None, description="90th percentile, ms.")
    p95: NonNegativeFloat | None = Field(None, description="95th percentile, ms.")
    p99: NonNegativeFloat | None = Field(None, description="99th percentile, ms.")
    max: NonNegativeFloat | None = Field(None, description="Largest sample, ms.")

    @model_validator(mode="after")
    def _statistics_are_consistent(self) -> Self:
        if self.n == 0 and any(value is not None for value in self._statistics().values()):
            raise ValueError("n is 0 but statistics are given")
        ordered = [
            (name, value)
            for name, value in self._statistics().items()
            if name != "mean" and value is not None
        ]
        for (low_name, low), (high_name, high) in itertools.pairwise(ordered):
            if low > high:
                raise ValueError(f"{low_name} ({low}) is above {high_name} ({high})")
        if self.mean is not None and self.max is not None and self.mean > self.max:
            raise ValueError(f"mean ({self.mean}) is above max ({self.max})")
        return self

    def given(self) -> dict[str, float]:
        """The statistics the source states, by name."""
        return {name: value for name, value in self._statistics().items() if value is not None}

    def _statistics(self) -> dict[str, float | None]:
        return {
            "mean": self.mean,
            "p50": self.p50,
            "p90": self.p90,
            "p95": self.p95,
            "p99": self.p99,
            "max": self.max,
        }


class GpuTelemetry(StrictModel):
    """NVML readings over the measured window; aggregated over all GPUs of the deployment."""

    gpu_utilization_pct_mean: Percent | None = Field(
        None, description="Mean GPU utilization over time and GPUs, percent."
    )
    memory_used_bytes_max: NonNegativeInt | None = Field(
        None, description="Highest memory in use on any one GPU, bytes."
    )
    power_w_mean: NonNegativeFloat | None = Field(
        None, description="Mean power draw of all GPUs together, watts."
    )
    energy_j: NonNegativeFloat | None = Field(
        None, description="Energy used by all GPUs together over the window, joules."
    )
    sm_clock_mhz_mean: NonNegativeFloat | None = Field(
        None, description="Mean SM clock over time and GPUs, MHz."
    )
    temperature_c_max: float | None = Field(
        None, allow_inf_nan=False, description="Highest GPU temperature seen, °C."
    )


class EngineTelemetry(StrictModel):
    """The engine's own metrics (vLLM's Prometheus endpoint) over the measured window."""

    kv_cache_usage_pct_mean: Percent | None = Field(
        None, description="Mean KV cache usage, percent of the cache."
    )
    kv_cache_usage_pct_max: Percent | None = Field(
        None, description="Highest KV cache usage, percent of the cache."
    )
    preemptions: NonNegativeInt | None = Field(
        None, description="Sequences preempted (evicted and recomputed) during the window."
    )
    prefix_cache_hit_rate: Fraction | None = Field(
        None, description="Fraction of prompt tokens served from the prefix cache."
    )


class Telemetry(StrictModel):
    """Hardware and engine readings beside the client-side measurements."""

    gpu: GpuTelemetry | None = Field(None, description="GPU readings from NVML.")
    engine: EngineTelemetry | None = Field(None, description="Engine metrics.")


INTERRUPTED_VERDICT = "interrupted"
"""The code of the verdict on a load point cut short by a Ctrl-C or SIGTERM: its figures are
those of the requests that finished before the stop (the index never ranks it)."""


class Verdict(StrictModel):
    """A finding about whether a number can be trusted, e.g. `client-saturated`."""

    code: Annotated[str, Field(pattern=r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$", max_length=60)] = Field(
        description="Machine-readable finding, e.g. `client-saturated`, `rate-not-reached`."
    )
    message: Text = Field(description="The finding for a reader, with the figures behind it.")


def _percentile(stats: LatencyStats | None, percentile: float) -> float | None:
    if stats is None:
        return None
    value: float | None = {50.0: stats.p50, 90.0: stats.p90, 95.0: stats.p95, 99.0: stats.p99}.get(
        float(percentile)
    )
    return value


class TurnStats(StrictModel):
    """The requests of one turn index of a multi-turn point (turn 1 is each session's first)."""

    turn: PositiveInt = Field(description="Turn index within its session, from 1.")
    requests: NonNegativeInt = Field(description="Measured, successful requests of this turn.")
    input_tokens_mean: NonNegativeFloat = Field(
        description="Mean prompt tokens of this turn (the whole history sent), server's count."
    )
    ttft_ms: LatencyStats = Field(description="Time to first token of this turn's requests, ms.")


class CachedShareStats(StrictModel):
    """TTFT of a trace replay's requests whose prompt share in blocks seen earlier (what a
    prefix cache could serve) lies in [cached_share_min, cached_share_max)."""

    cached_share_min: Fraction = Field(description="Lowest share of the bucket.")
    cached_share_max: Fraction = Field(
        description="Highest share of the bucket (excluded, except 1)."
    )
    requests: NonNegativeInt = Field(description="Measured, successful requests in the bucket.")
    ttft_ms: LatencyStats = Field(description="Time to first token of the bucket's requests, ms.")


class RequestFigures(StrictModel):
    """Each measured, successful request's figures that an SLO bounds, as columns in send order
    (failed requests are `requests.failed`), so any SLO, not only the run's own, can be checked
    request by request. Times are rounded *up* to the microsecond: a bound in whole
    microseconds is met by a stored time exactly when it was met by the measured one."""

    output_tokens: list[NonNegativeInt] = Field(description="Output tokens of each request.")
    ttft_ms: list[NonNegativeFloat] = Field(description="Time to first token of each, ms.")
    tpot_ms: list[NonNegativeFloat | None] = Field(
        description="Time per output token of each, ms; null for a one-token reply (no TPOT)."
    )
    e2e_ms: list[NonNegativeFloat] = Field(description="End-to-end latency of each, ms.")

    @model_validator(mode="after")
    def _columns_line_up(self) -> Self:
        lengths = {len(self.output_tokens), len(self.ttft_ms), len(self.tpot_ms), len(self.e2e_ms)}
        if len(lengths) > 1:
            raise ValueError("output_tokens, ttft_ms, tpot_ms and e2e_ms differ in length")
        return self


class LoadPoint(StrictModel):
    """Measurements at one load level."""

    load: Load = Field(description="The load offered.")
    duration_s: PositiveFloat | None = Field(
        None, description="Wall time of the measured window, seconds."
    )
    concurrency_mean: NonNegativeFloat | None = Field(
        None,
        description="Requests in flight over the measured window, time-weighted mean, as "
        "achieved, warm-up requests still in flight included (`requests.warmup_in_flight`; "
        "the drain at the end of a closed-loop point lowers it below `load.concurrency`).",
    )
    requests: RequestCounts = Field(description="Request counts.")
    failures: FailureCounts | None = Field(None, description="Failed requests by kind.")
    tokens: TokenCounts = Field(description="Token counts.")
    throughput: Throughput = Field(description="Throughput of the whole deployment.")
    ttft_ms: LatencyStats | None = Field(
        None, description="Time to first token: request sent → first content token, ms."
    )
    itl_ms: LatencyStats | None = Field(
        None, description="Inter-token latency: gap between consecutive tokens, ms."
    )
    tpot_ms: LatencyStats | None = Field(
        None,
        description="Time per output token per request: (E2E − TTFT) / (output tokens − 1), ms.",
    )
    e2e_ms: LatencyStats | None = Field(
        None, description="End-to-end latency: request sent → last token, ms."
    )
    request_figures: RequestFigures | None = Field(
        None,
        description="Measured runs: each successful request's output tokens, TTFT, TPOT and "
        "E2E, so an answer at any reader's SLO counts exactly the requests that met it.",
    )
    queue_ms: LatencyStats | None = Field(
        None, description="Time requests waited in the engine's queue (engine metrics), ms."
    )
    telemetry: Telemetry | None = Field(None, description="GPU and engine readings.")
    validity: list[Verdict] = Field(
        default_factory=list, description="Findings that limit how far the numbers can be trusted."
    )
    turns: list[TurnStats] | None = Field(
        None,
        description="Multi-turn workloads: TTFT and prompt length by turn index, so the cost of "
        "a growing history (and what the prefix cache saves) shows.",
    )
    send_lag_ms: LatencyStats | None = Field(
        None,
        description="Open loop and trace replay: how late each request left after its intended "
        "send time (the client's lateness), ms; null for a closed loop.",
    )
    ttft_by_cached_share: list[CachedShareStats] | None = Field(
        None,
        description="Trace replays: TTFT by the share of the prompt in blocks earlier requests "
        "sent, so what the prefix cache saves shows.",
    )

    @model_validator(mode="after")
    def _one_figure_per_completed_request(self) -> Self:
        figures, completed = self.request_figures, self.requests.completed
        if figures is None:
            return self
        if len(figures.output_tokens) != completed:
            raise ValueError(
                f"request_figures has {len(figures.output_tokens)} requests, "
                f"requests.completed is {completed}"
            )
        output = self.tokens.output
        if output is not None and sum(figures.output_tokens) != output:
            raise ValueError(
                f"request_figures' output tokens add up to {sum(figures.output_tokens)}, "
                f"tokens.output is {output}"
            )
        return self

    @model_validator(mode="after")
    def _searched_rate_met_its_bounds(self) -> Self:
        search = self.load.slo_search
        if search is None:
            return self
        what = "rate" if self.load.rate_search is not None else "concurrency"
        for name, bound in (
            ("ttft_ms", search.ttft_ms),
            ("tpot_ms", search.tpot_ms),
            ("e2e_ms", search.e2e_ms),
        ):
            stats: LatencyStats | None = getattr(self, name)
            measured = _percentile(stats, search.percentile)
            if bound is not None and measured is not None and measured > bound:
                raise ValueError(
                    f"{name} p{search.percentile:g} ({measured:g}) is above the bound "
                    f"({bound:g}) that the searched {what} met"
                )
        return self


class Startup(StrictModel):
    """What vLLM reported while starting up."""

    weights_gib: NonNegativeFloat | None = Field(None, description="Memory taken by weights, GiB.")
    kv_cache_tokens: NonNegativeInt | None = Field(
        None, description="Tokens that fit into the KV cache."
    )
    kv_cache_gib: NonNegativeFloat | None = Field(
        None,
        description="Memory vLLM gave the KV cache, GiB (GPU memory; host memory on the CPU), "
        "from its log or its `vllm:cache_config_info` metric.",
    )
    block_size: NonNegativeInt | None = Field(
        None, description="Tokens per KV cache block, as vLLM's `vllm:cache_config_info` says."
    )
    max_concurrency: NonNegativeFloat | None = Field(
        None, description="Requests of max_model_len tokens that fit at once, as vLLM reports it."
    )
    cuda_graph_gib: NonNegativeFloat | None = Field(
        None, description="Memory taken by CUDA graphs, GiB."
    )
    startup_s: NonNegativeFloat | None = Field(
        None, description="Seconds from launch to the server answering."
    )
