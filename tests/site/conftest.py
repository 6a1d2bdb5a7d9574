"""Shared fixtures of the site tests: one strict build of the real registry, served over HTTP on
127.0.0.1 by a real static server thread."""

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from site_helpers import build_site, free_port


@pytest.fixture(scope="session")
def site_port() -> int:
    return free_port()


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory, site_port: int) -> Path:
    out = tmp_path_factory.mktemp("site") / "build"
    completed = build_site(out, site_url=f"http://127.0.0.1:{site_port}/")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return out


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="session")
def site_url(built_site: Path, site_port: int) -> Iterator[str]:
    """The built site on a real static HTTP server (like `python -m http.server`)."""
    handler = functools.partial(_QuietHandler, directory=str(built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", site_port), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
