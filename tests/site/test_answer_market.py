"""A ranking's price well above what the market asks says so, with the $ figure at the market's
price: the H100's rows are priced at OCI's $10/GPU-h list (the rule's one basis for every GPU),
where Lium and Vast ask $1.75. Its GPU page warned; the answers, the CLI's and the pages', did
not, so 4 × H100 read $4.64/1M accepted, ×1.46 the winner, with nothing to say it would be
$0.81 at the market's price."""

import html
import re

import pytest
from answer_render import render
from site_helpers import answer_page_data

from infermeter.calculators.price_tiers import MARKET_TIER
from infermeter.registry.catalog import load_prices
from infermeter.registry.evidence import answer_prices
from infermeter.registry.prices import ABOVE_MARKET, above_market, market_floor
from tests.cli_helpers import invoke, json_output

MODEL = "llama-3.1-70b-instruct"


def test_answer_prices_carry_the_market_floor_where_well_above_it() -> None:
    entries = load_prices()
    marked = 0
    for price in answer_prices(entries.values()):
        floor = above_market(entries[price.id], entries.values())
        if floor is None:
            assert (price.market_usd_per_gpu_hour, price.market_providers) == (None, None)
            continue
        marked += 1
        assert price.market_usd_per_gpu_hour == floor[0].usd_per_gpu_hour
        assert price.market_providers == ", ".join(floor[1])
        assert price.usd_per_gpu_hour > ABOVE_MARKET * price.market_usd_per_gpu_hour
    assert marked  # the H100's OCI list, at least


def test_cli_and_page_rows_say_what_the_market_asks_and_the_figure_at_it() -> None:
    rows = [
        row
        for found in json_output("registry", "answer", "--model", MODEL, "--json")["answers"]
        for row in found["rows"]
        if row["market_usd_per_gpu_hour"] is not None
    ]
    assert rows
    for row in rows:
        ratio = row["market_usd_per_gpu_hour"] / row["usd_per_gpu_hour"]
        assert row["market_usd_per_million_accepted"] == pytest.approx(
            row["usd_per_million_accepted"] * ratio, rel=1e-5
        )
    text = invoke("registry", "answer", "--model", MODEL).stdout
    shown = render({"model": MODEL}, answer_page_data())["html"]
    # every such row, and no other, says so: the CLI's and the page's
    assert text.count("/1M accepted at that price") == len(rows)
    assert shown.count("<span data-market>market from <a href=") == len(rows)
    for row in rows:
        said = f"market from ${row['market_usd_per_gpu_hour']:,.2f}/GPU-h ("
        assert said in text
        assert said in html.unescape(re.sub("<[^>]+>", "", shown))


def test_the_market_tier_prices_each_gpu_at_its_market_floor() -> None:
    # a reader renting where two providers agree can rank at those prices: the answers' own
    # tier, each GPU's on-demand market floor (or its on-demand price where lower or none is)
    entries = load_prices()
    prices = answer_prices(entries.values())
    on_demand = {p.gpu: p for p in prices if p.tier == "on_demand"}
    market = {p.gpu: p for p in prices if p.tier == MARKET_TIER}
    assert sorted(market) == sorted(on_demand)
    for gpu, price in market.items():
        floor = market_floor(gpu, "on_demand", entries.values())
        expected = min(
            on_demand[gpu].usd_per_gpu_hour,
            on_demand[gpu].usd_per_gpu_hour if floor is None else floor[0].usd_per_gpu_hour,
        )
        assert price.usd_per_gpu_hour == expected, gpu
        assert price.id in entries  # a catalog price: its row on the GPU page is its source
        assert price.market_usd_per_gpu_hour is None  # it is the floor: nothing to set beside
    assert market["h100-sxm"].usd_per_gpu_hour < on_demand["h100-sxm"].usd_per_gpu_hour


def test_cli_and_page_rank_at_the_market_tier() -> None:
    found = json_output("registry", "answer", "--model", MODEL, "--tier", "market", "--json")
    market = {p.id: p for p in answer_prices(load_prices().values()) if p.tier == MARKET_TIER}
    rows = [row for answer in found["answers"] for row in answer["rows"]]
    assert rows
    for row in rows:
        assert row["usd_per_gpu_hour"] == market[row["price_id"]].usd_per_gpu_hour
        assert row["market_usd_per_gpu_hour"] is None
    for answer in found["answers"]:
        costs = [row["usd_per_million_accepted"] for row in answer["rows"]]
        assert costs == sorted(costs)
    shown = render({"model": MODEL, "tier": "market"}, answer_page_data())
    assert shown["payload"]["answers"] == found["answers"]
