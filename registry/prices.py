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
"""

from collections.abc import Iterable

from registry.models import PriceEntry

TIERS = ("on_demand", "interruptible", "reserved")


def usable(price: PriceEntry) -> bool:
    """Whether a figure may use this price (the catalog does not flag it)."""
    return price.caution is None


def _cheapest(entries: Iterable[PriceEntry]) -> PriceEntry | None:
    # Ties go to the id that sorts first, so the choice never depends on the catalog's order.
    return min(entries, key=lambda price: (price.usd_per_gpu_hour, price.id), default=None)


def tier_prices(gpu_id: str, prices: Iterable[PriceEntry]) -> dict[str, PriceEntry]:
    """The price of each tier for `gpu_id` that figures use, as the module docstring says.

    Tiers with no usable price are absent. Without an on-demand price, each tier is its cheapest
    usable entry.
    """
    candidates = [price for price in prices if price.gpu == gpu_id and usable(price)]
    by_tier = {tier: [p for p in candidates if p.tier == tier] for tier in TIERS}
    on_demand = _cheapest(by_tier["on_demand"])
    if on_demand is None:
        chosen = {tier: _cheapest(entries) for tier, entries in by_tier.items()}
        return {tier: price for tier, price in chosen.items() if price is not None}
    result = {"on_demand": on_demand}
    for tier in TIERS[1:]:
        same_provider = _cheapest(p for p in by_tier[tier] if p.provider == on_demand.provider)
        other = _cheapest(
            p for p in by_tier[tier] if p.usd_per_gpu_hour < on_demand.usd_per_gpu_hour
        )
        price = same_provider if same_provider is not None else other
        if price is not None:
            result[tier] = price
    return result


def providers(chosen: dict[str, PriceEntry]) -> list[str]:
    """The providers a tier comparison draws on, on-demand's first."""
    names: list[str] = []
    for tier in TIERS:
        if tier in chosen and chosen[tier].provider not in names:
            names.append(chosen[tier].provider)
    return names
