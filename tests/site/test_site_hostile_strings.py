"""A string that got past `registry validate` with NUL, ESC, DEL, C1 and bidirectional controls,
a lone surrogate or markup in it still cannot break a page: the site's hooks, called on their
own (no site build), write HTML, front matter, chart JSON and search entries that hold none of
those characters and no tag of the string's, and that encode as UTF-8."""

from __future__ import annotations

import dataclasses
import html as html_module
import json
import re
from html.parser import HTMLParser
from typing import Any

import catalog_pages
import compare_pages
import page_links
import result_pages
import yaml
from site_helpers import REPO, result_data

from infermeter.registry.catalog import load_models, load_prices
from infermeter.registry.index_row import IndexRow
from infermeter.registry.index_rows import index_rows
from infermeter.registry.models import Result
from infermeter.registry.plain_text import REPLACEMENT, unsafe_character
from infermeter.registry.prices import PriceBook

HOSTILE = (
    "nul\x00 esc\x1b[31mred del\x7f c1\x85\x9b bidi\u202eevil\u2066 lone\ud800 cr\r "
    '<script>alert(1)</script> "><img src=x onerror=alert(1)> & end'
)


class _Tags(HTMLParser):
    """The start tags and attribute values of a page, as a browser's tokenizer sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: dict[str, list[str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            self.attributes.setdefault(name, []).append(value or "")


def _safe(text: str) -> _Tags:
    assert unsafe_character(text) is None, repr(unsafe_character(text))
    text.encode("utf-8")  # a lone surrogate would make writing the page fail
    parser = _Tags()
    parser.feed(text)
    parser.close()
    assert "script" not in parser.tags
    assert "img" not in parser.tags
    assert not [name for name in parser.attributes if name.startswith("on")]
    return parser


def _hostile_result() -> Result:
    result = Result.model_validate(result_data())
    identity = result.identity
    engine = identity.engine.model_copy(update={"version": HOSTILE})
    return result.model_copy(
        update={
            "identity": identity.model_copy(update={"engine": engine}),
            "source": result.source.model_copy(update={"submitter": HOSTILE}),
        }
    )


def _rows() -> list[IndexRow]:
    rows = index_rows(_hostile_result(), "hostile.json", PriceBook([]))
    # On the front, so that the chart data holds the rows (labelled with the GPU id)
    return [
        dataclasses.replace(row, gpu=HOSTILE, profile=HOSTILE, on_pareto_front=True) for row in rows
    ]


def test_esc_replaces_every_unsafe_character_and_escapes_markup() -> None:
    text = catalog_pages.esc(HOSTILE)
    _safe(text)
    assert text.count(REPLACEMENT) == 9  # NUL, ESC, DEL, two C1, two bidi, surrogate, CR
    assert "&lt;script&gt;" in text
    assert "&quot;&gt;&lt;img" in text
    assert catalog_pages.esc("plain & simple\n\ttext") == "plain &amp; simple\n\ttext"


def test_result_page_with_hostile_strings_is_safe() -> None:
    result = _hostile_result()
    shell = (
        f"<title>{result_pages.TITLE_MARK}</title><h1>{result_pages.HEADING_MARK}</h1>"
        f"{result_pages.BODY_MARK}"
    )
    page = result_pages.fill(shell, result, index_rows(result, "hostile.json", PriceBook([])))
    _safe(page)
    assert page.count(REPLACEMENT) == 18  # nine in the submitter, nine in the engine version


def test_compare_page_table_and_chart_data_are_safe() -> None:
    rows = _rows()
    slots = compare_pages.compare_slots(rows)
    for html in slots.values():
        tags = _safe(html)
    chart = json.loads(tags.attributes["data-chart-data"][0])

    def strings(value: Any) -> list[str]:
        if isinstance(value, dict):
            return [*value, *(s for item in value.values() for s in strings(item))]
        if isinstance(value, list):
            return [s for item in value for s in strings(item)]
        return [value] if isinstance(value, str) else []

    labels = strings(chart)
    assert labels
    assert all(unsafe_character(label) is None for label in labels)
    assert any(REPLACEMENT in label for label in labels)  # the label is the hostile GPU id


def test_compare_page_front_matter_title_is_plain_yaml() -> None:
    # The model and profile are slugs (validated by pattern, and the page's file name); the
    # model's name is the catalog's free text.
    markdown = compare_pages.compare_page("m", "chat", HOSTILE)
    _safe(markdown)
    front = yaml.safe_load(markdown.split("---\n")[1])
    assert unsafe_character(front["title"]) is None
    assert front["title"].startswith("nul" + REPLACEMENT)
    assert "<" not in front["title"]
    assert ">" not in front["title"]


MARKDOWN_HOSTILE = (
    "[click](javascript:alert(1)) ![i](https://tracker.example/x.png) *em* `code` _u_ "
    "<b>bold</b> & x {: onmouseover=alert(2) } \\[y]"
)


def _markdown_html(text: str) -> str:
    """`text` read as the site reads a page's Markdown: with mkdocs.yml's extensions."""
    import markdown

    class Loader(yaml.SafeLoader):  # mkdocs.yml's own tags (!ENV) are not read here
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    config = yaml.load((REPO / "mkdocs.yml").read_text(), Loader=Loader)
    extensions = [next(iter(item)) if isinstance(item, dict) else item
                  for item in config["markdown_extensions"]]  # fmt: skip
    html: str = markdown.markdown(text, extensions=extensions)
    return html


def test_compare_page_headings_keep_a_datasets_markdown_as_text() -> None:
    # A workload's label holds the dataset's or trace's name, free text of the result; the
    # model's name is the catalog's. The page is Markdown, read with the site's extensions.
    label = f"1,000 → 1,000 tokens, {MARKDOWN_HOSTILE}"
    page = compare_pages.compare_page("m", "chat", MARKDOWN_HOSTILE, [(label, "server")])
    html = _markdown_html(page.split("---\n", 2)[2])
    headings = "\n".join(line for line in html.splitlines() if line.startswith(("<h1", "<h2")))
    parser = _safe(headings)
    assert parser.tags == ["h1", "h2"]
    assert list(parser.attributes) == ["id"]
    shown = html_module.unescape(re.sub("<[^>]+>", "", headings))
    assert shown == f"{MARKDOWN_HOSTILE}: chat traffic\n{label} · server"


def test_gpu_page_market_note_keeps_a_providers_markdown_as_text() -> None:
    # A provider's name is free text of a harvested price catalog.
    price = next(p for p in load_prices().values() if p.tier == "on_demand")
    cheap, other, dear = (
        price.model_copy(update={"id": name, "provider": provider, "usd_per_gpu_hour": usd})
        for name, provider, usd in (("a", MARKDOWN_HOSTILE, 1.0), ("b", "other", 1.1),
                                    ("c", f"dear {MARKDOWN_HOSTILE}", 4.0))
    )  # fmt: skip
    note = catalog_pages.market_note(price.gpu, [cheap, other, dear], {"on_demand": dear})
    parser = _safe(_markdown_html(note))
    assert parser.tags == ["div", "p", "p"]  # the admonition, its title and its text
    assert list(parser.attributes) == ["class"]


def test_search_entries_and_gpu_page_links_are_safe() -> None:
    models = load_models()
    model_id = next(iter(models))
    models = {model_id: models[model_id].model_copy(update={"name": HOSTILE})}
    rows = [dataclasses.replace(row, model=model_id) for row in _rows()]
    entries = page_links.search_entries(rows, {}, models)
    assert len(entries) == 2
    for entry in entries:  # Material's search shows a title and a text as HTML
        _safe(entry["title"])
        _safe(entry["text"])
    assert "&lt;script&gt;" in entries[0]["title"]
    _safe(page_links.gpu_results(rows, HOSTILE, models))
