"""Readers see reader's words on result pages: derived figures under labels, not column names,
with thousands separators; in "Every field", byte counts in GiB and numbers with separators, the
exact figure beside and in the title; and the search index stays small (the hook's own
functions, on the valid example result; no site build)."""

import re

import result_pages
from site_helpers import TEMPLATE

from infermeter.registry.index_rows import index_rows
from infermeter.registry.prices import PriceBook
from infermeter.registry.store import parse_result

MEMORY = "points[0].telemetry.gpu.memory_used_bytes_max"


def test_reader_words_bytes_in_gib_beside_the_exact_value() -> None:
    # the reader's unit first; the exact figure beside it and, as the file writes it, in the title
    assert result_pages._leaf(47371001856, MEMORY) == (
        '<span title="47371001856">44.12 GiB</span> '
        '<small class="im-unit">(47,371,001,856 bytes)</small>'
    )
    tps = "points[0].throughput.output_tokens_per_s"
    assert result_pages._leaf(4084.3, tps) == '<span title="4084.3">4,084.3</span>'
    assert result_pages._leaf(-12345.25, tps) == '<span title="-12345.25">-12,345.25</span>'
    assert result_pages._leaf(812, tps) == "812"  # nothing to separate: the JSON itself
    assert result_pages._leaf(1e-07, tps) == "1e-07"
    assert result_pages._leaf(2**70, "n") == f'<span title="{2**70}">{2**70:,}</span>'
    assert result_pages._leaf(True, "identity.serving.enable_prefix_caching") == "true"
    assert result_pages._leaf("b200", "identity.gpu.id") == "b200"
    assert result_pages._figure(12345.678912) == "12,345.6789"  # derived: separators


def test_reader_words_derived_figures_have_labels_not_column_names() -> None:
    result = parse_result(TEMPLATE.read_text(), TEMPLATE.name)
    body = result_pages.result_body(result, index_rows(result, TEMPLATE.name, PriceBook([])))
    derived = body.split('id="derived"', 1)[1].split("</table>", 1)[0]
    labels = re.findall(r"<th title=\"[^\"]*\">([^<]*)</th>", derived)
    assert labels
    assert [label for label in labels if "_" in label] == []
    assert "On-demand $ per hour" in labels
    fields = body.split('id="fields"', 1)[1]
    assert " GiB</span>" in fields  # the example's memory in use, in GiB


def test_reader_search_lists_only_the_newest_results_and_every_compare_page() -> None:
    import dataclasses

    import page_links

    from infermeter.registry.catalog import load_gpus, load_models

    result = parse_result(TEMPLATE.read_text(), TEMPLATE.name)
    (row, *_rest) = index_rows(result, "x.json", PriceBook([]))
    rows = [
        dataclasses.replace(
            row,
            result_id=f"{number:012x}",
            file=f"registry/results/{gpu}/m/2026-0{number}-01-{number:012x}.json",
            gpu=gpu,
        )
        for number, gpu in enumerate(["h100-sxm", "h200-sxm", "l40s", "b200"], start=1)
    ]
    entries = page_links.search_entries(rows, load_gpus(), load_models(), results_max=2)
    results = [e["location"] for e in entries if e["location"].startswith("results/")]
    assert results == [f"results/{3:012x}/", f"results/{4:012x}/"]  # the two newest
    (compare,) = [e for e in entries if e["location"].startswith("compare/")]
    assert all(gpu in compare["title"] for gpu in ("h100-sxm", "h200-sxm", "l40s", "b200"))
    everything = page_links.search_entries(rows, load_gpus(), load_models())
    assert len([e for e in everything if e["location"].startswith("results/")]) == 4
    # more than half the cap but under it: every result (a negative slice start kept the newest
    # 2,274 of 2,726 results once the registry passed half of SEARCH_RESULTS_MAX)
    under = page_links.search_entries(rows, load_gpus(), load_models(), results_max=7)
    assert len([e for e in under if e["location"].startswith("results/")]) == 4
    none = page_links.search_entries(rows, load_gpus(), load_models(), results_max=0)
    assert [e for e in none if e["location"].startswith("results/")] == []


def test_reader_gpu_page_result_list_stays_out_of_the_search_index() -> None:
    import page_links

    result = parse_result(TEMPLATE.read_text(), TEMPLATE.name)
    table = page_links.gpu_results(index_rows(result, "x.json", PriceBook([])), "h100-sxm", {})
    assert table.count("<table") == 1
    assert re.search(r"<table [^>]*data-search-exclude", table)
