"""The load points of a run: the fixed points of a sweep (`plan_points`: its default sizes and
warm-ups) and the point that measures one probe of a max-load search (`probe_plan`).
"""

from __future__ import annotations

import math

from infermeter.bench.errors import BenchConfigError
from infermeter.bench.run.config import RunConfig
from infermeter.bench.run.load import PointPlan
from infermeter.bench.run.metrics import (
    PERCENTILE_MIN_REQUESTS,
)
from infermeter.bench.workloads.profiles import get_profile
from infermeter.calculators.plural import counted


def plan_points(config: RunConfig) -> list[PointPlan]:
    """The load points of a run, in order, with their default sizes and warm-ups.

    Defaults: the profile's concurrency sweep when neither a concurrency nor a rate is given;
    without `--num-requests` and `--duration`, max(100, 4 × concurrency) requests per closed-loop
    point and max(100, 30 s of traffic) per open-loop point; a warm-up of one request per
    concurrency slot, or about one second of traffic (at most 100 requests).
    """
    _check_loads(config)
    if config.search is not None:
        return []
    concurrencies = config.concurrency
    if not concurrencies and not config.request_rates:
        concurrencies = get_profile(config.profile).default_concurrency
    unbounded = config.num_requests is None and config.duration_s is None
    plans = [
        PointPlan(
            concurrency=concurrency,
            num_requests=max(100, 4 * concurrency) if unbounded else config.num_requests,
            duration_s=config.duration_s,
            warmup_requests=(
                concurrency if config.warmup_requests is None else config.warmup_requests
            ),
            seed=config.seed,
        )
        for concurrency in concurrencies
    ]
    plans += [
        PointPlan(
            request_rate=rate,
            max_concurrency=config.max_concurrency,
            burstiness=config.burstiness,
            num_requests=max(100, math.ceil(30 * rate)) if unbounded else config.num_requests,
            duration_s=config.duration_s,
            warmup_requests=(
                min(100, math.ceil(rate))
                if config.warmup_requests is None
                else config.warmup_requests
            ),
            seed=config.seed,
        )
        for rate in config.request_rates
    ]
    return plans


# An open-loop point that takes longer than this to send its requests gets a note at the start.
LONG_POINT_S = 3600.0
# With --duration, a wait this long (or longer than the duration) for the first measured request
# gets a note too.
LONG_WAIT_S = 60.0
_UNITS = (
    (365 * 86400.0, "years"), (86400.0, "days"), (3600.0, "hours"), (60.0, "minutes"),
    (0.0, "seconds"),
)  # fmt: skip


def long_point_notes(plans: list[PointPlan]) -> list[str]:
    """A note for each open-loop point that takes long before its figures: one no --duration
    bounds whose requests (warm-up included) take over an hour to send at its rate
    (`--request-rate 1e-6` would otherwise wait in silence for years), and one whose
    --duration opens only at its first measured request, which its rate sends long after the
    warm-up (`--request-rate 0.001 --duration 5` ran 200 s)."""
    notes = []
    for plan in plans:
        if plan.request_rate is None:
            continue
        rate, duration = plan.request_rate, plan.duration_s
        note = _long_send(plan, rate) if duration is None else _long_wait(plan, rate, duration)
        if note is not None:
            notes.append(note)
    return notes


def _about(seconds: float) -> str:
    size, unit = next((s, u) for s, u in _UNITS if seconds >= s)
    return f"about {seconds / (size or 1.0):,.1f} {unit}"


def _long_send(plan: PointPlan, rate: float) -> str | None:
    requests = (plan.num_requests or 0) + plan.warmup_requests
    seconds = requests / rate
    if seconds <= LONG_POINT_S:
        return None
    return (
        f"note: the point at {rate:g} requests/s sends {requests:,} requests in "
        f"{_about(seconds)}; --duration bounds a point"
    )


def _long_wait(plan: PointPlan, rate: float, duration_s: float) -> str | None:
    seconds = plan.warmup_requests / rate  # the first measured request's mean time
    if seconds <= max(LONG_WAIT_S, duration_s):
        return None
    warmup = plan.warmup_requests
    return (
        f"note: the point at {rate:g} requests/s sends its first measured request "
        f"after its warm-up ({counted(warmup, 'request')}), in "
        f"{_about(seconds)}; its --duration of {duration_s:g} s counts from there "
        "(--warmup 0 starts it at once)"
    )


def _check_loads(config: RunConfig) -> None:
    """A closed loop or an open loop, not both; a search's loads are its own; a cap on the
    concurrency belongs to an open loop."""
    if config.concurrency and config.request_rates:
        raise BenchConfigError(
            "give either --concurrency (closed loop) or --request-rate (open loop), not both",
            "--request-rate",
        )
    if config.search is not None:
        if config.concurrency or config.request_rates:
            raise BenchConfigError(
                "the search chooses the loads; give its start with --search-start",
                "--concurrency" if config.concurrency else "--request-rate",
            )
        if config.max_concurrency is not None and config.search.kind == "concurrency":
            raise BenchConfigError(
                "caps an open loop, not a concurrency search", "--max-concurrency"
            )
        return
    if config.max_concurrency is not None and not config.request_rates:
        raise BenchConfigError(
            "caps an open loop; give it with --request-rate", "--max-concurrency"
        )


def probe_plan(config: RunConfig, load: float) -> PointPlan:
    """The load point that measures one probe of `config.search` at `load`.

    A probe is bounded by its request count only, never fewer than a p99 needs (100 measured
    requests): --num-requests when given, else --duration's worth of traffic at the rate, else
    the sizes a fixed point would get; warm-ups as a fixed point's."""
    search = config.search
    assert search is not None
    need = PERCENTILE_MIN_REQUESTS["p99"]
    if search.kind == "concurrency":
        concurrency = int(load)
        wanted = config.num_requests or 4 * concurrency
        return PointPlan(
            concurrency=concurrency,
            num_requests=max(need, wanted),
            warmup_requests=(
                concurrency if config.warmup_requests is None else config.warmup_requests
            ),
            seed=config.seed,
        )
    seconds = config.duration_s or 30.0
    wanted = config.num_requests or math.ceil(seconds * load)
    return PointPlan(
        request_rate=load,
        max_concurrency=config.max_concurrency,
        burstiness=config.burstiness,
        num_requests=max(need, wanted),
        warmup_requests=(
            min(100, math.ceil(load)) if config.warmup_requests is None else config.warmup_requests
        ),
        seed=config.seed,
    )
