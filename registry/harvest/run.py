"""One call per source: read it, turn its rows into results, apply them to a registry."""

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from infermeter.registry.catalog import load_gpus, load_models
from infermeter.registry.harvest import (
    amd,
    inferencex,
    inferencex_api,
    mlperf,
    mlperf_rounds,
    trtllm,
    trtllm_grid,
    trtllm_legacy,
    trtllm_pages,
    trtllm_static,
)
from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.harvest.outcome import (
    Harvested,
    HarvestReport,
    apply_harvest,
    retrieval_dates,
)
from infermeter.registry.harvest.reported import Catalogs
from infermeter.registry.harvest.sources import NOT_CITED, FileCitation
from infermeter.registry.harvest.tree import SourceTree
from infermeter.registry.input_files import read_input_text
from infermeter.registry.location import catalogs_folder
from infermeter.registry.models import Result

DEFAULT_SUBMITTER = "infermeter-maintainers"


@dataclass(frozen=True)
class HarvestOptions:
    """What every harvest takes besides its source."""

    registry_root: Path
    dry_run: bool = False
    submitter: str = DEFAULT_SUBMITTER
    today: str | None = None
    """Retrieval date of rows not harvested before (default: today, UTC)."""

    def __post_init__(self) -> None:
        # Checked before any source is read: a bad date found after writing would leave a
        # half-harvested registry.
        if self.today is not None:
            try:
                parsed = dt.date.fromisoformat(self.today)
            except ValueError:
                parsed = None
            if parsed is None or parsed.isoformat() != self.today:
                raise HarvestError(
                    f"--retrieved: {self.today!r} is not a calendar date such as 2026-11-30"
                )
        if not self.submitter.strip():
            raise HarvestError("the submitter is empty")

    def retrieval_date(self) -> str:
        return self.today or dt.datetime.now(dt.UTC).date().isoformat()

    def retrieved_for(self, key_of: Callable[[Result], str | None]) -> Callable[[str], str]:
        """A row's retrieval date by its source key: the date it was first harvested, so an
        unchanged source gives unchanged files; else the retrieval date of this run."""
        known = retrieval_dates(self.registry_root, key_of)
        today = self.retrieval_date()
        return lambda key: known.get(key, today)

    def apply(
        self, rows: Sequence[Harvested], key_of: Callable[[Result], str | None], source: str
    ) -> HarvestReport:
        """Apply a source's rows to the registry (`source`: the source in a reader's words)."""
        return apply_harvest(
            rows,
            self.registry_root,
            key_of,
            source=source,
            dry_run=self.dry_run,
            today=self.retrieval_date(),
        )

    def catalogs(self) -> Catalogs:
        """The registry's GPU and model catalogs, which map a source's names to catalog ids."""
        folder = catalogs_folder(self.registry_root)
        return Catalogs(load_gpus(folder), load_models(folder))


def harvest_mlperf(
    source: Path, round_text: str, options: HarvestOptions, *, cited: FileCitation = NOT_CITED
) -> HarvestReport:
    """Harvest one MLPerf Inference round from a checkout of its results repository (`cited`:
    the repository's URL, default mlcommons' of the round; the commit read, default HEAD; where
    the bytes were read, when that is not the repository cited)."""
    round_name = mlperf_rounds.round_name(round_text)
    tree = SourceTree.open(source, cited.commit)
    if tree.commit is None:
        raise HarvestError(
            f"--from: {source} is no git repository; name the commit it was copied from "
            "with --commit"
        )
    round_info = mlperf.MlperfRound(
        round=round_name,
        repository_url=cited.url or f"https://github.com/mlcommons/inference_results_{round_name}",
        commit=tree.commit,
        retrieved_for=options.retrieved_for(mlperf.result_key),
        submitter=options.submitter,
        read_from=cited.read_from,
    )
    rows = mlperf.harvest_round(tree, round_info, options.catalogs())
    return options.apply(
        rows, mlperf.result_key, f"MLPerf Inference {round_name} at {tree.commit[:12]}"
    )


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
    pages = trtllm_pages.pages_of(source, cited.commit)
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


def _inferencex_api_tables(
    source: Path, cited: FileCitation
) -> tuple[inferencex_api.Tables, list[Harvested], str]:
    """The dump tables of a saved InferenceX API response, its rows that name no run, and the
    sentence that says where it was read."""
    if cited.url is None:
        raise HarvestError(
            f"--from: {source} is a file; name where it is published with --url and the "
            "commit it was taken from with --commit"
        )
    cited.file_commit(source, "where it is published with --url and ")
    tables, skipped = inferencex_api.api_tables(inferencex_api.read_api_rows(source))
    read_at = (
        f"Read from the InferenceX API response saved as {cited.url} at commit {cited.commit} "
        "(GET /api/v1/benchmarks: the newest successful row of each configuration, "
        "concurrency and ISL/OSL, so a run may show only some of its concurrencies)"
        + (f"; bytes read from {cited.read_from}." if cited.read_from else ".")
    )
    return tables, skipped, read_at


def harvest_inferencex(
    source: Path,
    options: HarvestOptions,
    *,
    range_ratio: float | None = None,
    cited: FileCitation = NOT_CITED,
) -> HarvestReport:
    """Harvest a dump of the InferenceX database (a folder of `<table>.json` files), or a saved
    response of its API's `/api/v1/benchmarks` (a file `cited` by its URL and the commit it was
    taken from, and where its bytes were read when not there)."""
    skipped: list[Harvested] = []
    read_at: str | None = None
    if (source.exists() or source.is_symlink()) and not source.is_dir():
        tables, skipped, read_at = _inferencex_api_tables(source, cited)
    elif cited != NOT_CITED:
        raise HarvestError("--commit, --url and --read-from cite a file; --from names a folder")
    elif not source.is_dir():
        raise HarvestError(f"--from: {source} is not a folder of InferenceX dump tables")
    else:
        tables = inferencex.read_dump(source)
    dump = inferencex.InferencexDump(
        retrieved_for=options.retrieved_for(inferencex.result_key),
        submitter=options.submitter,
        range_ratio=range_ratio if range_ratio is not None else inferencex.DEFAULT_RANGE_RATIO,
        read_at=read_at,
    )
    rows = [*skipped, *inferencex.harvest_dump(tables, dump, options.catalogs())]
    kind = "dump" if read_at is None else "API response"
    return options.apply(rows, inferencex.result_key, f"InferenceX {kind} {source.name}")


def harvest_amd(
    source: Path, options: HarvestOptions, *, cited: FileCitation = NOT_CITED
) -> HarvestReport:
    """Harvest one version of AMD's ROCm vLLM docker README (its performance tables): a
    checkout of ROCm/vllm (read at the `cited` commit, default HEAD) or the README file itself
    (the `cited` commit is the one it was taken from; the `cited` URL, its public page)."""
    if (source.exists() or source.is_symlink()) and not source.is_dir():
        revision = cited.file_commit(source)
        text = read_input_text(source, "source page")
    else:
        tree = SourceTree.open(source, cited.commit)
        if tree.commit is None:
            raise HarvestError(f"--from: {source} is no git repository and no file")
        text, revision = tree.read_text(amd.DOCUMENT, "source page"), tree.commit
    document = amd.describe(
        text, revision, options.retrieved_for(amd.result_key), options.submitter, cited.url or ""
    )
    rows = amd.harvest_document(text, document, options.catalogs())
    return options.apply(rows, amd.result_key, f"AMD ROCm vLLM README at {revision[:12]}")
