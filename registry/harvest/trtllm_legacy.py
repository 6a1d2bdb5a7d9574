"""TensorRT-LLM's performance overview in its 0.1x layout (`docs/source/performance/`).

One table, headed `| Throughput (tokens / sec) | | GPU | <GPU> | …`, a precision row under
the GPU names, then rows of model, tensor parallel size and `ISL, OSL` (model and TP carried
down from the row above when empty). The sentence "All data in the table below was generated
using version X" names the engine version; a `$num_requests` table gives the request count of
each length pair; an FP8 engine's KV cache is FP8 ("If you specify FP8 quantization, the KV
cache will automatically be set to FP8 as well").

Each cell is one offline result (total output tokens/s of the deployment, exactly as printed),
with the GPU count equal to the tensor parallel size. Results that an earlier importer wrote
from the same page (their conditions say "Table row: model …") are recognised by the same
source key, so harvesting replaces them with a correction.
"""

import re
from functools import partial

from infermeter.registry.catalog import gpu_named
from infermeter.registry.harvest.errors import HarvestError, RowSkipped
from infermeter.registry.harvest.markdown_table import printed_figure, row_cells
from infermeter.registry.harvest.outcome import Harvested
from infermeter.registry.harvest.reported import (
    Catalogs,
    Deployment,
    fixed_lengths,
    harvest_row,
    offline_point,
    reported_result,
)
from infermeter.registry.harvest.trtllm import TrtllmDocument
from infermeter.registry.harvest.trtllm_names import GPU_NAMES, PRECISIONS, TableCell
from infermeter.registry.models import (
    Result,
    ServingSettings,
)

DOCUMENT = "docs/source/performance/perf-overview.md"


MODELS: dict[str, str] = {
    "LLaMA v3.1 8B": "llama-3.1-8b-instruct",
    "LLaMA v3.1 70B": "llama-3.1-70b-instruct",
    "LLaMA v3.1 405B": "llama-3.1-405b-instruct",
    "Mixtral 8x7B": "mixtral-8x7b-instruct-v0.1",
    "LLaMA v3 70B": "llama-3-70b-instruct",
    "Mixtral 8x22B": "mixtral-8x22b-v0.1",
}
"""Row model names → catalog ids. The page does not say base or Instruct; the Instruct ids
have the same architecture (said in each result's conditions)."""

_CHECKPOINT_UNSTATED = (
    "The page does not say whether the base or the Instruct checkpoint was used; filed "
    "under the catalog's Instruct id (same architecture)."
)
CHECKPOINT_NOTES: dict[str, str] = {
    "Mixtral 8x22B": "The page does not say whether the base or the Instruct checkpoint was "
    "used; filed under the catalog's base id mixtral-8x22b-v0.1 (Instruct v0.1 differs only "
    "in its vocabulary: 32,768 tokens against the base's 32,000).",
}
"""What a row's conditions say of its checkpoint where it is not the Instruct default."""

_VERSION = re.compile(r"generated using version ([0-9][0-9.]*[0-9])")
_OLD_ROW = re.compile(
    r"Table row: model '(?P<model>[^']+)', tensor model parallel size (?P<tp>\d+), GPU column "
    r"'(?P<gpu>[^']+)', precision (?P<precision>\w+), runtime input/output lengths "
    r"(?P<isl>\d+), (?P<osl>\d+)"
)
_EARLY_014_ROW = re.compile(
    r"Table row: model '(?P<model>[^']+)', input/output lengths (?P<isl>\d+)/(?P<osl>\d+), TP "
    r"size (?P<tp>\d+), GPU column '(?P<gpu>[^']+)', precision (?P<precision>\w+)\."
)
"""How an earlier transcription of the 0.14 table (2026-11-30) named its row."""


MARK_014 = "**Input/Output Lengths**"
"""The 0.13/0.14 variant of the table: bold header cells, rows of model, `ISL/OSL`, TP size."""


def _plain(line: str) -> list[str]:
    return [cell.strip("*").strip() for cell in row_cells(line)]


def _parse_014(lines: list[str]) -> list[TableCell]:
    """The 0.14 table: a `GPU` row and a `Precision` row over the GPU columns, then rows of
    model and `ISL/OSL` (both carried down when empty) and TP size."""
    rows = [(index, _plain(line)) for index, line in enumerate(lines) if line.startswith("|")]
    start = next((i for i, (_, row) in enumerate(rows) if row[2:3] == ["GPU"]), None)
    if start is None or rows[start + 1][1][2:3] != ["Precision"]:
        raise HarvestError("no '| | | **GPU** |' row over a '**Precision**' row found")
    gpus, precisions = rows[start][1][3:], rows[start + 1][1][3:]
    cells: list[TableCell] = []
    model, lengths = "", ""
    for index, row in rows[start + 3 :]:
        if len(row) != len(gpus) + 3:
            break
        model, lengths = row[0] or model, row[1] or lengths
        pair = re.fullmatch(r"(\d+)/(\d+)", lengths)
        if pair is None or not row[2].isdigit():
            raise HarvestError(f"row {index + 1}: {lengths!r}, TP {row[2]!r} is no ISL/OSL and TP")
        for gpu, precision, printed in zip(gpus, precisions, row[3:], strict=True):
            if printed:
                cells.append(
                    TableCell(
                        model, precision, gpu, int(row[2]), int(pair[1]), int(pair[2]), printed
                    )
                )
    return cells


def parse_table(text: str) -> tuple[list[TableCell], dict[tuple[int, int], int], str | None]:
    """The table's cells, the request count per length pair, and the engine version stated."""
    lines = text.splitlines()
    version = _VERSION.search(text)
    if MARK_014 in text:
        return _parse_014(lines), _requests(lines), version.group(1) if version else None
    start = next(
        (i for i, line in enumerate(lines) if line.startswith("| Throughput (tokens")), None
    )
    if start is None:
        raise HarvestError("no '| Throughput (tokens / sec) |' table found")
    gpus = row_cells(lines[start])[3:]
    precisions = row_cells(lines[start + 2])[3:]
    cells: list[TableCell] = []
    model, tensor_parallel = "", 0
    index = start + 4
    while index < len(lines) and lines[index].startswith("|"):
        row = row_cells(lines[index])
        model = row[0] or model
        tensor_parallel = int(row[1]) if row[1] else tensor_parallel
        lengths = re.fullmatch(r"(\d+), (\d+)", row[2])
        if lengths is None:
            raise HarvestError(f"row {index + 1}: {row[2]!r} is no 'ISL, OSL' pair")
        for gpu, precision, printed in zip(gpus, precisions, row[3:], strict=False):
            if printed:
                cells.append(
                    TableCell(
                        model,
                        precision,
                        gpu,
                        tensor_parallel,
                        int(lengths[1]),
                        int(lengths[2]),
                        printed,
                    )
                )
        index += 1
    return cells, _requests(lines), version.group(1) if version else None


def _requests(lines: list[str]) -> dict[tuple[int, int], int]:
    requests: dict[tuple[int, int], int] = {}
    for line in lines:
        row = row_cells(line) if line.startswith("|") else []
        if len(row) == 4 and all(part.isdigit() for part in row):
            requests[(int(row[0]), int(row[1]))] = int(row[3])
    return requests


def cell_key(
    revision: str, model: str, tp: int, gpu: str, isl: int, osl: int, precision: str
) -> str:
    """The source key of a cell of this layout (the precision tells apart two columns of one GPU,
    as the 0.14 table's H100 FP8 and FP16)."""
    column = f"{gpu} {precision}".strip()
    return f"trtllm {revision[:12]} {model} | TP{tp} | {column} | {isl}/{osl}"


def result_key(result: Result) -> str | None:
    """The source key of a result from a page of this layout, by this importer or an earlier
    transcription of the 0.17 or the 0.14 table (None: another source)."""
    source = result.source
    revision = getattr(source, "revision", None) or _revision_in(getattr(source, "url", ""))
    conditions = getattr(source, "conditions", "")
    match = _OLD_ROW.search(conditions) or _EARLY_014_ROW.search(conditions)
    if revision is None or match is None:
        return None
    return cell_key(
        revision,
        match["model"],
        int(match["tp"]),
        match["gpu"],
        int(match["isl"]),
        int(match["osl"]),
        match["precision"],
    )


def _revision_in(url: str) -> str | None:
    match = re.search(r"/TensorRT-LLM/blob/([0-9a-f]{40})/", url)
    return match.group(1) if match else None


_Skip = RowSkipped


def _conditions(cell: TableCell, version: str, sent: int | None) -> str:
    return (
        f"TensorRT-LLM performance overview, 'Throughput Measurements' table: 'All data in the "
        f"table below was generated using version {version} and presents token throughput in "
        "tokens/second.' Requests fed at an infinite rate (no delay between messages): an "
        "offline maximum-throughput run (`trtllm-bench throughput`), all requests queued at "
        "once, the engine's batching deciding. "
        f"Table row: model '{cell.model}', tensor model parallel size {cell.tensor_parallel}, "
        f"GPU column '{cell.gpu}', precision {cell.precision}, runtime input/output lengths "
        f"{cell.input_len}, {cell.output_len}; value {cell.printed} as printed, output tokens "
        "per second of the whole deployment (the page's example output counts output tokens). "
        "Synthetic requests of random token ids, every one of the stated lengths "
        "(prepare_dataset.py token-norm-dist, standard deviations 0); "
        + (f"{sent} requests for this length pair per the page's table. " if sent else
           "no request count stated for this length pair. ")
        + ("FP8 engines use an FP8 KV cache, as the page says. " if cell.precision == "FP8"
           else "")
        + CHECKPOINT_NOTES.get(cell.model, _CHECKPOINT_UNSTATED)
    )  # fmt: skip


def _result(
    cell: TableCell,
    requests: dict[tuple[int, int], int],
    version: str,
    document: TrtllmDocument,
    catalogs: Catalogs,
    key: str,
) -> Result:
    gpus, models = catalogs
    model_id = MODELS.get(cell.model)
    if model_id is None or model_id not in models:
        raise _Skip(f"model {cell.model!r} has no catalog id (or its version is not stated)")
    gpu = gpu_named(gpus, GPU_NAMES, cell.gpu)
    if gpu is None:
        raise _Skip(f"GPU column {cell.gpu!r} has no catalog id")
    value = printed_figure(cell.printed)
    precision = PRECISIONS.get(cell.precision)
    if precision is None:
        raise _Skip(f"precision {cell.precision!r} is neither FP8 nor FP16")
    sent = requests.get((cell.input_len, cell.output_len))
    count = cell.tensor_parallel
    serving = ServingSettings(tensor_parallel_size=count)
    deployment = Deployment(
        gpu, count, "tensorrt-llm", version, models[model_id], precision, None, serving
    )
    identity = deployment.identity(fixed_lengths(cell.input_len, cell.output_len))
    source = document.source(
        f"TensorRT-LLM {version} Performance Overview: throughput table",
        _conditions(cell, version, sent),
        key,
    )
    return reported_result(identity, [offline_point(value, sent)], source)


def harvest_document(text: str, document: TrtllmDocument, catalogs: Catalogs) -> list[Harvested]:
    """Every cell of the page's throughput table, as a result or a skip."""
    cells, requests, version = parse_table(text)
    if version is None:
        raise HarvestError("the page does not say which version generated the table")
    rows = []
    for cell in cells:
        key = cell_key(
            document.revision,
            cell.model,
            cell.tensor_parallel,
            cell.gpu,
            cell.input_len,
            cell.output_len,
            cell.precision,
        )
        make = partial(_result, cell, requests, version, document, catalogs, key)
        rows.append(harvest_row(key, make))
    return rows
