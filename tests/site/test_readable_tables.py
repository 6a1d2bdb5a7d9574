"""Tables a person can read, in a real headless Chromium: a GPU's name (or a price linked to its
GPU's page) in a table never breaks inside a word at a desktop's or a phone's width (the GPU fit
table once showed its names one letter per line at 1280 px, the GPU list at 390 px); no column is
all dashes (compare tables had 12 of 26); a table shows at most 10 columns until the reader asks
for the rest, without JavaScript (compare tables showed 26, buyer's tables 28 candidates)."""

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from site_helpers import PHONE

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1280, "height": 900}
# A page of each kind whose tables name GPUs.
GPU_TABLE_PAGES = (
    "answer/balanced-chat/",
    "gpus/",
    "gpus/h100-sxm/",
    "compare/llama-3.1-70b-instruct--custom/",
    "calculators/fit/",
)

# The words of the GPU links in tables, each with the number of lines it lies on (a word broken
# across lines has a rectangle on each).
WORD_LINES = """() => {
  const words = [];
  for (const link of document.querySelectorAll("article table a[href*='gpus/']")) {
    if (!link.offsetParent) continue;
    const walker = document.createTreeWalker(link, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of node.data.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        words.push([link.textContent.trim(), match[0], tops.size]);
      }
    }
  }
  return words;
}"""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280px", "390px"])
def test_readable_tables_gpu_names_break_between_words_only(
    browser: Any, site_url: str, viewport: dict[str, int]
) -> None:
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    try:
        for path in GPU_TABLE_PAGES:
            page.goto(f"{site_url}/{path}")
            words = page.evaluate(WORD_LINES)
            assert words, f"{path}: no GPU named in a table"
            broken = [(name, word) for name, word, lines in words if lines > 1]
            assert broken == [], f"{path} at {viewport['width']} px: {broken[:5]}"
    finally:
        context.close()


_TABLE = re.compile(r'<table class="([^"]*)"[^>]*>(.*?)</table>', re.S)
_ROW = re.compile(r"<tr[^>]*>(.*?)</tr>", re.S)
_CELL = re.compile(r"<t[hd][^>]*>(.*?)</t[hd]>", re.S)


def _dash(cell: str) -> bool:
    """A cell of dashes only: "–", or "– / –" for a pair of figures."""
    return re.fullmatch(r"[\s–/-]*", html.unescape(re.sub(r"<[^>]*>", "", cell))) is not None


def _dash_columns(page: str) -> list[str]:
    """The headers of the columns whose every body cell is a dash, per table of `page` (the
    buyer's table has a candidate per column: there, its figure rows)."""
    found = []
    for classes, table in _TABLE.findall(page):
        if "<tbody>" not in table:
            continue
        head, body = table.split("<tbody>", 1)
        headers = _CELL.findall(head)
        rows = [_CELL.findall(row) for row in _ROW.findall(body)]
        if "im-buyer" in classes:
            found += [f"{classes}: {row[0]}" for row in rows if all(map(_dash, row[1:]))]
            continue
        for index, header in enumerate(headers):
            if rows and all(_dash(row[index]) for row in rows if index < len(row)):
                found.append(f"{classes}: {header}")
    return found


def test_readable_tables_no_column_is_all_dashes(built_site: Path) -> None:
    pages = [built_site / f"{path}index.html" for path in ("", "gpus/", "calculators/fit/")]
    for folder in ("compare", "gpus", "models"):
        pages += sorted((built_site / folder).glob("*/index.html"))
    # result pages: those of each GPU's first result (2,000 pages read alike)
    seen: set[str] = set()
    for path in sorted((built_site / "results").glob("*.json")):
        gpu = json.loads(path.read_text())["identity"]["gpu"]["id"]
        if gpu not in seen:
            seen.add(gpu)
            pages.append(built_site / "results" / path.stem / "index.html")
    found = {}
    pages += sorted((built_site / "answer").rglob("index.html"))  # the presets' rankings
    for path in pages:
        columns = _dash_columns(path.read_text())
        if columns:
            found[str(path.parent.relative_to(built_site))] = columns
    assert len(pages) > 100
    assert found == {}


def _widest(built_site: Path, folder: str, count: int) -> list[str]:
    """The `count` pages of `folder` whose widest table has the most columns (or candidates)."""

    def columns(path: Path) -> int:
        heads = [table.split("</thead>")[0] for _c, table in _TABLE.findall(path.read_text())]
        return max((len(_CELL.findall(head)) for head in heads), default=0)

    paths = sorted((built_site / folder).glob("*/index.html"), key=columns, reverse=True)
    return [f"{path.parent.relative_to(built_site)}/" for path in paths[:count]]


# Per table of the article with a header row: its columns, those in view, and whether a
# "more columns" control holds it.
_COLUMNS_SHOWN = """() => [...document.querySelectorAll('article table')]
  .filter(table => table.tHead)
  .map(table => {
    const cells = [...table.tHead.rows[0].cells];
    return {table: table.className, all: cells.length,
            shown: cells.filter(c => getComputedStyle(c).display !== 'none').length,
            more: Boolean(table.closest('.im-wide'))};
  })"""


def test_readable_tables_show_ten_columns_until_asked_without_javascript(
    browser: Any, site_url: str, built_site: Path
) -> None:
    context = browser.new_context(viewport=DESKTOP, java_script_enabled=False)
    page = context.new_page()
    try:
        paths = _widest(built_site, "compare", 2) + _widest(built_site, "results", 1)
        paths += [*_widest(built_site, "gpus", 1), "calculators/fit/"]  # fit: 11 once
        asked = 0
        for path in paths:
            page.goto(f"{site_url}/{path}")
            tables = page.evaluate(_COLUMNS_SHOWN)
            assert tables, path
            assert [t for t in tables if t["shown"] > 10] == [], path
            assert [t for t in tables if t["shown"] < t["all"] and not t["more"]] == [], path
            for control in page.locator(".im-wide > .im-more-columns").all():
                control.click()  # a checkbox: CSS shows the rest
                asked += 1
            assert [t for t in page.evaluate(_COLUMNS_SHOWN) if t["shown"] < t["all"]] == []
        assert asked >= 2  # a compare table and its buyer's table at least were wider than 10
    finally:
        context.close()
