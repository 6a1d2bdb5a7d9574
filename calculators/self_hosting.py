"""Self-hosting versus an API: the monthly cost of a token volume on own GPUs or bought per token,
and the volume at which they break even.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from infermeter.calculators.cost_inputs import (
    HOURS_PER_MONTH,
    TOKENS_PER_MILLION,
    AsDict,
    check_gpu_count,
    check_positive,
)
from infermeter.calculators.errors import InputError
from infermeter.calculators.units import SECONDS_PER_HOUR

HostingWinner = Literal["self_hosted", "api", "tie"]


@dataclass(frozen=True)
class SelfHostedVsApi(AsDict):
    """Monthly cost of serving a volume on own GPUs or through an API, and the break-even."""

    deployment_usd_per_hour: float
    tokens_per_second: float
    monthly_tokens: float
    always_on: bool
    hours_per_month: float
    busy_hours_per_month: float
    replicas: int
    self_hosted_usd_per_month: float
    api_usd_per_month: float
    self_hosted_usd_per_million_tokens: float
    api_usd_per_million_tokens: float
    break_even_monthly_tokens: float | None
    winner: HostingWinner


def _self_hosted_month(
    deployment_usd_per_hour: float,
    tokens_per_second: float,
    monthly_tokens: float,
    hours_per_month: float,
    api_usd_per_million_tokens: float,
    always_on: bool,
) -> tuple[int, float, float | None]:
    """Replicas the volume needs, the month's self-hosted cost, and the break-even volume."""
    deployment, month = deployment_usd_per_hour, hours_per_month
    capacity_tokens = tokens_per_second * SECONDS_PER_HOUR * month
    busy_hours = monthly_tokens / (tokens_per_second * SECONDS_PER_HOUR)
    if not always_on:
        replicas = max(1, math.ceil(busy_hours / month - 1e-9))
        return replicas, busy_hours * deployment, None
    # A hair of slack so that exactly one month of work does not round up to two replicas.
    replicas = max(1, math.ceil(monthly_tokens / capacity_tokens - 1e-9))
    one_replica_break_even = deployment * month * TOKENS_PER_MILLION / api_usd_per_million_tokens
    break_even = one_replica_break_even if one_replica_break_even <= capacity_tokens else None
    return replicas, replicas * deployment * month, break_even


def self_hosted_vs_api(
    gpu_usd_per_hour: float,
    tokens_per_second: float,
    api_usd_per_million_tokens: float,
    monthly_tokens: float,
    *,
    gpu_count: int = 1,
    always_on: bool = True,
    hours_per_month: float = HOURS_PER_MONTH,
) -> SelfHostedVsApi:
    """Compare serving `monthly_tokens` on GPUs with buying them from an API.

    `tokens_per_second` is what the whole deployment (`gpu_count` GPUs at `gpu_usd_per_hour`
    each) sustains. Busy hours = monthly_tokens / (tokens_per_second × 3600).

    - `always_on=True`: every hour of the month is paid, by as many replicas as the volume
      needs. The break-even is the volume at which one replica's month costs what the API
      charges for it, `deployment $/h × hours_per_month × 1e6 / api $/1M`; above it self-hosting
      wins. It is None when one replica cannot carry that volume (the API is cheaper even at
      full load).
    - `always_on=False` (per-second billing, scale to zero): only busy hours are paid; both
      costs grow linearly with volume, so one side wins at every volume and the break-even is
      None.
    """
    per_gpu = check_positive("gpu_usd_per_hour", gpu_usd_per_hour)
    count = check_gpu_count(gpu_count)
    throughput = check_positive("tokens_per_second", tokens_per_second)
    api_price = check_positive("api_usd_per_million_tokens", api_usd_per_million_tokens)
    volume = check_positive("monthly_tokens", monthly_tokens)
    month = check_positive("hours_per_month", hours_per_month)
    if not isinstance(always_on, bool):
        raise InputError(f"always_on: expected true or false, got {always_on!r}")

    deployment = per_gpu * count
    busy_hours = volume / (throughput * SECONDS_PER_HOUR)
    api_monthly = volume * api_price / TOKENS_PER_MILLION
    replicas, self_monthly, break_even = _self_hosted_month(
        deployment, throughput, volume, month, api_price, always_on
    )
    winner: HostingWinner = "self_hosted" if self_monthly < api_monthly else "api"
    if math.isclose(self_monthly, api_monthly, rel_tol=1e-9):
        winner = "tie"
    return SelfHostedVsApi(
        deployment_usd_per_hour=deployment,
        tokens_per_second=throughput,
        monthly_tokens=volume,
        always_on=always_on,
        hours_per_month=month,
        busy_hours_per_month=busy_hours,
        replicas=replicas,
        self_hosted_usd_per_month=self_monthly,
        api_usd_per_month=api_monthly,
        self_hosted_usd_per_million_tokens=self_monthly / volume * TOKENS_PER_MILLION,
        api_usd_per_million_tokens=api_price,
        break_even_monthly_tokens=break_even,
        winner=winner,
    )
