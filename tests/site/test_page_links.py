"""The catalog pages' links to results group the index once (`page_links.group_results`) and
write exactly what filtering every row per GPU and per model wrote before (the hook's own
functions on rows of the valid example result; no site build)."""

import dataclasses
from collections.abc import Iterable, Mapping

import catalog_pages
import page_links
import row_groups
from site_helpers import TEMPLATE

from infermeter.registry.catalog import load_gpus, load_models
from infermeter.registry.index_row import IndexRow
from infermeter.registry.index_rows import index_rows
from infermeter.registry.models import ModelEntry
from infermeter.registry.prices import PriceBook
from infermeter.registry.store import parse_result


def _old_gpu_results(
    rows: Iterable[IndexRow], gpu_id: str, models: Mapping[str, ModelEntry]
) -> str:
    # The per-GPU filter the build ran for every GPU page before the grouping (its table
    # writer is unchanged): the rows of the result's first point on this GPU, sorted.
    results = sorted(
        (row for row in page_links._first_rows(rows) if row.gpu == gpu_id),
        key=lambda row: (row.model, row.gpu_count, row.profile, row.result_id),
    )
    return page_links.gpu_results_table(results, gpu_id, models)


def _old_model_compare_links(rows: Iterable[IndexRow], model_id: str) -> str:
    counts: dict[str, set[str]] = {}
    for row in rows:
        if row.model == model_id:
            counts.setdefault(row.profile, set()).add(row.result_id)
    return "".join(
        f"- [{catalog_pages.esc(profile)} traffic: {len(ids)} result{'s' if len(ids) != 1 else ''}]"
        f"(../compare/{row_groups.compare_slug(model_id, profile)}.md)\n"
        for profile, ids in sorted(counts.items())
    )


def _rows() -> list[IndexRow]:
    result = parse_result(TEMPLATE.read_text(), TEMPLATE.name)
    points = index_rows(result, "x.json", PriceBook([]))
    assert len(points) == 2  # two load points per result: a result is listed once
    model_ids = list(load_models())[:3]
    rows = []
    for number in range(12):
        for point in points:
            rows.append(
                dataclasses.replace(
                    point,
                    result_id=f"{number:012x}",
                    gpu=["h100-sxm", "l40s", "b200"][number % 3],
                    model=model_ids[number % 2],  # the third model has no result
                    profile=["chat", "rag"][number // 6],
                    gpu_count=1 + number % 2,
                )
            )
    return rows


def test_page_links_gpu_page_names_its_gpu_in_the_gpus_column() -> None:
    rows, models = _rows(), load_models()
    on_l40s = page_links.group_results(rows).by_gpu["l40s"]
    table = page_links.gpu_results_table(on_l40s, "l40s", models, load_gpus()["l40s"].name)
    assert table.count("<td>1 × NVIDIA L40S 48GB</td>") == 2
    assert table.count("<td>2 × NVIDIA L40S 48GB</td>") == 2
    assert "× l40s" not in table


def test_page_links_grouped_once_write_what_filtering_every_row_wrote() -> None:
    rows, models = _rows(), load_models()
    groups = page_links.group_results(rows)
    for gpu_id in ("h100-sxm", "l40s", "b200", "a10g"):
        old = _old_gpu_results(rows, gpu_id, models)
        assert page_links.gpu_results_table(groups.by_gpu.get(gpu_id, []), gpu_id, models) == old
        assert page_links.gpu_results(rows, gpu_id, models) == old
    assert page_links.gpu_results(rows, "a10g", models) == ""
    assert page_links.gpu_results(rows, "l40s", models).count("<tr>") == 1 + 4  # head, results
    for model_id in list(models)[:3]:
        old = _old_model_compare_links(rows, model_id)
        by_profile = groups.result_ids_by_model.get(model_id, {})
        assert page_links.compare_links(model_id, by_profile) == old
        assert page_links.model_compare_links(rows, model_id) == old
    first = next(iter(models))
    assert page_links.model_compare_links(rows, first).count("results]") == 2  # chat, rag
    assert page_links.model_compare_links(rows, list(models)[2]) == ""
