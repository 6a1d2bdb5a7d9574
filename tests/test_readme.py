"""The README is read in two minutes: at most about 120 lines, and its first screen holds what
the project is, the site's link, the install line and the two commands."""

from __future__ import annotations

import shlex
import tomllib
from pathlib import Path

from cli_helpers import json_output

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


def test_the_first_thing_to_try_plans_a_deployment_that_fits() -> None:
    """A reader's first command shows a plan vLLM would start, not its refusal (70B in 16 bits
    on 2 H100s leaves 1.5 GiB of KV cache: no 32,768-token request fits)."""
    line = next(line for line in README[:30] if line.startswith("infermeter calc vram "))
    plan = json_output(*shlex.split(line)[1:])
    assert plan["fits"] is True, plan["vllm_error"]
    assert plan["max_concurrency"] >= 1
