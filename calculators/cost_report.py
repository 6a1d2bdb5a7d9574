"""The report behind `infermeter calc cost`: one deployment's cost per token, raw, effective, per
accepted token, per price tier and against an API.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from infermeter.calculators.cost_inputs import (
    AsDict,
    check_gpu_count,
    check_non_negative,
    check_positive,
    per_million,
)
from infermeter.calculators.errors import InputError
from infermeter.calculators.hourly_cost import EffectiveCost, effective_cost
from infermeter.calculators.price_tiers import PriceTiers, price_tiers
from infermeter.calculators.self_hosting import SelfHostedVsApi, self_hosted_vs_api
from infermeter.calculators.units import SECONDS_PER_HOUR


@dataclass(frozen=True)
class CostReport(AsDict):
    """Everything `infermeter calc cost` prints; prices are for the whole deployment."""

    price_usd_per_hour: float
    gpu_count: int
    deployment_usd_per_hour: float
    tokens_per_second: float
    accepted_tokens_per_second: float | None
    usd_per_million_tokens: float
    tokens_per_dollar: float
    effective_cost: EffectiveCost
    effective_usd_per_hour: float
    effective_usd_per_million_tokens: float
    effective_tokens_per_dollar: float
    usd_per_million_accepted_tokens: float | None
    tiers: PriceTiers
    serverless_price_basis: Literal["given", "on_demand"]
    versus_api: SelfHostedVsApi | None


def _checked_accepted(
    accepted_tokens_per_second: float | None, tokens_per_second: float
) -> float | None:
    """The accepted throughput, checked: > 0 and at most the whole throughput."""
    if accepted_tokens_per_second is None:
        return None
    accepted = check_positive("accepted_tokens_per_second", accepted_tokens_per_second)
    if accepted > tokens_per_second:
        raise InputError(
            f"accepted_tokens_per_second: expected a number <= tokens_per_second "
            f"({tokens_per_second!r}), got {accepted_tokens_per_second!r}"
        )
    return accepted


def _check_api_inputs(api_price_per_million: float | None, monthly_tokens: float | None) -> None:
    """The API comparison needs both its inputs or neither."""
    if (api_price_per_million is None) == (monthly_tokens is None):
        return
    missing, given = (
        ("monthly_tokens", "api_price_per_million")
        if monthly_tokens is None
        else ("api_price_per_million", "monthly_tokens")
    )
    raise InputError(f"{missing}: expected a number > 0 when {given} is given, got None")


def _per_deployment(name: str, usd_per_gpu_hour: float | None, gpu_count: int) -> float | None:
    """A tier's price for the whole deployment; None for a tier not offered."""
    if usd_per_gpu_hour is None:
        return None
    return check_positive(name, usd_per_gpu_hour) * gpu_count


def _tiers(
    tokens_per_second: float,
    accepted_tokens_per_second: float | None,
    effective: EffectiveCost,
    gpu_count: int,
    usd_per_gpu_hour: tuple[float, float | None, float | None, float],
) -> PriceTiers:
    """Every price tier of the deployment, from the per-GPU prices of on-demand (checked),
    interruptible, reserved and serverless."""
    on_demand, interruptible, reserved, serverless = usd_per_gpu_hour
    return price_tiers(
        tokens_per_second,
        on_demand * gpu_count,
        _per_deployment("interruptible_price_per_hour", interruptible, gpu_count),
        _per_deployment("reserved_price_per_hour", reserved, gpu_count),
        serverless_usd_per_hour=_per_deployment("serverless_price_per_hour", serverless, gpu_count),
        accepted_tokens_per_second=accepted_tokens_per_second,
        utilization=effective.utilization,
        retry_rate=effective.retry_rate,
        overhead_usd_per_hour=effective.overhead_usd_per_hour,
    )


def _versus_api(
    price_per_hour: float,
    useful_tokens_per_second: float,
    effective: EffectiveCost,
    api_price_per_million: float | None,
    monthly_tokens: float | None,
    gpu_count: int,
    always_on: bool,
) -> SelfHostedVsApi | None:
    """The GPU price with its share of the overheads against the API, when both are given."""
    if api_price_per_million is None or monthly_tokens is None:
        return None
    gpu_price = price_per_hour + effective.overhead_usd_per_hour / gpu_count
    return self_hosted_vs_api(
        check_positive("price_per_hour + overhead_per_hour / gpu_count", gpu_price),
        useful_tokens_per_second * (1.0 - effective.retry_rate),
        check_positive("api_price_per_million", api_price_per_million),
        monthly_tokens,
        gpu_count=gpu_count,
        always_on=always_on,
    )


def cost_report(
    price_per_hour: float,
    tokens_per_second: float,
    accepted_tokens_per_second: float | None = None,
    utilization: float = 1.0,
    retry_rate: float = 0.0,
    overhead_per_hour: float = 0.0,
    interruptible_price_per_hour: float | None = None,
    reserved_price_per_hour: float | None = None,
    api_price_per_million: float | None = None,
    monthly_tokens: float | None = None,
    *,
    gpu_count: int = 1,
    always_on: bool = True,
    serverless_price_per_hour: float | None = None,
) -> CostReport:
    """Cost per token of one deployment: raw, effective, per accepted token, per tier, vs an API.

    Prices are per GPU and multiplied by `gpu_count`; `overhead_per_hour`,
    `tokens_per_second` and `accepted_tokens_per_second` are the whole deployment's.
    `price_per_hour` is the on-demand tier. `usd_per_million_accepted_tokens` divides the
    effective hourly cost by the accepted throughput. The API comparison needs both
    `api_price_per_million` and `monthly_tokens`; it adds overheads to the GPU price,
    discounts retried work from the throughput (accepted throughput where given), and takes
    idle time from the volume itself (`always_on`), not from `utilization`. The serverless tier
    is priced at `serverless_price_per_hour`, else at the on-demand rate (per-second billing at
    the same rate, as the reference cloud bills it: `serverless_price_basis` says which).
    """
    price = check_positive("price_per_hour", price_per_hour)
    count = check_gpu_count(gpu_count)
    throughput = check_positive("tokens_per_second", tokens_per_second)
    accepted = _checked_accepted(accepted_tokens_per_second, throughput)
    _check_api_inputs(api_price_per_million, monthly_tokens)
    overhead = check_non_negative("overhead_per_hour", overhead_per_hour)
    deployment = price * count
    effective = effective_cost(deployment, utilization, retry_rate, overhead)
    hourly = effective.effective_usd_per_hour
    serverless = price if serverless_price_per_hour is None else serverless_price_per_hour
    prices = (price, interruptible_price_per_hour, reserved_price_per_hour, serverless)
    useful = throughput if accepted is None else accepted
    return CostReport(
        price_usd_per_hour=price,
        gpu_count=count,
        deployment_usd_per_hour=deployment,
        tokens_per_second=throughput,
        accepted_tokens_per_second=accepted,
        usd_per_million_tokens=per_million(deployment, throughput),
        tokens_per_dollar=throughput * SECONDS_PER_HOUR / deployment,
        effective_cost=effective,
        effective_usd_per_hour=hourly,
        effective_usd_per_million_tokens=per_million(hourly, throughput),
        effective_tokens_per_dollar=throughput * SECONDS_PER_HOUR / hourly,
        usd_per_million_accepted_tokens=None if accepted is None else per_million(hourly, accepted),
        tiers=_tiers(throughput, accepted, effective, count, prices),
        serverless_price_basis="on_demand" if serverless_price_per_hour is None else "given",
        versus_api=_versus_api(
            price, useful, effective, api_price_per_million, monthly_tokens, count, always_on
        ),
    )
