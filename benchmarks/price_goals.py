"""Print the price goals of issue 21 on this registry (`registry.price_goals`): the share of the
site's $ figures resting on a price dated within 6 months that is the provider's official list
price or quoted by at least 2 providers; every GPU with results and the price its figures use
(or that none exists); prices without a provider or source.

    .venv/bin/python benchmarks/price_goals.py                 # today
    .venv/bin/python benchmarks/price_goals.py --today 2026-12-01 --registry .

Exit status 0 when the goals hold, 1 when not.
"""

import argparse
import datetime as dt
import sys
from pathlib import Path

from infermeter.registry.catalog import load_prices
from infermeter.registry.index import build_index
from infermeter.registry.location import catalogs_folder
from infermeter.registry.models import PriceEntry
from infermeter.registry.price_goals import GOAL_SHARE, price_goals
from infermeter.registry.prices import TIERS, confidence, market_floor


def _date(price: PriceEntry) -> str:
    return str(price.as_of) if price.source.date_basis != "read" else "undated"


def _gpu_line(
    gpu: str, chosen: dict[str, str], prices: dict[str, PriceEntry], today: dt.date
) -> str:
    """`on_demand oci $10.00 2026-09-18 medium; …; market floor $1.75 lium 2026-08-24 (lium,
    vast)`."""
    catalog = list(prices.values())
    parts = []
    for tier in TIERS:
        if tier in chosen:
            price = prices[chosen[tier]]
            trust = confidence(price, catalog, today)
            level = f"{trust.level} {trust.basis}"
            derived = f" (derived: {price.derived.rule})" if price.derived else ""
            parts.append(
                f"{tier} {price.provider} ${price.usd_per_gpu_hour:.2f} {_date(price)} {level}"
                + derived
            )
    floor = market_floor(gpu, "on_demand", catalog)
    if floor is not None:
        price, names = floor
        parts.append(
            f"market floor ${price.usd_per_gpu_hour:.2f} {price.provider} {_date(price)} "
            f"({', '.join(names)})"
        )
    return "; ".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--registry", type=Path, default=Path("."), help="registry checkout")
    parser.add_argument("--today", type=dt.date.fromisoformat, default=dt.date.today())
    arguments = parser.parse_args()
    rows, results = build_index(arguments.registry)
    prices = load_prices(catalogs_folder(arguments.registry))
    goals = price_goals(rows, prices.values(), arguments.today)
    print(f"registry: {results} results, {len(rows)} index rows; today {arguments.today}")
    print(
        f"1. $ figures on a price meeting the goal (need ≥ {GOAL_SHARE:.0%} of the on-demand "
        "ones; the other tiers for the record):"
    )
    for tier in TIERS:
        met, total = goals.meeting[tier], goals.figures[tier]
        print(f"   {tier:<14} {met:>5} of {total:>5}  {goals.share(tier):6.1%}")
    met, total = sum(goals.meeting.values()), sum(goals.figures.values())
    print(f"   {'all tiers':<14} {met:>5} of {total:>5}  {goals.share():6.1%}")
    bases = ", ".join(f"{name} {goals.bases[name]}" for name in ("list", "corroborated", "quote"))
    print(f"   on-demand figures by the basis of their price: {bases}")
    print(
        "2. GPUs with results and the price their figures use (provider, $/GPU-h, date, "
        "confidence), and on-demand's market floor (the cheapest price a second provider "
        "agrees with, any date):"
    )
    for gpu, chosen in goals.priced_gpus.items():
        print(f"   {gpu:<14} " + _gpu_line(gpu, chosen, prices, arguments.today))
    for gpu in goals.unpriced_gpus:
        print(f"   {gpu:<14} no sourced price exists in the catalog (the site says so)")
    print(f"3. prices without a provider or a source address: {len(goals.unsourced_prices)}")
    for price_id in goals.unsourced_prices:
        print(f"   {price_id}")
    holds = goals.holds()
    print("goals hold" if holds else "goals do NOT hold")
    return 0 if holds else 1


if __name__ == "__main__":
    sys.exit(main())
