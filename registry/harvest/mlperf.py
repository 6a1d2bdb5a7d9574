"""MLPerf® Inference results: the closed-division datacenter LLM rows of one round.

Read from a checkout of `mlcommons/inference_results_v<round>`: `summary_results.json` (one row
per result ID × benchmark × scenario, as MLCommons publishes the results table) and, for each
row, the run's `<Location>/performance/run_1/mlperf_log_summary.txt` (LoadGen's summary).

One row becomes one result file with one load point:

- Offline → `arrival: offline`, `requests.sent` = LoadGen's `samples_per_query` (every sample
  is issued in one query);
- Server and Interactive → LoadGen's Poisson arrivals at `target_qps` with a `rate_search`
  (p99 bounds `ttft_latency`, `tpot_latency` from the log): the submitter's rate that met the
  bounds. The measured TTFT, TPOT ("time to output token") and latency statistics come from the
  log, converted from ns to ms; p97 and p99.9 have no field and are left out.
- Throughput is the system's (all `Nodes × a#` accelerators); the index divides by the GPU
  count. Output tokens/s is the log's (completed) tokens per second, unrounded; the row's
  `Performance_Result`, which rounds it, must agree within 0.5 %. Samples/s go to requests/s.
- Precision (`weight_data_types`) as stated: `fp16` is `dtype: float16`, anything else the
  quantization (`fp8`, `fp4`, `int4` …). The engine and its version are the first component of
  `Software` that names one (`vLLM 0.9.0` → vllm 0.9.0; `TensorRT 10.11` → tensorrt 10.11).

Skipped, with the reason: a heterogeneous system (two accelerator kinds), a system without a
named accelerator, an accelerator or benchmark without a catalog id, software without an engine
version, a row that repeats the run of a stricter benchmark (`UsedModel` ≠ `Model`), a run whose
log is missing, not VALID, or disagrees with the table.

Each result carries what MLPerf's results messaging guidelines require (`source.mlperf`): the
result ID, submitter, benchmark, round, division, scenario, system, and the footnote.
"""

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from registry.harvest.errors import HarvestError, RowSkipped, validated_result
from registry.harvest.outcome import Harvested
from registry.harvest.tree import SourceTree
from registry.models import GpuEntry, ModelEntry, Result

SUMMARY_FILE = "summary_results.json"
LOG_FILE = "performance/run_1/mlperf_log_summary.txt"
NS_PER_MS = 1e6

ACCELERATORS: dict[str, str] = {
    "NVIDIA B200-SXM-180GB": "b200",
    "NVIDIA H200-SXM-141GB": "h200-sxm",
    "Virtualized NVIDIA H200-SXM-141GB": "h200-sxm",
    "NVIDIA H200-SXM-141GB-CTS": "h200-sxm",
    "NVIDIA H200-NVL-141GB": "h200-nvl",
    "NVIDIA H100-SXM-80GB": "h100-sxm",
    "NVIDIA H100-NVL-94GB": "h100-nvl",
    "NVIDIA H100-PCIe-80GB": "h100-pcie",
    "NVIDIA GH200 Grace Hopper Superchip 144GB": "gh200-144gb",
    "NVIDIA GH200 Grace Hopper Superchip 96GB": "gh200-96gb",
    "NVIDIA GB200": "gb200",
    "NVIDIA GB300": "gb300",
    "NVIDIA L40S": "l40s",
    "NVIDIA RTX PRO 6000 Blackwell Server Edition": "rtx-pro-6000",
    "AMD Instinct MI300X 192GB HBM3": "mi300x",
    "AMD Instinct MI300X-NPS1-SPX-192GB-750W": "mi300x",
    "AMD MI300X-NPS1-SPX-192GB-750W": "mi300x",
    "AMD Instinct MI325X 256GB HBM3e": "mi325x",
    "AMD Instinct MI355X 288GB HBM3E": "mi355x",
}
"""MLPerf's accelerator names → GPU catalog ids (exact names; anything else is skipped)."""

BENCHMARK_MODELS: dict[str, str] = {
    "llama2-70b": "llama-2-70b-chat",
    "llama3.1-8b": "llama-3.1-8b-instruct",
    "llama3.1-405b": "llama-3.1-405b-instruct",
    "mixtral-8x7b": "mixtral-8x7b-instruct-v0.1",
    "deepseek-r1": "deepseek-r1",
    # MLPerf's GPT-J is a CNN/DailyMail fine-tune of GPT-J 6B (the same shapes).
    "gptj": "gpt-j-6b",
}
"""MLPerf's LLM benchmarks (without the accuracy suffix) → model catalog ids."""

LLM_FAMILIES = ("llama", "mixtral", "deepseek", "gptj")
"""Prefixes of the LLM benchmarks; other benchmarks (ResNet, DLRM …) are not considered."""

_ENGINES = (
    (re.compile(r"^vLLM[ -]([0-9][^\s,]*)", re.I), "vllm"),
    (re.compile(r"^vllm-([0-9][^\s,]*)", re.I), "vllm"),
    (re.compile(r"^TensorRT-LLM[ -]([0-9][^\s,]*)", re.I), "tensorrt-llm"),
    (re.compile(r"^TensorRT[ -]([0-9][^\s,]*)", re.I), "tensorrt"),
    (re.compile(r"^SGLang[ -]([0-9][^\s,]*)", re.I), "sglang"),
)

_TRADEMARK = (
    "The MLPerf name and logo are registered and unregistered trademarks of MLCommons "
    "Association in the United States and other countries. All rights reserved. Unauthorized "
    "use strictly prohibited. See www.mlcommons.org for more information."
)

_LOG_LINE = re.compile(r"^\s*([^:]+?)\s*:\s*(.+?)\s*$")


@dataclass(frozen=True)
class MlperfRound:
    """Where one round was read and how its results are cited."""

    round: str
    """`v5.1`."""
    repository_url: str
    """`https://github.com/mlcommons/inference_results_v5.1`."""
    commit: str
    retrieved_for: Callable[[str], str]
    """The retrieval date of a row's key: the date it was first harvested, else today."""
    submitter: str


def parse_log_summary(text: str) -> dict[str, str]:
    """The `key : value` lines of an `mlperf_log_summary.txt` (first occurrence wins)."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        match = _LOG_LINE.match(line)
        if match and match.group(1) not in values:
            values[match.group(1)] = match.group(2)
    return values


def _number(log: dict[str, str], key: str) -> float | None:
    value = log.get(key)
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None


_LATENCY_KEYS = {
    # registry field: (LoadGen's mean/max name, its percentile name)
    "e2e_ms": ("latency", "latency"),
    "ttft_ms": ("First Token latency", "first token latency"),
    "tpot_ms": ("Time to Output Token", "time to output token"),
}


def _latency_ms(log: dict[str, str], field: str) -> dict[str, float] | None:
    """LoadGen's statistics of one latency in ms (its lines are in ns)."""
    extreme, percentile = _LATENCY_KEYS[field]
    keys = {
        "mean": f"Mean {extreme} (ns)",
        "max": f"Max {extreme} (ns)",
        "p50": f"50.00 percentile {percentile} (ns)",
        "p90": f"90.00 percentile {percentile} (ns)",
        "p95": f"95.00 percentile {percentile} (ns)",
        "p99": f"99.00 percentile {percentile} (ns)",
    }
    stats = {}
    for name, key in keys.items():
        value = _number(log, key)
        if value is not None:
            stats[name] = value / NS_PER_MS
    return stats or None


def benchmark_family(benchmark: str) -> str:
    """`llama2-70b-99.9` → `llama2-70b`; `llama3_1-405b` → `llama3.1-405b`."""
    name = benchmark.replace("_", ".")
    return re.sub(r"-99(?:\.9)?$", "", name)


def _accuracy_target(benchmark: str) -> str:
    suffix = re.search(r"-(99(?:\.9)?)$", benchmark)
    if suffix:
        return f"MLPerf {benchmark}: {suffix.group(1)} % of the reference implementation's accuracy"
    return f"MLPerf {benchmark}: the benchmark's accuracy target"


def parse_engine(software: str) -> tuple[str, str, str] | None:
    """(engine name, version, the component that named it) from MLPerf's `Software`."""
    for component in (part.strip() for part in software.split(",")):
        for pattern, name in _ENGINES:
            match = pattern.match(component)
            if match:
                return name, match.group(1), component
    return None


def _precision(stated: str) -> dict[str, str]:
    lowered = stated.strip().lower()
    if lowered in ("fp16", "float16"):
        return {"dtype": "float16"}
    if lowered in ("bf16", "bfloat16"):
        return {"dtype": "bfloat16"}
    return {"quantization": lowered}


def row_key(round_name: str, row: dict[str, Any]) -> str:
    """The source key of a summary row: round, result ID, benchmark, scenario."""
    return f"mlperf {round_name} {row.get('ID')} {row.get('Model')} {row.get('Scenario')}"


def result_key(result: Result) -> str | None:
    """The source key of a harvested MLPerf result in the registry (None: not MLPerf)."""
    mlperf = getattr(result.source, "mlperf", None)
    if mlperf is None:
        return None
    return f"mlperf {mlperf.round} {mlperf.result_id} {mlperf.benchmark} {mlperf.scenario}"


def is_llm_datacenter_closed(row: dict[str, Any]) -> bool:
    """Whether a summary row is a closed-division datacenter LLM result."""
    suites = str(row.get("Suite", "")).split(",")
    model = str(row.get("Model", ""))
    return (
        row.get("Category") == "closed"
        and "datacenter" in suites
        and model.startswith(LLM_FAMILIES)
    )


_Skip = RowSkipped


def _count(row: dict[str, Any], field: str) -> int:
    value = row.get(field)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise _Skip(f"{field} is {value!r}, not a positive whole number")
    return value


def _gpu(row: dict[str, Any], gpus: dict[str, GpuEntry]) -> GpuEntry:
    accelerator = str(row.get("Accelerator", "")).strip()
    if not accelerator:
        raise _Skip("no accelerator named (a CPU-only system)")
    if "," in accelerator or re.search(r"\(x\d+\)", accelerator):
        raise _Skip(f"heterogeneous system ({accelerator}): two accelerator kinds in one result")
    gpu_id = ACCELERATORS.get(accelerator)
    if gpu_id is None or gpu_id not in gpus:
        raise _Skip(f"accelerator {accelerator!r} has no GPU catalog id")
    return gpus[gpu_id]


def _load_point(row: dict[str, Any], log: dict[str, str], where: str) -> dict[str, Any]:
    scenario = row["Scenario"]
    if log.get("Result is") != "VALID":
        raise _Skip(f"{where}: LoadGen result is {log.get('Result is')!r}, not VALID")
    # LoadGen runs Interactive as a Server scenario with tighter bounds.
    expected = "Server" if scenario == "Interactive" else scenario
    if log.get("Scenario") != expected:
        raise _Skip(f"{where}: the log's scenario {log.get('Scenario')!r} is not {expected}")
    unit, value = row.get("Performance_Units"), row.get("Performance_Result")
    if scenario == "Offline":
        tokens_per_s, samples_per_s = (
            _number(log, "Tokens per second"),
            _number(log, "Samples per second"),
        )
    else:
        tokens_per_s = _number(log, "Completed tokens per second")
        samples_per_s = _number(log, "Completed samples per second")
    if tokens_per_s is None:
        if any(key.endswith("tokens per second (inferred)") for key in map(str.lower, log)):
            # GPT-J: LoadGen multiplies samples/s by a fixed tokens-per-sample factor.
            raise _Skip(
                f"{where}: the log's tokens per second is inferred (samples/s × a fixed "
                "tokens-per-sample factor), not counted; no output tokens/s to store"
            )
        raise _Skip(f"{where}: the log states no tokens per second")
    stated = float(value) if isinstance(value, int | float) else None
    if unit == "Tokens/s" and (stated is None or abs(stated - tokens_per_s) > 0.005 * tokens_per_s):
        raise _Skip(
            f"{where}: the table's {value} Tokens/s disagrees with the log's {tokens_per_s}"
        )
    # The log's figure, unrounded; the results table rounds it (24593.77 → 24593.8).
    throughput: dict[str, float] = {"output_tokens_per_s": tokens_per_s}
    if samples_per_s is not None:
        throughput["requests_per_s"] = samples_per_s
    point: dict[str, Any] = {"throughput": throughput, "tokens": {}, "requests": {}}
    if scenario == "Offline":
        point["load"] = {"arrival": "offline"}
        samples = _number(log, "samples_per_query")
        if samples is not None and samples.is_integer():
            point["requests"]["sent"] = int(samples)
        return point
    target_qps = _number(log, "target_qps")
    ttft_bound_ns, tpot_bound_ns = (
        _number(log, "ttft_latency (ns)"),
        _number(log, "tpot_latency (ns)"),
    )
    if not target_qps or ttft_bound_ns is None or tpot_bound_ns is None:
        raise _Skip(f"{where}: the log lacks target_qps or the TTFT/TPOT bounds")
    point["load"] = {
        "arrival": "poisson",
        "request_rate": target_qps,
        "rate_search": {
            "percentile": 99.0,
            "ttft_ms": ttft_bound_ns / NS_PER_MS,
            "tpot_ms": tpot_bound_ns / NS_PER_MS,
        },
    }
    for field in _LATENCY_KEYS:
        stats = _latency_ms(log, field)
        if stats is not None:
            point[field] = stats
    return point


def _conditions(row: dict[str, Any], log: dict[str, str], engine_component: str) -> str:
    scenario = row["Scenario"]
    parts = [
        f"MLPerf Inference {row.get('version')} closed division, {row.get('Suite')} suite, "
        f"benchmark {row['Model']}, scenario {scenario}; result {row['ID']} by "
        f"{row['Submitter']} on {row['System']} ({row.get('Platform')}): {row.get('Nodes')} "
        f"node(s) × {row.get('a#')} {row['Accelerator']}, host {row.get('Processor')}.",
        f"Software as submitted: {row.get('Software')} (engine read from "
        f"'{engine_component}'); operating system {row.get('operating_system')}; weights "
        f"{row.get('weight_data_types')}; availability {row.get('Availability')}.",
        f"Accuracy in the accuracy run: {row.get('Accuracy')}.",
    ]
    if scenario == "Offline":
        parts.append(
            "Offline: LoadGen issues every sample in one query and the system processes them in "
            f"any order; {log.get('samples_per_query')} samples per query."
        )
    else:
        parts.append(
            f"{scenario}: LoadGen sends queries of one sample each with Poisson arrivals at the "
            f"submitter's target_qps {log.get('target_qps')}; the run is VALID only if the 99th "
            f"percentile TTFT stays within {log.get('ttft_latency (ns)')} ns and TPOT within "
            f"{log.get('tpot_latency (ns)')} ns (early stopping estimates). Latency statistics "
            "are LoadGen's over all queries of the run; 'time to output token' is MLPerf's TPOT. "
            f"Scheduled samples per second {log.get('Scheduled samples per second')}."
        )
    if row.get("Performance_Units") != "Tokens/s":
        parts.append(
            f"The results table lists {row.get('Performance_Result')} "
            f"{row.get('Performance_Units')}; the run's log states this value as tokens per "
            "second, which is what is stored."
        )
    if str(row.get("Accelerator", "")).startswith("Virtualized"):
        parts.append("The accelerators ran virtualized.")
    parts.append(
        "Throughput is the whole system's; per-GPU and $ figures derived from it are not "
        "verified by MLCommons. The data set is the benchmark's own (see the MLPerf Inference "
        "rules for its composition)."
    )
    return " ".join(parts)


def _footnote(round_info: MlperfRound, row: dict[str, Any], url: str, retrieved: str) -> str:
    return (
        f"MLPerf® {round_info.round} Inference Closed {row['Model']} {row['Scenario']}. "
        f"Retrieved from {url} on {retrieved}, entry {row['ID']}. Result verified by MLCommons "
        f"Association. {_TRADEMARK}"
    )


def harvest_row(
    row: dict[str, Any],
    log_text: str | None,
    round_info: MlperfRound,
    gpus: dict[str, GpuEntry],
    models: dict[str, ModelEntry],
) -> Harvested:
    """One summary row as a result, or skipped with its reason."""
    key = row_key(round_info.round, row)
    try:
        return Harvested(key, result=_result(row, log_text, round_info, gpus, models, key))
    except _Skip as skip:
        return Harvested(key, skipped=str(skip))


def _result(
    row: dict[str, Any],
    log_text: str | None,
    round_info: MlperfRound,
    gpus: dict[str, GpuEntry],
    models: dict[str, ModelEntry],
    key: str,
) -> Result:
    benchmark = str(row["Model"])
    used = str(row.get("UsedModel", benchmark))
    if used.replace("_", ".") != benchmark.replace("_", "."):
        raise _Skip(f"the same run as {used} (MLPerf reuses the stricter benchmark's result)")
    gpu = _gpu(row, gpus)
    model_id = BENCHMARK_MODELS.get(benchmark_family(benchmark))
    if model_id is None or model_id not in models:
        raise _Skip(f"benchmark {benchmark} has no model catalog id")
    engine = parse_engine(str(row.get("Software", "")))
    if engine is None:
        raise _Skip(f"software {row.get('Software')!r} names no inference engine with a version")
    location = str(row["Location"])
    if log_text is None:
        raise _Skip(f"{location}/{LOG_FILE} is missing")
    log = parse_log_summary(log_text)
    point = _load_point(row, log, f"{location}/{LOG_FILE}")
    nodes, per_node = _count(row, "Nodes"), _count(row, "a#")
    url = f"{round_info.repository_url}/tree/{round_info.commit}/{location}"
    retrieved = round_info.retrieved_for(key)
    data = {
        "identity": {
            "gpu": {
                "id": gpu.id,
                "count": nodes * per_node,
                "form_factor": gpu.form_factor,
                "nodes": nodes,
            },
            "engine": {"name": engine[0], "version": engine[1]},
            "model": {
                "id": model_id,
                "hf_repo": models[model_id].hf_repo,
                **_precision(str(row.get("weight_data_types", ""))),
            },
            "serving": {},
            "workload": {
                "profile": "custom",
                "input_len": {"kind": "dataset"},
                "output_len": {"kind": "dataset"},
                "dataset": f"MLPerf Inference {benchmark_family(benchmark)} data set",
                "accuracy_target": _accuracy_target(benchmark),
            },
        },
        "slo": {},
        "points": [point],
        "source": {
            "kind": "reported",
            "url": url,
            "title": f"MLPerf Inference {round_info.round} result {row['ID']}: {row['Submitter']} "
            f"{row['System']}, {benchmark} {row['Scenario']}",
            "publisher": f"MLCommons (submitted by {row['Submitter']})",
            "conditions": _conditions(row, log, engine[2]),
            "retrieved": retrieved,
            "submitter": round_info.submitter,
            "revision": round_info.commit,
            "mlperf": {
                "round": round_info.round,
                "result_id": str(row["ID"]),
                "division": "closed",
                "availability": str(row.get("Availability")),
                "suite": "datacenter",
                "benchmark": benchmark,
                "scenario": row["Scenario"],
                "submitter": str(row["Submitter"]),
                "system": str(row["System"]),
                "verified": True,
                "footnote": _footnote(round_info, row, url, retrieved),
            },
        },
    }
    return validated_result(data)


def read_summary(tree: SourceTree) -> list[dict[str, Any]]:
    """The rows of `summary_results.json`; HarvestError when it is missing or malformed."""
    text = tree.read_text(SUMMARY_FILE)
    try:
        rows = json.loads(text)
    except ValueError as error:
        raise HarvestError(f"{SUMMARY_FILE}: not JSON ({error})") from None
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise HarvestError(f"{SUMMARY_FILE}: expected a JSON array of objects")
    for index, row in enumerate(rows):
        for field in ("ID", "Model", "Scenario", "Location", "Submitter", "System"):
            if is_llm_datacenter_closed(row) and not isinstance(row.get(field), str):
                raise HarvestError(f"{SUMMARY_FILE}: [{index}].{field}: expected a string")
    return rows


def harvest_round(
    tree: SourceTree,
    round_info: MlperfRound,
    gpus: dict[str, GpuEntry],
    models: dict[str, ModelEntry],
) -> list[Harvested]:
    """Every closed datacenter LLM row of the round's summary, as a result or a skip."""
    rows = [row for row in read_summary(tree) if is_llm_datacenter_closed(row)]
    logs = tree.read_many([f"{row['Location']}/{LOG_FILE}" for row in rows])
    return [
        harvest_row(row, logs[f"{row['Location']}/{LOG_FILE}"], round_info, gpus, models)
        for row in rows
    ]
