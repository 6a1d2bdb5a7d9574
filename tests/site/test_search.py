"""The site's search, typed into the theme's search box in a real headless Chromium: a GPU's or a
model's name finds its own page first, ahead of the compare and result pages that name it (once,
"gpt-oss" found two compare pages first, "H200" two compare pages before either H200's page)."""

import json
import re
from pathlib import Path
from typing import Any

import pytest
from site_helpers import search_for

from infermeter.registry.catalog import load_gpus, load_models

pytestmark = pytest.mark.browser

QUERIES = ("gpt-oss", "llama 70b", "H200", "MI300X", "deepseek r1")


def _own_pages(query: str, separator: str) -> set[str]:
    """The catalog pages whose entry's name holds every word of `query`, words split as the
    site's search splits them (its separator)."""

    def words(text: str) -> set[str]:
        return {word for word in re.split(separator, text.lower()) if word}

    wanted = words(query)
    pages = {f"gpus/{gpu.id}/" for gpu in load_gpus().values() if wanted <= words(gpu.name)}
    pages |= {f"models/{m.id}/" for m in load_models().values() if wanted <= words(m.name)}
    return pages


# True once a result highlights every word of the query: the list is the whole query's. Typed key
# by key, the box is searched at each key-up, and on a busy host the list read right after the
# last key was still the one of "deepseek" (its first result DeepSeek-V3; a stress run).
_WHOLE_QUERY_SHOWN = """words => [...document.querySelectorAll(
    '.md-search-result__list > li')].some(li => words.every(w => [...li.querySelectorAll('mark')]
        .some(m => m.textContent.toLowerCase() === w)))"""


def _first_result(page: Any, site_url: str, query: str, separator: str) -> str:
    search_for(page, site_url, query)
    words = [word for word in re.split(separator, query.lower()) if word]
    page.wait_for_function(_WHOLE_QUERY_SHOWN, arg=words, timeout=90_000)
    href: str = page.get_attribute(".md-search-result__list > li > a", "href")
    return href.removeprefix(f"{site_url}/")


@pytest.mark.parametrize("query", QUERIES)
def test_search_finds_the_gpu_or_model_page_first(
    page: Any, site_url: str, built_site: Path, query: str
) -> None:
    index = json.loads((built_site / "search/search_index.json").read_text())
    separator = index["config"]["separator"]
    own = _own_pages(query, separator)
    assert own, f"no catalog entry is named {query!r}"
    assert _first_result(page, site_url, query, separator) in own
