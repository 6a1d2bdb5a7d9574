"""A catalog entry written by a careless or hostile contributor, built into a small site and
opened in a real headless Chromium: a GPU's or a model's name that reads as Markdown (a
`javascript:` link, an image from elsewhere, a `|` that ends a table cell) is shown as the text
it is on every page that names it, and no page runs, fetches or links anything of it; a name
as long as the catalog allows widens no page beyond a phone's screen."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from chromium import watched_page
from site_helpers import PHONE, build_site, result_data, served_folder, write_registry

from infermeter.bench.launch.server import free_port
from infermeter.registry.location import catalogs_folder

pytestmark = pytest.mark.browser

NAME = '[x](javascript:alert(1)) ![i](https://evil.example/x.png) a | b `c` *d* " onmouseover="x'
"""A name as Markdown reads it: a link that runs a script, an image fetched from elsewhere, a
table cell's end, code and emphasis; and a quote that would end an HTML attribute. It holds no
HTML tag (`registry validate` refuses those)."""

LONG_NAME = NAME + " " + "W" * 1900
"""The model's name: `NAME` and one word, 2,000 characters in all (the most `Text` holds)."""

PAGES = ("gpus/", "gpus/h100-sxm/", "models/", "models/llama-3.1-8b-instruct/", "compare/")


def _rename(root: Path, file: str, list_name: str, entry_id: str, name: str) -> None:
    path = catalogs_folder(root) / file
    data = yaml.safe_load(path.read_text())
    next(entry for entry in data[list_name] if entry["id"] == entry_id)["name"] = name
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The site of one result on the H100, whose catalog names are `NAME` (the GPU) and
    `LONG_NAME` (the model), served on 127.0.0.1."""
    tmp = tmp_path_factory.mktemp("hostile-catalog")
    write_registry(tmp / "registry", [result_data()])
    _rename(tmp / "registry", "gpus.yaml", "gpus", "h100-sxm", NAME)
    _rename(tmp / "registry", "models.yaml", "models", "llama-3.1-8b-instruct", LONG_NAME)
    port = free_port()
    completed = build_site(tmp / "out", tmp / "registry", site_url=f"http://127.0.0.1:{port}/")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    with served_folder(tmp / "out", port) as url:
        yield url + "/"


@pytest.mark.parametrize("path", PAGES)
def test_a_catalog_name_is_text_on_every_page_that_names_it(
    browser: Any, site: str, path: str
) -> None:
    watched = watched_page(browser)
    page = watched.page
    page.goto(site + path, wait_until="networkidle")
    article = page.locator("article")
    assert NAME in article.inner_text()
    markdown = "a[href^='javascript:' i], img[alt='i'], em:text-is('d'), code:text-is('c')"
    assert article.locator(markdown).count() == 0
    assert page.locator("[onmouseover]").count() == 0  # the theme's <head> included
    if path.count("/") == 2:  # the GPU's and the model's own page: described by the name
        description = page.locator("meta[name='description']").get_attribute("content")
        assert description.startswith(NAME)
        assert description.endswith(("hourly prices", "memory needs"))  # the whole of it
    if path == "compare/":  # the name's `|` ends no cell: the row has its three
        assert page.locator("article table tbody tr td").count() == 3
    page.context.close()
    assert watched.off_site() == []
    assert watched.errors == []


@pytest.mark.parametrize("path", ["", *PAGES])
def test_a_long_catalog_name_widens_no_page_beyond_a_phone(
    phone: Any, site: str, path: str
) -> None:
    # The home page's model list was as wide as its longest name: 1,782 px on a 390 px phone.
    phone.goto(site + path, wait_until="networkidle")
    width = phone.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"]
