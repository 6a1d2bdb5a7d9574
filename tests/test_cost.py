"""Tests of calculators.cost: worked examples from the references, invariants, bad inputs."""

import json
import math
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infermeter.calculators.candidates import compare_candidates
from infermeter.calculators.cost_inputs import usd_per_hour_at
from infermeter.calculators.cost_report import cost_report
from infermeter.calculators.errors import InputError
from infermeter.calculators.hourly_cost import effective_cost
from infermeter.calculators.price_tiers import (
    pays_off_above,
    price_tiers,
    reserved_break_even_utilization,
)
from infermeter.calculators.self_hosting import self_hosted_vs_api
from infermeter.calculators.token_cost import (
    accepted_tokens_per_second,
    tokens_per_dollar,
    usd_per_million_accepted_tokens,
    usd_per_million_tokens,
)

prices = st.floats(min_value=0.01, max_value=1_000.0, allow_nan=False, allow_infinity=False)
throughputs = st.floats(min_value=0.1, max_value=1e6, allow_nan=False, allow_infinity=False)
utilizations = st.floats(min_value=0.01, max_value=1.0)
retry_rates = st.floats(min_value=0.0, max_value=0.99)
overheads = st.floats(min_value=0.0, max_value=100.0)


# --- worked examples ----------------------------------------------------------------------------


def test_usd_per_million_tokens_rtx_5090_cloud_page_example() -> None:
    # Reference 004: 0.481 $/h at ~2800 tok/s (Llama-3.1-8B, continuous batching) → ≈ 0.048 $/1M.
    assert usd_per_million_tokens(0.481, 2800) == pytest.approx(0.048, abs=0.0005)


def test_usd_per_million_tokens_interruptible_halves_the_cost() -> None:
    # Reference 004: the same card at its interruptible price (0.240 $/h) halves the figure.
    on_demand = usd_per_million_tokens(0.481, 2800)
    assert usd_per_million_tokens(0.240, 2800) == pytest.approx(on_demand / 2, rel=0.01)


@pytest.mark.parametrize(
    ("price_usd_per_hour", "tokens_per_second", "expected"),
    [(3.6, 1000, 1.0), (1.0, 1e6 / 3600, 1.0), (2.0, 500, 2.0 / 1.8), (7.2, 2000, 1.0)],
)
def test_usd_per_million_tokens_formula(
    price_usd_per_hour: float, tokens_per_second: float, expected: float
) -> None:
    assert usd_per_million_tokens(price_usd_per_hour, tokens_per_second) == pytest.approx(expected)


@given(prices, throughputs)
def test_usd_per_hour_at_inverts_the_price_per_million(
    usd_per_hour: float, tokens_per_second: float
) -> None:
    usd = usd_per_million_tokens(usd_per_hour, tokens_per_second)
    assert usd_per_hour_at(usd, tokens_per_second) == pytest.approx(usd_per_hour, rel=1e-12)


def test_tokens_per_dollar_formula() -> None:
    assert tokens_per_dollar(3.6, 1000) == pytest.approx(1e6)


def test_accepted_tokens_per_second_is_tokens_over_wall_time() -> None:
    assert accepted_tokens_per_second(120_000, 60) == pytest.approx(2000)
    assert accepted_tokens_per_second(0, 60) == 0


def test_usd_per_million_accepted_tokens_uses_accepted_throughput() -> None:
    assert usd_per_million_accepted_tokens(3.6, 500) == pytest.approx(2.0)


@pytest.mark.parametrize(
    ("utilization", "retry_rate", "overhead", "expected"),
    [
        (1.0, 0.0, 0.0, 2.0),
        (0.5, 0.0, 0.0, 4.0),
        (1.0, 0.5, 0.0, 4.0),
        (1.0, 0.0, 1.0, 3.0),
        (0.5, 0.5, 1.0, 12.0),
        (0.8, 0.2, 0.0, 3.125),
    ],
)
def test_effective_cost_idle_retries_overheads(
    utilization: float, retry_rate: float, overhead: float, expected: float
) -> None:
    cost = effective_cost(2.0, utilization, retry_rate, overhead)
    assert cost.effective_usd_per_hour == pytest.approx(expected)


def test_effective_cost_breakdown_parts() -> None:
    cost = effective_cost(2.0, utilization=0.5, retry_rate=0.5, overhead_usd_per_hour=1.0)
    assert cost.paid_usd_per_hour == pytest.approx(3.0)
    assert cost.idle_usd_per_hour == pytest.approx(3.0)
    assert cost.retry_usd_per_hour == pytest.approx(6.0)


@pytest.mark.parametrize(
    ("reserved", "on_demand", "expected"), [(0.65, 1.0, 0.65), (1.2, 2.4, 0.5), (3.0, 2.0, 1.5)]
)
def test_reserved_break_even_utilization_is_price_ratio(
    reserved: float, on_demand: float, expected: float
) -> None:
    assert reserved_break_even_utilization(reserved, on_demand) == pytest.approx(expected)


def test_reserved_break_even_utilization_both_cost_the_same_there() -> None:
    reserved, on_demand, hours = 1.17, 1.811, 730.0
    used = reserved_break_even_utilization(reserved, on_demand)
    assert reserved * hours == pytest.approx(on_demand * hours * used)


def test_price_tiers_cloud_page_rtx_5090() -> None:
    tiers = price_tiers(2800, 0.481, 0.240, 0.481 * 0.65)
    assert tiers.on_demand is not None
    assert tiers.interruptible is not None
    assert tiers.reserved is not None
    assert tiers.on_demand.usd_per_million_tokens == pytest.approx(0.0477, abs=1e-4)
    assert tiers.interruptible.usd_per_million_tokens == pytest.approx(0.0238, abs=1e-4)
    assert tiers.reserved.usd_per_million_tokens == pytest.approx(0.0310, abs=1e-4)
    assert tiers.cheapest == "interruptible"
    assert tiers.reserved_break_even_utilization == pytest.approx(0.65)


def test_price_tiers_missing_prices_are_none() -> None:
    tiers = price_tiers(1000, reserved_usd_per_hour=2.0)
    assert tiers.on_demand is None
    assert tiers.interruptible is None
    assert tiers.reserved is not None
    assert tiers.cheapest == "reserved"
    assert tiers.reserved_break_even_utilization is None
    assert price_tiers(1000).cheapest is None


def test_price_tiers_accepted_and_effective_figures() -> None:
    tiers = price_tiers(
        2000, 3.6, accepted_tokens_per_second=1000, utilization=0.5, overhead_usd_per_hour=0.0
    )
    assert tiers.on_demand is not None
    assert tiers.on_demand.usd_per_million_tokens == pytest.approx(0.5)
    assert tiers.on_demand.effective_usd_per_million_tokens == pytest.approx(1.0)
    assert tiers.on_demand.usd_per_million_accepted_tokens == pytest.approx(2.0)


@pytest.mark.parametrize(
    ("price_ratio", "throughput_ratio", "winner"),
    [(1.4, 1.8, "b"), (2.2, 1.1, "a"), (1.0, 1.0, "tie"), (2.0, 2.0, "tie"), (1.0, 0.5, "a")],
)
def test_compare_candidates_guide_examples(
    price_ratio: float, throughput_ratio: float, winner: str
) -> None:
    # Guide (reference 000): H200 at 1.4× an H100's price with 1.8× accepted throughput wins;
    # at 2.2× the price with ~1.1× the throughput the H100 wins.
    h100_usd_per_hour, h100_accepted = 2.5, 1500.0
    result = compare_candidates(
        h100_usd_per_hour,
        h100_accepted,
        h100_usd_per_hour * price_ratio,
        h100_accepted * throughput_ratio,
    )
    assert result.winner == winner
    assert result.price_ratio == pytest.approx(price_ratio)
    assert result.throughput_ratio == pytest.approx(throughput_ratio)
    assert result.cost_per_token_ratio == pytest.approx(price_ratio / throughput_ratio)
    assert result.b_usd_per_million_accepted_tokens == pytest.approx(
        result.a_usd_per_million_accepted_tokens * price_ratio / throughput_ratio
    )


def test_compare_candidates_tie_within_tolerance() -> None:
    assert compare_candidates(1.0, 100, 1.005, 100).winner == "tie"
    assert compare_candidates(1.0, 100, 1.005, 100, relative_tolerance=0.0).winner == "a"
    assert compare_candidates(1.0, 100, 1.05, 100, relative_tolerance=0.1).winner == "tie"


def test_self_hosted_vs_api_always_on_example() -> None:
    # 2 $/h × 730 h = 1460 $/month; the API at 1 $/1M breaks even at 1.46e9 tokens.
    result = self_hosted_vs_api(2.0, 1000, 1.0, 2e9)
    assert result.busy_hours_per_month == pytest.approx(2e9 / 3.6e6)
    assert result.replicas == 1
    assert result.self_hosted_usd_per_month == pytest.approx(1460)
    assert result.api_usd_per_month == pytest.approx(2000)
    assert result.break_even_monthly_tokens == pytest.approx(1.46e9)
    assert result.winner == "self_hosted"
    assert self_hosted_vs_api(2.0, 1000, 1.0, 1e9).winner == "api"


def test_self_hosted_vs_api_gpu_count_multiplies_the_price() -> None:
    one = self_hosted_vs_api(2.0, 1000, 1.0, 1e9)
    four = self_hosted_vs_api(2.0, 1000, 1.0, 1e9, gpu_count=4)
    assert four.deployment_usd_per_hour == pytest.approx(8.0)
    assert four.self_hosted_usd_per_month == pytest.approx(4 * one.self_hosted_usd_per_month)


def test_self_hosted_vs_api_scale_to_zero_pays_busy_hours_only() -> None:
    result = self_hosted_vs_api(3.6, 1000, 2.0, 1e9, always_on=False)
    assert result.busy_hours_per_month == pytest.approx(1e9 / 3.6e6)
    assert result.self_hosted_usd_per_month == pytest.approx(1000)
    assert result.self_hosted_usd_per_million_tokens == pytest.approx(1.0)
    assert result.break_even_monthly_tokens is None
    assert result.winner == "self_hosted"


def test_self_hosted_vs_api_no_break_even_when_one_replica_cannot_carry_it() -> None:
    # At full load the GPU costs 10 $/1M, the API 1 $/1M: the API always wins.
    result = self_hosted_vs_api(36.0, 1000, 1.0, 1e9)
    assert result.break_even_monthly_tokens is None
    assert result.winner == "api"


def test_self_hosted_vs_api_volume_above_capacity_adds_replicas() -> None:
    capacity = 1000 * 3600 * 730.0
    assert self_hosted_vs_api(2.0, 1000, 1.0, capacity).replicas == 1
    assert self_hosted_vs_api(2.0, 1000, 1.0, capacity * 2.5).replicas == 3


def test_cost_report_keys_and_json() -> None:
    report = cost_report(
        0.481,
        2800,
        accepted_tokens_per_second=2500,
        utilization=0.8,
        retry_rate=0.05,
        overhead_per_hour=0.05,
        interruptible_price_per_hour=0.240,
        reserved_price_per_hour=0.31,
        api_price_per_million=0.2,
        monthly_tokens=2e9,
    ).as_dict()
    for key in (
        "usd_per_million_tokens",
        "tokens_per_dollar",
        "effective_usd_per_hour",
        "effective_usd_per_million_tokens",
        "usd_per_million_accepted_tokens",
        "tiers",
        "versus_api",
    ):
        assert key in report
    assert json.loads(json.dumps(report, allow_nan=False)) == report
    assert set(report["tiers"]) >= {"on_demand", "interruptible", "reserved", "cheapest"}
    assert report["versus_api"]["winner"] in {"self_hosted", "api", "tie"}
    assert report["usd_per_million_tokens"] == pytest.approx(0.048, abs=0.0005)
    assert report["effective_usd_per_hour"] == pytest.approx(0.531 / 0.8 / 0.95)


def test_cost_report_defaults_give_nulls_and_raw_equals_effective() -> None:
    report = cost_report(0.481, 2800).as_dict()
    assert report["usd_per_million_accepted_tokens"] is None
    assert report["versus_api"] is None
    assert report["tiers"]["interruptible"] is None
    assert report["tiers"]["reserved"] is None
    assert report["effective_usd_per_hour"] == pytest.approx(0.481)
    assert report["effective_usd_per_million_tokens"] == pytest.approx(
        report["usd_per_million_tokens"]
    )
    assert report["tiers"]["on_demand"]["usd_per_million_tokens"] == pytest.approx(
        report["usd_per_million_tokens"]
    )


def test_cost_report_gpu_count_prices_the_deployment() -> None:
    report = cost_report(2.0, 3000, gpu_count=2, reserved_price_per_hour=1.0)
    assert report.deployment_usd_per_hour == pytest.approx(4.0)
    assert report.usd_per_million_tokens == pytest.approx(usd_per_million_tokens(4.0, 3000))
    assert report.tiers.reserved is not None
    assert report.tiers.reserved.price_usd_per_hour == pytest.approx(2.0)


def test_cost_report_versus_api_uses_useful_accepted_throughput() -> None:
    report = cost_report(
        2.0,
        2000,
        accepted_tokens_per_second=1000,
        retry_rate=0.5,
        overhead_per_hour=1.0,
        api_price_per_million=1.0,
        monthly_tokens=1e9,
        always_on=False,
    )
    assert report.versus_api is not None
    assert report.versus_api.tokens_per_second == pytest.approx(500)
    assert report.versus_api.deployment_usd_per_hour == pytest.approx(3.0)


# --- properties ---------------------------------------------------------------------------------


@given(prices, throughputs)
def test_usd_per_million_tokens_linear_in_price(price: float, throughput: float) -> None:
    assert usd_per_million_tokens(2 * price, throughput) == pytest.approx(
        2 * usd_per_million_tokens(price, throughput), rel=1e-12
    )


@given(prices, throughputs, st.floats(min_value=0.01, max_value=100.0))
def test_usd_per_million_tokens_inverse_in_throughput(
    price: float, throughput: float, factor: float
) -> None:
    assert usd_per_million_tokens(price, throughput * factor) == pytest.approx(
        usd_per_million_tokens(price, throughput) / factor, rel=1e-9
    )


@given(prices, throughputs)
def test_tokens_per_dollar_times_usd_per_million_is_a_million(
    price: float, throughput: float
) -> None:
    product = tokens_per_dollar(price, throughput) * usd_per_million_tokens(price, throughput)
    assert product == pytest.approx(1e6, rel=1e-12)


@given(prices, utilizations, retry_rates, overheads)
def test_effective_cost_parts_add_up_and_never_undercut_price(
    price: float, utilization: float, retry_rate: float, overhead: float
) -> None:
    cost = effective_cost(price, utilization, retry_rate, overhead)
    parts = cost.paid_usd_per_hour + cost.idle_usd_per_hour + cost.retry_usd_per_hour
    assert parts == pytest.approx(cost.effective_usd_per_hour, rel=1e-9)
    assert cost.effective_usd_per_hour >= price


@given(prices, throughputs, st.floats(min_value=0.01, max_value=100.0))
def test_self_hosted_vs_api_break_even_costs_the_same(
    price: float, throughput: float, api_price: float
) -> None:
    first = self_hosted_vs_api(price, throughput, api_price, 1e9)
    if first.break_even_monthly_tokens is None:
        # No break-even only when the API is cheaper even with the GPU fully loaded.
        assert usd_per_million_tokens(price, throughput) > api_price
        return
    at_break_even = self_hosted_vs_api(
        price, throughput, api_price, first.break_even_monthly_tokens
    )
    assert at_break_even.self_hosted_usd_per_month == pytest.approx(
        at_break_even.api_usd_per_month, rel=1e-9
    )
    assert at_break_even.winner == "tie"


@given(prices, throughputs, st.floats(min_value=0.01, max_value=100.0), st.floats(1e3, 1e12))
def test_self_hosted_vs_api_scale_to_zero_winner_matches_per_token_price(
    price: float, throughput: float, api_price: float, volume: float
) -> None:
    result = self_hosted_vs_api(price, throughput, api_price, volume, always_on=False)
    own = usd_per_million_tokens(price, throughput)
    if not math.isclose(own, api_price, rel_tol=1e-6):
        assert result.winner == ("self_hosted" if own < api_price else "api")


@given(prices, throughputs, prices, throughputs)
def test_compare_candidates_winner_has_lower_cost_per_token(
    a_price: float, a_tps: float, b_price: float, b_tps: float
) -> None:
    result = compare_candidates(a_price, a_tps, b_price, b_tps)
    a_cost, b_cost = (
        result.a_usd_per_million_accepted_tokens,
        result.b_usd_per_million_accepted_tokens,
    )
    if result.winner == "b":
        assert b_cost < a_cost
    elif result.winner == "a":
        assert a_cost < b_cost
    assert result.cost_per_token_ratio == pytest.approx(b_cost / a_cost, rel=1e-9)


# --- bad inputs ---------------------------------------------------------------------------------

NOT_POSITIVE: list[object] = [0, -1, -0.5, math.nan, math.inf, -math.inf, "1", True]

# (field, call with the value under test, whether None means "not given" there)
POSITIVE_INPUTS: list[tuple[str, Callable[[Any], object], bool]] = [
    ("price_usd_per_hour", lambda v: usd_per_million_tokens(v, 1000), False),
    ("tokens_per_second", lambda v: usd_per_million_tokens(1.0, v), False),
    ("price_usd_per_hour", lambda v: tokens_per_dollar(v, 1000), False),
    ("tokens_per_second", lambda v: tokens_per_dollar(1.0, v), False),
    ("wall_time_s", lambda v: accepted_tokens_per_second(100, v), False),
    ("effective_usd_per_hour", lambda v: usd_per_million_accepted_tokens(v, 10), False),
    ("accepted_tokens_per_second", lambda v: usd_per_million_accepted_tokens(1.0, v), False),
    ("price_usd_per_hour", lambda v: effective_cost(v), False),
    ("reserved_usd_per_hour", lambda v: reserved_break_even_utilization(v, 1.0), False),
    ("on_demand_usd_per_hour", lambda v: reserved_break_even_utilization(1.0, v), False),
    ("tokens_per_second", lambda v: price_tiers(v, 1.0), False),
    ("on_demand_usd_per_hour", lambda v: price_tiers(100, v), True),
    ("interruptible_usd_per_hour", lambda v: price_tiers(100, 1.0, v), True),
    ("reserved_usd_per_hour", lambda v: price_tiers(100, 1.0, 0.5, v), True),
    ("accepted_tokens_per_second", lambda v: price_tiers(100, accepted_tokens_per_second=v), True),
    ("gpu_usd_per_hour", lambda v: self_hosted_vs_api(v, 100, 1.0, 1e9), False),
    ("tokens_per_second", lambda v: self_hosted_vs_api(1.0, v, 1.0, 1e9), False),
    ("api_usd_per_million_tokens", lambda v: self_hosted_vs_api(1.0, 100, v, 1e9), False),
    ("monthly_tokens", lambda v: self_hosted_vs_api(1.0, 100, 1.0, v), False),
    ("hours_per_month", lambda v: self_hosted_vs_api(1, 100, 1, 1e9, hours_per_month=v), False),
    ("a_usd_per_hour", lambda v: compare_candidates(v, 1, 1, 1), False),
    ("a_accepted_tokens_per_second", lambda v: compare_candidates(1, v, 1, 1), False),
    ("b_usd_per_hour", lambda v: compare_candidates(1, 1, v, 1), False),
    ("b_accepted_tokens_per_second", lambda v: compare_candidates(1, 1, 1, v), False),
    ("price_per_hour", lambda v: cost_report(v, 100), False),
    ("tokens_per_second", lambda v: cost_report(1.0, v), False),
    ("accepted_tokens_per_second", lambda v: cost_report(1.0, 100, v), True),
    (
        "interruptible_price_per_hour",
        lambda v: cost_report(1, 100, interruptible_price_per_hour=v),
        True,
    ),
    (
        "reserved_price_per_hour",
        lambda v: cost_report(1.0, 100, reserved_price_per_hour=v),
        True,
    ),
    (
        "api_price_per_million",
        lambda v: cost_report(1.0, 100, api_price_per_million=v, monthly_tokens=1e9),
        False,
    ),
    (
        "monthly_tokens",
        lambda v: cost_report(1.0, 100, api_price_per_million=1.0, monthly_tokens=v),
        False,
    ),
]
POSITIVE_IDS = [f"{index}-{field}" for index, (field, _, _) in enumerate(POSITIVE_INPUTS)]


def _expect_input_error(field: str, value: object, call: Callable[[Any], object]) -> None:
    with pytest.raises(InputError, match=rf"^{field}: expected .*, got {re.escape(repr(value))}$"):
        call(value)


@pytest.mark.parametrize("value", NOT_POSITIVE, ids=repr)
@pytest.mark.parametrize(("field", "call", "optional"), POSITIVE_INPUTS, ids=POSITIVE_IDS)
def test_inputs_not_positive_raise_input_error_naming_field(
    field: str, call: Callable[[Any], object], optional: bool, value: object
) -> None:
    _expect_input_error(field, value, call)


@pytest.mark.parametrize(("field", "call", "optional"), POSITIVE_INPUTS, ids=POSITIVE_IDS)
def test_inputs_none_raises_unless_optional(
    field: str, call: Callable[[Any], object], optional: bool
) -> None:
    if optional:
        call(None)
    else:
        _expect_input_error(field, None, call)


@pytest.mark.parametrize("value", [0, -0.1, 1.01, 2, math.nan, "0.5", None])
def test_utilization_outside_zero_one_raises(value: object) -> None:
    _expect_input_error("utilization", value, lambda v: effective_cost(1.0, utilization=v))
    _expect_input_error("utilization", value, lambda v: price_tiers(100, utilization=v))
    _expect_input_error("utilization", value, lambda v: cost_report(1.0, 100, utilization=v))


@pytest.mark.parametrize("value", [1, 1.5, -0.01, math.inf, "0", None])
def test_retry_rate_outside_zero_one_raises(value: object) -> None:
    _expect_input_error("retry_rate", value, lambda v: effective_cost(1.0, retry_rate=v))
    _expect_input_error("retry_rate", value, lambda v: price_tiers(100, retry_rate=v))
    _expect_input_error("retry_rate", value, lambda v: cost_report(1.0, 100, retry_rate=v))


@pytest.mark.parametrize("value", [-0.01, -5, math.nan, math.inf, None, "0"])
def test_overhead_negative_or_not_a_number_raises(value: object) -> None:
    field = "overhead_usd_per_hour"
    _expect_input_error(field, value, lambda v: effective_cost(1.0, overhead_usd_per_hour=v))
    _expect_input_error(
        "overhead_per_hour", value, lambda v: cost_report(1.0, 100, overhead_per_hour=v)
    )


@pytest.mark.parametrize("value", [0, -1, 1.5, 2.0, True, "2", None])
def test_gpu_count_not_a_positive_integer_raises(value: object) -> None:
    _expect_input_error("gpu_count", value, lambda v: cost_report(1.0, 100, gpu_count=v))
    _expect_input_error(
        "gpu_count", value, lambda v: self_hosted_vs_api(1, 100, 1, 1e9, gpu_count=v)
    )


def test_cost_report_names_its_inputs_in_the_api_comparison() -> None:
    # The GPU price with its share of the overheads is compared with the API: a sum of two
    # inputs within bounds may pass the bound, and the message says which inputs made it.
    with pytest.raises(InputError, match=r"^price_per_hour \+ overhead_per_hour / gpu_count: "):
        cost_report(1e15, 100, overhead_per_hour=1e15, api_price_per_million=1, monthly_tokens=1)


@pytest.mark.parametrize("value", [-0.1, 1, 1.5, math.nan])
def test_compare_candidates_bad_tolerance_raises(value: object) -> None:
    _expect_input_error(
        "relative_tolerance", value, lambda v: compare_candidates(1, 1, 1, 1, relative_tolerance=v)
    )


@pytest.mark.parametrize("value", [-1, math.nan, "10"])
def test_accepted_output_tokens_negative_raises(value: object) -> None:
    _expect_input_error("accepted_output_tokens", value, lambda v: accepted_tokens_per_second(v, 1))


def test_always_on_not_a_bool_raises() -> None:
    _expect_input_error("always_on", 1, lambda v: self_hosted_vs_api(1, 100, 1, 1e9, always_on=v))


def test_cost_report_accepted_above_total_throughput_raises() -> None:
    with pytest.raises(InputError, match=r"^accepted_tokens_per_second: expected .*<= tokens_per"):
        cost_report(1.0, 100, accepted_tokens_per_second=150)


@pytest.mark.parametrize(
    ("given_field", "missing_field"),
    [
        ("api_price_per_million", "monthly_tokens"),
        ("monthly_tokens", "api_price_per_million"),
    ],
)
def test_cost_report_api_comparison_needs_both_inputs(given_field: str, missing_field: str) -> None:
    given: dict[str, Any] = {given_field: 1.0}
    with pytest.raises(InputError, match=rf"^{missing_field}: expected .* when {given_field}"):
        cost_report(1.0, 100, **given)


# --- the serverless tier and break-evens that never happen ------------------------------------


@pytest.mark.parametrize("utilization", [0.1, 0.5, 1.0])
def test_serverless_tier_pays_busy_time_only(utilization: float) -> None:
    tiers = price_tiers(
        1000.0, 2.0, serverless_usd_per_hour=3.0, utilization=utilization, retry_rate=0.2
    )
    assert tiers.serverless is not None
    assert tiers.on_demand is not None
    # per token: no idle share, whatever the utilization
    assert tiers.serverless.effective_usd_per_hour == pytest.approx(3.0 / 0.8)
    # the bill follows utilization; the always-on bill does not
    assert tiers.serverless.billed_usd_per_wall_hour == pytest.approx(3.0 * utilization)
    assert tiers.on_demand.billed_usd_per_wall_hour == pytest.approx(2.0)
    assert tiers.on_demand.effective_usd_per_hour == pytest.approx(2.0 / utilization / 0.8)
    # always-on on-demand beats serverless above 2/3 utilization
    assert tiers.serverless_break_even_utilization == pytest.approx(2.0 / 3.0)
    assert tiers.cheapest == ("serverless" if utilization < 2 / 3 else "on_demand")


def test_pays_off_above_reads_never_at_or_beyond_full_utilization() -> None:
    assert pays_off_above(0.4) == 0.4
    assert pays_off_above(1.0) is None
    assert pays_off_above(1.65) is None
    assert pays_off_above(None) is None


def test_cost_report_serverless_defaults_to_the_on_demand_rate() -> None:
    report = cost_report(2.0, 1000.0, utilization=0.5, gpu_count=2)
    assert report.serverless_price_basis == "on_demand"
    assert report.tiers.serverless is not None
    assert report.tiers.serverless.price_usd_per_hour == pytest.approx(4.0)
    assert report.tiers.serverless.billed_usd_per_wall_hour == pytest.approx(2.0)
    assert report.tiers.serverless_break_even_utilization == pytest.approx(1.0)
    given = cost_report(2.0, 1000.0, serverless_price_per_hour=5.0)
    assert given.serverless_price_basis == "given"
    assert given.tiers.serverless is not None
    assert given.tiers.serverless.price_usd_per_hour == 5.0
