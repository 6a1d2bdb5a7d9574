"""`infermeter bench report`: a self-contained page for results measured against the stand-in
server, opened in a real headless Chromium with no request leaving the file."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from bench_helpers import PACE_8B_ITL_S
from chromium import watched_page
from click.testing import CliRunner, Result
from fake_openai_server import FakeOpenAIServer

from infermeter.bench.cli.main import main
from infermeter.bench.result import html_report
from infermeter.bench.result.compare import NamedResult
from infermeter.bench.result.html_report import report_html
from infermeter.registry.catalog import load_prices
from infermeter.registry.models import Result as RegistryResult
from infermeter.registry.models import Verdict
from infermeter.registry.plain_text import REPLACEMENT


def _invoke(*args: str | Path) -> Result:
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


@pytest.fixture(scope="module")
def two_results(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two results measured against the stand-in at concurrency 1 and 2, as two GPUs."""
    folder = tmp_path_factory.mktemp("report")
    paths = []
    with FakeOpenAIServer() as server:
        server.config.version = "0.9.1"
        server.config.ttft_s = 0.01
        server.config.itl_s = PACE_8B_ITL_S
        for gpu in ("h100-sxm", "h200-sxm"):
            path = folder / f"{gpu}.json"
            run = _invoke(
                "bench", "run", "--endpoint", server.url, "--concurrency", "1,2",
                "--num-requests", "6", "--warmup", "1", "--input-len", "16", "--output-len", "8",
                "--gpu", gpu, "--model-id", "llama-3.1-8b-instruct", "--output", path, "--quiet",
            )  # fmt: skip
            assert run.exit_code == 0, run.output
            paths.append(path)
    return paths


@pytest.mark.browser
def test_report_page_draws_the_results_with_no_request_leaving_the_file(
    two_results: list[Path], tmp_path: Path, browser: Any
) -> None:
    page_path = tmp_path / "report.html"
    run = _invoke("bench", "report", *two_results, "--html", page_path)
    assert run.exit_code == 0, run.output
    assert run.output.strip() == f"wrote {page_path} (2 results)"
    text = page_path.read_text()
    assert "<script src" not in text
    assert '<link rel="stylesheet"' not in text
    watched = watched_page(browser)
    page = watched.page
    page.goto(page_path.as_uri())
    page.wait_for_selector("body[data-drawn='1']", timeout=15000)
    pareto = page.locator("[data-chart='pareto'] .u-wrap canvas")  # the plot, not the legend's
    assert pareto.count() == 1
    assert page.locator("[data-chart='cost'] canvas").count() == 1
    legend = page.locator("[data-chart='pareto'] .u-legend").inner_text()
    assert "h100-sxm.json: 1× h100-sxm" in legend
    assert "h200-sxm.json: 1× h200-sxm" in legend
    loads = page.locator("section tbody th").all_inner_texts()
    assert loads == ["concurrency 1", "concurrency 2"] * 2
    page.context.close()
    assert watched.errors == []
    assert watched.requests == [page_path.as_uri()]  # the page itself, and nothing else


def test_report_tables_hold_each_points_figures(two_results: list[Path], tmp_path: Path) -> None:
    page_path = tmp_path / "report.html"
    assert _invoke("bench", "report", *two_results, "--html", page_path).exit_code == 0
    text = page_path.read_text()
    point = json.loads(two_results[0].read_text())["points"][1]
    assert f"<td>{point['ttft_ms']['p99']:,.1f}</td>" in text
    assert "concurrency 2" in text
    data = text.split('drawCharts(document.getElementById("charts"), ', 1)[1].split(", window")[0]
    chart = json.loads(data)
    assert sorted(chart["pareto"]) == ["h100-sxm.json: 1× h100-sxm", "h200-sxm.json: 1× h200-sxm"]
    assert len(chart["pareto"]["h100-sxm.json: 1× h100-sxm"]) == 2


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.texts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.texts.append(data)


def test_report_shows_a_hostile_file_name_escaped_and_scrubbed(two_results: list[Path]) -> None:
    # A file name is the report's own input: NUL, a bidi override and markup in it.
    hostile = "evil\x00\u202e<script>alert(1)</script>\x1b[31m.json"
    result = RegistryResult.model_validate_json(two_results[0].read_text())
    page = report_html([NamedResult(hostile, result)], load_prices().values())
    for unsafe in ("\x00", "\u202e", "\x1b", "\\u0000", "\\u202e"):  # raw, or in the JSON
        assert unsafe not in page, repr(unsafe)
    assert "<script>alert" not in page
    parser = _Tags()
    parser.feed(page)
    assert parser.tags.count("script") == 2  # uPlot and the chart code, nothing else
    heading = f"evil{REPLACEMENT}{REPLACEMENT}<script>alert(1)</script>{REPLACEMENT}[31m.json"
    assert any(heading in text for text in parser.texts)  # the h2 and title, as text
    data = page.split('drawCharts(document.getElementById("charts"), ', 1)[1].split(", window")[0]
    assert list(json.loads(data)["pareto"]) == [f"{heading}: 1× h100-sxm"]


def test_report_marks_an_interrupted_point_and_leaves_it_off_the_charts(
    two_results: list[Path],
) -> None:
    result = RegistryResult.model_validate_json(two_results[0].read_text())
    cut = Verdict(code="interrupted", message="the run was interrupted during this point: …")
    second = result.points[1].model_copy(update={"validity": [*result.points[1].validity, cut]})
    stopped = result.model_copy(update={"points": [result.points[0], second]})
    page = report_html([NamedResult("cut.json", stopped)], load_prices().values())
    assert page.count('<tr data-interrupted="1">') == 1
    assert "concurrency 2 (interrupted: only the requests that finished before the stop)" in page

    def pareto(page: str) -> dict[str, Any]:
        data = page.split('drawCharts(document.getElementById("charts"), ', 1)[1]
        curves: dict[str, Any] = json.loads(data.split(", window")[0])["pareto"]
        return curves

    whole = report_html([NamedResult("cut.json", result)], load_prices().values())
    assert len(pareto(whole)["cut.json: 1× h100-sxm"]) == 2
    assert pareto(page) == {}  # one full point is no sweep: no curve


def test_report_without_the_inlined_assets_fails_in_one_line(
    two_results: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(html_report, "UPLOT_DIR", tmp_path / "broken-install")
    page_path = tmp_path / "report.html"
    run = _invoke("bench", "report", *two_results, "--html", page_path)
    assert run.exit_code == 1
    (line,) = run.output.strip().splitlines()
    assert "broken-install/uPlot.iife.min.js is missing" in line
    assert "reinstall infermeter" in line
    assert not page_path.exists()


UPLOT = Path(__file__).resolve().parents[2] / "node_modules" / "uplot"


@pytest.mark.parametrize("name", ["dist/uPlot.iife.min.js", "dist/uPlot.min.css", "LICENSE"])
def test_report_ships_the_uplot_the_site_vendors_with_its_licence(name: str) -> None:
    # The package's copy is the version package.json pins (what `npm ci` puts in node_modules
    # for the site), MIT-licensed, its licence beside it.
    shipped = html_report.UPLOT_DIR / Path(name).name
    assert shipped.read_bytes() == (UPLOT / name).read_bytes()
    pinned = json.loads((UPLOT.parents[1] / "package.json").read_text())["dependencies"]["uplot"]
    assert json.loads((UPLOT / "package.json").read_text())["version"] == pinned
    assert json.loads((UPLOT / "package.json").read_text())["license"] == "MIT"
    assert html_report.CHARTS_JS.resolve() == UPLOT.parents[1] / "site/assets/charts.js"


def test_report_heading_names_three_files_and_counts_the_rest(two_results: list[Path]) -> None:
    # Of 3,261 results the heading was every file name: the first screen held nothing else.
    result = RegistryResult.model_validate_json(two_results[0].read_text())
    named = [NamedResult(f"r{index}.json", result) for index in range(1, 1001)]
    page = report_html(named, load_prices().values())
    heading = page.split("<h1>", 1)[1].split("</h1>", 1)[0]
    assert heading == "infermeter report: r1.json, r2.json, r3.json and 997 more"
    assert page.count("<section><h2>") == 1000  # each still has its table
