"""Google Cloud's GPU machine prices from the pricing file of
Cyclenerd/google-cloud-pricing-cost-calculator (`registry/catalogs/prices-gcp.yaml`).

That repository computes, every week, each Compute Engine machine type's price per region from
the SKU prices of Google's Cloud Billing Catalog API and commits them as `pricing.yml`, stating
when it was generated (`about.generated`). Under `compute.instance.<machine type>.cost.<region>`:

- `hour`: the on-demand price of the whole machine per hour (GPUs, vCPUs, memory and, where the
  type includes it, local SSD);
- `hour_spot`: its Spot VM price (interruptible);
- `month_1y`, `month_3y`: its price per month under a 1-year or 3-year resource-based committed
  use discount (reserved); the file's month is 730 hours (`month` = `hour` x 730), so the hourly
  committed price is the month's ÷ 730.

The machine's GPUs are the key a GPU catalog entry lists among its `source_names` (source
`gcp-pricing`, e.g. `h100-80gb: 8`); the price per GPU-hour is the machine's ÷ that count. One
entry per machine type x tier (x term), at the cheapest of the excerpt's regions. A Spot or
committed price not below on-demand is skipped: it is no discount; so is a price that is not a
positive number (each reported as skipped, with its reason, never dropped unsaid). A key given
twice (a machine type, a region, a price) is refused, naming both lines: YAML would keep the
last silently.

The date is the file's own `generated:` line; the excerpt's `# date:` line must state the same
day. The file is written whole from the excerpts given, entries sorted by id, so running the
harvest twice changes nothing.
"""

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from infermeter.registry.catalog import CatalogLoader, gpu_named, harvested_prices_file, load_gpus
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
from infermeter.registry.harvest.price_entry import positive_number, validated_price
from infermeter.registry.harvest.price_file import ExcerptPrices, write_excerpt_prices
from infermeter.registry.harvest.sources import GCP_PRICING
from infermeter.registry.location import CATALOGS_FOLDER, catalogs_folder
from infermeter.registry.models import GpuEntry, PriceEntry

GPU_NAMES = GCP_PRICING.gpu_names
PRICE_FILE = CATALOGS_FOLDER / harvested_prices_file("gcp")
HOURS_PER_MONTH = 730  # the file's month: `month` = `hour` x 730
# (file key, tier, term): the term names a committed price's length, None for the others.
TIER_KEYS: tuple[tuple[str, str, str | None], ...] = (
    ("hour", "on_demand", None),
    ("hour_spot", "interruptible", None),
    ("month_1y", "reserved", "1-year"),
    ("month_3y", "reserved", "3-year"),
)
_ORIGIN = re.compile(
    r"^Excerpt of (?P<path>pricing\.yml) in (?P<repo>[\w.-]+/[\w.-]+) at commit "
    r"(?P<commit>[0-9a-f]{40})$"
)
HEADER = (
    "# Written by `infermeter registry harvest gcp-pricing --from tests/data/harvest/gcp-pricing`:"
    " do not edit; change the pinned excerpts and rerun.\n"
    "# Each price is Google's list price, computed per machine type from the Cloud Billing "
    "Catalog API by Cyclenerd/google-cloud-pricing-cost-calculator (Apache License 2.0); "
    "source.url names its pricing.yml at the commit read.\n"
)


@dataclass(frozen=True)
class PricingExcerpt(PinnedExcerpt):
    """One pinned excerpt of `pricing.yml`: its machine types."""

    machines: dict[str, dict[str, Any]]


def _generated(file: Path, data: dict[str, Any]) -> str:
    """The day the file says it was generated, e.g. `Thu Jul 30 06:13:17 2026` → 2026-07-30."""
    text = str((data.get("about") or {}).get("generated", ""))
    try:
        day = dt.datetime.strptime(" ".join(text.split()), "%a %b %d %H:%M:%S %Y").date()
    except ValueError:
        raise HarvestError(
            f"{file}: about.generated {text!r} is not a date like 'Thu Jul 30 06:13:17 2026'"
        ) from None
    return day.isoformat()


def _yaml_problem(error: yaml.YAMLError) -> str:
    """PyYAML's error in one line (its own text quotes the lines around it): the problem and
    where, counted in the lines below the provenance."""
    if not isinstance(error, yaml.MarkedYAMLError) or error.problem_mark is None:
        return " ".join(str(error).split())
    mark = error.problem_mark
    return f"{error.problem} (line {mark.line + 1}, column {mark.column + 1} of those lines)"


def read_pricing_excerpt(file: Path) -> PricingExcerpt:
    """The excerpt in `file`; HarvestError naming the file for anything not in its shape."""
    provenance, body = read_provenance(file, "the file's lines")
    origin = match_line(file, _ORIGIN, provenance.origin, "Excerpt of")
    try:
        data = yaml.load("\n".join(body) + "\n", Loader=CatalogLoader)  # a safe loader
    except yaml.YAMLError as error:
        raise HarvestError(
            f"{file}: the lines below the provenance are not YAML: {_yaml_problem(error)}"
        ) from None
    if not isinstance(data, dict):
        raise HarvestError(f"{file}: expected the file's 'about:' and 'compute:' mappings")
    generated = _generated(file, data)
    if provenance.date_basis != "stated" or provenance.date != generated:
        raise HarvestError(
            f"{file}: '# date:' must state the day the file says it was generated ({generated})"
        )
    machines = ((data.get("compute") or {}).get("instance")) or {}
    if not isinstance(machines, dict) or not machines:
        raise HarvestError(f"{file}: no machine types under compute.instance")
    for name, machine in machines.items():
        _check_machine(file, name, machine)
    return PricingExcerpt(
        file, "pricing.yml", origin["repo"], origin["commit"], provenance, machines
    )


def _check_machine(file: Path, name: object, machine: object) -> None:
    """HarvestError naming the file and key where a machine type is not in the file's shape:
    named by text, a mapping (or empty), its `cost` a mapping of regions to mappings."""
    where = f"{file}: compute.instance.{shown(name)}"
    if not isinstance(name, str):
        raise HarvestError(f"{where}: a machine type is named by text")
    if not isinstance(machine, dict | None):
        raise HarvestError(f"{where}: expected a mapping, read {shown(machine)}")
    cost = (machine or {}).get("cost") or {}
    if not isinstance(cost, dict):
        raise HarvestError(f"{where}.cost: expected a mapping of regions, read {shown(cost)}")
    for region, prices in cost.items():
        if not isinstance(region, str) or not isinstance(prices, dict):
            raise HarvestError(
                f"{where}.cost.{shown(region)}: expected a region's name and a mapping of its "
                f"prices, read {shown(prices)}"
            )


def _machine_gpu(
    name: str, machine: dict[str, Any], gpus: dict[str, GpuEntry]
) -> tuple[GpuEntry, int] | str:
    """The machine's GPU and how many it has, or the reason none is known."""
    named = [
        (gpu, count)
        for key, count in machine.items()
        if (gpu := gpu_named(gpus, GPU_NAMES, str(key))) is not None
    ]
    if len(named) != 1:
        return f"machine type {name!r} names no catalog GPU (source {GPU_NAMES})"
    gpu, count = named[0]
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        return f"machine type {name!r}: GPU count {count!r} is not a positive whole number"
    return gpu, count


def _hourly(cost: dict[str, Any], key: str) -> float | None:
    price = positive_number(cost.get(key))
    return None if price is None else price / (HOURS_PER_MONTH if key.startswith("month") else 1)


def _hourly_or_reason(cost: dict[str, Any], key: str) -> float | str:
    """The machine's price per hour under the region's file `key`, or why it is no price: not
    a positive number, or a discount not below on-demand."""
    price = _hourly(cost, key)
    if price is None:
        return f"{key} {shown(cost[key])} is not a positive number"
    if key == "hour":
        return price
    on_demand = _hourly(cost, "hour")
    if on_demand is None:
        return "no on-demand price to compare"
    return price if price < on_demand else "not below on-demand"


def _offers(
    name: str, machine: dict[str, Any], key: str
) -> tuple[list[tuple[float, str]], list[tuple[str, str]]]:
    """(machine price per hour, region) of one file key over the excerpt's regions that give
    it, and each region's price of that key that is none, as (gcp/machine/region/key, reason)."""
    offers: list[tuple[float, str]] = []
    skipped: list[tuple[str, str]] = []
    for region, cost in sorted((machine.get("cost") or {}).items()):
        if key in cost:
            price = _hourly_or_reason(cost, key)
            if isinstance(price, str):
                skipped.append((f"gcp/{name}/{region}/{key}", price))
            else:
                offers.append((price, region))
    return offers, skipped


def _entry(
    excerpt: PricingExcerpt,
    name: str,
    machine: dict[str, Any],
    gpu_count: tuple[GpuEntry, int],
    tier: tuple[str, str, str | None],
    offers: list[tuple[float, str]],
) -> PriceEntry:
    key, tier_name, term = tier
    gpu, count = gpu_count
    price, region = min(offers)
    provenance = excerpt.provenance
    suffix = tier_name.replace("_", "-") + (f"-{term[0]}y" if term else "")
    kind = {"hour": "on-demand", "hour_spot": "Spot VM"}.get(key, f"{term} committed use")
    regions = ", ".join(sorted(region for _, region in offers))
    parts = "GPUs, vCPUs, memory" + (", local SSD" if "local-ssd" in machine else "")
    per_hour = f"{key} ÷ {HOURS_PER_MONTH} h" if term else key
    return validated_price(
        {
            "id": f"gcp-pricing-{name}-{suffix}",
            "provider": "gcp",
            "offering": "Compute Engine" + (f", {term} committed use discount" if term else ""),
            "gpu": gpu.id,
            "gpus_per_instance": count,
            "instance": name,
            "tier": tier_name,
            "usd_per_gpu_hour": round(price / count, 6),
            "region": region,
            "as_of": provenance.date,
            "source": excerpt.price_source(
                f"Google Cloud list prices per machine type, pricing.yml of "
                f"{excerpt.repository} (generated {provenance.date})"
            ),
            "notes": (
                f"{kind}: ${price:.4f} per machine-hour ({per_hour}) ÷ {count} GPU(s), the whole "
                f"machine ({parts}) in {regions}; {provenance.said()}"
            ),
        },
        f"{excerpt.file}: machine type {shown(name)}, region {shown(region)}, {key}",
    )


def excerpt_prices(excerpt: PricingExcerpt, gpus: dict[str, GpuEntry]) -> ExcerptPrices:
    """The price entries of one excerpt, and its skipped machine types and prices as (key,
    reason)."""
    entries: list[PriceEntry] = []
    skipped: list[tuple[str, str]] = []
    for name, machine in sorted(excerpt.machines.items()):
        known = _machine_gpu(name, machine or {}, gpus)
        if isinstance(known, str):
            skipped.append((f"gcp/{name}", known))
            continue
        for tier in TIER_KEYS:
            offers, dropped = _offers(name, machine, tier[0])
            skipped.extend(dropped)
            if offers:
                entries.append(_entry(excerpt, name, machine, known, tier, offers))
    return entries, skipped


def harvest_gcp_pricing(source: Path, options: HarvestOptions) -> HarvestReport:
    """Harvest pinned excerpts of `pricing.yml` (a file, or a folder of `*.yml`) into the
    registry's `registry/catalogs/prices-gcp.yaml`, written whole."""
    gpus = load_gpus(catalogs_folder(options.registry_root))
    excerpts = (
        excerpt_prices(read_pricing_excerpt(file), gpus) for file in excerpt_files(source, "*.yml")
    )
    return write_excerpt_prices(options, PRICE_FILE, HEADER, excerpts)
