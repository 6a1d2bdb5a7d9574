"""Dollars per 1M tokens and tokens per dollar, from an hourly price and a throughput."""

from __future__ import annotations

from infermeter.calculators.cost_inputs import (
    check_non_negative,
    check_positive,
    per_million,
)
from infermeter.calculators.units import SECONDS_PER_HOUR


def usd_per_million_tokens(price_usd_per_hour: float, tokens_per_second: float) -> float:
    """Dollars per 1M tokens for a price and a sustained throughput.

    `price_usd_per_hour / (tokens_per_second × 3600) × 1e6`; e.g. 0.481 $/h at 2800 tok/s
    costs about 0.048 $ per 1M tokens.
    """
    price = check_positive("price_usd_per_hour", price_usd_per_hour)
    throughput = check_positive("tokens_per_second", tokens_per_second)
    return per_million(price, throughput)


def tokens_per_dollar(price_usd_per_hour: float, tokens_per_second: float) -> float:
    """Tokens bought by one dollar: `tokens_per_second × 3600 / price_usd_per_hour`."""
    price = check_positive("price_usd_per_hour", price_usd_per_hour)
    throughput = check_positive("tokens_per_second", tokens_per_second)
    return throughput * SECONDS_PER_HOUR / price


def accepted_tokens_per_second(accepted_output_tokens: float, wall_time_s: float) -> float:
    """Accepted throughput: output tokens of requests that met the SLO / measured wall time."""
    tokens = check_non_negative("accepted_output_tokens", accepted_output_tokens)
    seconds = check_positive("wall_time_s", wall_time_s)
    return tokens / seconds


def usd_per_million_accepted_tokens(
    effective_usd_per_hour: float, accepted_tokens_per_second: float
) -> float:
    """Dollars per 1M accepted output tokens: the effective hourly cost over accepted throughput."""
    price = check_positive("effective_usd_per_hour", effective_usd_per_hour)
    throughput = check_positive("accepted_tokens_per_second", accepted_tokens_per_second)
    return per_million(price, throughput)
