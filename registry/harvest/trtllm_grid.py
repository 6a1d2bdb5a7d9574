"""TensorRT-LLM's performance overview in its 0.19/0.20 layout: one GPU × TP grid per model.

Each model and precision has a heading (`#### Llama 3.3 70B FP4`) and a table whose header row
names the GPUs (`| | GPU | H200 141GB HBM3 | | | | H100 80GB HBM3 | …`, a blank cell
continuing the GPU to its left), a `TP Size` row under them, then rows of `ISL, OSL` and one
value per column. The page states its unit once, above the tables: "The reported metric is
`Total Output Throughput (tokens/sec)`", so a value is the deployment's total as printed, over
TP GPUs. The runs are `trtllm-bench throughput`, "an offline maximum throughput scenario such
that all requests are queued in rapid succession", at fixed lengths (prepare_dataset.py
token-norm-dist, standard deviations 0), with the `$num_requests` of each length pair. The
release is the one the page names ("The data collected for the v0.20 benchmarks"), else the
documentation commit.
"""

import re
from dataclasses import dataclass
from functools import partial

from infermeter.registry.catalog import gpu_named
from infermeter.registry.harvest.errors import HarvestError, RowSkipped
from infermeter.registry.harvest.markdown_table import printed_figure, row_cells
from infermeter.registry.harvest.outcome import Harvested
from infermeter.registry.harvest.reported import (
    Catalogs,
    Deployment,
    Precision,
    cell_marker,
    fixed_lengths,
    harvest_row,
    marked_key,
    offline_point,
    replaced,
    reported_result,
)
from infermeter.registry.harvest.trtllm import TrtllmDocument
from infermeter.registry.harvest.trtllm_names import (
    GPU_NAMES,
    MODELS,
    TOTAL_METRIC,
    TableCell,
)
from infermeter.registry.models import (
    ReportedSource,
    Result,
    ServingSettings,
)

GRID = re.compile(r"^\|\s*\|\s*GPU\s*\|", re.MULTILINE)
"""A grid's GPU header row: what tells this layout from the others."""


NVIDIA_PAGE_CELLS: dict[str, tuple[str, frozenset[str]]] = {
    "ab4143e1d3c82df550f0d5673090a8feee84c7bd": (
        "https://nvidia.github.io/TensorRT-LLM/0.20.0/performance/perf-overview.html",
        frozenset(
            {
                "Llama 3.3 70B FP4 | B200 TP1 | 128/128",
                "Llama 3.3 70B FP4 | B200 TP1 | 128/2048",
                "Llama 3.3 70B FP4 | B200 TP8 | 128/2048",
            }
        ),
    ),
}
"""Cells of a fork's copy whose values were matched on NVIDIA's own published page (fork
revision → (that page, the cells)): such a cell cites NVIDIA's page, not the fork."""

_HEADING = re.compile(r"^#### (?P<model>.+) (?P<precision>FP4|FP8)\s*$")
_LENGTHS = re.compile(r"^(\d+), (\d+)$")
_VERSION = re.compile(r"data collected for the v(?P<version>[0-9]+(?:\.[0-9]+)+) benchmarks")


@dataclass(frozen=True)
class GridCell(TableCell):
    """One value: model heading, precision, GPU column, TP, lengths, value as printed."""

    def name(self) -> str:
        return (
            f"{self.model} {self.precision} | {self.gpu} TP{self.tensor_parallel} | "
            f"{self.input_len}/{self.output_len}"
        )


def parse_grids(text: str) -> tuple[list[GridCell], dict[tuple[int, int], int]]:
    """Every value of every grid, and the request count of each length pair."""
    lines = text.splitlines()
    cells: list[GridCell] = []
    requests: dict[tuple[int, int], int] = {}
    model = precision = ""
    gpus: list[str] = []
    tps: list[int] = []
    for number, line in enumerate(lines, start=1):
        heading = _HEADING.match(line)
        if heading:
            model, precision, gpus, tps = heading["model"], heading["precision"], [], []
            continue
        if not line.startswith("|"):
            continue
        row = row_cells(line)
        if len(row) == 4 and all(part.isdigit() for part in row):
            requests[(int(row[0]), int(row[1]))] = int(row[3])
            continue
        if len(row) > 2 and row[1] == "GPU":
            gpus = []
            for name in row[2:]:
                gpus.append(name or (gpus[-1] if gpus else ""))
            continue
        if len(row) > 2 and row[1] == "TP Size":
            try:
                tps = [int(part) for part in row[2:]]
            except ValueError:
                raise HarvestError(f"line {number}: TP sizes {row[2:]} are not numbers") from None
            continue
        lengths = _LENGTHS.match(row[0])
        if lengths is None or not model:
            continue
        if len(gpus) != len(tps) or len(row) - 2 > len(gpus):
            raise HarvestError(f"line {number}: the row has other columns than the GPU/TP rows")
        for gpu, tp, printed in zip(gpus, tps, row[2:], strict=False):
            if printed:
                cells.append(
                    GridCell(model, precision, gpu, tp, int(lengths[1]), int(lengths[2]), printed)
                )
    return cells, requests


def cell_key(revision: str, cell: GridCell) -> str:
    """The source key of a cell of this layout."""
    return f"trtllm {revision[:12]} grid {cell.name()}"


def result_key(result: Result) -> str | None:
    """The source key of a result from a page of this layout (None: another source)."""
    return marked_key(result, "grid")


def _conditions(
    cell: GridCell, sent: int | None, checkpoint: str | None, catalog_repo: str, version: str | None
) -> str:
    count = cell.tensor_parallel
    return (
        f"TensorRT-LLM performance overview, table '{cell.model} {cell.precision}', column "
        f"'{cell.gpu}' at TP size {count}, row '{cell.input_len}, {cell.output_len}': "
        f"{cell.printed} output tokens per second as printed, the deployment's total (the page: "
        f"\"{TOTAL_METRIC.removeprefix('The ')}\"), over {count} GPU{'s' if count > 1 else ''}. "
        "`trtllm-bench throughput` with the PyTorch backend: an offline maximum-throughput run, "
        "all requests queued in rapid succession; synthetic requests of random token ids, every "
        f"one {cell.input_len} input and {cell.output_len} output tokens (prepare_dataset.py "
        "token-norm-dist, standard deviations 0); "
        + (f"{sent} requests for this length pair per the page's table. " if sent else
           "the page gives no request count for this length pair. ")
        + f"Precision {cell.precision} as the heading states it; checkpoint "
        + (f"{checkpoint}. " if checkpoint else
           f"not named by the page: filed under the catalog's {catalog_repo}. ")
        + (f"Release {version}: 'The data collected for the v{version} benchmarks'. " if version
           else "The page does not name the release; the engine version names the commit read. ")
        + cell_marker("grid", cell.name())
    )  # fmt: skip


def _result(
    cell: GridCell,
    requests: dict[tuple[int, int], int],
    version: str | None,
    listed: str,
    document: TrtllmDocument,
    catalogs: Catalogs,
    key: str,
) -> Result:
    gpus, models = catalogs
    gpu = gpu_named(gpus, GPU_NAMES, cell.gpu)
    if gpu is None:
        raise RowSkipped(f"GPU column {cell.gpu!r} has no catalog id")
    if cell.model not in MODELS or MODELS[cell.model][0] not in models:
        raise RowSkipped(f"table {cell.model!r} names no model in the catalog mapping")
    model_id, checkpoints = MODELS[cell.model]
    model = models[model_id]
    checkpoint = checkpoints.get(cell.precision)
    named = checkpoint if checkpoint is not None and checkpoint in listed else None
    value = printed_figure(cell.printed)
    sent = requests.get((cell.input_len, cell.output_len))
    count = cell.tensor_parallel
    deployment = Deployment(
        gpu,
        count,
        "tensorrt-llm",
        version or f"docs@{document.revision[:12]}",
        model,
        Precision(quantization=cell.precision.lower()),
        named,
        ServingSettings(tensor_parallel_size=count),
    )
    identity = deployment.identity(fixed_lengths(cell.input_len, cell.output_len))
    conditions = _conditions(cell, sent, named, model.hf_repo, version)
    title = f"TensorRT-LLM Performance Overview: {cell.model} {cell.precision}"
    source = document.source(title, conditions, key)
    official = NVIDIA_PAGE_CELLS.get(document.revision)
    if official is not None and cell.name() in official[1]:
        source = _cited_on_nvidia_page(document, official[0], conditions, key)
    return reported_result(identity, [offline_point(value, sent)], source)


def _cited_on_nvidia_page(
    document: TrtllmDocument, url: str, conditions: str, key: str
) -> ReportedSource:
    """The source of a cell whose value NVIDIA's own page prints: that page, with where the
    rest (request counts, commands) was read."""
    source = document.source("TensorRT-LLM 0.20.0 documentation: Performance Overview", "", key)
    return replaced(
        source,
        unofficial=None,
        url=url,
        conditions=(
            f"The value as NVIDIA's own page prints it ({url}); the request counts and the "
            f"commands were read in the copy of that page in {document.repository} at "
            f"{document.revision[:12]}. " + conditions
        ),
    )


def harvest_document(text: str, document: TrtllmDocument, catalogs: Catalogs) -> list[Harvested]:
    """Every value of the page's grids, as a result or a skip."""
    if TOTAL_METRIC not in text:
        raise HarvestError(f"the page does not say its unit ('{TOTAL_METRIC}')")
    cells, requests = parse_grids(text)
    if not cells:
        raise HarvestError("no GPU × TP grid found (| | GPU | … then | | TP Size | …)")
    found = _VERSION.search(text)
    version = found["version"] if found else None
    rows = []
    for cell in cells:
        key = cell_key(document.revision, cell)
        make = partial(_result, cell, requests, version, text, document, catalogs, key)
        rows.append(harvest_row(key, make))
    return rows
