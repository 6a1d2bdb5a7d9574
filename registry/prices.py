"""Which catalog price a figure uses: usable prices only, a GPU's tiers from one provider.

- A price the catalog flags (`PriceEntry.caution`: an anomaly in its source, or a value the
  curator doubts) is listed on its GPU page and never used in a default, a ranking or a headline.
- Prices are per GPU-hour (the instance price ÷ its GPUs); a deployment of N GPUs costs N times
  that.
- A GPU's tiers are compared within one provider: the provider of the cheapest usable on-demand
  price also gives the interruptible and reserved prices when it lists them. A tier it lacks comes
  from the cheapest other provider only when that is below the on-demand price: a "discount"
  dearer than on-demand is two providers' price lists mixed, not a discount. Each chosen entry
  names its provider, so a page can say which providers a comparison mixes.
- Within a tier, one basis for every GPU (`Confidence.basis`), so a ranking across GPUs compares
  like with like: a provider's official list price dated within 6 months comes first (`list`);
  a GPU no dated list names gets a price at least 2 recent providers agree on (`corroborated`);
  then the rest (`quote`). Within each rank the cheapest wins. Ranking a corroborated
  marketplace price first put the H200, B200 and B300 at what Lium's hosts ask and the H100 at
  Oracle's list, 2-3 times dearer than its market: a ranking of GPUs that measured the basis.
  An official list can be far above what other providers ask (OCI's H100 is $10/GPU-h where
  five providers ask $1.75-3), so `market_floor` gives, beside it, the cheapest price that a
  second provider agrees with, whatever its date.

A price's confidence (`confidence`) comes from how many providers and offers agree with it:
usable prices of the same GPU and tier that differ from it by at most 25 % of the lower of the
two (`agree`: symmetric). `high`: recent, and 3 or more recent
providers agree (or 2, one of them its own official list). `medium`: meets the goal. `low`: the
rest (a single offer, an undated snapshot, a price older than 6 months, a derived price no
other provider's agrees with: a derived price is never official).
"""

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from infermeter.calculators.api import UNDATED
from infermeter.calculators.price_tiers import PRICE_TIERS
from infermeter.registry.models import PriceEntry

TIERS = PRICE_TIERS  # declared in calculators.price_tiers; the catalog model uses it too


def usable(price: PriceEntry) -> bool:
    """Whether a figure may use this price (the catalog does not flag it)."""
    return price.caution is None


RECENT_DAYS = 183  # "dated within 6 months"
AGREEMENT = 0.25  # prices within ±25 % of each other agree


def agree(one: PriceEntry, other: PriceEntry) -> bool:
    """Whether two prices agree: they differ by at most 25 % of the lower. Symmetric, so a
    dear price never counts a cheap one as agreeing while the cheap one does not return it
    (GCP's $5.07 A100 against OCI's $4.00 list: 27 % apart, no agreement either way)."""
    low = min(one.usd_per_gpu_hour, other.usd_per_gpu_hour)
    return abs(one.usd_per_gpu_hour - other.usd_per_gpu_hour) <= AGREEMENT * low


def earliest_day(partial_date: str) -> dt.date:
    """The first day a partial date (`2026`, `2026-09`, `2026-09-18`) can mean: a price dated
    only by its year or month is as old as it could be."""
    parts = [int(part) for part in str(partial_date).split("-")]
    return dt.date(parts[0], parts[1] if len(parts) > 1 else 1, parts[2] if len(parts) > 2 else 1)


def dated(price: PriceEntry) -> str | None:
    """The price's date as a reader should see it: null when undated (only read that day)."""
    return None if price.source.date_basis == "read" else str(price.as_of)


def shown_as_of(price: PriceEntry) -> str:
    """The price's `as_of` as a payload or a data file gives it to a reader: its date, or
    `undated` (`calculators.api.UNDATED`) where only the day it was read is known."""
    return dated(price) or UNDATED


def is_recent(price: PriceEntry, today: dt.date) -> bool:
    """Dated (stated or by commit, not just read) within 6 months of `today`."""
    if price.source.date_basis == "read":
        return False
    return (today - earliest_day(str(price.as_of))).days <= RECENT_DAYS


@dataclass(frozen=True)
class Confidence:
    """How far a price can be trusted, and why (see the module docstring)."""

    level: Literal["high", "medium", "low"]
    providers: int
    """Recent providers with a usable price of the GPU and tier within ±25 % (itself included)."""
    offers: int
    """Usable prices of the GPU and tier within ±25 %, any date (itself included)."""
    recent: bool
    official: bool

    @property
    def corroborated(self) -> bool:
        """Dated within 6 months and quoted by at least 2 recent providers (±25 %)."""
        return self.recent and self.providers >= 2

    @property
    def meets_goal(self) -> bool:
        """Dated within 6 months, and the provider's official list price or quoted by ≥ 2
        providers."""
        return self.recent and (self.official or self.providers >= 2)

    @property
    def basis(self) -> Literal["list", "corroborated", "quote"]:
        """What a figure on this price compares on: `list` (a provider's official list price,
        dated within 6 months), `corroborated` (else: 2 or more recent providers agree), `quote`
        (the rest: a single, undated, old or derived price). `rank` orders the choice so."""
        if self.recent and self.official:
            return "list"
        return "corroborated" if self.corroborated else "quote"

    def reason(self) -> str:
        """The confidence in words, e.g. `medium: official list price, dated within 6 months`."""
        dated = "dated within 6 months" if self.recent else "undated or older than 6 months"
        kind = "official list price" if self.official else "quoted price"
        return (
            f"{self.level}: {kind}, {dated}; {self.providers} recent provider(s) and "
            f"{self.offers} offer(s) within ±25 %"
        )


def confidence(
    price: PriceEntry, prices: Iterable[PriceEntry], today: dt.date | None = None
) -> Confidence:
    """The confidence of `price` among the catalog's `prices` on `today` (default: today)."""
    day = today or dt.date.today()
    agreeing = [
        other
        for other in prices
        if other.gpu == price.gpu
        and other.tier == price.tier
        and usable(other)
        and agree(other, price)
    ]
    if price not in agreeing:
        agreeing.append(price)
    providers = len({other.provider for other in agreeing if is_recent(other, day)})
    # A derived price is its source's price applied by a rule, not an offer of this GPU/tier:
    # never official for it, so it meets the goal only if other providers' prices agree.
    recent, official = is_recent(price, day), price.source.official and price.derived is None
    level: Literal["high", "medium", "low"] = "low"
    if recent and (providers >= 3 or (official and providers >= 2)):
        level = "high"
    elif recent and (official or providers >= 2):
        level = "medium"
    return Confidence(level, providers, len(agreeing), recent, official)


def rank(trust: Confidence) -> int:
    """A price's rank in the choice (lower first): 0 a recent official list price, 1 else a
    price 2 or more recent providers agree on, 2 the rest."""
    return ("list", "corroborated", "quote").index(trust.basis)


def _cheapest(
    entries: Iterable[PriceEntry], ranks: dict[str, int] | None = None
) -> PriceEntry | None:
    # The best rank first, then the cheapest; ties go to the id that sorts first, so the choice
    # never depends on the catalog's order.
    ranked = ranks or {}
    return min(
        entries,
        key=lambda price: (ranked.get(price.id, 2), price.usd_per_gpu_hour, price.id),
        default=None,
    )


def tier_prices(
    gpu_id: str, prices: Iterable[PriceEntry], today: dt.date | None = None
) -> dict[str, PriceEntry]:
    """The price of each tier for `gpu_id` that figures use, as the module docstring says.

    Tiers with no usable price are absent. Without an on-demand price, each tier is its best
    usable entry.
    """
    everything = list(prices)
    candidates = [price for price in everything if price.gpu == gpu_id and usable(price)]
    goal = {price.id: rank(confidence(price, candidates, today)) for price in candidates}
    by_tier = {tier: [p for p in candidates if p.tier == tier] for tier in TIERS}
    on_demand = _cheapest(by_tier["on_demand"], goal)
    if on_demand is None:
        chosen = {tier: _cheapest(entries, goal) for tier, entries in by_tier.items()}
        return {tier: price for tier, price in chosen.items() if price is not None}
    result = {"on_demand": on_demand}
    for tier in TIERS[1:]:
        same_provider = _cheapest(
            (p for p in by_tier[tier] if p.provider == on_demand.provider), goal
        )
        other = _cheapest(
            (p for p in by_tier[tier] if p.usd_per_gpu_hour < on_demand.usd_per_gpu_hour), goal
        )
        price = same_provider if same_provider is not None else other
        if price is not None:
            result[tier] = price
    return result


@dataclass(frozen=True)
class GpuPrices:
    """A GPU's price of each tier that figures use (`tier_prices`) and the confidence in each
    among the whole catalog."""

    cheapest: dict[str, PriceEntry]
    trust: dict[str, Confidence]


class PriceBook:
    """The catalog's `prices`, each GPU's `GpuPrices` worked out once: every result on one GPU
    is priced alike, so an index of thousands of results prices each of its GPUs once."""

    def __init__(self, prices: Iterable[PriceEntry]) -> None:
        self.prices = list(prices)
        self._by_gpu: dict[str, GpuPrices] = {}

    def of(self, gpu_id: str) -> GpuPrices:
        """The GPU's prices per tier and their confidence (today's, as `confidence` says)."""
        if gpu_id not in self._by_gpu:
            cheapest = tier_prices(gpu_id, self.prices)
            trust = {tier: confidence(price, self.prices) for tier, price in cheapest.items()}
            self._by_gpu[gpu_id] = GpuPrices(cheapest, trust)
        return self._by_gpu[gpu_id]


def providers(chosen: dict[str, PriceEntry]) -> list[str]:
    """The providers a tier comparison draws on, on-demand's first."""
    names: list[str] = []
    for tier in TIERS:
        if tier in chosen and chosen[tier].provider not in names:
            names.append(chosen[tier].provider)
    return names


ABOVE_MARKET = 1.25
"""How far above the market floor (`market_floor`) a price a figure uses must be before a page
sets the floor beside it."""


def above_market(
    price: PriceEntry, prices: Iterable[PriceEntry]
) -> tuple[PriceEntry, list[str]] | None:
    """The market floor of `price`'s GPU and tier, and its providers, where `price` is more than
    `ABOVE_MARKET` × that floor (OCI's $10 H100 list beside $1.75 that Lium and Vast ask);
    None else."""
    floor = market_floor(price.gpu, price.tier, prices)
    if floor is None or price.usd_per_gpu_hour <= ABOVE_MARKET * floor[0].usd_per_gpu_hour:
        return None
    return floor


def market_floor(
    gpu_id: str, tier: str, prices: Iterable[PriceEntry]
) -> tuple[PriceEntry, list[str]] | None:
    """The cheapest usable price of `gpu_id` in `tier` that another provider's usable price
    agrees with (±25 %), whatever their dates, and the providers agreeing (itself first); None
    when no two providers agree. What the market asks, to set beside a figure's price."""
    candidates = [p for p in prices if p.gpu == gpu_id and p.tier == tier and usable(p)]
    for price in sorted(candidates, key=lambda p: (p.usd_per_gpu_hour, p.id)):
        names = [
            price.provider,
            *sorted(
                {
                    other.provider
                    for other in candidates
                    if other.provider != price.provider and agree(other, price)
                }
            ),
        ]
        if len(names) >= 2:
            return price, names
    return None
