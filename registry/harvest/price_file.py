"""Writing a price source's catalog file (`registry/catalogs/prices-<label>.yaml`).

A price source (SkyPilot's, Google Cloud's, Azure's) gives its `PriceEntry`s; the file is its
header, then the entries sorted by id, written whole, so harvesting twice changes nothing. Two
entries with one id are refused, never one of them kept silently. The report names each entry
added, changed or unchanged, and those the file held that the harvest no longer gives.
"""

from collections.abc import Iterable
from pathlib import Path
from typing import TypeAlias

import yaml

from infermeter.registry.catalog import load_catalog
from infermeter.registry.errors import UnwritableError
from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.harvest.options import HarvestOptions
from infermeter.registry.harvest.outcome import HarvestReport
from infermeter.registry.models import PriceCatalog, PriceEntry
from infermeter.registry.store import display_path, write_text_atomic

ExcerptPrices: TypeAlias = tuple[list[PriceEntry], list[tuple[str, str]]]
"""What a source reads from one excerpt: its entries, and its skipped rows as (key, reason)."""


def _merged(entries: Iterable[PriceEntry]) -> list[PriceEntry]:
    """The entries sorted by id; HarvestError when two excerpts give one id (the same
    instance type and tier of one cloud twice)."""
    by_id: dict[str, PriceEntry] = {}
    for entry in entries:
        if entry.id in by_id:
            raise HarvestError(f"two excerpts give price {entry.id!r}; give one file per cloud")
        by_id[entry.id] = entry
    return [by_id[price_id] for price_id in sorted(by_id)]


def _render(entries: list[PriceEntry], header: str) -> str:
    """The text of a harvested price file: the header, then the entries in a fixed order."""
    data = {
        "schema_version": 1,
        "prices": [entry.model_dump(mode="json") for entry in entries],
    }
    return header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def _compare_prices(path: Path, entries: list[PriceEntry], report: HarvestReport) -> None:
    """Fill `report` with what writing `entries` over the file at `path` changes, by id."""
    old = load_catalog(path, PriceCatalog).prices if path.is_file() else []
    old_by_id = {entry.id: entry for entry in old}
    for entry in entries:
        previous = old_by_id.pop(entry.id, None)
        if previous is None:
            report.added.append(entry.id)
        elif previous == entry:
            report.unchanged.append(entry.id)
        else:
            report.changed.append((entry.id, entry.id))
    report.removed.extend(sorted(old_by_id))


def write_prices(
    options: HarvestOptions,
    price_file: Path,
    header: str,
    entries: Iterable[PriceEntry],
    report: HarvestReport,
) -> None:
    """Write `entries` (`_merged`) under `header` whole into the registry's `price_file`, unless
    the harvest is dry or nothing changed; fill `report` with what they change."""
    ordered = _merged(entries)
    path = options.registry_root / price_file
    _compare_prices(path, ordered, report)
    text = _render(ordered, header)
    current = path.read_text(encoding="utf-8") if path.is_file() else None
    if not options.dry_run and text != current:
        try:
            write_text_atomic(path, text)
        except OSError as error:  # a write's own error names no file: say which
            raise UnwritableError(display_path(path), error.strerror or str(error)) from None


def write_excerpt_prices(
    options: HarvestOptions, price_file: Path, header: str, excerpts: Iterable[ExcerptPrices]
) -> HarvestReport:
    """Write the entries of all `excerpts` (each read on its own) as `write_prices` does; the
    report lists each excerpt's skipped rows too."""
    report = HarvestReport()
    entries: list[PriceEntry] = []
    for found, skipped in excerpts:
        entries.extend(found)
        report.skipped.extend(skipped)
    write_prices(options, price_file, header, entries, report)
    return report
