"""Helpers of the site tests (imported by conftest and the tests)."""

import contextlib
import functools
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from registry_checkout import empty_registry
from serve import QuietHandler, SiteServer

from infermeter.registry.models import Result
from infermeter.registry.store import parse_result, with_content_id, write_result

REPO = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def served_folder(
    folder: Path, port: int = 0, handler: type[QuietHandler] = QuietHandler
) -> Iterator[str]:
    """`folder` on `make demo`'s static HTTP server (site/hooks/serve.py), in a thread on
    127.0.0.1:`port` while the block runs; its address, without a trailing slash."""
    server = SiteServer(("127.0.0.1", port), functools.partial(handler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


SEARCH_BOX = "input[data-md-component='search-query']"


def search_for(page: Any, site_url: str, text: str) -> None:
    """Type `text` into the theme's search box of a fresh home page, key by key as a reader
    does. The theme reads the box on its key-up events, on focus (1 ms later) and once when its
    search index is ready; not on `input`. So `page.fill` found nothing whenever the focus read
    came before the value and the index was already ready (the cached index of a second query
    on a busy host: the search test timed out twice in CI, its first query found)."""
    page.goto(f"{site_url}/")  # a fresh page: a query typed over another may not refresh
    page.focus(SEARCH_BOX)
    page.keyboard.type(text)


# A phone's viewport (CSS px), and whether an element lies wholly within its width.
PHONE = {"width": 390, "height": 844}


def in_view(locator: Any) -> bool:
    box = locator.bounding_box()
    return box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]


def assert_side_by_side(left: Any, right: Any) -> None:
    """`right` starts where `left` ends or after it: two cells that do not overlap."""
    left_box, right_box = left.bounding_box(), right.bounding_box()
    assert left_box is not None
    assert right_box is not None
    assert left_box["x"] + left_box["width"] <= right_box["x"] + 0.5, (left_box, right_box)


# A link followed as a reader's click is: Material's instant navigation fetches the page and swaps
# its content, keeping the JS context (no reload of the theme's scripts, no Python start-up).
_FOLLOW = (
    "url => { const a = document.createElement('a'); a.href = url;"
    " document.body.append(a); a.click(); }"
)


def visit(page: Any, url: str) -> None:
    """Open a page of the site: the first by loading it, the next ones by following a link from
    the page open (to the same path with another query, Material follows none: use goto)."""
    if page.url == url:
        return
    if not page.url.startswith("{0.scheme}://{0.netloc}/".format(urlsplit(url))):
        page.goto(url)
        return
    page.evaluate("() => document.querySelectorAll('article').forEach(e => e.dataset.left = '1')")
    page.evaluate(_FOLLOW, url)
    page.wait_for_url(url)
    page.wait_for_selector("article:not([data-left])", state="attached")


def build_site(
    out: Path, registry: Path | None = None, site_url: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict` into `out`, optionally from another registry checkout, for the
    address it will be served at (Material's instant navigation needs the exact origin)."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    if site_url is not None:
        env["INFERMETER_SITE_URL"] = site_url
    if registry is not None:
        env["INFERMETER_REGISTRY"] = str(registry)
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@cache
def answer_page_data() -> Any:
    """The answer page's data (`answer_render.Data`) of this repository's registry: its evidence
    and prices, and the estimator over its catalogs (as the page's, which holds every catalog
    model); no catalog names, no published estimates; read once (tests/conftest.py puts
    site/browser on sys.path)."""
    from answer_render import Data

    from infermeter.registry.answers import answer_estimator, load_evidence

    found = load_evidence(REPO)
    estimator = answer_estimator(REPO, found)
    return Data(found.points, found.prices, {}, {}, {}, estimator.held_out, estimator)


TEMPLATE = REPO / "tests/examples/valid/results/measured-two-points.json"


def result_data() -> dict[str, Any]:
    """A valid measured result (two load points) as JSON data, to edit into a test's variant."""
    data: dict[str, Any] = json.loads(TEMPLATE.read_text())
    return data


def write_registry(root: Path, variants: list[dict[str, Any]]) -> list[Result]:
    """A registry checkout at `root`: the real catalogs and one result file per variant (each
    given its content id and written where it belongs)."""
    empty_registry(root)
    results = []
    for number, data in enumerate(variants):
        result = with_content_id(parse_result(json.dumps(data), f"{number}.json"))
        write_result(result, root)
        results.append(result)
    return results
