"""`infermeter calc cost --gpu ID`: prices from the catalog's cheapest price per tier, the price
ids and dates shown, `--price-per-hour` overriding, unknown ids and missing prices as errors."""

from typing import Any

import pytest
from cli_helpers import invoke, json_output, one_line_error
from click.testing import Result

from infermeter.calculators.api import as_of_words
from infermeter.registry.lookup import cheapest_prices, load_gpus
from infermeter.registry.prices import TIERS, shown_as_of


def _invoke(*args: str) -> Result:
    return invoke("calc", "cost", *args)


def _json(*args: str) -> dict[str, Any]:
    return json_output("calc", "cost", *args)


def _priced_gpus(*tiers: str) -> list[str]:
    return [gpu for gpu in sorted(load_gpus()) if set(tiers) <= set(cheapest_prices(gpu))]


@pytest.mark.parametrize("tier", TIERS)
def test_calc_cost_catalog_fills_price_of_tier(tier: str) -> None:
    gpu = _priced_gpus(*TIERS)[0]
    cheapest = cheapest_prices(gpu)
    payload = _json("--gpu", gpu, "--tier", tier, "--tokens-per-second", "1000")
    price = cheapest[tier].usd_per_gpu_hour
    assert payload["gpu"] == gpu
    assert payload["price_usd_per_hour"] == price
    assert payload["usd_per_million_tokens"] == pytest.approx(price / (1000 * 3600) * 1e6)
    assert payload["prices"]["price_per_hour"] == {
        "id": cheapest[tier].id,
        "usd_per_gpu_hour": price,
        "as_of": str(cheapest[tier].as_of),
        "source_url": cheapest[tier].source.url,
    }


def test_calc_cost_catalog_fills_comparison_tiers() -> None:
    gpu = _priced_gpus(*TIERS)[0]
    cheapest = cheapest_prices(gpu)
    payload = _json("--gpu", gpu, "--tokens-per-second", "1000", "--gpu-count", "2")
    for tier in ("interruptible", "reserved"):
        used = payload["prices"][f"{tier}_price_per_hour"]
        assert used["id"] == cheapest[tier].id
        assert payload["tiers"][tier]["price_usd_per_hour"] == pytest.approx(
            cheapest[tier].usd_per_gpu_hour * 2
        )
    assert payload["deployment_usd_per_hour"] == pytest.approx(
        cheapest["on_demand"].usd_per_gpu_hour * 2
    )


def test_calc_cost_catalog_price_per_hour_overrides() -> None:
    gpu = _priced_gpus(*TIERS)[0]
    payload = _json(
        "--gpu",
        gpu,
        "--price-per-hour",
        "7.5",
        "--reserved-price-per-hour",
        "0.5",
        "--tokens-per-second",
        "1000",
    )
    assert payload["price_usd_per_hour"] == 7.5
    assert payload["prices"]["price_per_hour"] is None
    assert payload["prices"]["reserved_price_per_hour"] is None
    assert payload["tiers"]["reserved"]["price_usd_per_hour"] == 0.5
    assert payload["prices"]["interruptible_price_per_hour"]["id"] == (
        cheapest_prices(gpu)["interruptible"].id
    )


def test_calc_cost_without_gpu_names_no_catalog_price() -> None:
    payload = _json("--price-per-hour", "2", "--tokens-per-second", "1000")
    assert payload["gpu"] is None
    assert payload["prices"] == {
        "price_per_hour": None,
        "interruptible_price_per_hour": None,
        "reserved_price_per_hour": None,
    }
    assert payload["tiers"]["interruptible"] is None


def test_calc_cost_catalog_table_shows_price_ids_and_dates() -> None:
    gpu = _priced_gpus(*TIERS)[0]
    result = _invoke("--gpu", gpu, "--tokens-per-second", "1000")
    assert result.exit_code == 0, result.output
    for tier, price in cheapest_prices(gpu).items():
        line = next(line for line in result.output.splitlines() if price.id in line)
        assert as_of_words(shown_as_of(price)) in line
        assert line.startswith("price (on-demand)" if tier == "on_demand" else f"{tier} price")


def test_calc_cost_catalog_unknown_gpu_exits_1_with_closest_ids() -> None:
    line = one_line_error(_invoke("--gpu", "h100-sx", "--tokens-per-second", "1000"))
    assert line.startswith("Error: unknown GPU id 'h100-sx'; closest: ")
    assert "h100-sxm" in line


def test_calc_cost_catalog_missing_tier_price_exits_1() -> None:
    unpriced = [gpu for gpu in sorted(load_gpus()) if "reserved" not in cheapest_prices(gpu)]
    assert unpriced, "every catalog GPU now has a reserved price: test this with another tier"
    result = _invoke("--gpu", unpriced[0], "--tier", "reserved", "--tokens-per-second", "1")
    assert result.exit_code == 1
    assert f"no reserved price for {unpriced[0]}" in result.output
    assert "--price-per-hour" in result.output


def test_calc_cost_needs_gpu_or_price_exits_2() -> None:
    result = _invoke("--tokens-per-second", "1000")
    assert result.exit_code == 2
    assert "--price-per-hour" in result.output
    assert "--gpu" in result.output
