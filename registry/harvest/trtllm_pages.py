"""TensorRT-LLM's performance overview harvested (`harvest_trtllm`): which versions of the page a
harvest reads, where each is, and which layout's module reads each.

A source is a checkout of NVIDIA/TensorRT-LLM (read at one commit), one page's markdown file
(its commit named by `--commit` or by its header), or a folder of such files, one per version.
A file names the repository, path and commit it was copied from in a first-line comment (a
repository other than NVIDIA/TensorRT-LLM is a fork's copy, cited as unofficial):

    <!-- Excerpt of docs/source/performance/perf-overview.md in NVIDIA/TensorRT-LLM at commit
    00f37686aa854010d68bcbd0f4ab000221541ca6 … -->

The page's path is the one read; where a plain file does not say, its layout does: the static
batches of 0.5–0.9 in `docs/source/performance.md`, the 0.1x single table and the 1.0 layout in
`docs/source/performance/`, the per-GPU tables in `docs/source/developer-guide/`.
"""

import re
from dataclasses import dataclass
from pathlib import Path

from infermeter.registry.harvest import (
    trtllm,
    trtllm_grid,
    trtllm_legacy,
    trtllm_names,
    trtllm_static,
)
from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.harvest.options import HarvestOptions
from infermeter.registry.harvest.outcome import HarvestReport
from infermeter.registry.harvest.sources import NOT_CITED, FileCitation
from infermeter.registry.harvest.tree import SourceTree
from infermeter.registry.input_files import InputFileError, read_input_text
from infermeter.registry.models import Result

_HEADER = re.compile(
    r"\A<!-- Excerpt of (?P<path>\S+) in (?P<repository>[\w.-]+/[\w.-]+) at commit\s+"
    r"(?P<commit>[0-9a-f]{40})"
)
LEGACY_MARK = "| Throughput (tokens"


@dataclass(frozen=True)
class Page:
    """One version of the page: its text, the commit and the repository path it was read at."""

    text: str
    revision: str
    path: str
    where: str
    """The file or checkout it came from, for messages."""
    repository: str = trtllm.OFFICIAL_REPOSITORY
    """The GitHub repository the commit is in (a fork's copy is unofficial)."""

    @property
    def layout(self) -> str:
        """`static` (0.5–0.9), `legacy` (0.1x single table), `grid` (0.19/0.20) or `tables`
        (1.x)."""
        if trtllm_static.MARK in self.text:
            return "static"
        if trtllm_grid.GRID.search(self.text):
            return "grid"
        legacy = LEGACY_MARK in self.text or trtllm_legacy.MARK_014 in self.text
        return "legacy" if legacy else "tables"


def layout_path(text: str) -> str:
    """The repository path of a page whose file does not name it, by its layout."""
    if trtllm_static.MARK in text:
        return trtllm_static.DOCUMENT
    if LEGACY_MARK in text or trtllm_legacy.MARK_014 in text or trtllm_names.TOTAL_METRIC in text:
        return trtllm_legacy.DOCUMENT
    if trtllm_grid.GRID.search(text):
        return trtllm_legacy.DOCUMENT
    return trtllm.DOCUMENT


def file_page(file: Path, commit: str | None) -> Page:
    """A page's markdown file; its commit from `commit` or its header (both: they must agree)."""
    try:
        text = read_input_text(file, "source page")
    except InputFileError as error:
        raise HarvestError(f"--from: {error}") from None
    header = _HEADER.match(text)
    if header is not None and commit is not None and not header["commit"].startswith(commit):
        raise HarvestError(
            f"--commit: {commit} is not the commit {header['commit'][:12]} that {file} names"
        )
    if header is None and commit is None:
        raise HarvestError(
            f"--from: {file} is a file; name the commit it was taken from with --commit "
            "(or head it '<!-- Excerpt of PATH in NVIDIA/TensorRT-LLM at commit COMMIT')"
        )
    revision = header["commit"] if header is not None else str(commit)
    path = header["path"] if header is not None else layout_path(text)
    repository = header["repository"] if header is not None else trtllm.OFFICIAL_REPOSITORY
    return Page(text, revision, path, str(file), repository)


def folder_pages(folder: Path) -> list[Page]:
    """Every `*.md` file of a folder of versions, each headed with its path and commit."""
    files = sorted(folder.glob("*.md"))
    if not files:
        raise HarvestError(f"--from: {folder} holds no .md page of a version")
    pages = []
    for file in files:
        try:
            text = read_input_text(file, "source page")
        except InputFileError as error:
            raise HarvestError(f"--from: {error}") from None
        if _HEADER.match(text) is None:
            raise HarvestError(
                f"--from: {file} does not begin '<!-- Excerpt of PATH in OWNER/REPOSITORY at "
                "commit COMMIT'; every page of a folder names its path and commit"
            )
        pages.append(file_page(file, None))
    return pages


def checkout_page(source: Path, commit: str | None) -> Page:
    """The page in a checkout of the repository at `commit` (default HEAD)."""
    tree = SourceTree.open(source, commit)
    if tree.commit is None:
        raise HarvestError(  # a file or a missing path never comes here (pages_of, open)
            f"--from: {source} is no git repository and holds no .md page of a version"
        )
    paths = [trtllm.DOCUMENT, trtllm_legacy.DOCUMENT, trtllm_static.DOCUMENT]
    found = tree.read_many(paths)
    for path in paths:
        if found[path]:
            return Page(str(found[path]), tree.commit, path, str(source))
    raise HarvestError(f"--from: {source} has none of {', '.join(paths)} at {tree.commit[:12]}")


def pages_of(source: Path, commit: str | None) -> list[Page]:
    """The versions a `--from` names: a file, a checkout, or a folder of version files."""
    if source.is_file() or (source.exists() and not source.is_dir()):  # a FIFO: refused there
        return [file_page(source, commit)]
    if source.is_dir() and not (source / ".git").exists() and any(source.glob("*.md")):
        if commit is not None:
            raise HarvestError(
                f"--commit: {source} is a folder of versions; each names its own commit"
            )
        return folder_pages(source)
    return [checkout_page(source, commit)]


def trtllm_result_key(result: Result) -> str | None:
    """The source key of a result from any layout of TensorRT-LLM's performance overview."""
    return (
        trtllm.result_key(result)
        or trtllm_legacy.result_key(result)
        or trtllm_static.result_key(result)
        or trtllm_grid.result_key(result)
    )


def harvest_trtllm(
    source: Path,
    options: HarvestOptions,
    *,
    cited: FileCitation = NOT_CITED,
    engine_version: str | None = None,
) -> HarvestReport:
    """Harvest versions of TensorRT-LLM's performance overview: a checkout of the repository
    (read at the `cited` commit, default HEAD), the page's markdown file (the `cited` commit or
    its header names the commit it was taken from), or a folder of such files, one per version."""
    pages = pages_of(source, cited.commit)
    if len(pages) > 1 and (cited.url or engine_version):
        raise HarvestError(
            "--url and --engine-version name one page; a folder holds several versions"
        )
    retrieved_for = options.retrieved_for(trtllm_result_key)
    catalogs = options.catalogs()
    rows = []
    for page in pages:
        document = trtllm.TrtllmDocument(
            revision=page.revision,
            url=cited.url
            or f"https://github.com/{page.repository}/blob/{page.revision}/{page.path}",
            engine_version=engine_version,
            retrieved_for=retrieved_for,
            submitter=options.submitter,
            repository=page.repository,
        )
        harvest = {
            "static": trtllm_static.harvest_document,
            "grid": trtllm_grid.harvest_document,
            "legacy": trtllm_legacy.harvest_document,
            "tables": trtllm.harvest_document,
        }[page.layout]
        try:
            rows += harvest(page.text, document, catalogs)
        except HarvestError as error:
            raise HarvestError(f"{page.where}: {error}") from None
    revisions = ", ".join(page.revision[:12] for page in pages)
    return options.apply(
        rows, trtllm_result_key, f"TensorRT-LLM performance overview at {revisions}"
    )
