"""One table of a result's load points (registry.tables) for the site's result pages and for
`infermeter bench report`, and one way to write a figure for those and the compare pages."""

import dataclasses
import re
from pathlib import Path

import compare_table
import pytest
import result_pages

from infermeter.bench.result.compare import NamedResult
from infermeter.bench.result.html_report import report_html
from infermeter.registry.catalog import load_prices
from infermeter.registry.index_row import IndexRow
from infermeter.registry.index_rows import index_rows
from infermeter.registry.models import Result
from infermeter.registry.prices import PriceBook
from infermeter.registry.store import read_result
from infermeter.registry.tables import POINT_COLUMNS, number_text, points_table_html, usd_text

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = Path(__file__).resolve().parent / "examples/valid/results/measured-two-points.json"


@pytest.fixture(scope="module")
def result() -> Result:
    return read_result(EXAMPLE)


@pytest.fixture(scope="module")
def rows(result: Result) -> list[IndexRow]:
    return index_rows(result, "measured-two-points.json", PriceBook(load_prices().values()))


def _cells(table: str) -> list[list[str]]:
    body = table.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row) for row in body.split("</tr>") if row]


def test_points_table_has_a_row_per_point_with_each_figure(rows: list[IndexRow]) -> None:
    table = points_table_html(rows)
    headers = re.findall(r'<th scope="col">(.*?)</th>', table)
    assert headers == ["load", *(column.header for column in POINT_COLUMNS)]
    cells = _cells(table)
    assert [row[0] for row in cells] == ["concurrency 8", "concurrency 64"]
    by_header = [dict(zip(headers, row, strict=True)) for row in cells]
    # The example's own figures, as written (digits per column).
    assert by_header[1]["TTFT p99 ms"] == "512.7"
    assert by_header[1]["TPOT p50 ms"] == "13.90"
    assert by_header[1]["output tok/s per GPU"] == "4,426.7"
    assert by_header[0]["failed %"] == "0.4"  # 2 of 492 requests
    assert by_header[0]["$/h on-demand"] == number_text(rows[0].on_demand.usd_per_hour, 2)
    assert rows[0].on_demand.usd_per_hour is not None  # priced from the catalog


def test_points_table_marks_what_a_result_does_not_state_and_escapes_labels(
    rows: list[IndexRow],
) -> None:
    odd = dataclasses.replace(rows[0], load_label="<b>x</b> & y\x1b[2J\u202e", ttft_ms_p99=None)
    (cells, _other) = _cells(points_table_html([odd, rows[1]]))
    assert cells[0] == "&lt;b&gt;x&lt;/b&gt; &amp; y\ufffd[2J\ufffd"  # as the site's esc writes it
    assert cells[1 + [c.field for c in POINT_COLUMNS].index("ttft_ms_p99")] == "–"


def test_points_table_leaves_out_a_figure_no_point_states(rows: list[IndexRow]) -> None:
    unstated = [dataclasses.replace(row, ttft_ms_p99=None) for row in rows]
    headers = re.findall(r'<th scope="col">(.*?)</th>', points_table_html(unstated))
    assert "TTFT p99 ms" not in headers
    assert "TTFT p95 ms" in headers


def test_report_and_result_page_show_the_same_points_table(
    result: Result, rows: list[IndexRow]
) -> None:
    table = points_table_html(rows)
    page = report_html([NamedResult("measured-two-points.json", result)], load_prices().values())
    assert table in page
    assert table in result_pages.result_body(result, rows)


def test_compare_pages_write_figures_as_the_tables_do() -> None:
    assert compare_table.num is number_text
    assert compare_table.usd is usd_text
    assert (number_text(1234.5678, 1), number_text(0.25, 1, 100.0)) == ("1,234.6", "25.0")
    assert (usd_text(0.12345), usd_text(None)) == ("$0.123", "–")


def test_points_table_says_its_dollars_are_derived_and_for_mlperf_unverified(
    rows: list[IndexRow],
) -> None:
    caption = re.compile(r"<caption>(.*?)</caption>")
    (measured,) = caption.findall(points_table_html(rows))
    # the price figures use, not always the cheapest offer (the GPU list said "cheapest" too)
    assert measured == (
        "$ figures are derived by infermeter from the on-demand catalog price that figures use "
        "for the GPU (a recent official list price first)."
    )
    mlperf = [dataclasses.replace(row, lane="mlperf") for row in rows]
    (note,) = caption.findall(points_table_html(mlperf))
    assert note.endswith("list price first), not verified by MLCommons.")


def test_a_static_batch_s_result_page_shows_the_e2e_mean_its_source_states() -> None:
    # AMD's ROCm vLLM latency table states one figure of a static batch, the batch's mean time
    # (63.108 s); the result page's points table showed only the $ per 1M accepted tokens worked
    # out from it, and the figure itself only under "Every field".
    path = REPO / "registry/results/mi300x/llama-3.1-405b-instruct/2026-12-01-da21acc66e1c.json"
    static = read_result(path)
    rows = index_rows(static, path.name, PriceBook(load_prices().values()))
    table = points_table_html(rows)
    headers = re.findall(r'<th scope="col">(.*?)</th>', table)
    (cells,) = _cells(table)
    by_header = dict(zip(headers, cells, strict=True))
    assert by_header["load"] == "static batch of 32 (started together)"
    assert by_header["E2E mean ms"] == "63,108.0"
    assert table in result_pages.result_body(static, rows)
