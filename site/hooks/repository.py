"""The repository's address, declared once in pyproject.toml (`[project.urls] Repository`).

The site's header links every page to the repository, and every hand-written page to its source
and to "edit this page" (mkdocs' `repo_url` and `edit_uri`); both come from here, so the
address is written in one place.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

DEFAULT_BRANCH = "main"


@dataclass(frozen=True)
class RepositoryLinks:
    """Where the site's pages link: the repository and the folder pages are edited in."""

    repo_url: str
    repo_name: str
    edit_uri: str


def repository_links(pyproject: Path, docs_dir: str = "site") -> RepositoryLinks:
    """The repository's address from `pyproject`, and the edit path of the pages in `docs_dir`."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    repo_url = str(project["urls"]["Repository"]).rstrip("/")
    repo_name = "/".join(repo_url.split("/")[-2:])
    return RepositoryLinks(
        repo_url=repo_url, repo_name=repo_name, edit_uri=f"edit/{DEFAULT_BRANCH}/{docs_dir}/"
    )
