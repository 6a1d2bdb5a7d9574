"""The README is read in two minutes: at most about 120 lines, and its first screen holds what
the project is, the site's link, the install line and the two commands."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
README = (REPOSITORY / "README.md").read_text(encoding="utf-8").splitlines()
URLS = tomllib.loads((REPOSITORY / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]


def test_readme_is_short() -> None:
    assert len(README) <= 120


def test_readme_first_screen_has_the_site_the_install_line_and_the_two_commands() -> None:
    first = "\n".join(README[:30])
    assert URLS["Documentation"] in first
    assert f"pip install 'infermeter[bench] @ git+{URLS['Repository']}'" in first
    assert "make demo   #" in first
    assert "make test   #" in first
    for example in ("infermeter calc ", "infermeter bench run ", "infermeter registry validate "):
        assert example in first, example
