"""The effective hourly cost: what one useful hour costs with overheads, idle time and retries."""

from __future__ import annotations

import math
from dataclasses import dataclass

from infermeter.calculators.cost_inputs import (
    AsDict,
    check_non_negative,
    check_positive,
    check_retry_rate,
    check_utilization,
)
from infermeter.calculators.errors import InputError


@dataclass(frozen=True)
class EffectiveCost(AsDict):
    """What one hour of useful work costs, split into its parts (they add up)."""

    price_usd_per_hour: float
    overhead_usd_per_hour: float
    paid_usd_per_hour: float
    idle_usd_per_hour: float
    retry_usd_per_hour: float
    effective_usd_per_hour: float
    utilization: float
    retry_rate: float


def effective_cost(
    price_usd_per_hour: float,
    utilization: float = 1.0,
    retry_rate: float = 0.0,
    overhead_usd_per_hour: float = 0.0,
) -> EffectiveCost:
    """Effective cost of one useful hour, with idle time, retries and overheads.

    - `overhead_usd_per_hour` (storage, bandwidth, support, engineering) is added to every
      paid hour: `paid = price + overhead`.
    - `utilization` is the fraction of paid hours doing useful work, in (0, 1]; idle hours are
      paid too, so a useful hour costs `paid / utilization`.
    - `retry_rate` is the fraction of the requests served that repeat a failed attempt, in
      [0, 1); that work earns nothing, so useful throughput is `(1 − retry_rate)` of the measured
      one. We charge it on the cost side, `/ (1 − retry_rate)`, so throughputs stay as measured.

    `effective = paid / utilization / (1 − retry_rate)` = paid + idle + retry shares.
    """
    price = check_positive("price_usd_per_hour", price_usd_per_hour)
    used = check_utilization(utilization)
    retried = check_retry_rate(retry_rate)
    overhead = check_non_negative("overhead_usd_per_hour", overhead_usd_per_hour)
    paid = price + overhead
    with_idle = paid / used
    effective = with_idle / (1.0 - retried)
    if not math.isfinite(effective):  # a utilization of 1e-320: no float holds the cost
        raise InputError(
            f"utilization: {utilization!r} is too small; the effective hourly cost exceeds "
            "any number (expected a share such as 0.6)"
        )
    return EffectiveCost(
        price_usd_per_hour=price,
        overhead_usd_per_hour=overhead,
        paid_usd_per_hour=paid,
        idle_usd_per_hour=with_idle - paid,
        retry_usd_per_hour=effective - with_idle,
        effective_usd_per_hour=effective,
        utilization=used,
        retry_rate=retried,
    )
