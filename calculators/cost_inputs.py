"""Checks and units shared by the cost modules.

Every cost function checks its inputs with these and raises `InputError` naming the input;
within the bounds every figure stays finite, so results stay JSON-ready.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from infermeter.calculators.errors import InputError
from infermeter.calculators.units import SECONDS_PER_HOUR

TOKENS_PER_MILLION = 1e6
# 8760 h / 12: the average month, as cloud providers bill it.
HOURS_PER_MONTH = 730.0
# Bounds of every number (prices, throughputs, volumes): within them every figure is finite.
MAX_INPUT = 1e15
MIN_POSITIVE = 1e-9


def check_number(name: str, value: object, expected: str) -> float:
    """`value` as a float: a finite number (not a bool) within ±MAX_INPUT."""
    # bool is an int subclass; True as a price is a caller's mistake, not 1 $/h.
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"{name}: expected {expected}, got {value!r}")
    if abs(value) > MAX_INPUT:
        raise InputError(f"{name}: expected {expected} up to {MAX_INPUT:g}, got {value!r}")
    return float(value)


def check_positive(name: str, value: object) -> float:
    """`value` as a float > 0, at least MIN_POSITIVE."""
    number = check_number(name, value, "a number > 0")
    if number <= 0:
        raise InputError(f"{name}: expected a number > 0, got {value!r}")
    if number < MIN_POSITIVE:
        # Smaller ones make a cost per token overflow to infinity, which JSON cannot hold.
        raise InputError(f"{name}: expected at least {MIN_POSITIVE:g}, got {value!r}")
    return number


def check_non_negative(name: str, value: object) -> float:
    """`value` as a float >= 0."""
    number = check_number(name, value, "a number >= 0")
    if number < 0:
        raise InputError(f"{name}: expected a number >= 0, got {value!r}")
    return number


def check_utilization(value: object) -> float:
    """A utilization: the fraction of paid hours doing useful work, in (0, 1]."""
    number = check_number("utilization", value, "a number in (0, 1]")
    if not 0 < number <= 1:
        raise InputError(f"utilization: expected a number in (0, 1], got {value!r}")
    return number


def check_retry_rate(value: object) -> float:
    """A retry rate: the fraction of requests that repeat a failed attempt, in [0, 1)."""
    number = check_number("retry_rate", value, "a number in [0, 1)")
    if not 0 <= number < 1:
        raise InputError(f"retry_rate: expected a number in [0, 1), got {value!r}")
    return number


def check_gpu_count(value: object) -> int:
    """A GPU count: an integer >= 1 (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"gpu_count: expected an integer >= 1, got {value!r}")
    return value


def per_million(usd_per_hour: float, tokens_per_second: float) -> float:
    """Dollars per 1M tokens; the inputs are checked by the caller."""
    return usd_per_hour / (tokens_per_second * SECONDS_PER_HOUR) * TOKENS_PER_MILLION


def usd_per_hour_at(usd_per_million: float, tokens_per_second: float) -> float:
    """`per_million`'s inverse: the price per hour at which `tokens_per_second` cost
    `usd_per_million` per 1M tokens; the inputs are checked by the caller."""
    return usd_per_million * tokens_per_second * SECONDS_PER_HOUR / TOKENS_PER_MILLION


class AsDict:
    """Mixin of the cost results (frozen dataclasses): `as_dict()` for JSON."""

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values, nested results as objects, missing ones as None."""
        return dataclasses.asdict(self)  # type: ignore[call-overload, no-any-return]
