"""Helpers of the site tests (imported by conftest and the tests)."""

import os
import socket
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


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
