"""Cost per token: $/1M tokens, effective hourly cost, price tiers and break-evens.

The buyer's metric is the cost per 1M *accepted* output tokens at the *effective* hourly cost:

    usd_per_million_tokens = usd_per_hour / (tokens_per_second × 3600) × 1e6
    tokens_per_dollar      = tokens_per_second × 3600 / usd_per_hour
    effective_usd_per_hour = (price + overheads) / utilization / (1 − retry_rate)

Always-on tiers (on-demand, interruptible, reserved) pay idle hours. The serverless tier bills
per second and scales to zero, so it pays busy time only: its bill follows utilization
(`billed_usd_per_wall_hour = (price + overheads) × utilization`) and its effective cost has no idle
share. A break-even at or above 100 % utilization never happens (`pays_off_above`).

Every function checks its inputs and raises `InputError` naming the input; results are frozen
dataclasses whose `as_dict()` holds only JSON-ready values (float, int, str, bool, None, dict).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Literal

from calculators.errors import InputError

SECONDS_PER_HOUR = 3600.0
TOKENS_PER_MILLION = 1e6
# 8760 h / 12: the average month, as cloud providers bill it.
HOURS_PER_MONTH = 730.0
# Bounds of every number (prices, throughputs, volumes): within them every figure is finite.
MAX_INPUT = 1e15
MIN_POSITIVE = 1e-9

Winner = Literal["a", "b", "tie"]
HostingWinner = Literal["self_hosted", "api", "tie"]
TierName = Literal["on_demand", "interruptible", "reserved", "serverless"]


# --- input checks -------------------------------------------------------------------------------


def _number(name: str, value: object, expected: str) -> float:
    # bool is an int subclass; True as a price is a caller's mistake, not 1 $/h.
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"{name}: expected {expected}, got {value!r}")
    if abs(value) > MAX_INPUT:
        raise InputError(f"{name}: expected {expected} up to {MAX_INPUT:g}, got {value!r}")
    return float(value)


def _positive(name: str, value: object) -> float:
    number = _number(name, value, "a number > 0")
    if number <= 0:
        raise InputError(f"{name}: expected a number > 0, got {value!r}")
    if number < MIN_POSITIVE:
        # Smaller ones make a cost per token overflow to infinity, which JSON cannot hold.
        raise InputError(f"{name}: expected at least {MIN_POSITIVE:g}, got {value!r}")
    return number


def _non_negative(name: str, value: object) -> float:
    number = _number(name, value, "a number >= 0")
    if number < 0:
        raise InputError(f"{name}: expected a number >= 0, got {value!r}")
    return number


def _utilization(value: object) -> float:
    number = _number("utilization", value, "a number in (0, 1]")
    if not 0 < number <= 1:
        raise InputError(f"utilization: expected a number in (0, 1], got {value!r}")
    return number


def _retry_rate(value: object) -> float:
    number = _number("retry_rate", value, "a number in [0, 1)")
    if not 0 <= number < 1:
        raise InputError(f"retry_rate: expected a number in [0, 1), got {value!r}")
    return number


def _gpu_count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"gpu_count: expected an integer >= 1, got {value!r}")
    return value


def _per_million(usd_per_hour: float, tokens_per_second: float) -> float:
    return usd_per_hour / (tokens_per_second * SECONDS_PER_HOUR) * TOKENS_PER_MILLION


class _AsDict:
    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values, nested results as objects, missing ones as None."""
        return dataclasses.asdict(self)  # type: ignore[call-overload, no-any-return]


# --- $/1M tokens --------------------------------------------------------------------------------


def usd_per_million_tokens(price_usd_per_hour: float, tokens_per_second: float) -> float:
    """Dollars per 1M tokens for a price and a sustained throughput.

    `price_usd_per_hour / (tokens_per_second × 3600) × 1e6`; e.g. 0.481 $/h at 2800 tok/s
    costs about 0.048 $ per 1M tokens.
    """
    price = _positive("price_usd_per_hour", price_usd_per_hour)
    throughput = _positive("tokens_per_second", tokens_per_second)
    return _per_million(price, throughput)


def tokens_per_dollar(price_usd_per_hour: float, tokens_per_second: float) -> float:
    """Tokens bought by one dollar: `tokens_per_second × 3600 / price_usd_per_hour`."""
    price = _positive("price_usd_per_hour", price_usd_per_hour)
    throughput = _positive("tokens_per_second", tokens_per_second)
    return throughput * SECONDS_PER_HOUR / price


def accepted_tokens_per_second(accepted_output_tokens: float, wall_time_s: float) -> float:
    """Accepted throughput: output tokens of requests that met the SLO / measured wall time."""
    tokens = _non_negative("accepted_output_tokens", accepted_output_tokens)
    seconds = _positive("wall_time_s", wall_time_s)
    return tokens / seconds


def usd_per_million_accepted_tokens(
    effective_usd_per_hour: float, accepted_tokens_per_second: float
) -> float:
    """Dollars per 1M accepted output tokens: the effective hourly cost over accepted throughput."""
    price = _positive("effective_usd_per_hour", effective_usd_per_hour)
    throughput = _positive("accepted_tokens_per_second", accepted_tokens_per_second)
    return _per_million(price, throughput)


# --- effective hourly cost ----------------------------------------------------------------------


@dataclass(frozen=True)
class EffectiveCost(_AsDict):
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
    price = _positive("price_usd_per_hour", price_usd_per_hour)
    used = _utilization(utilization)
    retried = _retry_rate(retry_rate)
    overhead = _non_negative("overhead_usd_per_hour", overhead_usd_per_hour)
    paid = price + overhead
    with_idle = paid / used
    effective = with_idle / (1.0 - retried)
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


# --- price tiers and the reserved break-even ----------------------------------------------------


def reserved_break_even_utilization(
    reserved_usd_per_hour: float, on_demand_usd_per_hour: float
) -> float:
    """Fraction of hours in use above which a reservation is cheaper than on-demand.

    A reservation is paid every hour, on-demand only for the hours used, so they cost the same
    at `reserved / on_demand`. A result >= 1 means the reservation never wins.
    """
    reserved = _positive("reserved_usd_per_hour", reserved_usd_per_hour)
    on_demand = _positive("on_demand_usd_per_hour", on_demand_usd_per_hour)
    return reserved / on_demand


@dataclass(frozen=True)
class TierCost(_AsDict):
    """Cost per token at one price tier."""

    price_usd_per_hour: float
    usd_per_million_tokens: float
    tokens_per_dollar: float
    effective_usd_per_hour: float
    effective_usd_per_million_tokens: float
    usd_per_million_accepted_tokens: float | None
    billed_usd_per_wall_hour: float


@dataclass(frozen=True)
class PriceTiers(_AsDict):
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
    throughput = _positive("tokens_per_second", tokens_per_second)
    # Checked here too, so a bad value fails even when no tier price is given.
    _utilization(utilization)
    _retry_rate(retry_rate)
    _non_negative("overhead_usd_per_hour", overhead_usd_per_hour)
    accepted = (
        None
        if accepted_tokens_per_second is None
        else _positive("accepted_tokens_per_second", accepted_tokens_per_second)
    )

    def tier(name: str, price: float | None, always_on: bool = True) -> TierCost | None:
        if price is None:
            return None
        effective = effective_cost(
            _positive(name, price),
            utilization if always_on else 1.0,
            retry_rate,
            overhead_usd_per_hour,
        )
        hourly = effective.effective_usd_per_hour
        billed = effective.paid_usd_per_hour * (1.0 if always_on else utilization)
        return TierCost(
            price_usd_per_hour=effective.price_usd_per_hour,
            usd_per_million_tokens=_per_million(effective.price_usd_per_hour, throughput),
            tokens_per_dollar=throughput * SECONDS_PER_HOUR / effective.price_usd_per_hour,
            effective_usd_per_hour=hourly,
            effective_usd_per_million_tokens=_per_million(hourly, throughput),
            usd_per_million_accepted_tokens=(
                None if accepted is None else _per_million(hourly, accepted)
            ),
            billed_usd_per_wall_hour=billed,
        )

    tiers: dict[TierName, TierCost | None] = {
        "on_demand": tier("on_demand_usd_per_hour", on_demand_usd_per_hour),
        "interruptible": tier("interruptible_usd_per_hour", interruptible_usd_per_hour),
        "reserved": tier("reserved_usd_per_hour", reserved_usd_per_hour),
        "serverless": tier("serverless_usd_per_hour", serverless_usd_per_hour, always_on=False),
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
        reserved_break_even_utilization=(
            reserved.price_usd_per_hour / on_demand.price_usd_per_hour
            if reserved and on_demand
            else None
        ),
        # Serverless pays u × price_s per wall hour, always-on on-demand pays price_o: equal at
        # u = price_o / price_s; above it the always-on instance is cheaper.
        serverless_break_even_utilization=(
            on_demand.price_usd_per_hour / serverless.price_usd_per_hour
            if serverless and on_demand
            else None
        ),
    )


# --- self-hosted versus an API ------------------------------------------------------------------


@dataclass(frozen=True)
class SelfHostedVsApi(_AsDict):
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
    per_gpu = _positive("gpu_usd_per_hour", gpu_usd_per_hour)
    count = _gpu_count(gpu_count)
    throughput = _positive("tokens_per_second", tokens_per_second)
    api_price = _positive("api_usd_per_million_tokens", api_usd_per_million_tokens)
    volume = _positive("monthly_tokens", monthly_tokens)
    month = _positive("hours_per_month", hours_per_month)
    if not isinstance(always_on, bool):
        raise InputError(f"always_on: expected true or false, got {always_on!r}")

    deployment = per_gpu * count
    capacity_tokens = throughput * SECONDS_PER_HOUR * month
    busy_hours = volume / (throughput * SECONDS_PER_HOUR)
    api_monthly = volume * api_price / TOKENS_PER_MILLION
    if always_on:
        # A hair of slack so that exactly one month of work does not round up to two replicas.
        replicas = max(1, math.ceil(volume / capacity_tokens - 1e-9))
        self_monthly = replicas * deployment * month
        one_replica_break_even = deployment * month * TOKENS_PER_MILLION / api_price
        break_even = one_replica_break_even if one_replica_break_even <= capacity_tokens else None
    else:
        replicas = max(1, math.ceil(busy_hours / month - 1e-9))
        self_monthly = busy_hours * deployment
        break_even = None

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


# --- two candidates -----------------------------------------------------------------------------


@dataclass(frozen=True)
class CandidateComparison(_AsDict):
    """Candidate B against A: B costs `price_ratio`× and delivers `throughput_ratio`×."""

    a_usd_per_million_accepted_tokens: float
    b_usd_per_million_accepted_tokens: float
    price_ratio: float
    throughput_ratio: float
    cost_per_token_ratio: float
    winner: Winner


def compare_candidates(
    a_usd_per_hour: float,
    a_accepted_tokens_per_second: float,
    b_usd_per_hour: float,
    b_accepted_tokens_per_second: float,
    *,
    relative_tolerance: float = 0.01,
) -> CandidateComparison:
    """Which of two GPUs costs less per accepted token.

    With B at X = price_b / price_a and Y = accepted_b / accepted_a, B's cost per accepted
    token is X / Y times A's: B wins when Y > X. Within `relative_tolerance` of 1 it is a tie
    (benchmark noise is larger than that). E.g. 1.4× the price for 1.8× the throughput: B wins.
    """
    a_price = _positive("a_usd_per_hour", a_usd_per_hour)
    a_accepted = _positive("a_accepted_tokens_per_second", a_accepted_tokens_per_second)
    b_price = _positive("b_usd_per_hour", b_usd_per_hour)
    b_accepted = _positive("b_accepted_tokens_per_second", b_accepted_tokens_per_second)
    tolerance = _number("relative_tolerance", relative_tolerance, "a number in [0, 1)")
    if not 0 <= tolerance < 1:
        raise InputError(
            f"relative_tolerance: expected a number in [0, 1), got {relative_tolerance!r}"
        )

    price_ratio = b_price / a_price
    throughput_ratio = b_accepted / a_accepted
    cost_ratio = price_ratio / throughput_ratio
    winner: Winner = "b" if cost_ratio < 1.0 else "a"
    if abs(cost_ratio - 1.0) <= tolerance:
        winner = "tie"
    return CandidateComparison(
        a_usd_per_million_accepted_tokens=_per_million(a_price, a_accepted),
        b_usd_per_million_accepted_tokens=_per_million(b_price, b_accepted),
        price_ratio=price_ratio,
        throughput_ratio=throughput_ratio,
        cost_per_token_ratio=cost_ratio,
        winner=winner,
    )


# --- the report behind `infermeter calc cost` ---------------------------------------------------


@dataclass(frozen=True)
class CostReport(_AsDict):
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
    price = _positive("price_usd_per_hour", price_usd_per_hour)
    count = _gpu_count(gpu_count)
    throughput = _positive("tokens_per_second", tokens_per_second)
    accepted: float | None = None
    if accepted_tokens_per_second is not None:
        accepted = _positive("accepted_tokens_per_second", accepted_tokens_per_second)
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
        return None if value is None else _positive(name, value) * count

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
        usd_per_million_tokens=_per_million(deployment, throughput),
        tokens_per_dollar=throughput * SECONDS_PER_HOUR / deployment,
        effective_cost=effective,
        effective_usd_per_hour=hourly,
        effective_usd_per_million_tokens=_per_million(hourly, throughput),
        effective_tokens_per_dollar=throughput * SECONDS_PER_HOUR / hourly,
        usd_per_million_accepted_tokens=(
            None if accepted is None else _per_million(hourly, accepted)
        ),
        tiers=tiers,
        serverless_price_basis="on_demand" if serverless_usd_per_hour is None else "given",
        versus_api=versus_api,
    )
