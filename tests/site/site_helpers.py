"""Helpers of the site tests (imported by conftest and the tests)."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def build_site(out: Path, registry: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict` into `out`, optionally from another registry checkout."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
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
