"""SkyPilot's catalog files turned into price entries (`registry/catalogs/prices-skypilot.yaml`).

Each row of a `vms.csv` is one instance type in one region: `Price` is its on-demand price per
instance-hour and `SpotPrice` its spot (interruptible) price; ÷ `AcceleratorCount` gives the
price per GPU-hour. SkyPilot lists no reserved prices, so this source gives none.

- One entry per cloud × instance type × tier, at the lowest price of the excerpt's regions; the
  notes give the regions and, where they differ, the range.
- A spot price at or above the on-demand price is skipped: it is no discount (a catalog that
  copies the on-demand price into the spot column says nothing about spot); so is a price that
  is not a positive number. Each is reported as skipped with its reason, never dropped unsaid.
- Two rows that price one instance type's tier in one region differently are refused, naming
  both (neither is picked); a row repeated verbatim is one row.
- An accelerator name maps to a GPU through the GPU catalog's `source_names` (source
  `skypilot-<cloud>`; `INSTANCE_GPU_IDS` where the cloud gives one name to two form
  factors); a name not mapped is skipped, with its reason.
- The date is the excerpt's stated date, or, when none can be known, the date it was read with
  `date_basis: read`, which never counts as recent.

The file is written whole from the excerpts given, entries sorted by id, so running the harvest
twice changes nothing.
"""

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from infermeter.registry.catalog import gpu_named, harvested_prices_file, load_gpus
from infermeter.registry.errors import shown
from infermeter.registry.harvest.options import HarvestOptions
from infermeter.registry.harvest.outcome import HarvestReport
from infermeter.registry.harvest.pinned_excerpt import excerpt_files
from infermeter.registry.harvest.price_entry import one_price_each, positive_number, validated_price
from infermeter.registry.harvest.price_file import ExcerptPrices, write_excerpt_prices
from infermeter.registry.harvest.skypilot_excerpt import Excerpt, read_excerpt
from infermeter.registry.harvest.sources import SKYPILOT
from infermeter.registry.location import CATALOGS_FOLDER, catalogs_folder
from infermeter.registry.models import GpuEntry, PriceEntry

PRICE_FILE = CATALOGS_FOLDER / harvested_prices_file("skypilot")
HEADER = (
    "# Written by `infermeter registry harvest skypilot --from tests/data/harvest/skypilot`: "
    "do not edit; change the pinned excerpts and rerun.\n"
    "# Each price is a fact its provider publishes, copied by SkyPilot's catalog "
    "(skypilot-org/skypilot-catalog, which states no licence of its own); source.url names the "
    "file at its commit.\n"
)


def gpu_names_source(cloud: str) -> str:
    """The source whose accelerator names (SkyPilot's, of one cloud) the GPU catalog lists
    (`GpuEntry.source_names`); the form factor follows the provider's instance family."""
    return SKYPILOT.gpu_names.format(cloud=cloud)


# Where one accelerator name covers two form factors, the instance type says which.
INSTANCE_GPU_IDS: dict[tuple[str, str], str] = {
    ("lambda", "_h100_pcie"): "h100-pcie",
    ("lambda", "_h100_sxm5"): "h100-sxm",
}
OFFERINGS = {
    "oci": "Compute (bare metal)",
    "verda": "Cloud instances",
    "nebius": "AI Cloud",
    "hyperstack": "Virtual machines",
    "lambda": "On-demand cloud",
    "lium": "GPU marketplace (hosts' asking prices)",
}


@dataclass(frozen=True)
class Offer:
    """One row's price of one tier, per instance-hour; `row` counts the CSV rows from 1."""

    gpu: str
    instance: str
    gpus: int
    tier: str
    usd_per_instance_hour: float
    region: str
    row: int


def _gpu_id(cloud: str, row: dict[str, str], gpus: dict[str, GpuEntry]) -> str | None:
    for (known_cloud, fragment), gpu_id in INSTANCE_GPU_IDS.items():
        if known_cloud == cloud and fragment in row["InstanceType"]:
            return gpu_id
    gpu = gpu_named(gpus, gpu_names_source(cloud), row["AcceleratorName"])
    return None if gpu is None else gpu.id


def _number(text: str | None) -> float | None:
    try:
        return positive_number(float(text)) if text else None
    except ValueError:
        return None


def _tier_prices(row: dict[str, str]) -> tuple[list[tuple[str, float]], list[str]]:
    """The row's price of each tier, and why each price it states is none: not a positive
    number, or a spot price not below the on-demand price (no discount)."""
    on_demand, spot = _number(row["Price"]), _number(row.get("SpotPrice"))
    dropped = [
        f"{column} {shown(row[column])} is not a positive number"
        for column, price in (("Price", on_demand), ("SpotPrice", spot))
        if row.get(column) and price is None
    ]
    prices = [] if on_demand is None else [("on_demand", on_demand)]
    if spot is not None and on_demand is not None and spot >= on_demand:
        dropped.append("spot price not below the on-demand price")
    elif spot is not None:
        prices.append(("interruptible", spot))
    return prices, dropped


def row_offers(
    excerpt: Excerpt, number: int, gpus: dict[str, GpuEntry]
) -> tuple[list[Offer], list[str]]:
    """The offers of the excerpt's row `number` (from 1), and the reason for each price the row
    gives none of (or for giving none at all)."""
    row = excerpt.rows[number - 1]
    gpu_id = _gpu_id(excerpt.cloud, row, gpus)
    if gpu_id is None:
        return [], [f"accelerator {row['AcceleratorName']!r} is not mapped to a catalog GPU"]
    if gpu_id not in gpus:
        return [], [f"GPU {gpu_id!r} is not in the GPU catalog"]
    count = _number(row["AcceleratorCount"])
    if count is None or count != int(count):
        return [], [f"AcceleratorCount {row['AcceleratorCount']!r} is not a positive whole number"]
    prices, dropped = _tier_prices(row)
    offers = [
        Offer(gpu_id, row["InstanceType"], int(count), tier, price, row["Region"], number)
        for tier, price in prices
    ]
    return offers, dropped if offers or dropped else ["no price"]


def _row_key(cloud: str, instance: str, region: str) -> str:
    """A row as the report and the errors name it: cloud/instance type/region."""
    return f"{cloud}/{instance}/{region}"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _regions(offers: list[Offer]) -> str:
    regions = sorted({offer.region for offer in offers})
    return ", ".join(regions) if len(regions) <= 3 else f"{len(regions)} regions"


def _notes(excerpt: Excerpt, offers: list[Offer], cheapest: Offer) -> str:
    prices = sorted({offer.usd_per_instance_hour for offer in offers})
    spread = (
        f"same price in {_regions(offers)}"
        if len(prices) == 1
        else f"${prices[0]:g}–${prices[-1]:g} per instance-hour over {_regions(offers)}"
    )
    return (
        f"${cheapest.usd_per_instance_hour:g} per instance-hour ÷ {cheapest.gpus} GPU(s); "
        f"{spread}; {excerpt.provenance.said()}"
    )


def price_entry(excerpt: Excerpt, offers: list[Offer]) -> PriceEntry:
    """The entry of one instance type × tier: its cheapest region's price per GPU-hour."""
    cheapest = min(offers, key=lambda offer: (offer.usd_per_instance_hour, offer.region))
    tier_slug = cheapest.tier.replace("_", "-")
    row = _row_key(excerpt.cloud, cheapest.instance, cheapest.region)
    return validated_price(
        {
            "id": f"skypilot-{excerpt.cloud}-{_slug(cheapest.instance)}-{tier_slug}",
            "provider": excerpt.cloud,
            "offering": OFFERINGS.get(excerpt.cloud),
            "gpu": cheapest.gpu,
            "gpus_per_instance": cheapest.gpus,
            "instance": cheapest.instance,
            "tier": cheapest.tier,
            "usd_per_gpu_hour": round(cheapest.usd_per_instance_hour / cheapest.gpus, 6),
            "region": cheapest.region,
            "as_of": excerpt.provenance.date,
            "source": excerpt.price_source(
                f"SkyPilot catalog {excerpt.path} ({excerpt.repository})"
            ),
            "notes": _notes(excerpt, offers, cheapest),
        },
        f"{excerpt.file}: row {shown(row)}",
    )


def excerpt_prices(excerpt: Excerpt, gpus: dict[str, GpuEntry]) -> ExcerptPrices:
    """The price entries of one excerpt, and its skipped rows and prices as (row key, reason)."""
    grouped: dict[tuple[str, str], list[Offer]] = defaultdict(list)
    skipped: list[tuple[str, str]] = []
    for number, row in enumerate(excerpt.rows, 1):
        if not row.get("AcceleratorName"):
            continue  # a CPU-only instance: no GPU price
        offers, reasons = row_offers(excerpt, number, gpus)
        key = _row_key(excerpt.cloud, row["InstanceType"], row["Region"])
        skipped += [(key, reason) for reason in reasons]
        for offer in offers:
            grouped[(offer.instance, offer.tier)].append(offer)
    one_price_each(
        excerpt.file,
        (
            (
                f"the {offer.tier} price of {shown(offer.instance)} in {shown(offer.region)}",
                f"CSV row {offer.row}",
                offer.usd_per_instance_hour,
            )
            for offers in grouped.values()
            for offer in offers
        ),
    )
    return [price_entry(excerpt, offers) for offers in grouped.values()], skipped


def harvest_skypilot(source: Path, options: HarvestOptions) -> HarvestReport:
    """Harvest pinned excerpts of SkyPilot catalog files (a file, or a folder of `*.csv`) into
    the registry's `registry/catalogs/prices-skypilot.yaml`, written whole."""
    gpus = load_gpus(catalogs_folder(options.registry_root))
    excerpts = (excerpt_prices(read_excerpt(file), gpus) for file in excerpt_files(source, "*.csv"))
    return write_excerpt_prices(options, PRICE_FILE, HEADER, excerpts)
