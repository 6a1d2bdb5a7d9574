"""Helpers of the site tests (imported by conftest and the tests)."""

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from registry.models import Result
from registry.store import parse_result, with_content_id, write_result

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


TEMPLATE = REPO / "tests/examples/valid/results/measured-two-points.json"


def result_data() -> dict[str, Any]:
    """A valid measured result (two load points) as JSON data, to edit into a test's variant."""
    data: dict[str, Any] = json.loads(TEMPLATE.read_text())
    return data


def write_registry(root: Path, variants: list[dict[str, Any]]) -> list[Result]:
    """A registry checkout at `root`: the real catalogs and one result file per variant (each
    given its content id and written where it belongs)."""
    shutil.copytree(REPO / "registry" / "catalogs", root / "registry" / "catalogs")
    (root / "registry" / "results").mkdir()
    results = []
    for number, data in enumerate(variants):
        result = with_content_id(parse_result(json.dumps(data), f"{number}.json"))
        write_result(result, root)
        results.append(result)
    return results
