"""TensorRT-LLM's performance page of the 0.5–0.9 releases (`docs/source/performance.md`, later
`docs/source/performance/perf-overview.md`): static batches.

Under `## Peak Throughput`, one table per GPU and precision (`### H100 GPUs (FP8)`), rows of
model, batch size, tensor parallel size, input and output length and `Throughput (out tok/s/GPU)`.
The page names the release that generated the data ("This data has been updated for v0.6.1,
unless specified", "All data was generated using version 0.9.0"); a table marked with `*` says
its own ("The following data is from TensorRT-LLM v0.5."). These releases benchmarked static
batches ("reference data at large batch sizes"): the batch size is the number of requests run
together, each of the stated lengths, so a cell is a `static_batch` point of concurrency = batch
size (not a closed loop: the page does not say that a new request enters as one finishes), per
GPU × TP GPUs for the deployment. FP8 engines are built with an FP8 KV cache, as the
page's build flags (`--enable_fp8 --fp8_kv_cache`, 0.6) or engine configs
(`"kv_cache_quant_algo": "FP8"`, 0.9) say.

Skipped, with the reason: the `## Low Latency` tables (one "1st Token Latency (ms)" per row at
batch 1, without saying which statistic of how many runs it is), an A100 table (the page does not
say 40 or 80 GB, SXM or PCIe), and models without a catalog id or with an unstated version.
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
    cell_marker,
    fixed_lengths,
    harvest_row,
    marked_key,
    reported_result,
)
from infermeter.registry.harvest.trtllm import TrtllmDocument
from infermeter.registry.harvest.trtllm_names import (
    GPU_NAMES,
    PRECISIONS,
    TableCell,
)
from infermeter.registry.models import (
    GpuEntry,
    Load,
    LoadPoint,
    ModelEntry,
    RequestCounts,
    Result,
    ServingSettings,
    Throughput,
    TokenCounts,
)

DOCUMENT = "docs/source/performance.md"
MARK = "| Throughput (out tok/s/GPU) |"
"""The header cell that tells this layout from the later ones."""


GPU_NOTES: dict[str, str] = {
    "H100": "The table names the GPU 'H100'; the page benchmarks 'an H100-HBM3-80GB system', "
    "the SXM part. ",
    "H200": "The table names the GPU 'H200' without a form factor; filed as the SXM part, the "
    "only H200 before the H200 NVL of November 2024. ",
}
"""What each result says about how its GPU column was matched to a catalog id."""

MODELS: dict[str, str] = {
    "GPT-J 6B": "gpt-j-6b",
    # The page's methodology names "the GPT-J, Llama2-7b, and Llama2-70b benchmarks".
    "LLaMA 70B": "llama-2-70b-chat",
    "LLaMA 7B": "llama-2-7b-chat",
    "Mixtral 8x7B": "mixtral-8x7b-instruct-v0.1",
}
"""Row model names → catalog ids. The page does not say base, chat or instruct weights; the
ids used have the same architecture (said in each result's conditions)."""

_PAGE_VERSION = re.compile(
    r"(?:updated for v|generated using version )(?P<version>[0-9]+(?:\.[0-9]+)+)"
)
_TABLE_VERSION = re.compile(r"data is from TensorRT-LLM v(?P<version>[0-9]+(?:\.[0-9]+)*)")
_HEADING = re.compile(r"^### (?P<gpu>\S+) GPUs \((?P<precision>FP8|FP16)\)")


@dataclass(frozen=True)
class StaticCell(TableCell):
    """One row of a throughput table: the table's GPU and precision, the row's model, TP,
    lengths and value, and what the page says beside it: the release and the batch size."""

    version: str
    batch: int

    def name(self) -> str:
        return (
            f"{self.gpu} {self.precision} | {self.model} | batch {self.batch} TP"
            f"{self.tensor_parallel} | {self.input_len}/{self.output_len}"
        )


def parse_page(text: str) -> tuple[list[StaticCell], list[str]]:
    """The cells of the `## Peak Throughput` tables headed 'Throughput (out tok/s/GPU)', and the
    headings of the tables not imported: the `## Low Latency` tables, and throughput tables in
    another unit (marked ` unit '…'`)."""
    page_version = _PAGE_VERSION.search(text)
    if page_version is None:
        raise HarvestError("the page does not say which release generated its data")
    lines = text.splitlines()
    cells: list[StaticCell] = []
    latency: list[str] = []
    section = heading = precision = version = unit = ""
    for index, line in enumerate(lines):
        if line.startswith("## "):
            section = line[3:].strip()
        heading_match = _HEADING.match(line)
        if heading_match:
            heading, precision = heading_match["gpu"], heading_match["precision"]
            version = page_version["version"]
            continue
        own = _TABLE_VERSION.search(line)
        if own and heading:
            version = own["version"]
        if line.startswith("| Model") and "1st Token Latency" in line:
            latency.append(f"{heading} {precision}")
            continue
        if not (section.startswith("Peak Throughput") and heading and line.startswith("|")):
            continue
        row = row_cells(line)
        if len(row) == 6 and row[0] == "Model":
            unit = row[5]
            if unit != MARK.strip("| "):
                latency.append(f"{heading} {precision} unit {unit!r}")
            continue
        if len(row) != 6 or not row[0] or row[0].startswith(":") or unit != MARK.strip("| "):
            continue
        numbers = row[1:5]
        if not all(part.isdigit() for part in numbers):
            raise HarvestError(f"line {index + 1}: {line.strip()!r} is no throughput row")
        batch, tp, isl, osl = (int(part) for part in numbers)
        cells.append(
            StaticCell(
                row[0], precision, heading, tp, isl, osl, row[5], version=version, batch=batch
            )
        )
    return cells, latency


def cell_key(revision: str, cell: StaticCell) -> str:
    """The source key of a cell of this layout."""
    return f"trtllm {revision[:12]} static {cell.name()}"


def result_key(result: Result) -> str | None:
    """The source key of a result from a page of this layout (None: another source)."""
    return marked_key(result, "static")


def _fp8_kv_cache_evidence(page: str) -> str | None:
    """Where the page says its FP8 engines have an FP8 KV cache (None: it does not)."""
    if "--enable_fp8 --fp8_kv_cache" in page:
        return "the page's build flags --enable_fp8 --fp8_kv_cache"
    if '"kv_cache_quant_algo": "FP8"' in page:
        return 'the page\'s engine configs set "kv_cache_quant_algo": "FP8"'
    return None


def _catalog_entries(
    cell: StaticCell, gpus: dict[str, GpuEntry], models: dict[str, ModelEntry]
) -> tuple[GpuEntry, ModelEntry]:
    gpu = gpu_named(gpus, GPU_NAMES, cell.gpu)  # `### H100 GPUs (FP8)`; an A100 is not told apart
    if gpu is None:
        raise RowSkipped(
            f"GPU {cell.gpu!r} has no catalog id"
            + (" (the page does not say which A100: 40 or 80 GB, SXM or PCIe)"
               if cell.gpu == "A100" else "")
        )  # fmt: skip
    model_id = MODELS.get(cell.model)
    if model_id is None or model_id not in models:
        raise RowSkipped(f"model {cell.model!r} has no catalog id (or its version is not stated)")
    return gpu, models[model_id]


def _conditions(cell: StaticCell, per_gpu: float, kv_evidence: str | None, model_id: str) -> str:
    count = cell.tensor_parallel
    return (
        f"TensorRT-LLM performance page, 'Peak Throughput' table '{cell.gpu} GPUs "
        f"({cell.precision})', data of TensorRT-LLM {cell.version} as the page states it: model "
        f"'{cell.model}', batch size {cell.batch}, TP {cell.tensor_parallel}, input length "
        f"{cell.input_len}, output length {cell.output_len}: {cell.printed} output tokens per "
        f"second per GPU as printed ('Throughput (out tok/s/GPU)'); stored as {per_gpu:g} × "
        f"{count} GPU{'s' if count > 1 else ''} = {per_gpu * count:g} output tokens/s for the "
        f"deployment. A static batch, the page's 'reference data at large batch sizes': "
        f"{cell.batch} requests run together, each of exactly these lengths (not in-flight "
        "batching), stored as a static batch of that size. The page does not describe "
        "the prompts' content. "
        + GPU_NOTES.get(cell.gpu, "")
        + (f"FP8 engine with an FP8 KV cache ({kv_evidence}). " if cell.precision == "FP8"
           else "FP16 engine. ")
        + f"The page does not say which weights of '{cell.model}' (base, chat or instruct); "
        f"filed under the catalog's {model_id} (same architecture). "
        + cell_marker("static", cell.name())
    )  # fmt: skip


def _result(
    cell: StaticCell,
    page: str,
    document: TrtllmDocument,
    catalogs: Catalogs,
    key: str,
) -> Result:
    gpu, model = _catalog_entries(cell, *catalogs)
    per_gpu = printed_figure(cell.printed)
    count = cell.tensor_parallel
    kv_evidence = _fp8_kv_cache_evidence(page)
    if cell.precision == "FP8" and kv_evidence is None:
        raise RowSkipped("the page does not say how its FP8 engines store the KV cache")
    precision = PRECISIONS[cell.precision]
    serving = ServingSettings(tensor_parallel_size=count)
    deployment = Deployment(
        gpu, count, "tensorrt-llm", cell.version, model, precision, None, serving
    )
    point = LoadPoint(
        load=Load(arrival="static_batch", concurrency=cell.batch),
        requests=RequestCounts(),
        tokens=TokenCounts(),
        throughput=Throughput(output_tokens_per_s=per_gpu * count),
    )
    source = document.source(
        f"TensorRT-LLM {cell.version} performance: {cell.gpu} GPUs ({cell.precision})",
        _conditions(cell, per_gpu, kv_evidence, model.id),
        key,
    )
    identity = deployment.identity(fixed_lengths(cell.input_len, cell.output_len))
    return reported_result(identity, [point], source)


def harvest_document(text: str, document: TrtllmDocument, catalogs: Catalogs) -> list[Harvested]:
    """Every cell of the page's throughput tables, as a result or a skip; each latency table
    as one skip."""
    cells, latency = parse_page(text)
    rows = []
    for cell in cells:
        key = cell_key(document.revision, cell)
        rows.append(harvest_row(key, partial(_result, cell, text, document, catalogs, key)))
    rows += [
        Harvested(
            f"trtllm {document.revision[:12]} static {'table' if ' unit ' in table else 'latency'} "
            f"{table}",
            skipped="a throughput table headed other than 'Throughput (out tok/s/GPU)': per GPU "
            "or per deployment is not told apart (a later version of the page heads the same "
            "figures per GPU)"
            if " unit " in table
            else "'1st Token Latency (ms)' at batch 1: the page does not say which statistic "
            "(mean, median, one run) it is",
        )
        for table in latency
    ]
    return rows
