"""Azure's GPU VM list prices from dated snapshots of the Azure Retail Prices API
(`registry/catalogs/prices-azure.yaml`).

andy-diericks/azure-pricing-radar (MIT License) reads Microsoft's public Retail Prices API
(prices.azure.com) every 6 hours for a few regions and commits one file per region,
`data/latest/vm-<region>.json`: an object keyed `skuId|meterId|type|reservationTerm`, each item
with `armRegionName`, `meterName`, `productName`, `retailPrice` (US dollars per hour of the
whole VM), `skuName`, `unitOfMeasure`, `unitPrice` and, where Azure sells one,
`savingsPlanPrice` (the fetcher keeps the 1-year savings plan's hourly price, no other term).

- on-demand: the item whose `skuName` is the VM size; interruptible: the `<size> Spot` item
  (Spot VMs); reserved: the on-demand item's `savingsPlanPrice` (a 1-year commitment to an
  hourly spend; the offering says so). Batch's `Low Priority` items are not read, and Windows
  items (`productName` ending in `Windows` or `Win`: the price includes a Windows licence) are
  skipped.
- The API names no GPU: `SIZES` gives each VM size's series and GPU count (Microsoft's VM size
  specifications as `AksNodeVmSizes.cs` of microsoft/aspire lists them, `SIZES_SOURCE`), and the
  GPU catalog names the series' GPU (`source_names`, source `azure-retail`). A size not in
  `SIZES` is skipped with its reason.
- One entry per VM size × tier at the cheapest region of the excerpts; the notes give the
  regions and the range. A Spot or savings-plan price not below the region's on-demand price is
  no discount and is skipped (ND H200 v5's Spot items equal its on-demand price).
- Two items that price one VM size's tier in one region differently are refused, naming both
  (neither is picked), as is an item key given twice; an item repeated under another key at the
  same price is one price.
- The date is the snapshot's, which each excerpt's `# date:` line states.

The file is written whole from the excerpts given, entries sorted by id, so running the harvest
twice changes nothing.
"""

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infermeter.registry.catalog import gpu_named, harvested_prices_file, load_gpus
from infermeter.registry.errors import shown
from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.harvest.options import HarvestOptions
from infermeter.registry.harvest.outcome import HarvestReport
from infermeter.registry.harvest.pinned_excerpt import (
    PinnedExcerpt,
    excerpt_files,
    match_line,
    read_provenance,
)
from infermeter.registry.harvest.price_entry import one_price_each, positive_number, validated_price
from infermeter.registry.harvest.price_file import write_prices
from infermeter.registry.harvest.sources import AZURE_RETAIL
from infermeter.registry.location import CATALOGS_FOLDER, catalogs_folder
from infermeter.registry.models import GpuEntry, PriceEntry
from infermeter.registry.store import reject_duplicate_keys

GPU_NAMES = AZURE_RETAIL.gpu_names
PRICE_FILE = CATALOGS_FOLDER / harvested_prices_file("azure")
SIZES_SOURCE = (
    "https://github.com/microsoft/aspire/blob/5bd693ae1897dee5e2ce71c2cc08879c1c7eff51/"
    "src/Aspire.Hosting.Azure.Kubernetes/AksNodeVmSizes.cs"
)
# The API's skuName → (the VM size, its series as the GPU catalog names it, GPUs per VM).
SIZES: dict[str, tuple[str, str, int]] = {
    "Standard_NC24ads_A100_v4": ("Standard_NC24ads_A100_v4", "NC A100 v4", 1),
    "Standard_NC48ads_A100_v4": ("Standard_NC48ads_A100_v4", "NC A100 v4", 2),
    "Standard_NC96ads_A100_v4": ("Standard_NC96ads_A100_v4", "NC A100 v4", 4),
    "NC40adsH100v5": ("Standard_NC40ads_H100_v5", "NC H100 v5", 1),
    "NC80adisH100v5": ("Standard_NC80adis_H100_v5", "NC H100 v5", 2),
    "ND96isrMI300Xv5": ("Standard_ND96isr_MI300X_v5", "ND MI300X v5", 8),
    "ND96isrH100v5": ("Standard_ND96isr_H100_v5", "ND H100 v5", 8),
    "ND96isrH200v5": ("Standard_ND96isr_H200_v5", "ND H200 v5", 8),
    "Standard_ND96amsr_A100_v4": ("Standard_ND96amsr_A100_v4", "NDm A100 v4", 8),
    "ND96asr_A100_v4": ("Standard_ND96asr_v4", "ND A100 v4", 8),
}
SPOT = " Spot"
WINDOWS = re.compile(r" (Windows|Win)$")
_ORIGIN = re.compile(
    r"^Excerpt of (?P<path>data/latest/vm-[a-z0-9-]+\.json) in (?P<repo>[\w.-]+/[\w.-]+) at "
    r"commit (?P<commit>[0-9a-f]{40})$"
)
HEADER = (
    "# Written by `infermeter registry harvest azure-retail --from "
    "tests/data/harvest/azure-retail`: do not edit; change the pinned excerpts and rerun.\n"
    "# Each price is Microsoft's list price from the Azure Retail Prices API, as "
    "andy-diericks/azure-pricing-radar (MIT License) committed it; source.url names the file at "
    "the commit read.\n"
)
# tier → (id suffix, offering, what the price is)
TIERS = {
    "on_demand": ("on-demand", "Virtual Machines (pay as you go)", "pay-as-you-go"),
    "interruptible": ("interruptible", "Spot Virtual Machines", "Spot VM"),
    "reserved": ("reserved-1y", "Virtual Machines, 1-year savings plan", "1-year savings plan"),
}


@dataclass(frozen=True)
class RetailExcerpt(PinnedExcerpt):
    """One pinned excerpt of a region's snapshot: its items."""

    items: dict[str, dict[str, Any]]


def read_retail_excerpt(file: Path) -> RetailExcerpt:
    """The excerpt in `file`: its provenance lines, then items of the file copied verbatim
    (`"key": {` … `},`); HarvestError naming the file for anything not in its shape."""
    provenance, body = read_provenance(file, "the file's items")
    origin = match_line(file, _ORIGIN, provenance.origin, "Excerpt of")
    text = "\n".join(body).rstrip().removesuffix(",")
    try:
        items = json.loads("{\n" + text + "\n}", object_pairs_hook=reject_duplicate_keys)
    except ValueError as error:  # json.JSONDecodeError, or an item's key given twice
        raise HarvestError(
            f"{file}: the lines below the provenance are not items: {error}"
        ) from None
    if not isinstance(items, dict) or not all(isinstance(item, dict) for item in items.values()):
        raise HarvestError(f"{file}: expected items keyed by skuId|meterId|type|reservationTerm")
    if provenance.date_basis != "stated":
        raise HarvestError(f"{file}: '# date:' must state the day of the snapshot")
    return RetailExcerpt(file, origin["path"], origin["repo"], origin["commit"], provenance, items)


@dataclass(frozen=True)
class Offer:
    """One VM size's price of one tier in one region, per VM-hour."""

    size: str
    tier: str
    usd_per_vm_hour: float
    region: str


def _item_offers(item: dict[str, Any]) -> tuple[list[Offer], str | None]:
    """The offers of one Linux item (on-demand and its savings plan, or Spot), and the reason it
    gives none, or not its savings plan's."""
    sku = str(item.get("skuName", ""))
    size = sku.removesuffix(SPOT)
    if sku.endswith(" Low Priority"):
        return [], "a Batch low-priority price (not read: Spot is the interruptible VM)"
    if size not in SIZES:
        return [], f"VM size {size!r} is not in the harvester's SIZES"
    if item.get("unitOfMeasure") != "1 Hour":
        return [], f"unitOfMeasure {item.get('unitOfMeasure')!r} is not '1 Hour'"
    region = str(item.get("armRegionName", ""))
    price = positive_number(item.get("retailPrice"))
    if price is None:
        return [], f"retailPrice {item.get('retailPrice')!r} is not a positive number"
    if sku.endswith(SPOT):
        return [Offer(size, "interruptible", price, region)], None
    offers = [Offer(size, "on_demand", price, region)]
    if "savingsPlanPrice" not in item:
        return offers, None
    plan = positive_number(item["savingsPlanPrice"])
    if plan is None:  # the pay-as-you-go price stands; the plan's is reported as dropped
        return (
            offers,
            f"savingsPlanPrice {shown(item['savingsPlanPrice'])} is not a positive number",
        )
    return [*offers, Offer(size, "reserved", plan, region)], None


def _excerpt_offers(excerpt: RetailExcerpt, report: HarvestReport) -> list[Offer]:
    """The offers of the excerpt's Linux items, each item skipped added to `report` with its
    reason; HarvestError where two items give one size, tier and region two prices."""
    offers: list[Offer] = []
    prices: list[tuple[str, str, float]] = []
    for number, (key, item) in enumerate(excerpt.items.items(), 1):
        if WINDOWS.search(str(item.get("productName", ""))):
            report.skipped.append((f"azure/{key}", "a Windows price (licence included)"))
            continue
        found, reason = _item_offers(item)
        if reason is not None:
            report.skipped.append((f"azure/{key}", reason))
        offers.extend(found)
        prices += [
            (
                f"the {o.tier} price of {o.size} in {shown(o.region)}",
                f"item {number}",
                o.usd_per_vm_hour,
            )
            for o in found
        ]
    one_price_each(excerpt.file, prices)
    return offers


def _discounts(offers: list[Offer]) -> tuple[list[Offer], list[tuple[str, str]]]:
    """The offers, less any Spot or savings-plan price not below its region's on-demand price
    (skipped, with the reason)."""
    on_demand = {(o.size, o.region): o.usd_per_vm_hour for o in offers if o.tier == "on_demand"}
    kept: list[Offer] = []
    skipped: list[tuple[str, str]] = []
    for offer in offers:
        base = on_demand.get((offer.size, offer.region))
        if offer.tier != "on_demand" and (base is None or offer.usd_per_vm_hour >= base):
            reason = "no on-demand price to compare" if base is None else "not below on-demand"
            skipped.append((f"azure/{offer.size}/{offer.region}/{offer.tier}", reason))
        else:
            kept.append(offer)
    return kept, skipped


def _entry(excerpt: RetailExcerpt, gpu: GpuEntry, offers: list[Offer]) -> PriceEntry:
    cheapest = min(offers, key=lambda offer: (offer.usd_per_vm_hour, offer.region))
    size, series, count = SIZES[cheapest.size]
    suffix, offering, kind = TIERS[cheapest.tier]
    prices = sorted({offer.usd_per_vm_hour for offer in offers})
    where = ", ".join(sorted({offer.region for offer in offers}))
    spread = f"${prices[0]:g}–${prices[-1]:g}" if len(prices) > 1 else f"${prices[0]:g}"
    provenance = excerpt.provenance
    return validated_price(
        {
            "id": f"azure-retail-{re.sub(r'[^a-z0-9]+', '-', size.lower()).strip('-')}-{suffix}",
            "provider": "azure",
            "offering": offering,
            "gpu": gpu.id,
            "gpus_per_instance": count,
            "instance": size,
            "tier": cheapest.tier,
            "usd_per_gpu_hour": round(cheapest.usd_per_vm_hour / count, 6),
            "region": cheapest.region,
            "as_of": provenance.date,
            "source": excerpt.price_source(
                f"Azure Retail Prices API snapshot of {cheapest.region} "
                f"({excerpt.repository}, {provenance.date})"
            ),
            "notes": (
                f"{kind}: ${cheapest.usd_per_vm_hour:g} per VM-hour (Linux) ÷ {count} GPU(s) of "
                f"the {series} size {size} (GPUs per size: {SIZES_SOURCE}); {spread} per VM-hour "
                f"over {where}; {provenance.said()}"
            ),
        },
        f"{excerpt.file}: VM size {size}, region {shown(cheapest.region)}, {cheapest.tier}",
    )


def harvest_azure_retail(source: Path, options: HarvestOptions) -> HarvestReport:
    """Harvest pinned excerpts of the snapshot's region files (a file, or a folder of `*.txt`)
    into the registry's `registry/catalogs/prices-azure.yaml`, written whole."""
    gpus = load_gpus(catalogs_folder(options.registry_root))
    report = HarvestReport()
    offers: list[Offer] = []
    excerpts: dict[str, RetailExcerpt] = {}
    for file in excerpt_files(source, "*.txt"):
        excerpt = read_retail_excerpt(file)
        found = _excerpt_offers(excerpt, report)
        for offer in found:
            if excerpts.setdefault(offer.region, excerpt) is not excerpt:
                raise HarvestError(f"{file}: two excerpts give region {offer.region!r}")
        offers.extend(found)
    kept, skipped = _discounts(offers)
    report.skipped.extend(skipped)
    entries = _entries(kept, excerpts, gpus, report)
    write_prices(options, PRICE_FILE, HEADER, entries, report)
    return report


def _entries(
    offers: list[Offer],
    excerpts: dict[str, RetailExcerpt],
    gpus: dict[str, GpuEntry],
    report: HarvestReport,
) -> list[PriceEntry]:
    """One entry per VM size × tier whose series names a catalog GPU."""
    grouped: dict[tuple[str, str], list[Offer]] = defaultdict(list)
    for offer in offers:
        grouped[(offer.size, offer.tier)].append(offer)
    entries = []
    unnamed = set()
    for (size, _tier), group in sorted(grouped.items()):
        series = SIZES[size][1]
        gpu = gpu_named(gpus, GPU_NAMES, series)
        if gpu is None:
            unnamed.add((f"azure/{size}", f"series {series!r} names no catalog GPU"))
            continue
        cheapest = min(group, key=lambda offer: (offer.usd_per_vm_hour, offer.region))
        entries.append(_entry(excerpts[cheapest.region], gpu, group))
    report.skipped.extend(sorted(unnamed))
    return entries
