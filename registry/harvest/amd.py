"""AMD's ROCm vLLM performance results: the tables of `docs/dev-docker/README.md` in ROCm/vllm.

The README of AMD's ROCm vLLM docker image is rewritten for every image release; each version
states the image's software ("The pre-built image includes: … vLLM 0.9.1"), the release (the
newest entry of its changelog, e.g. `20250715_aiter`) and two tables for the GPU its title
names (MI300X):

- **Throughput** (`| Model | Precision | TP Size | Input | Output | Num Prompts | Max Num Seqs |
  Throughput (tokens/s) |`): vLLM's `benchmark_throughput.py` / `vllm bench throughput`, an
  offline run (every prompt handed to the engine at once). Each row becomes one offline point
  with `requests.sent` = Num Prompts and `serving.max_num_seqs` = Max Num Seqs. The table says
  "tokens/s" and not which tokens; the figure is stored as prompt + output tokens per second
  (see `TOTAL_TOKENS_EVIDENCE`) and never turned into an output rate.
- **Latency** (`| Model | Precision | TP Size | Batch Size | Input | Output | MI300X Latency
  (sec) |`, `(ms)` in early versions): vLLM's `benchmark_latency.py` / `vllm bench latency`, a
  static batch of Batch Size requests started together, timed to the end of the batch. Each
  row becomes one `static_batch` point whose `e2e_ms.mean` is the stated latency (vLLM reports
  the mean over its timed iterations); no throughput or per-token figure is derived from it.

The model column names the model and its checkpoint (`Llama 3.1 70B
(amd/Llama-3.1-70B-Instruct-FP8-KV)`); a row whose name and checkpoint disagree (early latency
tables label Llama 3.1 405B rows with the 70B checkpoint) is skipped, not guessed. TP Size is
the GPU count (one replica over all its GPUs).
"""

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from infermeter.registry.catalog import gpu_named
from infermeter.registry.harvest.errors import HarvestError, RowSkipped
from infermeter.registry.harvest.markdown_table import printed_figure, row_cells
from infermeter.registry.harvest.options import HarvestOptions
from infermeter.registry.harvest.outcome import Harvested, HarvestReport
from infermeter.registry.harvest.reported import (
    Catalogs,
    Deployment,
    Precision,
    fixed_lengths,
    harvest_row,
    reported_result,
    table_point,
)
from infermeter.registry.harvest.sources import AMD, NOT_CITED, FileCitation
from infermeter.registry.harvest.tree import SourceTree
from infermeter.registry.input_files import read_input_text
from infermeter.registry.models import (
    GpuEntry,
    LatencyStats,
    Load,
    LoadPoint,
    ModelEntry,
    ReportedSource,
    Result,
    ServingSettings,
    Throughput,
    Verdict,
)

DOCUMENT = "docs/dev-docker/README.md"
REPOSITORY_URL = "https://github.com/ROCm/vllm"

GPU_NAMES = AMD.gpu_names
"""The source whose names (the GPU in the README's title and latency header, `MI300X`) the GPU
catalog lists (`GpuEntry.source_names`)."""

MODELS: dict[str, str] = {
    "Llama 3.1 8B": "llama-3.1-8b-instruct",
    "Llama 3.1 70B": "llama-3.1-70b-instruct",
    "Llama 3.1 405B": "llama-3.1-405b-instruct",
}
"""Model names of the tables → model catalog ids."""

TOTAL_TOKENS_EVIDENCE = (
    "The table heads the figure 'Throughput (tokens/s)' without saying whether prompt tokens "
    "count; it is stored as prompt + output tokens per second because the JSON that vLLM's "
    "throughput benchmark writes (--output-json, as in the README's commands) holds one token "
    "rate, tokens_per_second = (prompt + output tokens) / elapsed time (ROCm/vllm "
    "benchmarks/benchmark_throughput.py at v0.8.5+rocm, 166d0ef4), and the report that AMD's "
    "ROCm documentation gives for reproducing these tables writes that value as throughput_tot "
    "(ROCm/MAD scripts/vllm/vllm_benchmark_report.py at a86030da as a whole number, "
    "scripts/vllm/run_vllm.py at 0b753d4e unrounded; defined in ROCm/ROCm "
    "docs/how-to/rocm-for-ai/inference/vllm-benchmark.rst at 2a46a677) beside throughput_gen, "
    "which it always truncates to a whole number, while the tables print one decimal since "
    "March 2025. "
)

_TITLE_GPU = re.compile(r"^# .*AMD Instinct™? (MI\d{3}X)\b", re.MULTILINE)
_SYSTEM = re.compile(r"^.*\b\d+x AMD Instinct MI\d{3}X\b.*GPUs.*$")
_MODEL = re.compile(r"^(?P<name>.+?) \((?P<repo>[\w.-]+/[\w.-]+)\)$")
_RELEASE = re.compile(r"^(\d{8}(?:_aiter)?|rocm[\w.]+_vllm_[\w.]+):\s*$", re.MULTILINE)
_THROUGHPUT_HEADER = (
    "| Model | Precision | TP Size | Input | Output | Num Prompts | Max Num Seqs | "
    "Throughput (tokens/s) |"
)
_LATENCY_HEADER = re.compile(
    r"^\| Model \| Precision \| TP Size \| Batch Size \| Input \| Output \| "
    r"(?P<gpu>MI\d{3}X) Latency \((?P<unit>sec|ms)\) \|$"
)


@dataclass(frozen=True)
class AmdRow:
    """One row of a table, its model cell filled down from the rows above."""

    table: str
    """`throughput` or `latency`."""
    model: str
    precision: str
    tp: int
    input_len: int
    output_len: int
    size: int
    """Num Prompts (throughput) or Batch Size (latency)."""
    max_num_seqs: int | None
    printed: str
    unit: str
    """`tokens/s`, `sec` or `ms`, as the header states it."""
    gpu: str | None = None
    """The GPU a latency header names (`MI300X Latency (sec)`)."""
    system: str | None = None
    """The system line printed under the table (`Supermicro AS-8125GS-TNMR2 with …`)."""


@dataclass(frozen=True)
class AmdDocument:
    """One version of the README: what it states about the image, and how it is cited."""

    revision: str
    gpu: str
    vllm_version: str
    rocm_version: str | None
    release: str | None
    scripts_note: str | None
    retrieved_for: Callable[[str], str]
    submitter: str
    url: str = ""

    def engine_version(self) -> str:
        """vLLM's version with the image release: two images of one vLLM version differ."""
        if self.release is None:
            return self.vllm_version
        return f"{self.vllm_version} (ROCm image {self.release})"

    def source(self, title: str, conditions: str, key: str) -> ReportedSource:
        """A row's citation: AMD's README at the revision read."""
        return ReportedSource(
            kind="reported",
            url=self.url or f"{REPOSITORY_URL}/blob/{self.revision}/{DOCUMENT}",
            title=title,
            publisher="AMD",
            conditions=conditions,
            retrieved=self.retrieved_for(key),
            submitter=self.submitter,
            revision=self.revision,
        )


def _integer(text: str, what: str, line: str) -> int:
    if not text.isdigit():
        raise HarvestError(f"{DOCUMENT}: {what} {text!r} is not a whole number in {line!r}")
    return int(text)


def parse_tables(text: str) -> list[AmdRow]:
    """Every row of the throughput and latency tables, in the order of the page."""
    lines = text.splitlines()
    rows: list[AmdRow] = []
    index = 0
    while index < len(lines):
        line = lines[index].strip()
        latency = _LATENCY_HEADER.match(line)
        if line != _THROUGHPUT_HEADER and latency is None:
            index += 1
            continue
        table = "throughput" if latency is None else "latency"
        unit = "tokens/s" if latency is None else latency["unit"]
        model = precision = tp = ""
        index += 2  # the header and its |---| line
        table_rows: list[AmdRow] = []
        while index < len(lines) and lines[index].startswith("|"):
            cells = row_cells(lines[index])
            width = 8 if table == "throughput" else 7
            if len(cells) != width:
                raise HarvestError(f"{DOCUMENT}: {table} row has {len(cells)} cells, not {width}")
            model, precision, tp = cells[0] or model, cells[1] or precision, cells[2] or tp
            if not model:
                raise HarvestError(f"{DOCUMENT}: {table} table's first row names no model")
            row = lines[index]
            if table == "throughput":
                input_len, output_len, size, seqs, printed = cells[3:8]
                max_num_seqs: int | None = _integer(seqs, "Max Num Seqs", row)
            else:
                size_text, input_len, output_len, printed = cells[3:7]
                size, max_num_seqs = size_text, None
            table_rows.append(
                AmdRow(
                    table=table,
                    model=model,
                    precision=precision,
                    tp=_integer(tp, "TP Size", row),
                    input_len=_integer(input_len, "Input", row),
                    output_len=_integer(output_len, "Output", row),
                    size=_integer(size, "Num Prompts" if latency is None else "Batch Size", row),
                    max_num_seqs=max_num_seqs,
                    printed=printed,
                    unit=unit,
                    gpu=None if latency is None else latency["gpu"],
                )
            )
            index += 1
        system = _system_below(lines, index)
        rows += [dataclasses.replace(row, system=system) for row in table_rows]
    return rows


def _system_below(lines: list[str], index: int) -> str | None:
    """The system line between a table and the next heading or table, if any."""
    while index < len(lines) and not lines[index].startswith(("#", "|")):
        if _SYSTEM.match(lines[index].strip()):
            return lines[index].strip()
        index += 1
    return None


def _section(text: str, heading: str) -> str:
    start = text.find(heading)
    return "" if start < 0 else text[start:]


def _listed(text: str, name: str) -> str | None:
    """`0.9.1` from the image's component line `- vLLM 0.9.1`."""
    block = _section(text, "The pre-built image includes:")
    match = re.search(rf"^- {name}™? v?(\S+)\s*$", block, re.MULTILINE)
    return match.group(1) if match else None


def describe(
    text: str, revision: str, retrieved_for: Callable[[str], str], submitter: str, url: str = ""
) -> AmdDocument:
    """What one version of the README states about its image, GPU and runs."""
    title = _TITLE_GPU.search(text)
    if title is None:
        raise HarvestError(f"{DOCUMENT}: the title names no AMD Instinct GPU")
    vllm_version = _listed(text, "vLLM")
    if vllm_version is None:
        raise HarvestError(f"{DOCUMENT}: 'The pre-built image includes:' names no vLLM version")
    release = _RELEASE.search(_section(text, "## Changelog") or text)
    note = re.search(r"^\*Note (Benchmarks were run with benchmark scripts from [^*]+)\*$",
                     text, re.MULTILINE)  # fmt: skip
    return AmdDocument(
        revision=revision,
        gpu=title.group(1),
        vllm_version=vllm_version,
        rocm_version=_listed(text, "ROCm"),
        release=release.group(1) if release else None,
        scripts_note=re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", note.group(1)) if note else None,
        retrieved_for=retrieved_for,
        submitter=submitter,
        url=url,
    )


def _row_text(row: AmdRow) -> str:
    size = f"{'prompts' if row.table == 'throughput' else 'batch'} {row.size}"
    lengths = f"{row.input_len}/{row.output_len}"
    return f"{row.table} | {row.model} | TP{row.tp} | {lengths} | {size}"


def row_key(revision: str, row: AmdRow) -> str:
    """The source key of a row: README revision, table, model, TP, lengths, prompts or batch."""
    return f"amd {revision[:12]} {_row_text(row)}"


def result_key(result: Result) -> str | None:
    """The source key of a result harvested from the README (None: not from it)."""
    source = result.source
    match = re.search(r"\[row: (.+?)\]", getattr(source, "conditions", ""))
    revision = getattr(source, "revision", None)
    if match is None or revision is None or getattr(source, "publisher", "") != "AMD":
        return None
    return f"amd {revision[:12]} {match.group(1)}"


def _checkpoint(row: AmdRow, models: dict[str, ModelEntry]) -> tuple[ModelEntry, str, str]:
    """(The catalog model, its name in the table, the checkpoint the row names)."""
    named = _MODEL.match(row.model)
    if named is None:
        raise RowSkipped(f"model {row.model!r} names no checkpoint in parentheses")
    name, repo = named["name"], named["repo"]
    model_id = MODELS.get(name)
    if model_id is None:
        raise RowSkipped(f"model {name!r} has no catalog mapping")
    if model_id not in models:
        raise RowSkipped(f"model {model_id} is not in the model catalog")
    size_words = re.search(r"(\d+)B$", name)
    if size_words is None or f"-{size_words.group(1)}B-" not in repo:
        raise RowSkipped(f"the row names {name} but the checkpoint {repo}: not guessed")
    return models[model_id], name, repo


def _gpu(row: AmdRow, document: AmdDocument, gpus: dict[str, GpuEntry]) -> GpuEntry:
    if row.gpu is not None and row.gpu != document.gpu:
        raise RowSkipped(f"the latency header names {row.gpu}, the title {document.gpu}")
    gpu = gpu_named(gpus, GPU_NAMES, document.gpu)
    if gpu is None:
        raise RowSkipped(f"GPU {document.gpu} is not in the GPU catalog")
    return gpu


def _common_conditions(row: AmdRow, document: AmdDocument, repo: str) -> str:
    """What every row's conditions say of the image, the system and the deployment."""
    rocm = f", ROCm {document.rocm_version}" if document.rocm_version else ""
    image = (
        f"ROCm vLLM docker image release {document.release or '(not named)'}: vLLM "
        f"{document.vllm_version}{rocm}, as the README lists the image's components. "
    )
    return (
        image
        + (f"{document.scripts_note}. " if document.scripts_note else "")
        + (f"System (as printed under the table): {row.system}. " if row.system else "")
        + f"Precision {row.precision} as the table states it; checkpoint {repo}; "
        f"TP {row.tp} over {row.tp} {document.gpu} GPUs. "
    )


def _lengths_words(row: AmdRow) -> str:
    return (
        f"every request {row.input_len} input and {row.output_len} output tokens (the benchmark's "
        "random prompts of a fixed length)"
    )


def _throughput_point(row: AmdRow, value: float, common: str) -> tuple[LoadPoint, str]:
    """An offline point of the throughput table, and its conditions."""
    point = table_point(
        Load(arrival="offline"),
        row.size,
        Throughput(total_tokens_per_s=value),
        validity=[
            Verdict(
                code="token-kind-inferred",
                message="the source says 'tokens/s', not which tokens; stored as prompt + "
                "output tokens per second from how AMD's reproduction path reports it",
            )
        ],
    )
    conditions = (
        f"AMD ROCm vLLM README ({DOCUMENT}), throughput table, row {row.model} · TP "
        f"{row.tp} · {row.input_len}/{row.output_len} · {row.size} prompts · max num seqs "
        f"{row.max_num_seqs}: {row.printed} tokens/s as printed. vLLM's offline throughput "
        f"benchmark: all {row.size} prompts handed to the engine at once, {_lengths_words(row)}, "
        f"--max-num-seqs {row.max_num_seqs}. " + TOTAL_TOKENS_EVIDENCE + common
    )
    return point, conditions


def _latency_point(row: AmdRow, value: float, common: str) -> tuple[LoadPoint, str]:
    """A static batch of the latency table, and its conditions."""
    latency_ms = value * 1000 if row.unit == "sec" else value
    point = table_point(
        Load(arrival="static_batch", concurrency=row.size),
        row.size,
        Throughput(),
        e2e_ms=LatencyStats(mean=latency_ms),
    )
    conditions = (
        f"AMD ROCm vLLM README ({DOCUMENT}), latency table, row {row.model} · TP {row.tp} · "
        f"batch {row.size} · {row.input_len}/{row.output_len}: {row.printed} "
        f"{'s' if row.unit == 'sec' else 'ms'} as printed (the header's unit), stored as "
        f"{latency_ms:g} ms. vLLM's latency benchmark: a static batch of {row.size} "
        f"requests started together and run to the end, {_lengths_words(row)}; the figure is "
        "the mean time of the whole batch over the benchmark's timed iterations, so it is every "
        "request's end-to-end latency, not that of a served request. " + common
    )
    return point, conditions


def _result(row: AmdRow, document: AmdDocument, catalogs: Catalogs, key: str) -> Result:
    model, _, repo = _checkpoint(row, catalogs.models)
    gpu = _gpu(row, document, catalogs.gpus)
    value = printed_figure(row.printed)
    common = _common_conditions(row, document, repo)
    table_point = _throughput_point if row.table == "throughput" else _latency_point
    point, conditions = table_point(row, value, common)
    deployment = Deployment(
        gpu,
        row.tp,
        "vllm",
        document.engine_version(),
        model,
        Precision(quantization=row.precision.lower()),
        hf_repo=repo,
        serving=ServingSettings(tensor_parallel_size=row.tp, max_num_seqs=row.max_num_seqs or None),
    )
    source = document.source(
        f"AMD ROCm vLLM docker performance results ({document.gpu}, "
        f"{document.release or 'vLLM ' + document.vllm_version}): {row.table}",
        conditions + f"[row: {_row_text(row)}]",
        key,
    )
    workload = fixed_lengths(row.input_len, row.output_len)
    return reported_result(deployment.identity(workload), [point], source)


def harvest_document(text: str, document: AmdDocument, catalogs: Catalogs) -> list[Harvested]:
    """Every row of the README's throughput and latency tables, as a result or a skip."""
    rows = parse_tables(text)
    if not rows:
        raise HarvestError(f"{DOCUMENT}: no throughput or latency table found")
    harvested = []
    for row in rows:
        key = row_key(document.revision, row)
        harvested.append(harvest_row(key, partial(_result, row, document, catalogs, key)))
    return harvested


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
        text, revision = tree.read_text(DOCUMENT, "source page"), tree.commit
    text = text.replace("\r\n", "\n")  # a page saved with CRLF line ends is the same page
    document = describe(
        text, revision, options.retrieved_for(result_key), options.submitter, cited.url or ""
    )
    rows = harvest_document(text, document, options.catalogs())
    return options.apply(rows, result_key, f"AMD ROCm vLLM README at {revision[:12]}")
