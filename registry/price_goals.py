"""The price goals, measured on the index and the price catalog (`benchmarks/price_goals.py`
prints them):

1. at least 80 % of the $ figures rest on a price that meets the goal
   (`registry.prices.Confidence.meets_goal`: dated within 6 months, and the provider's official
   list price or quoted by at least 2 providers);
2. every GPU with results has a sourced price, or the site says plainly that none exists;
3. no price without a provider and a source address.

A $ figure is one index row's $ per 1M output (or accepted) tokens at one tier. Goal 1 is judged
on the on-demand figures, the ones the headline columns, rankings and answers use by default and
the ones issue 21 counted (1,833 at main 707c176, 94 % of them on low-confidence prices); the
interruptible and reserved figures are counted and printed beside them.
"""

import datetime as dt
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from infermeter.registry.index_row import IndexRow
from infermeter.registry.models import PriceEntry
from infermeter.registry.prices import TIERS, confidence, tier_prices

GOAL_SHARE = 0.8


@dataclass
class PriceGoals:
    """The shares and lists the goals are judged on."""

    figures: Counter[str] = field(default_factory=Counter)
    """$ figures by tier."""
    meeting: Counter[str] = field(default_factory=Counter)
    """Of those, the ones whose price meets the goal, by tier."""
    priced_gpus: dict[str, dict[str, str]] = field(default_factory=dict)
    """GPU with results → tier → the price id its figures use."""
    bases: Counter[str] = field(default_factory=Counter)
    """On-demand $ figures by the basis of their price (`Confidence.basis`: list, corroborated,
    quote): what a comparison across GPUs mixes."""
    unpriced_gpus: list[str] = field(default_factory=list)
    """GPUs with results and no sourced price at all."""
    unsourced_prices: list[str] = field(default_factory=list)
    """Price ids with no provider or no source address (must stay empty)."""

    def share(self, tier: str | None = None) -> float:
        """The share of $ figures (of one tier, or all) resting on a price meeting the goal."""
        total = self.figures[tier] if tier else sum(self.figures.values())
        met = self.meeting[tier] if tier else sum(self.meeting.values())
        return met / total if total else 0.0

    def holds(self) -> bool:
        """Whether the three goals hold: goal 1 on the on-demand figures; goal 2 by listing (an
        unpriced GPU is stated as such); goal 3 when no price lacks a provider or source."""
        return self.share("on_demand") >= GOAL_SHARE and not self.unsourced_prices


def _has_figure(row: IndexRow, tier: str) -> bool:
    price = row.tier(tier)
    return (
        price.usd_per_million_output_tokens is not None
        or price.usd_per_million_accepted_tokens is not None
    )


def price_goals(
    rows: Sequence[IndexRow], prices: Iterable[PriceEntry], today: dt.date
) -> PriceGoals:
    """The goals measured on the index `rows` and the catalog `prices` on `today`."""
    catalog = list(prices)
    by_id = {price.id: price for price in catalog}
    goals = PriceGoals()
    trusts = {price.id: confidence(price, catalog, today) for price in catalog}
    for row in rows:
        for tier in TIERS:
            price_id = row.tier(tier).price_id
            if price_id is None or not _has_figure(row, tier):
                continue
            goals.figures[tier] += 1
            trust = trusts.get(price_id)
            goals.meeting[tier] += trust is not None and trust.meets_goal
            if tier == "on_demand" and trust is not None:
                goals.bases[trust.basis] += 1
    for gpu in sorted({row.gpu for row in rows}):
        chosen = tier_prices(gpu, catalog, today)
        if chosen:
            goals.priced_gpus[gpu] = {tier: price.id for tier, price in chosen.items()}
        else:
            goals.unpriced_gpus.append(gpu)
    goals.unsourced_prices = sorted(
        price_id
        for price_id, price in by_id.items()
        if not price.provider.strip() or not price.source.url
    )
    return goals
