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

from infermeter.registry.catalog import load_prices
from infermeter.registry.evidence import answer_prices
from infermeter.registry.prices import ABOVE_MARKET, above_market
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
