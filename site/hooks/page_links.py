"""Links between the catalog pages and the results: a GPU page lists its results, a model page
links its compare pages. Strings from result files are HTML-escaped."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from catalog_pages import esc
from row_groups import compare_slug, names_profile, profile_text
from wide_tables import filled_columns

from infermeter.registry.index_row import IndexRow
from infermeter.registry.models import ModelEntry


def _compare_text(profile: str) -> str:
    """A link to a result's compare page: `compare`, with its profile where it has one."""
    return "compare" if profile == "custom" else f"compare ({profile_text(profile)})"


def _first_rows(rows: Iterable[IndexRow]) -> list[IndexRow]:
    """One row per result (its first load point), in the index's order."""
    seen: dict[str, IndexRow] = {}
    for row in rows:
        seen.setdefault(row.result_id, row)
    return list(seen.values())


@dataclass(frozen=True)
class ResultGroups:
    """The index's rows grouped once for the catalog pages: a GPU page and a model page each
    read their group instead of filtering every row (a build renders every GPU and model)."""

    by_gpu: dict[str, list[IndexRow]]  # first row per result, in the index's order
    result_ids_by_model: dict[str, dict[str, set[str]]]  # model → profile → result ids


def group_results(rows: Iterable[IndexRow]) -> ResultGroups:
    """One pass over `rows` (see `ResultGroups`)."""
    by_gpu: dict[str, list[IndexRow]] = {}
    by_model: dict[str, dict[str, set[str]]] = {}
    seen: set[str] = set()
    for row in rows:
        by_model.setdefault(row.model, {}).setdefault(row.profile, set()).add(row.result_id)
        if row.result_id not in seen:
            seen.add(row.result_id)
            by_gpu.setdefault(row.gpu, []).append(row)
    return ResultGroups(by_gpu, by_model)


def gpu_results_table(
    rows: Iterable[IndexRow],
    gpu_id: str,
    models: Mapping[str, ModelEntry],
    gpu_name: str | None = None,
) -> str:
    """HTML table of `rows` (one per result, all on `gpu_id`, named `gpu_name`:
    `ResultGroups.by_gpu`), each linked to its page and its compare page (relative to
    `gpus/<id>/`); empty when none."""
    results = sorted(rows, key=lambda row: (row.model, row.gpu_count, row.profile, row.result_id))
    if not results:
        return ""
    cells = [
        [
            f'<td><a href="../../results/{esc(row.result_id)}/">{esc(row.result_id)}</a></td>',
            f"<td>{esc(models[row.model].name if row.model in models else row.model)}</td>",
            f"<td>{esc(row.gpu_count)} × {esc(gpu_name or gpu_id)}</td>",
            f"<td>{esc(row.engine)} {esc(row.engine_version)}</td>",
            f"<td>{esc(row.quantization)}</td>",
            f'<td><a href="../../compare/{esc(compare_slug(row.model, row.profile))}/">'
            f"{esc(_compare_text(row.profile))}</a></td>",
            f"<td>{esc(row.source_kind)}</td>",
        ]
        for row in results
    ]
    head = ("Result", "Model", "GPUs", "Engine", "Quant.", "Compare", "Source")
    shown = filled_columns(cells, len(head))  # a column of dashes only says no result states it
    body = "".join("<tr>" + "".join(row[i] for i in shown) + "</tr>" for row in cells)
    return (
        # Out of the search index: one row per result would grow it with the registry (results
        # have their own entries, `search_entries`).
        '<div class="im-scroll"><table class="im-table im-gpu-results" data-search-exclude>'
        "<thead><tr>" + "".join(f"<th>{head[i]}</th>" for i in shown) + "</tr></thead>"
        f"<tbody>{body}</tbody></table></div>"
    )


def gpu_results(rows: Iterable[IndexRow], gpu_id: str, models: Mapping[str, ModelEntry]) -> str:
    """`gpu_results_table` of the results on `gpu_id` among all `rows` (one GPU page)."""
    return gpu_results_table(group_results(rows).by_gpu.get(gpu_id, []), gpu_id, models)


def compare_links(model_id: str, result_ids_by_profile: Mapping[str, set[str]]) -> str:
    """Markdown list of the model's compare pages (relative to `models/<id>.md`), from its
    group (`ResultGroups.result_ids_by_model`); empty when the model has no result."""
    several = len(result_ids_by_profile)
    return "".join(
        f"- [{esc(profile_text(profile)) + ': ' if names_profile(profile, several) else ''}"
        f"{len(ids)} result{'s' if len(ids) != 1 else ''}]"
        f"(../compare/{compare_slug(model_id, profile)}.md)\n"
        for profile, ids in sorted(result_ids_by_profile.items())
    )


def model_compare_links(rows: Iterable[IndexRow], model_id: str) -> str:
    """`compare_links` of `model_id` among all `rows` (one model page)."""
    return compare_links(model_id, group_results(rows).result_ids_by_model.get(model_id, {}))


# Each result entry costs about 160 bytes of search index, which every search downloads whole:
# 5,000 keep it near 1 MB however large the registry grows. Older results are found through
# their GPU and compare pages, whose entries are always there.
SEARCH_RESULTS_MAX = 5000


def search_entries(
    rows: Iterable[IndexRow],
    gpus: Mapping[str, Any],
    models: Mapping[str, ModelEntry],
    results_max: int = SEARCH_RESULTS_MAX,
) -> list[dict[str, str]]:
    """Entries for the site search (mkdocs' `search_index.json` format) of the compare pages
    and the result pages, which the search plugin cannot see (their tables are written after
    it runs): found by GPU and model, by name or id. One short title per result keeps the
    index small, and only the newest `results_max` results (by the date their file name
    starts with) get one; a compare page's text names every GPU it compares. Titles and texts
    are HTML (Material's search shows them as markup), so every name in them is escaped."""

    def gpu_name(gpu_id: str) -> str:
        return esc(gpus[gpu_id].name if gpu_id in gpus else gpu_id)

    def model_name(model_id: str) -> str:
        return esc(models[model_id].name if model_id in models else model_id)

    entries: list[dict[str, str]] = []
    compare: dict[tuple[str, str], set[str]] = {}
    firsts = _first_rows(rows)
    newest = sorted(firsts, key=lambda row: (row.file.rsplit("/", 1)[-1], row.result_id))
    listed = {row.result_id for row in newest[max(0, len(newest) - results_max) :]}
    for row in firsts:
        compare.setdefault((row.model, row.profile), set()).add(row.gpu)
        if row.result_id not in listed:
            continue
        entries.append(
            {
                "location": f"results/{row.result_id}/",
                "title": f"{model_name(row.model)} on {row.gpu_count} × {gpu_name(row.gpu)}",
                "text": esc(f"{row.model} {row.gpu} {row.result_id}"),
            }
        )
    for (model, profile), gpu_ids in sorted(compare.items()):
        names = ", ".join(f"{gpu_name(g)} ({esc(g)})" for g in sorted(gpu_ids))
        entries.append(
            {
                "location": f"compare/{compare_slug(model, profile)}/",
                # GPU ids in the title: a search for a GPU ranks the page with its results
                "title": (
                    f"Compare GPUs for {model_name(model)}, {esc(profile)} traffic: "
                    + esc(", ".join(sorted(gpu_ids)))
                ),
                "text": f"{esc(model)}: {names}",
            }
        )
    return entries
