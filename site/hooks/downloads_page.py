"""The Downloads page and the data files it lists: the index as JSON and CSV, the catalogs,
each compare page's rows as CSV and every result file."""

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping

from pydantic import BaseModel
from result_index import Index
from row_groups import compare_slug

from infermeter.registry.index import csv_text, render_csv
from infermeter.registry.index import render_json as index_json
from infermeter.registry.index_row import IndexRow
from infermeter.registry.licences import licences_data, licences_markdown
from infermeter.registry.models import GpuEntry, ModelEntry, PriceEntry

PRICE_CSV_COLUMNS = (
    "id",
    "provider",
    "gpu",
    "tier",
    "usd_per_gpu_hour",
    "gpus_per_instance",
    "region",
    "as_of",
    "date_basis",
    "official",
    "caution",
    "derived_from",
    "source_url",
)


def _json_list(entries: Iterable[BaseModel]) -> str:
    return json.dumps([entry.model_dump(mode="json") for entry in entries], indent=2) + "\n"


def catalog_files(
    gpus: Mapping[str, GpuEntry],
    models: Mapping[str, ModelEntry],
    prices: Mapping[str, PriceEntry],
) -> dict[str, str]:
    """The catalogs as JSON, the prices as CSV too: with what the GPU pages say of each price
    beside its figure (how its date is known, an official list or not, a caution that keeps
    figures off it, the price it is derived from), so no row reads as more than it is."""
    price_rows = [
        (
            p.id,
            p.provider,
            p.gpu,
            p.tier,
            p.usd_per_gpu_hour,
            p.gpus_per_instance,
            p.region,
            p.as_of,
            p.source.date_basis,
            p.source.official,
            p.caution,
            None if p.derived is None else p.derived.from_price,
            p.source.url,
        )
        for p in prices.values()
    ]
    return {
        "data/gpus.json": _json_list(gpus.values()),
        "data/models.json": _json_list(models.values()),
        "data/prices.json": _json_list(prices.values()),
        "data/prices.csv": csv_text([PRICE_CSV_COLUMNS, *price_rows]),
    }


def _described(index: Index, gpus: int, models: int, prices: int) -> list[tuple[str, str]]:
    """The files the page lists, with what each is (counts of catalog entries given)."""
    return [
        (
            "data/index.json",
            f"The index: every result × load point ({len(index.rows)} rows), with $ figures"
            f" at current prices; column descriptions included.",
        ),
        ("data/index.csv", "The same index as CSV."),
        ("data/gpus.json", f"The GPU catalog ({gpus} GPUs) with sources."),
        ("data/models.json", f"The model catalog ({models} models) with their config.json fields."),
        ("data/prices.json", f"The price catalog ({prices} prices) with dates and sources."),
        ("data/prices.csv", "The price catalog as CSV."),
        (
            "assets/catalog.json",
            "What the in-browser calculators read: model configs, GPU memory, the price per"
            " tier that figures use.",
        ),
        ("assets/calculators.zip", "The `calculators` Python package the calculator pages run."),
        ("data/licences.json", "The terms of each part of the data (the table below)."),
    ]


def downloads(
    index: Index,
    gpus: Mapping[str, GpuEntry],
    models: Mapping[str, ModelEntry],
    prices: Mapping[str, PriceEntry],
    more: Mapping[str, tuple[str, str]] | None = None,
) -> dict[str, str]:
    """uri → content of the data files and of the Downloads page; `more`: further data files
    to publish and list (uri → (content, what it is))."""
    files = {
        "data/index.json": index_json(index.rows),
        "data/index.csv": render_csv(index.rows),
        **catalog_files(gpus, models, prices),
    }
    groups: dict[str, list[IndexRow]] = defaultdict(list)
    for row in index.rows:
        groups[compare_slug(row.model, row.profile)].append(row)
    for slug, rows in groups.items():
        files[f"compare/{slug}.csv"] = render_csv(rows)
    for result_id, text in index.texts.items():
        files[f"results/{result_id}.json"] = text
    described = _described(index, len(gpus), len(models), len(prices))
    files["data/licences.json"] = json.dumps(licences_data(), indent=2) + "\n"
    for uri, (content, text) in (more or {}).items():
        files[uri] = content
        described.append((uri, text))
    files["downloads.md"] = (
        "---\ntitle: Downloads\n---\n\n# Downloads\n\nEverything on this site comes from"
        " these files "
        "(JSON and CSV, built from the registry with the site).\n\n| File | What |\n|---|---|\n"
        + "\n".join(f"| [{name}]({name}) | {text} |" for name, text in described)
        + "\n\nEach result file is linked from its result page.\n\n## Licence\n\n"
        "infermeter's own data is open; each imported source keeps the terms it states:\n\n"
        + licences_markdown()
    )
    return files
