"""What a reader sees, in a real headless Chromium: no curator's note or repository path on a
page, no flagged price in a default, a ranking or a headline, every GPU page listing and linking
its results, every model page linking its compare pages."""

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from site_helpers import search_for, visit

from infermeter.registry.catalog import load_prices
from infermeter.registry.lookup import cheapest_prices

pytestmark = pytest.mark.browser

FLAGGED = [price for price in load_prices().values() if price.caution is not None]
INTERNAL = re.compile(r"DOUBTFUL|ANOMAL|reference/\d|registry/(?:catalogs|results)/")


def _pages(built_site: Path, folder: str) -> list[str]:
    return sorted(
        str(path.parent.relative_to(built_site))
        for path in (built_site / folder).glob("*/index.html")
    )


def _text(page: Any, url: str) -> str:
    visit(page, url)
    text: str = page.inner_text("article")
    return text


class _ArticleText(HTMLParser):
    """The text of a built page's <article> as its HTML holds it, scripts and styles left out.
    Hidden parts count too, so it holds at least what a reader's browser shows of it."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0  # open <article> elements
        self.skipping = 0  # open <script> and <style> elements
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.depth += tag == "article"
        self.skipping += tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self.depth -= tag == "article" and self.depth > 0
        self.skipping -= tag in ("script", "style") and self.skipping > 0

    def handle_data(self, data: str) -> None:
        if self.depth and not self.skipping:
            self.parts.append(data)


def _static_text(built_site: Path, uri: str) -> str:
    parser = _ArticleText()
    parser.feed((built_site / uri / "index.html").read_text(encoding="utf-8"))
    parser.close()
    assert parser.parts, f"{uri}: no <article> text"
    return "".join(parser.parts)


@pytest.mark.parametrize("uri", ["gpus/h100-sxm", "models/llama-3.1-8b-instruct"])
def test_reader_article_text_in_the_file_holds_every_line_chromium_shows(
    page: Any, site_url: str, built_site: Path, uri: str
) -> None:
    # the test below reads GPU and model pages from their files: that text must hold all that
    # a reader sees, each line Chromium shows of the article (whitespace aside)
    lines = _text(page, f"{site_url}/{uri}/").splitlines()
    static = "".join(_static_text(built_site, uri).split())
    missing = [line for line in lines if "".join(line.split()) not in static]
    assert len(lines) > 20
    assert missing == []


def test_reader_no_internal_note_reaches_a_page(page: Any, site_url: str, built_site: Path) -> None:
    # GPU and model pages are HTML as built (no script writes into their article): read from
    # the files; one of each kind, and every page whose text scripts write, in Chromium
    gpus, models = _pages(built_site, "gpus"), _pages(built_site, "models")
    in_files = ["", "compare", "gpus", "models", *gpus, *models]
    in_files += _pages(built_site, "compare") + _pages(built_site, "results")[:3]
    in_chromium = ["", "compare", "gpus", "models", gpus[0], models[0]]
    in_chromium += _pages(built_site, "compare")[:3] + _pages(built_site, "results")[:3]
    in_chromium += ["calculators/cost", "calculators/fit"]  # last: they start Python
    leaks = {}
    for uri in in_files:
        if found := INTERNAL.findall(_static_text(built_site, uri)):
            leaks[uri] = sorted(set(found))
    for uri in in_chromium:
        found = INTERNAL.findall(_text(page, f"{site_url}/{uri}/".replace("//", "/", 2)))
        if found:
            leaks[f"{uri} (Chromium)"] = sorted(set(found))
    assert leaks == {}


def test_reader_flagged_prices_exist_and_are_marked_on_their_gpu_page(
    page: Any, site_url: str
) -> None:
    assert FLAGGED, "the catalog flags no price: this test would check nothing"
    for price in FLAGGED:
        visit(page, f"{site_url}/gpus/{price.gpu}/")
        row = page.locator(f"tr:has(#price-{price.id})")
        assert "not used" in row.inner_text()


def test_reader_no_flagged_price_in_a_ranking_or_default(
    page: Any, site_url: str, built_site: Path
) -> None:
    flagged_ids = {price.id for price in FLAGGED}
    linked: set[str] = set()
    for uri in ["", "compare", "gpus", *_pages(built_site, "compare")]:
        visit(page, f"{site_url}/{uri}/".replace("//", "/", 2))
        hrefs = page.eval_on_selector_all("a[href*='#price-']", "els => els.map(e => e.href)")
        linked |= {href.split("#price-", 1)[1] for href in hrefs}
    assert linked, "no page links a price: this test would check nothing"
    assert linked & flagged_ids == set()
    # the calculators' defaults come from catalog.json
    catalog = json.loads(page.goto(f"{site_url}/assets/catalog.json").text())
    used = {
        source["id"] for gpu in catalog["gpus"].values() for source in gpu["price_sources"].values()
    }
    assert used & flagged_ids == set()
    # the cost page's default for the GPU whose cheapest listed price is flagged
    page.goto(f"{site_url}/calculators/cost/?gpu=l40s")
    page.wait_for_function(
        "() => document.querySelector('.im-calc')?.dataset.state === 'ready'", timeout=60_000
    )
    shown = page.eval_on_selector(
        '[data-output="prices.price_per_hour.id"]', "e => e.dataset.value"
    )
    assert shown == cheapest_prices("l40s")["on_demand"].id
    assert shown not in flagged_ids


def test_reader_every_gpu_page_links_its_results(
    page: Any, site_url: str, built_site: Path
) -> None:
    on_gpu: dict[str, set[str]] = {}
    for path in (built_site / "results").glob("*.json"):
        result = json.loads(path.read_text())
        on_gpu.setdefault(result["identity"]["gpu"]["id"], set()).add(result["id"])
    assert on_gpu
    for gpu_id, result_ids in sorted(on_gpu.items()):
        visit(page, f"{site_url}/gpus/{gpu_id}/")
        hrefs = page.eval_on_selector_all(
            ".im-gpu-results a[href*='/results/']", "els => els.map(e => e.href)"
        )
        linked = {href.rstrip("/").rsplit("/", 1)[1] for href in hrefs}
        assert linked == result_ids, gpu_id
    # a link leads to the result's page
    page.goto(hrefs[0])
    assert result_ids & {page.url.rstrip("/").rsplit("/", 1)[1]}
    assert "404" not in page.title()


def test_reader_model_pages_link_their_compare_pages(
    page: Any, site_url: str, built_site: Path
) -> None:
    compare = _pages(built_site, "compare")
    assert compare
    for uri in compare:
        model = uri.split("/", 1)[1].split("--", 1)[0]
        visit(page, f"{site_url}/models/{model}/")
        hrefs = page.eval_on_selector_all(
            "article a[href*='/compare/']", "els => els.map(e => e.href)"
        )
        assert any(href.rstrip("/").endswith(uri) for href in hrefs), (model, hrefs)


def test_reader_search_finds_result_and_compare_pages(
    page: Any, site_url: str, built_site: Path
) -> None:
    def offered(text: str, wanted: str) -> None:
        search_for(page, site_url, text)
        page.wait_for_function(
            "wanted => [...document.querySelectorAll('.md-search-result__link')]"
            ".some(a => a.getAttribute('href').includes(wanted))",
            arg=wanted,
            timeout=90_000,
        )

    offered("H200", "/compare/")  # a compare page, by a GPU it compares
    offered("compare llama 8B", "/compare/llama-3.1-8b-instruct--")  # by its model
    h200 = next(
        path.stem
        for path in sorted((built_site / "results").glob("*.json"))
        if json.loads(path.read_text())["identity"]["gpu"]["id"] == "h200-sxm"
    )
    offered(h200, f"/results/{h200}/")  # a result page, by its id
