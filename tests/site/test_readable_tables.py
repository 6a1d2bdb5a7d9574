"""Tables a person can read, in a real headless Chromium at a desktop's and a phone's width: a
GPU's name (or a price linked to its GPU's page) in a table never breaks inside a word (the GPU
fit table once showed its names one letter per line at 1280 px, the GPU list at 390 px)."""

from typing import Any

import pytest
from site_helpers import PHONE

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1280, "height": 900}
# A page of each kind whose tables name GPUs.
GPU_TABLE_PAGES = (
    "",
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
