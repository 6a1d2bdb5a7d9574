"""Every page of the built site links to the repository (the header's link, from pyproject.toml's
`[project.urls] Repository`), and every hand-written page to its source and its edit page."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
REPO_URL = tomllib.loads((REPOSITORY / "pyproject.toml").read_text(encoding="utf-8"))["project"][
    "urls"
]["Repository"]


def test_every_built_page_links_to_the_repository(built_site: Path) -> None:
    pages = sorted(built_site.rglob("*.html"))
    assert len(pages) > 100
    link = f'href="{REPO_URL}"'
    missing = [p.relative_to(built_site).as_posix() for p in pages if link not in p.read_text()]
    assert missing == [], f"{len(missing)} pages without the repository link, e.g. {missing[:5]}"


def test_hand_written_pages_link_to_their_source_and_edit_page(built_site: Path) -> None:
    for source in sorted((REPOSITORY / "site").glob("*.md")):
        folder = "" if source.stem == "index" else f"{source.stem}/"
        html = (built_site / folder / "index.html").read_text(encoding="utf-8")
        assert f'href="{REPO_URL}/edit/main/site/{source.name}"' in html, source.name
        assert f'href="{REPO_URL}/raw/main/site/{source.name}"' in html, source.name


def test_the_header_link_fetches_nothing_from_github(built_site: Path) -> None:
    # Material's `source` component asks api.github.com for stars and forks in the reader's
    # browser; the override keeps the link and drops the component.
    html = (built_site / "index.html").read_text(encoding="utf-8")
    assert 'data-md-component="source"' not in html
    assert 'data-infermeter="repository"' in html
