"""Shared fixtures of the site tests: one strict build of the real registry, served over HTTP on
127.0.0.1 by a real static server thread, and pages of the real headless Chromium (Debian's
/usr/bin/chromium, driven by Playwright; tests/conftest.py's `browser`) that may not reach
beyond 127.0.0.1."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chromium import watched_page
from site_helpers import PHONE, build_site, served_folder

from infermeter.bench.launch.server import free_port


@pytest.fixture(scope="session")
def site_port() -> int:
    return free_port()


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory, site_port: int) -> Path:
    out = tmp_path_factory.mktemp("site") / "build"
    completed = build_site(out, site_url=f"http://127.0.0.1:{site_port}/")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return out


@pytest.fixture(scope="session")
def site_url(built_site: Path, site_port: int) -> Iterator[str]:
    """The built site on a real static HTTP server (like `python -m http.server`)."""
    with served_folder(built_site, site_port) as url:
        yield url


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page; every request it (or its worker) makes must stay on 127.0.0.1."""
    watched = watched_page(browser)
    yield watched.page
    watched.page.context.close()
    assert watched.off_site() == []
    assert watched.errors == []
    assert watched.requests, "the page made no request at all"


@pytest.fixture
def phone(browser: Any) -> Iterator[Any]:
    """A fresh page in a phone's viewport (touch, mobile)."""
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    yield context.new_page()
    context.close()


@pytest.fixture
def static_page(browser: Any) -> Iterator[Any]:
    """A page without JavaScript: what a reader without it (and a crawler) sees."""
    context = browser.new_context(java_script_enabled=False)
    yield context.new_page()
    context.close()
