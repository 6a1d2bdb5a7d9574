"""Check that a release tag names pyproject.toml's version: `release_version.py v0.2.0`.

The version is declared once, in pyproject.toml; the release workflow refuses a tag that
names another. Prints one line and exits 1 when they differ.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def main(tag: str) -> int:
    version = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["version"]
    if tag != f"v{version}":
        sys.stdout.write(
            f"tag {tag!r} does not name pyproject.toml's version {version!r} "
            f"(expected v{version})\n"
        )
        return 1
    sys.stdout.write(f"releasing infermeter {version}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else ""))
