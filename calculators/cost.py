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

This module gathers the cost calculators, one concept per module:

- `cost_inputs`: the input checks, bounds and units they share;
- `token_cost`: $/1M tokens and tokens per dollar;
- `hourly_cost`: the effective hourly cost (overheads, idle time, retries);
- `price_tiers`: the four price tiers and their break-evens;
- `self_hosting`: own GPUs versus an API for a monthly volume;
- `candidates`: two GPUs against each other per accepted token;
- `cost_report`: the report behind `infermeter calc cost`.
"""

from __future__ import annotations

from calculators.candidates import CandidateComparison, Winner, compare_candidates
from calculators.cost_inputs import (
    HOURS_PER_MONTH,
    MAX_INPUT,
    MIN_POSITIVE,
    SECONDS_PER_HOUR,
    TOKENS_PER_MILLION,
)
from calculators.cost_report import CostReport, cost_report
from calculators.hourly_cost import EffectiveCost, effective_cost
from calculators.price_tiers import (
    PriceTiers,
    TierCost,
    TierName,
    pays_off_above,
    price_tiers,
    reserved_break_even_utilization,
)
from calculators.self_hosting import HostingWinner, SelfHostedVsApi, self_hosted_vs_api
from calculators.token_cost import (
    accepted_tokens_per_second,
    tokens_per_dollar,
    usd_per_million_accepted_tokens,
    usd_per_million_tokens,
)

__all__ = [
    "HOURS_PER_MONTH",
    "MAX_INPUT",
    "MIN_POSITIVE",
    "SECONDS_PER_HOUR",
    "TOKENS_PER_MILLION",
    "CandidateComparison",
    "CostReport",
    "EffectiveCost",
    "HostingWinner",
    "PriceTiers",
    "SelfHostedVsApi",
    "TierCost",
    "TierName",
    "Winner",
    "accepted_tokens_per_second",
    "compare_candidates",
    "cost_report",
    "effective_cost",
    "pays_off_above",
    "price_tiers",
    "reserved_break_even_utilization",
    "self_hosted_vs_api",
    "tokens_per_dollar",
    "usd_per_million_accepted_tokens",
    "usd_per_million_tokens",
]
