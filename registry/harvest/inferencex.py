"""InferenceX™ (SemiAnalysis) results, from a dump of the InferenceX app's database.

A dump is a folder with one JSON array per table, as `packages/db/src/dump-db.ts` of
SemiAnalysisAI/InferenceX-app writes it (`pnpm admin:db:dump`): `configs.json`,
`workflow_runs.json`, `benchmark_results.json` (the tables of
`packages/db/migrations/001_initial_schema.sql`). A `benchmark_results` row is one concurrency
of one serving configuration in one workflow run; its `metrics` are the row that
`utils/process_result.py` of SemiAnalysisAI/InferenceX writes: throughput per GPU (tokens/s)
and latency statistics in **seconds** (`median_ttft`, `p99_tpot`, …).

The rows of one run × configuration × benchmark type × ISL/OSL become one result, one closed
load point per concurrency (InferenceX's client sends `--num-prompts` requests with
`--max-concurrency conc` and `--request-rate inf`). Its ITL is not stored: the client measures
it between streamed chunks, and most engines InferenceX runs stream several tokens a chunk
(stream intervals, MTP), so mean ITL is 1 to about 290 × mean TPOT, not a gap between tokens.
Lengths: InferenceX draws every prompt and output length uniformly from [int(ratio·L), L]
(`--random-range-ratio`, 0.8 in its workflow templates) with `--ignore-eos`, so `uniform`
lengths and `ignore_eos: true`. Output throughput
per GPU × the GPUs it was divided by (all GPUs; decode GPUs for disaggregated runs, as
process_result.py divides) gives the deployment's figure. A single-node row's GPUs are its TP
size, as process_result.py divides by `TP × PP × PCP` (PP and PCP are not in the database and
are taken as 1); its `num_decode_gpu` is not read, because the app's loader fills it with
`tp × ep` for rows that lack it (`packages/db/src/etl/benchmark-mapper.ts`: 64 for TP 8 with EP 8
on one 8-GPU node). A disaggregated row that is not multinode states no GPU pools (both counts
equal its TP) and is skipped.

Labels follow what the runs served: `fp4` is NVFP4 on NVIDIA GPUs and MXFP4 on AMD GPUs (every
`dsr1` `fp4` entry of InferenceX's `configs/nvidia-master.yaml` names an `nvidia/…-FP4`/`-NVFP4`
checkpoint, of `configs/amd-master.yaml` an `amd/…-MXFP4` one); `trt` is TensorRT-LLM.

A row is labelled unofficial unless its workflow run is in SemiAnalysisAI/InferenceX, as the
InferenceX README requires ("all other forks & repos are Unofficial"). Failed rows (`error`
set), GPUs and models without a catalog id, and rows without an image (no engine version) are
skipped with the reason. So is a row whose output tokens/s its own concurrency, mean E2E and
output length do not allow (Little's law, `registry.checks.closed_loop`): InferenceX counts no
failed requests, so a row far below what its latencies give lost requests it does not count
(run 26829715287 at 512 users: 2.4 %); the other rows of its group still make the result.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from infermeter.registry.catalog import gpu_named
from infermeter.registry.checks.closed_loop import closed_loop_problem
from infermeter.registry.harvest import inferencex_api
from infermeter.registry.harvest.errors import HarvestError, RowSkipped
from infermeter.registry.harvest.options import HarvestOptions
from infermeter.registry.harvest.outcome import Harvested, HarvestReport
from infermeter.registry.harvest.reported import (
    Catalogs,
    Deployment,
    Precision,
    harvest_row,
    reported_result,
)
from infermeter.registry.harvest.source_json import json_rows, whole_number
from infermeter.registry.harvest.sources import INFERENCEX, NOT_CITED, FileCitation
from infermeter.registry.harvest.tree import missing_source
from infermeter.registry.models import (
    Disaggregation,
    LatencyStats,
    Load,
    LoadPoint,
    ReportedSource,
    RequestCounts,
    Result,
    ServingSettings,
    SpeculativeDecoding,
    Throughput,
    TokenCounts,
    UniformLength,
    Workload,
)
from infermeter.registry.secrets import without_userinfo

TABLES = ("configs", "workflow_runs", "benchmark_results")
# The columns each table of a dump must have: the ids that join them and a configuration's
# columns (the database's, as the API's rows hold them); the image, where a result states one,
# is a plain value too (the rows of a configuration are grouped by it).
DUMP_COLUMNS: dict[str, tuple[str, ...]] = {
    "configs": ("id", *inferencex_api.CONFIG_COLUMNS),
    "workflow_runs": ("id",),
    "benchmark_results": ("id", "config_id", "workflow_run_id"),
}
OFFICIAL_REPOSITORY = "https://github.com/SemiAnalysisAI/InferenceX/"
DEFAULT_RANGE_RATIO = 0.8
"""`RANDOM_RANGE_RATIO: 0.8` in InferenceX's .github/workflows/benchmark-tmpl.yml."""

GPU_NAMES = INFERENCEX.gpu_names
"""The source whose names the GPU catalog lists (`GpuEntry.source_names`): InferenceX's GPU
keys (packages/constants/src/gpu-keys.ts), e.g. `h100`."""

MODELS: dict[str, str] = {
    "dsr1": "deepseek-r1",
    "gptoss120b": "gpt-oss-120b",
    "llama70b": "llama-3.3-70b-instruct",
}
"""InferenceX's DB model keys (DB_MODEL_TO_DISPLAY) → model catalog ids."""

CHECKPOINTS: dict[str, str] = {"dsr1": "deepseek-ai/DeepSeek-R1-0528"}
"""The model a DB key stands for where it is not the catalog's checkpoint (DB_MODEL_TO_DISPLAY:
`dsr1` is DeepSeek-R1-0528); quantized runs serve a vendor's quantization of it."""

ENGINES = {"trt": "tensorrt-llm", "dynamo-trt": "dynamo-tensorrt-llm"}
"""InferenceX framework keys that abbreviate the engine's name (TensorRT-LLM)."""

FP4_BY_VENDOR = {"nvidia": "nvfp4", "amd": "mxfp4"}

_STATISTICS = {"mean": "mean", "median": "p50", "p90": "p90", "p99": "p99"}


@dataclass(frozen=True)
class InferencexDump:
    """How one dump is cited."""

    retrieved_for: Callable[[str], str]
    submitter: str
    range_ratio: float = DEFAULT_RANGE_RATIO
    read_at: str | None = None
    """Where the rows were read when that is not a dump (a file at a commit), in a sentence
    every result's conditions end with."""


def read_dump(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """The three tables of a dump folder; HarvestError names a missing or malformed one."""
    tables = {}
    for table in TABLES:
        path = folder / f"{table}.json"
        if not (path.exists() or path.is_symlink()):
            raise HarvestError(f"{path}: missing; expected a dump of the InferenceX database")
        tables[table] = json_rows(path, "a JSON array of row objects", "not a JSON table")
        needed = DUMP_COLUMNS[table]
        keys = (*needed, "image") if table == "benchmark_results" else needed
        inferencex_api.check_rows(path, tables[table], needed, keys, f"a {table} row")
    return tables


_Skip = RowSkipped


def _engine(framework: str, image: str | None) -> tuple[str, str]:
    if not image:
        raise _Skip("no image recorded (runs before 2025-12-08): the engine version is unknown")
    name = re.sub(r"[^a-z0-9.]+", "-", framework.lower()).strip("-")
    return ENGINES.get(name, name), f"image {image}"


def _precision(stated: str, vendor: str) -> Precision:
    lowered = stated.lower()
    if lowered in ("bf16", "bfloat16"):
        return Precision(dtype="bfloat16")
    if lowered in ("fp16", "float16"):
        return Precision(dtype="float16")
    if lowered == "fp4":
        return Precision(quantization=FP4_BY_VENDOR[vendor])
    return Precision(quantization=lowered)


def _latency(metrics: dict[str, Any], name: str) -> LatencyStats | None:
    stats = {}
    for prefix, field in _STATISTICS.items():
        value = metrics.get(f"{prefix}_{name}")
        if isinstance(value, int | float) and not isinstance(value, bool):
            stats[field] = float(value) * 1000.0  # process_result.py stores seconds
    return LatencyStats.model_validate(stats) if stats else None


def _deployment(config: dict[str, Any], spec: str) -> tuple[int, int, ServingSettings]:
    """(GPUs in all, GPUs the per-GPU throughput was divided by, serving settings)."""
    prefill, decode = (
        whole_number(config, "num_prefill_gpu"),
        whole_number(config, "num_decode_gpu"),
    )
    speculative = None if spec.lower() in ("none", "") else SpeculativeDecoding(method=spec)
    if config.get("disagg") and not config.get("is_multinode"):
        raise _Skip(
            "disaggregated but not multinode: the prefill and decode GPU pools are not stated "
            f"(both counts are {prefill} and {decode}, the TP)"
        )
    if config.get("disagg"):
        pools = Disaggregation(
            prefill_gpus=prefill,
            decode_gpus=decode,
            prefill_workers=whole_number(config, "prefill_num_workers", least=0) or None,
            decode_workers=whole_number(config, "decode_num_workers", least=0) or None,
        )
        return (
            prefill + decode,
            decode,
            ServingSettings(disaggregated=pools, speculative=speculative),
        )
    expert = whole_number(config, "decode_ep") if "decode_ep" in config else 1
    tensor = whole_number(config, "decode_tp")
    serving = ServingSettings(
        tensor_parallel_size=tensor,
        expert_parallel_size=expert if expert > 1 else None,
        speculative=speculative,
    )
    return tensor, tensor, serving


def group_key(run: dict[str, Any], config: dict[str, Any], row: dict[str, Any]) -> str:
    """The source key of one result: run, configuration, benchmark type, lengths."""
    parts = [
        config.get("hardware"), config.get("framework"), config.get("model"),
        config.get("precision"), config.get("spec_method"),
        f"disagg={config.get('disagg')}", f"tp={config.get('decode_tp')}",
        f"ep={config.get('decode_ep')}", f"dpa={config.get('decode_dp_attention')}",
        f"gpus={config.get('num_prefill_gpu')}+{config.get('num_decode_gpu')}",
    ]  # fmt: skip
    return (
        f"inferencex run {run.get('github_run_id')}/{run.get('run_attempt')} "
        f"{' '.join(map(str, parts))} {row.get('benchmark_type')} {row.get('isl')}/{row.get('osl')}"
    )


def result_key(result: Result) -> str | None:
    """The source key of an InferenceX result in the registry (None: not InferenceX)."""
    conditions = getattr(result.source, "conditions", "")
    match = re.search(r"\[group: (inferencex .+?)\]$", conditions)
    return match.group(1) if match else None


def _point(row: dict[str, Any], divided_by: int) -> LoadPoint:
    metrics = row.get("metrics")
    if not isinstance(metrics, dict):
        raise _Skip(f"benchmark_results {row.get('id')}: metrics is not an object")
    per_gpu = metrics.get("output_tput_per_gpu")
    if not isinstance(per_gpu, int | float) or isinstance(per_gpu, bool):
        raise _Skip(f"benchmark_results {row.get('id')}: no output_tput_per_gpu")
    return LoadPoint(
        load=Load(arrival="closed", concurrency=whole_number(row, "conc")),
        requests=RequestCounts(),
        tokens=TokenCounts(),
        throughput=Throughput(output_tokens_per_s=float(per_gpu) * divided_by),
        ttft_ms=_latency(metrics, "ttft"),
        tpot_ms=_latency(metrics, "tpot"),
        e2e_ms=_latency(metrics, "e2el"),
    )


def _points(rows: list[dict[str, Any]], divided_by: int) -> list[LoadPoint]:
    return [_point(row, divided_by) for row in sorted(rows, key=lambda r: whole_number(r, "conc"))]


@dataclass(frozen=True)
class _Group:
    """The benchmark rows of one configuration in one workflow run: one result."""

    key: str
    run: dict[str, Any]
    config: dict[str, Any]
    rows: list[dict[str, Any]]


def _conditions(group: _Group, dump: InferencexDump, gpus: tuple[int, int]) -> str:
    key, run, config, rows = group.key, group.run, group.config, group.rows
    (count, divided_by), spec = gpus, str(config.get("spec_method", "none"))
    isl, osl = whole_number(rows[0], "isl"), whole_number(rows[0], "osl")
    official = _official_url(run)[1]
    return (
        f"InferenceX {rows[0].get('benchmark_type')} benchmark, workflow run "
        f"{run.get('github_run_id')} (attempt {run.get('run_attempt')}, {run.get('date')}, "
        f"commit {run.get('head_sha') or 'not stated'}): {config['framework']} on {count} "
        f"{config['hardware']} GPUs, model {config['model']}, precision {config['precision']}, "
        f"speculative decoding {spec}, prefill TP{config['prefill_tp']}/EP{config['prefill_ep']}"
        f"/DP-attention {config['prefill_dp_attention']}, decode TP{config['decode_tp']}"
        f"/EP{config['decode_ep']}/DP-attention {config['decode_dp_attention']}"
        + (f", disaggregated: {config['num_prefill_gpu']} prefill and {config['num_decode_gpu']}"
           f" decode GPUs" if config.get("disagg") else "")
        + f". Random prompts: input and output lengths uniform in [int({dump.range_ratio}·L), L] "
        f"for L = {isl} / {osl}, end-of-sequence ignored; --max-concurrency = each point's "
        f"concurrency, --request-rate inf. InferenceX reports output tokens/s per GPU (divided "
        f"by {divided_by} GPUs); stored × {divided_by}. Latencies converted from seconds; ITL "
        f"not stored (measured between streamed chunks, which hold several tokens)."
        + ("" if official else " Unofficial: not from the official SemiAnalysisAI/InferenceX "
           "repository.")
        + (f" {dump.read_at}" if dump.read_at else "")
        + f" [group: {key}]"
    )  # fmt: skip


def _official_url(run: dict[str, Any]) -> tuple[str, bool]:
    """The run's page (no credentials), and whether it is in the official repository."""
    url = without_userinfo(str(run.get("html_url") or ""))
    return url, url.startswith(OFFICIAL_REPOSITORY)


def _workload(rows: list[dict[str, Any]], range_ratio: float) -> Workload:
    isl, osl = whole_number(rows[0], "isl"), whole_number(rows[0], "osl")
    return Workload(
        profile="custom",
        input_len=UniformLength(kind="uniform", min=int(isl * range_ratio), max=isl),
        output_len=UniformLength(kind="uniform", min=int(osl * range_ratio), max=osl),
        dataset="random",
        ignore_eos=True,
    )


def _source(group: _Group, dump: InferencexDump, conditions: str) -> ReportedSource:
    key, run, config = group.key, group.run, group.config
    url, official = _official_url(run)
    return ReportedSource(
        kind="reported",
        url=url or "https://github.com/SemiAnalysisAI/InferenceX",
        title=f"InferenceX run {run.get('github_run_id')}: {config['model']} on "
        f"{config['hardware']} ({config['framework']})",
        publisher="SemiAnalysis (InferenceX)" if official else "InferenceX (unofficial)",
        conditions=conditions,
        retrieved=dump.retrieved_for(key),
        submitter=dump.submitter,
        revision=run.get("head_sha") or None,
        unofficial=not official,
    )


def _result(group: _Group, dump: InferencexDump, catalogs: Catalogs) -> Result:
    config, rows = group.config, group.rows
    gpus, models = catalogs
    gpu, model_id = (
        gpu_named(gpus, GPU_NAMES, str(config["hardware"])),
        MODELS.get(str(config["model"])),
    )
    if gpu is None:
        raise _Skip(f"hardware {config['hardware']!r} has no GPU catalog id")
    if model_id is None or model_id not in models:
        raise _Skip(f"model {config['model']!r} has no model catalog id")
    images = {row.get("image") for row in rows}
    if len(images) != 1:
        raise _Skip("the rows of one configuration ran different images")
    engine = _engine(str(config["framework"]), images.pop())
    spec = str(config.get("spec_method", "none"))
    count, divided_by, serving = _deployment(config, spec)
    precision = _precision(str(config["precision"]), gpu.vendor)
    checkpoint = CHECKPOINTS.get(str(config["model"]))
    deployment = Deployment(gpu, count, *engine, models[model_id], precision, checkpoint, serving)
    identity = deployment.identity(_workload(rows, dump.range_ratio))
    conditions = _conditions(group, dump, (count, divided_by))
    source = _source(group, dump, conditions)
    return reported_result(identity, _points(rows, divided_by), source)


def _closed_loop_refusals(group: _Group, dump: InferencexDump) -> dict[int, Harvested]:
    """The rows of `group` whose throughput their own concurrency and latencies do not allow
    (`closed_loop_problem`: InferenceX counts no failed requests), each skipped with what is
    wrong, by the row's position in the group. A row or group that makes no point is left to
    `_result`, which skips the whole group with its reason."""
    try:
        divided_by = _deployment(group.config, str(group.config.get("spec_method", "none")))[1]
        workload = _workload(group.rows, dump.range_ratio)
    except RowSkipped:
        return {}
    refused = {}
    for number, row in enumerate(group.rows):
        try:
            problem = closed_loop_problem(_point(row, divided_by), workload)
        except (RowSkipped, ValidationError):
            continue
        if problem is not None:
            key = f"inferencex result {row.get('id')}"
            refused[number] = Harvested(key, skipped=problem)
    return refused


def harvest_dump(
    tables: dict[str, list[dict[str, Any]]],
    dump: InferencexDump,
    catalogs: Catalogs,
) -> list[Harvested]:
    """Every successful benchmark result of the dump, grouped into results, or skipped."""
    configs = {row.get("id"): row for row in tables["configs"]}
    runs = {row.get("id"): row for row in tables["workflow_runs"]}
    groups: dict[str, tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]] = {}
    harvested: list[Harvested] = []
    for row in tables["benchmark_results"]:
        config, run = configs.get(row.get("config_id")), runs.get(row.get("workflow_run_id"))
        if config is None or run is None:
            raise HarvestError(
                f"benchmark_results {row.get('id')}: config_id or workflow_run_id names no row"
            )
        if row.get("error") is not None:
            harvested.append(
                Harvested(f"inferencex result {row.get('id')}", skipped=f"failed: {row['error']}")
            )
            continue
        key = group_key(run, config, row)
        groups.setdefault(key, (run, config, []))[2].append(row)
    for key, (run, config, rows) in groups.items():
        refused = _closed_loop_refusals(_Group(key, run, config, rows), dump)
        harvested.extend(refused.values())
        kept = [row for number, row in enumerate(rows) if number not in refused]
        if kept:
            make = partial(_result, _Group(key, run, config, kept), dump, catalogs)
            harvested.append(harvest_row(key, make))
    return harvested


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
    if source.is_symlink() and not source.exists():
        raise missing_source(source)  # not "a file" that needs --url
    if source.exists() and not source.is_dir():
        tables, skipped, read_at = inferencex_api.response_tables(source, cited)
    elif cited != NOT_CITED:
        raise HarvestError("--commit, --url and --read-from cite a file; --from names a folder")
    elif not source.is_dir():
        raise HarvestError(f"--from: {source} is not a folder of InferenceX dump tables")
    else:
        tables = read_dump(source)
    dump = InferencexDump(
        retrieved_for=options.retrieved_for(result_key),
        submitter=options.submitter,
        range_ratio=range_ratio if range_ratio is not None else DEFAULT_RANGE_RATIO,
        read_at=read_at,
    )
    rows = [*skipped, *harvest_dump(tables, dump, options.catalogs())]
    kind = "dump" if read_at is None else "API response"
    return options.apply(rows, result_key, f"InferenceX {kind} {source.name}")
