"""Which catalog price a figure uses (`registry.prices`): a flagged price never, a GPU's tiers
from one provider, a cross-provider "discount" only below on-demand, a price meeting the goal
before a cheaper one that does not; and each price's confidence."""

import datetime as dt
from typing import Any

import pytest
from pydantic import ValidationError

from infermeter.registry.catalog import load_prices
from infermeter.registry.lookup import cheapest_prices, load_gpus
from infermeter.registry.models import PriceEntry
from infermeter.registry.prices import (
    agree,
    confidence,
    earliest_day,
    market_floor,
    providers,
    tier_prices,
)

PRICES = list(load_prices().values())
FLAGGED = [price for price in PRICES if price.caution is not None]


TODAY = dt.date(2026, 12, 1)


def _price(provider: str, tier: str, usd: float, **extra: Any) -> PriceEntry:
    template = PRICES[0].model_dump()
    source = extra.pop("source", {})
    template["source"] = {**template["source"], "date_basis": "stated", "official": False,
                          "date": "2026-10-01"} | source  # fmt: skip
    template.update(
        as_of=template["source"]["date"],
        id=f"{provider}-{tier}-{usd}".replace(".", "-").replace("_", "-"),
        provider=provider,
        gpu="l40s",
        tier=tier,
        usd_per_gpu_hour=usd,
        notes=None,
        caution=None,
    )
    template.update(extra)
    return PriceEntry.model_validate(template)


def test_prices_catalog_flags_the_l40s_anomaly() -> None:
    flagged = {price.id: price.caution for price in FLAGGED}
    assert flagged["runpod-secure-l40s-on-demand-skypilot"] == "anomaly"


@pytest.mark.parametrize("gpu_id", sorted(load_gpus()))
def test_prices_no_figure_uses_a_flagged_price(gpu_id: str) -> None:
    chosen = cheapest_prices(gpu_id)
    assert all(price.caution is None for price in chosen.values())


def test_prices_flagged_cheaper_price_is_skipped() -> None:
    # The flagged L40S prices are below every usable one: only the filter keeps them out.
    chosen = cheapest_prices("l40s")["on_demand"]
    cheaper_flagged = [
        p
        for p in FLAGGED
        if p.gpu == "l40s"
        and p.tier == "on_demand"
        and p.usd_per_gpu_hour < chosen.usd_per_gpu_hour
    ]
    assert cheaper_flagged
    assert chosen.caution is None


@pytest.mark.parametrize("gpu_id", sorted(load_gpus()))
def test_prices_discount_tiers_are_same_provider_or_below_on_demand(gpu_id: str) -> None:
    chosen = cheapest_prices(gpu_id)
    if "on_demand" not in chosen:
        return
    on_demand = chosen["on_demand"]
    for tier in ("interruptible", "reserved"):
        if tier in chosen and chosen[tier].provider != on_demand.provider:
            assert chosen[tier].usd_per_gpu_hour < on_demand.usd_per_gpu_hour


def test_prices_tiers_come_from_the_on_demand_provider() -> None:
    prices = [
        _price("cheap", "on_demand", 1.0),
        _price("cheap", "interruptible", 0.8),
        _price("other", "interruptible", 0.5),
        _price("other", "on_demand", 3.0),
        _price("other", "reserved", 2.0),
    ]
    chosen = tier_prices("l40s", prices)
    assert chosen["on_demand"].provider == "cheap"
    # the same provider's spot price, although another provider's is lower
    assert chosen["interruptible"].usd_per_gpu_hour == 0.8
    # "cheap" has no reservation; "other"'s 2.0 is dearer than on-demand 1.0: no reserved tier
    assert "reserved" not in chosen
    assert providers(chosen) == ["cheap"]


def test_prices_missing_tier_falls_back_below_on_demand() -> None:
    prices = [_price("cheap", "on_demand", 1.0), _price("other", "reserved", 0.6)]
    chosen = tier_prices("l40s", prices)
    assert chosen["reserved"].provider == "other"
    assert providers(chosen) == ["cheap", "other"]


def test_prices_flagged_on_demand_does_not_choose_the_provider() -> None:
    prices = [
        _price("odd", "on_demand", 0.1, notes="DOUBTFUL: too low", caution="doubtful"),
        _price("odd", "interruptible", 0.05),
        _price("fair", "on_demand", 1.0),
    ]
    chosen = tier_prices("l40s", prices)
    assert chosen["on_demand"].provider == "fair"
    # odd's spot price is a usable entry below fair's on-demand: allowed, and named
    assert chosen["interruptible"].provider == "odd"


def test_prices_note_that_flags_needs_caution() -> None:
    with pytest.raises(ValidationError, match="set caution"):
        _price("odd", "on_demand", 0.1, notes="ANOMALY: columns swapped")


def test_prices_every_price_names_its_provider_and_source() -> None:
    for price in PRICES:
        assert price.provider.strip(), price.id
        assert price.provider != "seed", price.id
        assert price.source.url.startswith("https://"), price.id


def test_prices_note_that_says_derived_needs_the_rule() -> None:
    with pytest.raises(ValidationError, match="set derived"):
        _price("x", "reserved", 1.0, notes="DERIVED: on-demand x (1 - 0.35)")
    derived = _price(
        "x",
        "reserved",
        1.0,
        notes="DERIVED",
        derived={"rule": "on-demand × 0.65", "from_price": "a"},
    )
    assert derived.derived is not None
    assert derived.derived.rule == "on-demand × 0.65"


def test_prices_partial_dates_are_as_old_as_they_could_be() -> None:
    assert earliest_day("2026") == dt.date(2026, 1, 1)
    assert earliest_day("2026-09") == dt.date(2026, 9, 1)
    assert earliest_day("2026-09-18") == dt.date(2026, 9, 18)


@pytest.mark.parametrize(
    ("source", "others", "level", "meets_goal"),
    [
        ({"official": True}, [], "medium", True),
        ({"official": True}, [("b", 1.2)], "high", True),
        ({}, [], "low", False),
        ({}, [("b", 1.2)], "medium", True),
        ({}, [("b", 1.2), ("c", 0.8)], "high", True),
        ({}, [("b", 1.3)], "low", False),  # 30 % apart: no agreement
        ({"official": True, "date": "2026-05-31"}, [], "low", False),  # 184 days old
        ({"official": True, "date": "2026"}, [], "low", False),  # year only: maybe January
        ({"official": True, "date_basis": "read", "date": "2026-12-01"}, [], "low", False),
    ],
)
def test_prices_confidence_counts_agreeing_recent_providers(
    source: dict[str, Any], others: list[tuple[str, float]], level: str, meets_goal: bool
) -> None:
    price = _price("a", "on_demand", 1.0, source=source)
    catalog = [price, *(_price(name, "on_demand", usd) for name, usd in others)]
    trust = confidence(price, catalog, TODAY)
    assert (trust.level, trust.meets_goal) == (level, meets_goal)
    assert trust.reason().startswith(level)


def test_prices_agreement_is_symmetric() -> None:
    # 27 % apart as the dearer one sees it, 21 % as the cheaper one does: no agreement either
    # way, so the dearer list price is not "corroborated" by the cheaper one (GCP's A100 80 GB
    # at $5.07 against OCI's $4.00 list once outranked it that way).
    cheap = _price("oci", "on_demand", 4.0, source={"official": True})
    dear = _price("gcp", "on_demand", 5.07, source={"official": True})
    assert not agree(cheap, dear)
    assert not agree(dear, cheap)
    assert confidence(dear, [cheap, dear], TODAY).providers == 1
    assert tier_prices("l40s", [cheap, dear], TODAY)["on_demand"].provider == "oci"
    assert agree(cheap, _price("x", "on_demand", 5.0))  # 25 % of the lower: the bound itself


def test_prices_a_derived_price_is_never_official() -> None:
    base = _price("oci", "on_demand", 10.0, source={"official": True})
    derived = _price(
        "oci",
        "on_demand",
        10.0,
        source={"official": True},
        derived={"rule": "priced as H200 SXM", "from_price": base.id},
    )
    assert confidence(base, [base], TODAY).meets_goal
    trust = confidence(derived, [derived], TODAY)
    assert (trust.level, trust.official, trust.meets_goal) == ("low", False, False)


def test_prices_a_price_meeting_the_goal_beats_a_cheaper_single_offer() -> None:
    prices = [
        _price("cheap", "on_demand", 1.0, source={"date_basis": "read"}),
        _price("listed", "on_demand", 3.0, source={"official": True}),
    ]
    assert tier_prices("l40s", prices, TODAY)["on_demand"].provider == "listed"
    # without the goal met, the cheapest wins as before
    assert tier_prices("l40s", prices[:1], TODAY)["on_demand"].provider == "cheap"


def test_prices_a_dated_official_list_beats_a_cheaper_corroborated_market_price() -> None:
    # One basis for every GPU: a recent official list first, so a ranking across GPUs compares
    # lists with lists; two recent providers agreeing come next, for a GPU no list names.
    prices = [
        _price("listed", "on_demand", 3.0, source={"official": True}),
        _price("market-a", "on_demand", 2.0),
        _price("market-b", "on_demand", 2.2),
    ]
    chosen = tier_prices("l40s", prices, TODAY)["on_demand"]
    assert chosen.provider == "listed"
    assert confidence(chosen, prices, TODAY).basis == "list"
    market = tier_prices("l40s", prices[1:], TODAY)["on_demand"]
    assert market.provider == "market-a"
    assert confidence(market, prices[1:], TODAY).basis == "corroborated"
    # the list undated: it is a quote, and the corroborated market price wins
    prices[0] = _price("listed", "on_demand", 1.4, source={"official": True, "date_basis": "read"})
    assert tier_prices("l40s", prices, TODAY)["on_demand"].provider == "market-a"


def test_prices_market_floor_is_the_cheapest_price_a_second_provider_agrees_with() -> None:
    prices = [
        _price("alone", "on_demand", 0.5),
        _price("a", "on_demand", 1.0, source={"date_basis": "read"}),
        _price("a", "on_demand", 1.1),  # the same provider twice is one provider
        _price("b", "on_demand", 1.2, source={"date_basis": "read"}),
        _price("listed", "on_demand", 4.0, source={"official": True}),
    ]
    floor = market_floor("l40s", "on_demand", prices)
    assert floor is not None
    assert (floor[0].usd_per_gpu_hour, floor[1]) == (1.0, ["a", "b"])
    assert market_floor("l40s", "on_demand", prices[:3]) is None
    assert market_floor("l40s", "interruptible", prices) is None


def test_prices_h100_market_floor_is_far_below_the_official_list() -> None:
    # The registry's H100 SXM: OCI's dated list ($10) is what figures use; the market floor
    # is what Lium (dated 2026-08-24) and Vast ask, which the GPU page sets beside it.
    chosen = tier_prices("h100-sxm", PRICES, TODAY)["on_demand"]
    floor = market_floor("h100-sxm", "on_demand", PRICES)
    assert floor is not None
    assert (chosen.provider, chosen.usd_per_gpu_hour) == ("oci", 10.0)
    assert floor[0].usd_per_gpu_hour < 0.25 * chosen.usd_per_gpu_hour
    assert len(floor[1]) >= 2
