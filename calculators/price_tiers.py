"""Cost per token at each price tier (on-demand, interruptible, reserved, serverless) and the
break-evens between them.

Always-on tiers pay idle hours; the serverless tier bills per second and scales to zero, so it
pays busy time only. A break-even at or above 100 % utilization never happens (`pays_off_above`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from infermeter.calculators.cost_inputs import (
    AsDict,
    check_non_negative,
    check_positive,
    check_retry_rate,
    check_utilization,
    per_million,
)
from infermeter.calculators.hourly_cost import effective_cost
from infermeter.calculators.units import SECONDS_PER_HOUR

# The price tiers, declared here once: a catalog price has one of the first three (the registry's
# price model and tier order use this), the calculators add serverless (billed per second).
PriceTierName = Literal["on_demand", "interruptible", "reserved"]
TierName = Literal[PriceTierName, "serverless"]
PRICE_TIERS: tuple[PriceTierName, ...] = get_args(PriceTierName)
# The answers' own tier, beside the catalog's: each GPU's on-demand market floor (the cheapest
# price two providers agree on, `registry.prices.market_floor`), or its on-demand price where
# that is lower or no two agree: a ranking at what renting can cost, not on the one basis.
MARKET_TIER = "market"


# What the reserved break-even is held against, in a reader's words: not the always-on
# on-demand tier beside it, which pays idle hours too (a reservation cheaper per hour beats it
# at any utilization), but on-demand paid for busy hours only.
RESERVED_AGAINST = "against on-demand paid for busy hours only"


def reserved_break_even_utilization(
    reserved_usd_per_hour: float, on_demand_usd_per_hour: float
) -> float:
    """Fraction of hours in use above which a reservation is cheaper than on-demand.

    A reservation is paid every hour, on-demand only for the hours used, so they cost the same
    at `reserved / on_demand`. A result >= 1 means the reservation never wins.
    """
    reserved = check_positive("reserved_usd_per_hour", reserved_usd_per_hour)
    on_demand = check_positive("on_demand_usd_per_hour", on_demand_usd_per_hour)
    return reserved / on_demand


@dataclass(frozen=True)
class TierCost(AsDict):
    """Cost per token at one price tier."""

    price_usd_per_hour: float
    usd_per_million_tokens: float
    tokens_per_dollar: float
    effective_usd_per_hour: float
    effective_usd_per_million_tokens: float
    usd_per_million_accepted_tokens: float | None
    billed_usd_per_wall_hour: float


@dataclass(frozen=True)
class PriceTiers(AsDict):
    """Cost per token at each price tier given; `cheapest` by effective $/1M tokens.

    `reserved_break_even_utilization`: above it a reservation beats on-demand;
    `serverless_break_even_utilization`: above it an always-on on-demand instance beats
    serverless. Either is >= 1 when that never happens (see `pays_off_above`).
    """

    on_demand: TierCost | None
    interruptible: TierCost | None
    reserved: TierCost | None
    serverless: TierCost | None
    cheapest: TierName | None
    reserved_break_even_utilization: float | None
    serverless_break_even_utilization: float | None


def pays_off_above(break_even_utilization: float | None) -> float | None:
    """The utilization above which a break-even is reached, or None when it never is (>= 100 %)."""
    if break_even_utilization is None or break_even_utilization >= 1.0:
        return None
    return break_even_utilization


@dataclass(frozen=True)
class _Load:
    """What every tier's cost per token is figured from (checked)."""

    tokens_per_second: float
    accepted_tokens_per_second: float | None
    utilization: float
    retry_rate: float
    overhead_usd_per_hour: float


def _tier_cost(name: str, price: float | None, load: _Load, always_on: bool) -> TierCost | None:
    """Cost per token at one tier; None when it has no price. An always-on tier pays idle
    hours; a serverless one pays busy time only."""
    if price is None:
        return None
    throughput, accepted = load.tokens_per_second, load.accepted_tokens_per_second
    effective = effective_cost(
        check_positive(name, price),
        load.utilization if always_on else 1.0,
        load.retry_rate,
        load.overhead_usd_per_hour,
    )
    hourly = effective.effective_usd_per_hour
    billed = effective.paid_usd_per_hour * (1.0 if always_on else load.utilization)
    return TierCost(
        price_usd_per_hour=effective.price_usd_per_hour,
        usd_per_million_tokens=per_million(effective.price_usd_per_hour, throughput),
        tokens_per_dollar=throughput * SECONDS_PER_HOUR / effective.price_usd_per_hour,
        effective_usd_per_hour=hourly,
        effective_usd_per_million_tokens=per_million(hourly, throughput),
        usd_per_million_accepted_tokens=(
            None if accepted is None else per_million(hourly, accepted)
        ),
        billed_usd_per_wall_hour=billed,
    )


def _break_even(cheaper_when_busy: TierCost | None, other: TierCost | None) -> float | None:
    """The utilization at which two tiers cost the same: the price of the one that wins when
    busy over the other's; None unless both are priced."""
    if cheaper_when_busy and other:
        return cheaper_when_busy.price_usd_per_hour / other.price_usd_per_hour
    return None


def price_tiers(
    tokens_per_second: float,
    on_demand_usd_per_hour: float | None = None,
    interruptible_usd_per_hour: float | None = None,
    reserved_usd_per_hour: float | None = None,
    *,
    serverless_usd_per_hour: float | None = None,
    accepted_tokens_per_second: float | None = None,
    utilization: float = 1.0,
    retry_rate: float = 0.0,
    overhead_usd_per_hour: float = 0.0,
) -> PriceTiers:
    """$/1M tokens at on-demand, interruptible, reserved and serverless prices; a missing price
    gives None.

    The always-on tiers' effective figures apply the same utilization, retry rate and overheads
    (see `effective_cost`); the serverless tier pays busy time only, so utilization changes its
    bill, not its cost per token. An interruptible tier's extra retries belong in a separate call
    with a higher `retry_rate`.
    """
    throughput = check_positive("tokens_per_second", tokens_per_second)
    # Checked here too, so a bad value fails even when no tier price is given.
    check_utilization(utilization)
    check_retry_rate(retry_rate)
    check_non_negative("overhead_usd_per_hour", overhead_usd_per_hour)
    accepted = (
        None
        if accepted_tokens_per_second is None
        else check_positive("accepted_tokens_per_second", accepted_tokens_per_second)
    )
    load = _Load(throughput, accepted, utilization, retry_rate, overhead_usd_per_hour)
    tiers: dict[TierName, TierCost | None] = {
        "on_demand": _tier_cost("on_demand_usd_per_hour", on_demand_usd_per_hour, load, True),
        "interruptible": _tier_cost(
            "interruptible_usd_per_hour", interruptible_usd_per_hour, load, True
        ),
        "reserved": _tier_cost("reserved_usd_per_hour", reserved_usd_per_hour, load, True),
        "serverless": _tier_cost("serverless_usd_per_hour", serverless_usd_per_hour, load, False),
    }
    priced = [(cost.effective_usd_per_million_tokens, name) for name, cost in tiers.items() if cost]
    on_demand, reserved, serverless = tiers["on_demand"], tiers["reserved"], tiers["serverless"]
    return PriceTiers(
        on_demand=on_demand,
        interruptible=tiers["interruptible"],
        reserved=reserved,
        serverless=serverless,
        # min() keeps the first of equal costs: on-demand, interruptible, reserved, serverless.
        cheapest=min(priced, key=lambda pair: pair[0])[1] if priced else None,
        reserved_break_even_utilization=_break_even(reserved, on_demand),
        # Serverless pays u × price_s per wall hour, always-on on-demand pays price_o: equal at
        # u = price_o / price_s; above it the always-on instance is cheaper.
        serverless_break_even_utilization=_break_even(on_demand, serverless),
    )
