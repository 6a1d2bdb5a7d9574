"""The report behind `infermeter calc cost`: one deployment's cost per token, raw, effective, per
accepted token, per price tier and against an API.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from calculators.cost_inputs import (
    SECONDS_PER_HOUR,
    AsDict,
    check_gpu_count,
    check_positive,
    per_million,
)
from calculators.errors import InputError
from calculators.hourly_cost import EffectiveCost, effective_cost
from calculators.price_tiers import PriceTiers, price_tiers
from calculators.self_hosting import SelfHostedVsApi, self_hosted_vs_api


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


def cost_report(
    price_usd_per_hour: float,
    tokens_per_second: float,
    accepted_tokens_per_second: float | None = None,
    utilization: float = 1.0,
    retry_rate: float = 0.0,
    overhead_usd_per_hour: float = 0.0,
    interruptible_usd_per_hour: float | None = None,
    reserved_usd_per_hour: float | None = None,
    api_usd_per_million_tokens: float | None = None,
    monthly_tokens: float | None = None,
    *,
    gpu_count: int = 1,
    always_on: bool = True,
    serverless_usd_per_hour: float | None = None,
) -> CostReport:
    """Cost per token of one deployment: raw, effective, per accepted token, per tier, vs an API.

    Prices are per GPU and multiplied by `gpu_count`; `overhead_usd_per_hour`,
    `tokens_per_second` and `accepted_tokens_per_second` are the whole deployment's.
    `price_usd_per_hour` is the on-demand tier. `usd_per_million_accepted_tokens` divides the
    effective hourly cost by the accepted throughput. The API comparison needs both
    `api_usd_per_million_tokens` and `monthly_tokens`; it adds overheads to the GPU price,
    discounts retried work from the throughput (accepted throughput where given), and takes
    idle time from the volume itself (`always_on`), not from `utilization`.
    The serverless tier is priced at `serverless_usd_per_hour`, else at the on-demand rate
    (per-second billing at the same rate, as the reference cloud bills it:
    `serverless_price_basis` says which).
    """
    price = check_positive("price_usd_per_hour", price_usd_per_hour)
    count = check_gpu_count(gpu_count)
    throughput = check_positive("tokens_per_second", tokens_per_second)
    accepted: float | None = None
    if accepted_tokens_per_second is not None:
        accepted = check_positive("accepted_tokens_per_second", accepted_tokens_per_second)
        if accepted > throughput:
            raise InputError(
                f"accepted_tokens_per_second: expected a number <= tokens_per_second "
                f"({throughput!r}), got {accepted_tokens_per_second!r}"
            )
    if (api_usd_per_million_tokens is None) != (monthly_tokens is None):
        missing, given = (
            ("monthly_tokens", "api_usd_per_million_tokens")
            if monthly_tokens is None
            else ("api_usd_per_million_tokens", "monthly_tokens")
        )
        raise InputError(f"{missing}: expected a number > 0 when {given} is given, got None")

    deployment = price * count
    effective = effective_cost(deployment, utilization, retry_rate, overhead_usd_per_hour)
    hourly = effective.effective_usd_per_hour

    def per_deployment(name: str, value: float | None) -> float | None:
        return None if value is None else check_positive(name, value) * count

    tiers = price_tiers(
        throughput,
        deployment,
        per_deployment("interruptible_usd_per_hour", interruptible_usd_per_hour),
        per_deployment("reserved_usd_per_hour", reserved_usd_per_hour),
        serverless_usd_per_hour=per_deployment(
            "serverless_usd_per_hour",
            price if serverless_usd_per_hour is None else serverless_usd_per_hour,
        ),
        accepted_tokens_per_second=accepted,
        utilization=effective.utilization,
        retry_rate=effective.retry_rate,
        overhead_usd_per_hour=effective.overhead_usd_per_hour,
    )
    versus_api = None
    if api_usd_per_million_tokens is not None and monthly_tokens is not None:
        useful_throughput = (throughput if accepted is None else accepted) * (
            1.0 - effective.retry_rate
        )
        versus_api = self_hosted_vs_api(
            price + effective.overhead_usd_per_hour / count,
            useful_throughput,
            api_usd_per_million_tokens,
            monthly_tokens,
            gpu_count=count,
            always_on=always_on,
        )
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
        usd_per_million_accepted_tokens=(
            None if accepted is None else per_million(hourly, accepted)
        ),
        tiers=tiers,
        serverless_price_basis="on_demand" if serverless_usd_per_hour is None else "given",
        versus_api=versus_api,
    )
