"""NVIDIA TensorRT-LLM's performance overview (`docs/source/developer-guide/perf-overview.md`).

Read: the per-GPU throughput tables of the 1.x documents. Each model has a heading (`# Qwen3
235B A22B`) and a table whose first column is `Sequence Length (ISL/OSL)` and whose other
columns name a GPU, its parallelism and its precision (`B200<br/>DEP4 (FP4)`; the RTX PRO 6000
tables name the GPU count instead, `**2 GPUs**<br/>TP1,PP2 (FP4)`). The unit under the table
must be output tokens per second per GPU. The `Number of Requests` table gives the request
count of each length pair.

Each non-empty cell becomes one result with one offline point (the page runs `trtllm-bench
throughput`, "an offline maximum throughput scenario such that all requests are queued in rapid
succession"): fixed input and output lengths (random tokens, standard deviation 0), the GPU count
of the column, TP/PP as `TPn`/`PPm`, `DEPn` as attention data parallel n with expert parallel n.
The page states per-GPU figures; a result stores its deployment's throughput, so the value is
multiplied by the GPU count (the index divides it back, exactly) and the conditions say so.
Precision goes to `model.quantization` as stated (`fp4`, `fp8`).
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from registry.harvest.errors import HarvestError, RowSkipped, validated_result
from registry.harvest.outcome import Harvested
from registry.models import GpuEntry, ModelEntry, Result

DOCUMENT = "docs/source/developer-guide/perf-overview.md"

GPUS: dict[str, str] = {
    "B200": "b200",
    "GB200": "gb200",
    "H200": "h200-sxm",
    "H100": "h100-sxm",
    "B300* (beta)": "b300",
    "GB300* (beta)": "gb300",
}
"""Column GPU names → catalog ids (the page's hardware list: DGX H100/H200/B200/B300, NVL72)."""

RTX_SUFFIX = " - RTX 6000 Pro Blackwell Server Edition"
RTX_GPU = "rtx-pro-6000"

MODELS: dict[str, tuple[str, dict[str, str]]] = {
    "Deepseek R1 0528": (
        "deepseek-r1",
        {"FP4": "nvidia/DeepSeek-R1-0528-NVFP4-v2", "FP8": "deepseek-ai/DeepSeek-R1-0528"},
    ),
    "GPT-OSS 120B": ("gpt-oss-120b", {}),
    "GPT-OSS 20B": ("gpt-oss-20b", {}),
    "LLaMA v3.3 70B": (
        "llama-3.3-70b-instruct",
        {"FP4": "nvidia/Llama-3.3-70B-Instruct-FP4", "FP8": "nvidia/Llama-3.3-70B-Instruct-FP8"},
    ),
    "LLaMA v4 Maverick": (
        "llama-4-maverick-17b-128e-instruct",
        {
            "FP4": "nvidia/Llama-4-Maverick-17B-128E-Instruct-NVFP4",
            "FP8": "nvidia/Llama-4-Maverick-17B-128E-Instruct-FP8",
        },
    ),
    "Qwen3 235B A22B": (
        "qwen3-235b-a22b",
        {"FP4": "nvidia/Qwen3-235B-A22B-FP4", "FP8": "nvidia/Qwen3-235B-A22B-FP8"},
    ),
    "Qwen3 30B A3B": ("qwen3-30b-a3b", {"FP4": "nvidia/Qwen3-30B-A3B-FP4"}),
}
"""Table headings → (model catalog id, the checkpoint per precision the page's model lists
name; a precision not listed uses the catalog's repository)."""

_COLUMN = re.compile(
    r"^(?:\*\*(?P<gpus>\d+) GPUs\*\*|(?P<gpu>.+?))<br/>(?P<par>[A-Z0-9,]+) \((?P<prec>FP\d+)\)$"
)
_PARALLEL = re.compile(r"^(?P<kind>TP|DEP)(?P<n>\d+)(?:,PP(?P<pp>\d+))?$")
_LENGTHS = re.compile(r"^(\d+)/(\d+)$")


@dataclass(frozen=True)
class TrtllmDocument:
    """Where one version of the page was read and how it is cited."""

    revision: str
    url: str
    engine_version: str | None
    retrieved_for: Callable[[str], str]
    submitter: str

    def source(self, title: str, conditions: str, key: str) -> dict[str, Any]:
        """A result's `source` for one cell of this page: NVIDIA's reported figure."""
        return {
            "kind": "reported",
            "url": self.url,
            "title": title,
            "publisher": "NVIDIA",
            "conditions": conditions,
            "retrieved": self.retrieved_for(key),
            "submitter": self.submitter,
            "revision": self.revision,
        }


@dataclass(frozen=True)
class Cell:
    """One non-empty table cell: heading, column, length pair and value as printed."""

    heading: str
    column: str
    input_len: int
    output_len: int
    printed: str


def _cells_of(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def parse_tables(text: str) -> tuple[list[Cell], dict[tuple[int, int], int], list[str]]:
    """The cells of every per-GPU table, the request count per length pair, and the headings
    of tables whose unit is not output tokens per second per GPU."""
    lines = text.splitlines()
    cells: list[Cell] = []
    requests: dict[tuple[int, int], int] = {}
    refused: list[str] = []
    heading = ""
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("# "):
            heading = line[2:].strip()
        if line.startswith("| Input Length | Output Length | Number of Requests"):
            index += 2
            while index < len(lines) and lines[index].startswith("|"):
                row = _cells_of(lines[index])
                if len(row) == 3 and all(part.isdigit() for part in row):
                    requests[(int(row[0]), int(row[1]))] = int(row[2])
                index += 1
            continue
        if line.startswith("| Sequence Length (ISL/OSL) |"):
            columns = _cells_of(line)[1:]
            index += 2
            table: list[Cell] = []
            while index < len(lines) and lines[index].startswith("|"):
                row = _cells_of(lines[index])
                lengths = _LENGTHS.match(row[0])
                if lengths is None:
                    raise HarvestError(f"table {heading!r}: row {row[0]!r} is no ISL/OSL pair")
                for column, printed in zip(columns, row[1:], strict=False):
                    if printed:
                        table.append(
                            Cell(heading, column, int(lengths[1]), int(lengths[2]), printed)
                        )
                index += 1
            unit = next((text for text in lines[index : index + 3] if text.strip()), "")
            if "per second per GPU" in unit:
                cells.extend(table)
            else:
                refused.append(heading)
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


def _value(printed: str) -> float:
    try:
        return float(printed.replace(",", ""))
    except ValueError:
        raise _Skip(f"value {printed!r} is not a number") from None


def _deployment(cell: Cell) -> tuple[str, int, dict[str, int], str]:
    column = _COLUMN.match(cell.column)
    if column is None:
        raise _Skip(f"column {cell.column!r} names no GPU, parallelism and precision")
    parallel = _PARALLEL.match(column["par"])
    if parallel is None:
        raise _Skip(f"parallelism {column['par']!r} is not TPn, DEPn or either with ,PPm")
    size, pipeline = int(parallel["n"]), int(parallel["pp"] or 1)
    serving: dict[str, int] = {}
    if parallel["kind"] == "TP":
        serving["tensor_parallel_size"] = size
    else:
        serving |= {"data_parallel_size": size, "expert_parallel_size": size}
    if parallel["pp"] is not None:
        serving["pipeline_parallel_size"] = pipeline
    count = size * pipeline
    if column["gpus"] is not None:
        if not cell.heading.endswith(RTX_SUFFIX):
            raise _Skip(f"column {cell.column!r} counts GPUs outside an RTX PRO 6000 table")
        if int(column["gpus"]) != count:
            raise _Skip(f"column {cell.column!r}: {column['gpus']} GPUs ≠ {column['par']}")
        gpu_id = RTX_GPU
    else:
        gpu_id = GPUS.get(column["gpu"], "")
        if not gpu_id:
            raise _Skip(f"GPU {column['gpu']!r} has no catalog id")
    return gpu_id, count, serving, column["prec"]


def harvest_cell(
    cell: Cell,
    requests: dict[tuple[int, int], int],
    document: TrtllmDocument,
    gpus: dict[str, GpuEntry],
    models: dict[str, ModelEntry],
) -> Harvested:
    """One table cell as a result, or skipped with its reason."""
    key = cell_key(document.revision, cell)
    try:
        return Harvested(key, result=_result(cell, requests, document, gpus, models, key))
    except _Skip as skip:
        return Harvested(key, skipped=str(skip))


def _result(
    cell: Cell,
    requests: dict[tuple[int, int], int],
    document: TrtllmDocument,
    gpus: dict[str, GpuEntry],
    models: dict[str, ModelEntry],
    key: str,
) -> Result:
    model_heading = cell.heading.removesuffix(RTX_SUFFIX)
    if model_heading not in MODELS:
        raise _Skip(f"table {cell.heading!r} names no model in the catalog mapping")
    model_id, checkpoints = MODELS[model_heading]
    if model_id not in models:
        raise _Skip(f"model {model_id} is not in the model catalog")
    gpu_id, count, serving, precision = _deployment(cell)
    if gpu_id not in gpus:
        raise _Skip(f"GPU {gpu_id} is not in the GPU catalog")
    per_gpu = _value(cell.printed)
    sent = requests.get((cell.input_len, cell.output_len))
    beta = "beta" in cell.column
    version = document.engine_version or f"docs@{document.revision[:12]}"
    conditions = (
        f"TensorRT-LLM performance overview, table '{cell.heading}', column "
        f"'{shown(cell.column)}' (line breaks as spaces), "
        f"row {cell.input_len}/{cell.output_len}: {cell.printed} output tokens per second per "
        f"GPU as printed (the page's unit); stored as {per_gpu:g} × {count} GPUs = "
        f"{per_gpu * count:g} output tokens/s for the deployment. `trtllm-bench throughput` "
        "with the PyTorch backend: an offline maximum-throughput run, all requests queued in "
        "rapid succession; synthetic requests of random token ids, every one "
        f"{cell.input_len} input and {cell.output_len} output tokens (prepare_dataset.py "
        "token-norm-dist, standard deviations 0); "
        + (f"{sent} requests for this length pair per the page's table. " if sent else
           "the page gives no request count for this length pair. ")
        + f"Precision {precision} as the column states it; checkpoint "
        f"{checkpoints.get(precision, models[model_id].hf_repo)}. "
        + ("DEP = attention data parallel with expert parallelism over the same GPUs. "
           if "data_parallel_size" in serving else "")
        + ("The page marks B300/GB300 support as beta: not finalized. " if beta else "")
        + ("" if document.engine_version else
           "The page does not name the TensorRT-LLM release; the engine version names the "
           "documentation commit read. ")
        + f"[cell: {cell.heading} | {shown(cell.column)} | {cell.input_len}/{cell.output_len}]"
    )  # fmt: skip
    point: dict[str, Any] = {
        "load": {"arrival": "offline"},
        "requests": {"sent": sent} if sent else {},
        "tokens": {},
        "throughput": {"output_tokens_per_s": per_gpu * count},
    }
    if beta:
        point["validity"] = [
            {"code": "beta-hardware", "message": "the page marks this GPU's support as beta"}
        ]
    data = {
        "identity": {
            "gpu": {"id": gpu_id, "count": count, "form_factor": gpus[gpu_id].form_factor},
            "engine": {"name": "tensorrt-llm", "version": version},
            "model": {
                "id": model_id,
                "hf_repo": checkpoints.get(precision, models[model_id].hf_repo),
                "quantization": precision.lower(),
            },
            "serving": serving,
            "workload": {
                "profile": "custom",
                "input_len": {"kind": "fixed", "value": cell.input_len},
                "output_len": {"kind": "fixed", "value": cell.output_len},
            },
        },
        "slo": {},
        "points": [point],
        "source": document.source(
            f"TensorRT-LLM Performance Overview: {cell.heading}", conditions, key
        ),
    }
    return validated_result(data)


def harvest_document(
    text: str,
    document: TrtllmDocument,
    gpus: dict[str, GpuEntry],
    models: dict[str, ModelEntry],
) -> list[Harvested]:
    """Every cell of the page's per-GPU tables, as a result or a skip."""
    cells, requests, refused = parse_tables(text)
    if not cells and not refused:
        raise HarvestError("no per-GPU throughput table found (| Sequence Length (ISL/OSL) | …)")
    rows = [harvest_cell(cell, requests, document, gpus, models) for cell in cells]
    rows += [
        Harvested(f"trtllm {document.revision[:12]} {heading}", skipped="unit is not per GPU")
        for heading in refused
    ]
    return rows
