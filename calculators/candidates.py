"""Two candidate GPUs against each other: which costs less per accepted token."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from infermeter.calculators.cost_inputs import AsDict, check_number, check_positive, per_million
from infermeter.calculators.errors import InputError

Winner = Literal["a", "b", "tie"]


@dataclass(frozen=True)
class CandidateComparison(AsDict):
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
    a_price = check_positive("a_usd_per_hour", a_usd_per_hour)
    a_accepted = check_positive("a_accepted_tokens_per_second", a_accepted_tokens_per_second)
    b_price = check_positive("b_usd_per_hour", b_usd_per_hour)
    b_accepted = check_positive("b_accepted_tokens_per_second", b_accepted_tokens_per_second)
    tolerance = check_number("relative_tolerance", relative_tolerance, "a number in [0, 1)")
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
        a_usd_per_million_accepted_tokens=per_million(a_price, a_accepted),
        b_usd_per_million_accepted_tokens=per_million(b_price, b_accepted),
        price_ratio=price_ratio,
        throughput_ratio=throughput_ratio,
        cost_per_token_ratio=cost_ratio,
        winner=winner,
    )
