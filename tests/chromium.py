"""The real headless Chromium the page tests drive (through Playwright), and a page in it that
records every request and script error."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


@contextmanager
def launched_chromium() -> Iterator[Any]:
    """Chromium, open until the block ends; the test fails (not skips) when it or Playwright is
    missing."""
    if shutil.which(CHROMIUM) is None:
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is missing: pip install playwright")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


LOCAL = ("127.0.0.1", None)


@dataclass
class WatchedPage:
    """A page in a context of its own, with every request it (or its worker) made and every
    uncaught error of its scripts, in order."""

    page: Any
    requests: list[str]
    errors: list[str]

    def off_site(self, since: int = 0) -> list[str]:
        """The requests after the first `since` that left 127.0.0.1 (data: and blob: URLs are
        read from the page itself)."""
        outside = [url for url in self.requests[since:] if urlsplit(url).hostname not in LOCAL]
        return [url for url in outside if not url.startswith(("data:", "blob:"))]


def watched_page(browser: Any) -> WatchedPage:
    context = browser.new_context()
    requests: list[str] = []
    context.on("request", lambda request: requests.append(request.url))
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return WatchedPage(page, requests, errors)
