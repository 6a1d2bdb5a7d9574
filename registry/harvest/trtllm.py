"""NVIDIA TensorRT-LLM's performance overview (`docs/source/developer-guide/perf-overview.md`).

Read: the throughput tables of the 1.x documents. Each model has a heading (`# Qwen3
235B A22B`) and a table whose first column is `Sequence Length (ISL/OSL)` and whose other
columns name a GPU, its parallelism and its precision (`B200<br/>DEP4 (FP4)`; the RTX PRO 6000
tables name the GPU count instead, `**2 GPUs**<br/>TP1,PP2 (FP4)`). The unit under the table
must be output tokens per second per GPU. The `Number of Requests` table gives the request
count of each length pair.

The 1.0 layout (`docs/source/performance/perf-overview.md` of mid-2025) heads each model with
`#### Llama 3.3 70B`, labels its RTX PRO 6000 table with a line `RTX 6000 Pro Blackwell Server
Edition` above it, prints no unit under the tables and says once, above them, "The reported
metric is `Total Output Throughput (tokens/sec)`": those cells are the deployment's total as
printed. Its request counts are the `$num_requests` column of a `$seq_len` table.

Each non-empty cell becomes one result with one offline point (the page runs `trtllm-bench
throughput`, "an offline maximum throughput scenario such that all requests are queued in rapid
succession"): fixed input and output lengths (random tokens, standard deviation 0), the GPU count
of the column, TP/PP as `TPn`/`PPm`, `DEPn` as attention data parallel n with expert parallel n.
The page states per-GPU figures; a result stores its deployment's throughput, so the value is
multiplied by the GPU count (the index divides it back, exactly) and the conditions say so.
Precision goes to `model.quantization` as stated (`fp4`, `fp8`); the checkpoint is the one the
page's own FP4/FP8 model list names for the model, else the catalog's repository (said so).
"""

import dataclasses
import re
from collections.abc import Callable
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
    fixed_lengths,
    harvest_row,
    offline_point,
    replaced,
    reported_result,
)
from infermeter.registry.harvest.trtllm_names import (
    GPU_NAMES,
    MODELS,
    RTX_LABEL,
    RTX_SUFFIX,
    TOTAL_METRIC,
)
from infermeter.registry.models import (
    GpuEntry,
    ModelEntry,
    ReportedSource,
    Result,
    ServingSettings,
    Verdict,
)

DOCUMENT = "docs/source/developer-guide/perf-overview.md"


_COLUMN = re.compile(
    r"^(?:\*\*(?P<gpus>\d+) GPUs\*\*|(?P<gpu>.+?))<br/>(?P<par>[A-Z0-9,]+) \((?P<prec>FP\d+)\)$"
)
_PARALLEL = re.compile(r"^(?P<kind>TP|DEP)(?P<n>\d+)(?:,PP(?P<pp>\d+))?$")
_LENGTHS = re.compile(r"^(\d+)/(\d+)$")


OFFICIAL_REPOSITORY = "NVIDIA/TensorRT-LLM"


@dataclass(frozen=True)
class TrtllmDocument:
    """Where one version of the page was read and how it is cited."""

    revision: str
    url: str
    engine_version: str | None
    retrieved_for: Callable[[str], str]
    submitter: str
    repository: str = OFFICIAL_REPOSITORY
    """The repository read; any other than NVIDIA's is a copy, shown as unofficial."""
    release_from_page: bool = False
    """Whether `engine_version` is the release the page itself names."""

    def source(self, title: str, conditions: str, key: str) -> ReportedSource:
        """A result's `source` for one cell of this page: NVIDIA's reported figure."""
        official = self.repository == OFFICIAL_REPOSITORY
        fork = (
            f"Read from {self.repository} at the commit named, a copy of NVIDIA's page in a "
            f"fork of {OFFICIAL_REPOSITORY}, not NVIDIA's own repository. "
        )
        return ReportedSource(
            kind="reported",
            url=self.url,
            title=title,
            publisher="NVIDIA",
            conditions=conditions if official else fork + conditions,
            retrieved=self.retrieved_for(key),
            submitter=self.submitter,
            revision=self.revision,
            unofficial=None if official else True,
        )


@dataclass(frozen=True)
class Cell:
    """One non-empty table cell: heading, column, length pair and value as printed."""

    heading: str
    column: str
    input_len: int
    output_len: int
    printed: str
    per_gpu: bool = True
    """The page's unit: output tokens/s per GPU (else the deployment's total)."""
    labelled: bool = False
    """The table is an RTX PRO 6000 table labelled by a line above it, not by a heading."""


def _request_row(row: list[str]) -> tuple[tuple[int, int], int] | None:
    """A request-count row: `ISL | OSL | requests` or `ISL | OSL | seq_len | requests`."""
    if len(row) in (3, 4) and all(part.isdigit() for part in row):
        return (int(row[0]), int(row[1])), int(row[-1])
    return None


def parse_tables(text: str) -> tuple[list[Cell], dict[tuple[int, int], int], list[str]]:
    """The cells of every throughput table, the request count per length pair, and the
    headings of tables whose unit is neither output tokens per second per GPU (printed under
    the table) nor the page's stated total output throughput."""
    lines = text.splitlines()
    cells: list[Cell] = []
    requests: dict[tuple[int, int], int] = {}
    refused: list[str] = []
    total_page = TOTAL_METRIC in text
    heading = ""
    labelled = False
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith(("# ", "#### ")):
            heading = line.split(" ", 1)[1].strip()
        if not line.startswith("|"):
            labelled = line.strip() == RTX_LABEL or (labelled and not line.strip())
        if line.startswith("| Input Length | Output Length |"):
            index += 2
            while index < len(lines) and lines[index].startswith("|"):
                found = _request_row(row_cells(lines[index]))
                if found is not None:
                    requests[found[0]] = found[1]
                index += 1
            continue
        if line.startswith("| Sequence Length (ISL/OSL) |"):
            table_heading = heading + RTX_SUFFIX if labelled else heading
            columns = row_cells(line)[1:]
            index += 2
            table: list[tuple[str, int, int, str]] = []
            while index < len(lines) and lines[index].startswith("|"):
                row = row_cells(lines[index])
                lengths = _LENGTHS.match(row[0])
                if lengths is None:
                    raise HarvestError(
                        f"table {table_heading!r}: row {row[0]!r} is no ISL/OSL pair"
                    )
                for column, printed in zip(columns, row[1:], strict=False):
                    if printed:
                        table.append((column, int(lengths[1]), int(lengths[2]), printed))
                index += 1
            unit = next((text for text in lines[index : index + 3] if text.strip()), "")
            per_gpu = "per second per GPU" in unit
            if per_gpu or (total_page and not unit.lower().lstrip("*").startswith("unit")):
                cells += [
                    Cell(table_heading, *entry, per_gpu=per_gpu, labelled=labelled)
                    for entry in table
                ]
            else:
                refused.append(table_heading)
            labelled = False
            continue
        index += 1
    return cells, requests, refused


def shown(column: str) -> str:
    """A column header as plain text: `B200<br/>DEP4 (FP4)` → `B200 DEP4 (FP4)`."""
    return column.replace("<br/>", " ").replace("**", "")


def cell_key(revision: str, cell: Cell) -> str:
    """The source key of a cell: document revision, table, column, length pair."""
    lengths = f"{cell.input_len}/{cell.output_len}"
    return f"trtllm {revision[:12]} {cell.heading} | {shown(cell.column)} | {lengths}"


def result_key(result: Result) -> str | None:
    """The source key of a result harvested from this page (None: not from it)."""
    source = result.source
    marker = getattr(source, "conditions", "")
    match = re.search(r"\[cell: (.+?)\]", marker)
    revision = getattr(source, "revision", None)
    if match is None or revision is None or "TensorRT-LLM" not in getattr(source, "title", ""):
        return None
    return f"trtllm {revision[:12]} {match.group(1)}"


_Skip = RowSkipped


def _deployment(
    cell: Cell, gpus: dict[str, GpuEntry]
) -> tuple[GpuEntry, int, ServingSettings, str]:
    column = _COLUMN.match(cell.column)
    if column is None:
        raise _Skip(f"column {cell.column!r} names no GPU, parallelism and precision")
    parallel = _PARALLEL.match(column["par"])
    if parallel is None:
        raise _Skip(f"parallelism {column['par']!r} is not TPn, DEPn or either with ,PPm")
    size, pipeline = int(parallel["n"]), int(parallel["pp"] or 1)
    tensor = parallel["kind"] == "TP"
    serving = ServingSettings(
        tensor_parallel_size=size if tensor else None,
        data_parallel_size=None if tensor else size,
        expert_parallel_size=None if tensor else size,
        pipeline_parallel_size=None if parallel["pp"] is None else pipeline,
    )
    count = size * pipeline
    if column["gpus"] is not None:
        if not cell.heading.endswith(RTX_SUFFIX):
            raise _Skip(f"column {cell.column!r} counts GPUs outside an RTX PRO 6000 table")
        if int(column["gpus"]) != count:
            raise _Skip(f"column {cell.column!r}: {column['gpus']} GPUs ≠ {column['par']}")
    # An RTX PRO 6000 table's columns count GPUs: its label names the GPU.
    name = RTX_LABEL if column["gpus"] is not None else column["gpu"]
    gpu = gpu_named(gpus, GPU_NAMES, name)
    if gpu is None:
        raise _Skip(f"GPU {name!r} has no catalog id")
    return gpu, count, serving, column["prec"]


def _checkpoint(heading: str, precision: str, listed: str, catalog_repo: str) -> str | None:
    """The checkpoint of a table's model at a precision: the one the page lists, the catalog's
    repository where the mapping names none for the model, None where the page names none."""
    checkpoints = MODELS[heading][1]
    if precision not in checkpoints:
        return catalog_repo
    checkpoint = checkpoints[precision]
    return checkpoint if checkpoint is not None and checkpoint in listed else None


def _checkpoint_format(
    checkpoint: str | None, model: ModelEntry, precision: str
) -> tuple[str | None, str | None]:
    """The weight format of a checkpoint that is already quantized (the catalog model's own
    repository with a `quantization_config`: gpt-oss's MXFP4), and the note saying so: the
    column's FP8/FP4 then names the compute precision, not the weights. (None, None) else."""
    config = model.config.get("quantization_config") if isinstance(model.config, dict) else None
    if checkpoint != model.hf_repo or not isinstance(config, dict):
        return None, None
    method = str(config.get("quant_method", "")).lower()
    if not method:
        return None, None
    note = (
        f"The checkpoint {checkpoint} stores its weights in {method.upper()} (its config's "
        f"quantization_config); the column's {precision} is the precision it ran in, so the "
        f"weights are filed as {method}. "
    )
    return method, note


def harvest_cell(
    cell: Cell,
    requests: dict[tuple[int, int], int],
    document: TrtllmDocument,
    catalogs: Catalogs,
    listed: str = "",
) -> Harvested:
    """One table cell as a result, or skipped with its reason; `listed` is the page's text,
    where the checkpoints it names are looked up."""
    key = cell_key(document.revision, cell)
    return harvest_row(key, partial(_result, cell, requests, document, catalogs, key, listed))


def _unit_words(cell: Cell, value: float, count: int) -> str:
    if cell.per_gpu:
        return (
            f"{cell.printed} output tokens per second per GPU as printed (the page's unit); "
            f"stored as {value:g} × {count} GPUs = {value * count:g} output tokens/s for the "
            "deployment. "
        )
    return (
        f"{cell.printed} output tokens per second as printed, the deployment's total (the page: "
        f'"{TOTAL_METRIC.removeprefix("The ")}"; no unit under the tables), over {count} '
        f"GPU{'s' if count > 1 else ''}. "
    )


def _release_words(document: TrtllmDocument) -> str:
    """What the conditions say of the release: nothing when it was given, the page's words
    when the page names it, else that the engine version names the commit read."""
    if document.engine_version and not document.release_from_page:
        return ""
    if document.engine_version:
        return (
            f"The page names release v{document.engine_version} ('NEW for "
            f"v{document.engine_version}'). "
        )
    return (
        "The page does not name the TensorRT-LLM release; the engine version names the "
        "documentation commit read. "
    )


@dataclass(frozen=True)
class _Deployed:
    """What a cell states beside its value: GPUs, settings, precision, checkpoint, requests."""

    count: int
    serving: ServingSettings
    precision: str
    checkpoint: str | None
    catalog_repo: str
    weights_note: str | None
    sent: int | None


def _conditions(cell: Cell, value: float, deployed: _Deployed, document: TrtllmDocument) -> str:
    model_heading = cell.heading.removesuffix(RTX_SUFFIX)
    precision, checkpoint, sent = deployed.precision, deployed.checkpoint, deployed.sent
    table = (
        f"table '{cell.heading}'" if not cell.labelled else
        f"table '{RTX_LABEL}' (so labelled, under heading '{model_heading}')"
    )  # fmt: skip
    return (
        f"TensorRT-LLM performance overview, {table}, column "
        f"'{shown(cell.column)}' (line breaks as spaces), "
        f"row {cell.input_len}/{cell.output_len}: " + _unit_words(cell, value, deployed.count)
        + "`trtllm-bench throughput` "
        "with the PyTorch backend: an offline maximum-throughput run, all requests queued in "
        "rapid succession; synthetic requests of random token ids, every one "
        f"{cell.input_len} input and {cell.output_len} output tokens (prepare_dataset.py "
        "token-norm-dist, standard deviations 0); "
        + (f"{sent} requests for this length pair per the page's table. " if sent else
           "the page gives no request count for this length pair. ")
        + f"Precision {precision} as the column states it; checkpoint "
        + (f"{checkpoint}. " if checkpoint else
           f"not named by the page for {precision}: filed under the catalog's "
           f"{deployed.catalog_repo}. ")
        + ("DEP = attention data parallel with expert parallelism over the same GPUs. "
           if deployed.serving.data_parallel_size is not None else "")
        + ("The page marks B300/GB300 support as beta: not finalized. "
           if "beta" in cell.column else "")
        + _release_words(document)
        + (deployed.weights_note or "")
        + f"[cell: {cell.heading} | {shown(cell.column)} | {cell.input_len}/{cell.output_len}]"
    )  # fmt: skip


def _catalog_model(cell: Cell, models: dict[str, ModelEntry]) -> ModelEntry:
    model_heading = cell.heading.removesuffix(RTX_SUFFIX)
    if model_heading not in MODELS:
        raise _Skip(f"table {cell.heading!r} names no model in the catalog mapping")
    model_id = MODELS[model_heading][0]
    if model_id not in models:
        raise _Skip(f"model {model_id} is not in the model catalog")
    return models[model_id]


def _result(
    cell: Cell,
    requests: dict[tuple[int, int], int],
    document: TrtllmDocument,
    catalogs: Catalogs,
    key: str,
    listed: str,
) -> Result:
    gpus, models = catalogs
    model = _catalog_model(cell, models)
    gpu, count, serving, precision = _deployment(cell, gpus)
    value = printed_figure(cell.printed)
    model_heading = cell.heading.removesuffix(RTX_SUFFIX)
    checkpoint = _checkpoint(model_heading, precision, listed, model.hf_repo)
    weights, weights_note = _checkpoint_format(checkpoint, model, precision)
    sent = requests.get((cell.input_len, cell.output_len))
    deployed = _Deployed(count, serving, precision, checkpoint, model.hf_repo, weights_note, sent)
    point = offline_point(value * count if cell.per_gpu else value, sent)
    if "beta" in cell.column:
        verdict = Verdict(code="beta-hardware", message="the page marks this GPU's support as beta")
        point = replaced(point, validity=[verdict])
    version = document.engine_version or f"docs@{document.revision[:12]}"
    quantization = Precision(quantization=weights or precision.lower())
    deployment = Deployment(
        gpu, count, "tensorrt-llm", version, model, quantization, checkpoint, serving
    )
    identity = deployment.identity(fixed_lengths(cell.input_len, cell.output_len))
    conditions = _conditions(cell, value, deployed, document)
    title = f"TensorRT-LLM Performance Overview: {cell.heading}"
    return reported_result(identity, [point], document.source(title, conditions, key))


_RELEASE_NAMED = re.compile(r"\(NEW for v(\d+\.\d+(?:\.\d+)?)\)")


def release_named(text: str) -> str | None:
    """The TensorRT-LLM release a page names for its data (`*(NEW for v1.0) …*`), if any."""
    found = {match.group(1) for match in _RELEASE_NAMED.finditer(text)}
    return found.pop() if len(found) == 1 else None


def harvest_document(text: str, document: TrtllmDocument, catalogs: Catalogs) -> list[Harvested]:
    """Every cell of the page's throughput tables, as a result or a skip; the engine version is
    the release the page names, else the documentation commit read."""
    named = release_named(text)
    if document.engine_version is None and named is not None:
        document = dataclasses.replace(document, engine_version=named, release_from_page=True)
    cells, requests, refused = parse_tables(text)
    if not cells and not refused:
        raise HarvestError("no throughput table found (| Sequence Length (ISL/OSL) | …)")
    rows = [harvest_cell(cell, requests, document, catalogs, text) for cell in cells]
    rows += [
        Harvested(
            f"trtllm {document.revision[:12]} {heading}",
            skipped="unit is neither output tokens/s per GPU nor the page's stated total",
        )
        for heading in refused
    ]
    return rows
