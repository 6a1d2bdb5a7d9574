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

Its parts: `mlperf_names` (accelerators, benchmarks, engines), `mlperf_log` (LoadGen's summary
and the load point) and `mlperf_citation` (conditions, footnote); `harvest_mlperf` harvests a
round into a registry.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from infermeter.registry.catalog import gpu_named
from infermeter.registry.harvest.errors import HarvestError, RowSkipped
from infermeter.registry.harvest.mlperf_citation import (
    cited_entry,
    conditions,
    footnote,
    row_entry,
    submitter_and_system,
)
from infermeter.registry.harvest.mlperf_detail_log import detail_path, detail_summary
from infermeter.registry.harvest.mlperf_endpoints import (
    endpoints_point,
    endpoints_rules,
    read_run,
    round_bounds,
    summary_path,
)
from infermeter.registry.harvest.mlperf_location import location, results_folder
from infermeter.registry.harvest.mlperf_log import (
    SAMPLE_UNITS,
    conf_percentile,
    load_point,
    parse_log_summary,
)
from infermeter.registry.harvest.mlperf_names import (
    BENCHMARK_MODELS,
    GPU_NAMES,
    INFERRED_TOKEN_BENCHMARKS,
    LLM_FAMILIES,
    accuracy_target,
    benchmark_family,
    open_model,
    parse_engine,
)
from infermeter.registry.harvest.mlperf_power import is_power_capped, read_power_limits
from infermeter.registry.harvest.mlperf_precision import (
    Evidence,
    measurement_folder,
    ran_precision,
    read_evidence,
)
from infermeter.registry.harvest.mlperf_rounds import check_table_round
from infermeter.registry.harvest.mlperf_rounds import round_name as round_name_of
from infermeter.registry.harvest.mlperf_runs import one_row_per_run
from infermeter.registry.harvest.mlperf_setup import (
    code_root,
    engine_from_setup,
    engine_of_backend,
    engine_of_build_tag,
    read_code_backends,
    read_setups,
)
from infermeter.registry.harvest.mlperf_systems import read_runs
from infermeter.registry.harvest.mlperf_v61 import SUMMARY_JSON, read_summary_json
from infermeter.registry.harvest.options import HarvestOptions
from infermeter.registry.harvest.outcome import Harvested, HarvestReport
from infermeter.registry.harvest.reported import (
    Catalogs,
    Deployment,
    Precision,
    reported_result,
)
from infermeter.registry.harvest.reported import harvest_row as harvest_row_of
from infermeter.registry.harvest.source_json import parsed_json, whole_number
from infermeter.registry.harvest.sources import NOT_CITED, FileCitation
from infermeter.registry.harvest.tree import SourceTree
from infermeter.registry.models import (
    DatasetLength,
    GpuEntry,
    Identity,
    LoadPoint,
    MlperfEntry,
    ModelEntry,
    RateSearch,
    ReportedSource,
    Result,
    Workload,
)

__all__ = [
    "LOG_FILE",
    "SUMMARY_FILE",
    "MlperfRound",
    "harvest_mlperf",
    "harvest_round",
    "harvest_row",
    "is_llm_datacenter",
    "log_path",
    "read_summary",
    "result_key",
    "row_key",
]

SUMMARY_FILE = "summary_results.json"
DIVISIONS = ("closed", "open")
"""The open division may change the model or the rules: its results are a lane of their own."""
LOG_FILE = "performance/run_1/mlperf_log_summary.txt"


@dataclass(frozen=True)
class OtherRunFiles:
    """What a run whose `mlperf_log_summary.txt` is missing may have instead."""

    result_summary: str | None = None
    """The endpoints harness's `result_summary.json` (`mlperf_endpoints`)."""
    detail_log: str | None = None
    """LoadGen's `mlperf_log_detail.txt` (`mlperf_detail_log`)."""
    bounds: dict[tuple[str, str], RateSearch] = field(default_factory=dict)
    """The round's TTFT/TPOT bounds by benchmark family and scenario
    (`mlperf_endpoints.round_bounds`), for an endpoints run, whose file states none."""


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
    read_from: str | None = None
    """Where the bytes were read when not from `repository_url` itself (a fork that holds the
    commit), said in every result's conditions."""


def row_key(round_name: str, row: dict[str, Any]) -> str:
    """The source key of a summary row: round, result ID (or run path), benchmark, scenario."""
    return f"mlperf {round_name} {row_entry(row)} {row.get('Model')} {row.get('Scenario')}"


def result_key(result: Result) -> str | None:
    """The source key of a harvested MLPerf result in the registry (None: not MLPerf)."""
    mlperf = getattr(result.source, "mlperf", None)
    if mlperf is None:
        return None
    return f"mlperf {mlperf.round} {mlperf.entry()} {mlperf.benchmark} {mlperf.scenario}"


def is_llm_datacenter(row: dict[str, Any]) -> bool:
    """Whether a summary row is a datacenter LLM result of the closed or the open division."""
    suites = str(row.get("Suite", "")).split(",")
    model = str(row.get("Model", ""))
    return (
        row.get("Category") in DIVISIONS
        and "datacenter" in suites
        and model.startswith(LLM_FAMILIES)
    )


def log_path(row: dict[str, Any]) -> str:
    """The row's `mlperf_log_summary.txt`: its `Location` is the scenario's folder (v4.1–v5.1)
    or, from v6.0, the run's own folder (`./…/performance/run_1`)."""
    folder = location(row)
    if re.search(r"/performance/run_\d+$", folder):
        return f"{folder}/{LOG_FILE.rsplit('/', 1)[-1]}"
    return f"{folder}/{LOG_FILE}"


def conf_paths(row: dict[str, Any]) -> list[str]:
    """Where the `mlperf.conf` of a sample-measured row not run Offline may be (its latency
    bound's percentile is set there): its results folder (v6.0), else its measurements folder
    (v4.1); none for any other row."""
    measured_in_samples = row.get("Performance_Units") in SAMPLE_UNITS or (
        benchmark_family(str(row.get("Model", ""))) in INFERRED_TOKEN_BENCHMARKS
    )
    if not measured_in_samples or row.get("Scenario") == "Offline":
        return []
    return [f"{results_folder(row)}/mlperf.conf", f"{measurement_folder(row)}/mlperf.conf"]


def _gpu(
    row: dict[str, Any], gpus: dict[str, GpuEntry], power: tuple[int, str] | None = None
) -> GpuEntry:
    """The catalog GPU the row names, at the power limit its submission set for a MaxQ run
    (`mlperf_power`)."""
    accelerator = str(row.get("Accelerator", "")).strip()
    if not accelerator:
        raise RowSkipped("no accelerator named (a CPU-only system)")
    if "," in accelerator or " and " in accelerator or " + " in accelerator:
        raise RowSkipped(
            f"heterogeneous system ({accelerator}): two accelerator kinds in one result"
        )
    counted = re.search(r"\s*\(x(\d+)\)$", accelerator)
    if counted:
        total = whole_number(row, "Nodes") * whole_number(row, "a#")
        if int(counted.group(1)) != total:
            raise RowSkipped(
                f"accelerator {accelerator!r} counts {counted.group(1)}, but Nodes × a# is {total}"
            )
        accelerator = accelerator[: counted.start()]
    if is_power_capped(row) and power is None:
        raise RowSkipped(
            f"a power-capped (MaxQ) run of {accelerator!r} whose power limit no file read states"
        )
    gpu = gpu_named(gpus, GPU_NAMES, accelerator, power[0] if power else None)
    if gpu is None:
        limit = f" at a {power[0]} W power limit" if power else ""
        raise RowSkipped(f"accelerator {accelerator!r}{limit} has no GPU catalog id")
    return gpu


def harvest_row(
    row: dict[str, Any],
    log_text: str | None,
    round_info: MlperfRound,
    catalogs: tuple[dict[str, GpuEntry], dict[str, ModelEntry]],
    evidence: Evidence | None = None,
    setup: dict[str, str | None] | None = None,
    conf: str | None = None,
    backends: frozenset[str] = frozenset(),
    power: tuple[int, str] | None = None,
    other: OtherRunFiles | None = None,
) -> Harvested:
    """One summary row as a result, or skipped with its reason (`evidence`: the files that
    say which precision ran, see `mlperf_precision`; `setup`: the build configurations that
    say which engine ran where `Software` names none, see `mlperf_setup`; `conf`: the run's
    `mlperf.conf`, see `conf_paths`; `backends`: the backend folders of the benchmark's code,
    see `mlperf_setup.engine_of_backend`; `power`: a MaxQ run's power limit and where it was
    read, see `mlperf_power`; `other`: where the run has no LoadGen summary log, what it has
    instead, see `OtherRunFiles`)."""
    key = row_key(round_info.round, row)
    ran = (evidence, setup or {}, conf, backends, power)
    run = (log_text, other or OtherRunFiles())
    return harvest_row_of(key, partial(_result, row, run, round_info, catalogs, ran, key))


def _identity(
    row: dict[str, Any],
    ran_on: tuple[GpuEntry, dict[str, ModelEntry]],
    engine: tuple[str, str, str],
    precision: Precision,
    model_id: str | None = None,
) -> Identity:
    gpu, models = ran_on
    benchmark = str(row["Model"])
    model_id = model_id or BENCHMARK_MODELS.get(benchmark_family(benchmark))
    if model_id is None or model_id not in models:
        raise RowSkipped(f"benchmark {benchmark} has no model catalog id")
    nodes, per_node = whole_number(row, "Nodes"), whole_number(row, "a#")
    deployment = Deployment(
        gpu, nodes * per_node, engine[0], engine[1], models[model_id], precision, nodes=nodes
    )
    return deployment.identity(
        Workload(
            profile="custom",
            input_len=DatasetLength(kind="dataset"),
            output_len=DatasetLength(kind="dataset"),
            dataset=f"MLPerf Inference {benchmark_family(benchmark)} data set",
            accuracy_target=accuracy_target(benchmark),
        ),
    )


def _precision(
    row: dict[str, Any], evidence: Evidence | None, own: tuple[str, str] | None
) -> tuple[Precision, str | None]:
    """The precision that ran and the note saying why it is not the one declared (an open
    division's own model: its name's)."""
    if own is None:
        return ran_precision(row, evidence or Evidence({}, {}))
    note = (
        f"Open division: the submitter ran its own model {row.get('UsedModel')} ({own[0]}, "
        f"{own[1]} as its name states; weight_data_types {row.get('weight_data_types')}) on the "
        f"{row['Model']} benchmark's data set and accuracy target."
    )
    return Precision(quantization=own[1]), note


def _source(
    row: dict[str, Any],
    round_info: MlperfRound,
    key: str,
    conditions_text: str,
) -> ReportedSource:
    """The row's citation, with what MLPerf's messaging guidelines require to show it."""
    # A submitter folder of words (v6.1's `Naeem Khoshnevis`) is a path with spaces.
    folder = location(row).replace(" ", "%20")
    url = f"{round_info.repository_url}/tree/{round_info.commit}/{folder}"
    retrieved = round_info.retrieved_for(key)
    benchmark = str(row["Model"])
    # As the table states it; the model refuses (and the row is skipped) any other category.
    availability: Any = str(row.get("Availability"))
    return ReportedSource(
        kind="reported",
        url=url,
        title=f"MLPerf Inference {round_info.round} {cited_entry(row)}: "
        f"{submitter_and_system(str(row['Submitter']), str(row['System']))}, "
        f"{benchmark} {row['Scenario']}",
        publisher=f"MLCommons (submitted by {row['Submitter']})",
        conditions=conditions_text,
        retrieved=retrieved,
        submitter=round_info.submitter,
        revision=round_info.commit,
        mlperf=MlperfEntry(
            round=round_info.round,
            result_id=None if row.get("ID") is None else str(row["ID"]),
            path=location(row) if row.get("ID") is None else None,
            division=row["Category"],  # closed or open: is_llm_datacenter kept no other
            availability=availability,
            suite="datacenter",
            benchmark=benchmark,
            scenario=row["Scenario"],
            submitter=str(row["Submitter"]),
            system=str(row["System"]),
            verified=True,
            footnote=footnote(round_info.round, row, url, retrieved),
        ),
    )


def _run_point(
    row: dict[str, Any],
    run: tuple[str | None, OtherRunFiles],
    conf: str | None,
) -> tuple[LoadPoint, dict[str, str], str | None, str | None]:
    """The row's load point from its LoadGen summary log, else its detail log, else its
    endpoints harness's `result_summary.json`, with the log's lines, the rules an endpoints
    run ran under, and a note saying which file was read where it is not the summary log."""
    log_text, other = run
    where, note = log_path(row), None
    if log_text is not None:
        log = parse_log_summary(log_text)
    elif other.detail_log is not None:
        where = detail_path(where)
        log = detail_summary(other.detail_log, where)
        note = (
            f"The run's mlperf_log_summary.txt is not in the source read: its figures are the "
            f"ones LoadGen wrote to {where}, read under the names the summary log gives them."
        )
    elif other.result_summary is not None:
        measured = read_run(other.result_summary, summary_path(row))
        point = endpoints_point(row, measured, other.bounds)
        return point, {}, endpoints_rules(row, measured), None
    else:
        raise RowSkipped(f"{where} is missing")
    percentile = conf_percentile(conf, str(row["Model"]), str(row["Scenario"]))
    return load_point(row, log, where, percentile), log, None, note


def _result(
    row: dict[str, Any],
    run: tuple[str | None, OtherRunFiles],
    round_info: MlperfRound,
    catalogs: tuple[dict[str, GpuEntry], dict[str, ModelEntry]],
    ran: tuple[
        Evidence | None, dict[str, str | None], str | None, frozenset[str], tuple[int, str] | None
    ],
    key: str,
) -> Result:
    evidence, setup, conf, backends, power = ran
    benchmark = str(row["Model"])
    used = str(row.get("UsedModel", benchmark))
    own = open_model(used) if row.get("Category") == "open" else None
    if own is None and used.replace("_", ".") != benchmark.replace("_", "."):
        raise RowSkipped(f"the same run as {used} (MLPerf reuses the stricter benchmark's result)")
    gpu = _gpu(row, catalogs[0], power)  # a system this cannot file is said first
    named = parse_engine(str(row.get("Software", ""))) or engine_from_setup(setup)
    engine = engine_of_build_tag(engine_of_backend(named, backends, code_root(row)), row)
    if engine is None:
        raise RowSkipped(
            f"software {row.get('Software')!r} names no inference engine with a version"
        )
    precision, precision_note = _precision(row, evidence, own)
    identity = _identity(row, (gpu, catalogs[1]), engine, precision, own[0] if own else None)
    point, log, rules, run_note = _run_point(row, run, conf)
    stated = (precision_note, _power_note(power), run_note, round_info.read_from)
    notes = [note for note in stated if note]
    if row.get("inferred"):
        notes.append(
            "MLCommons' results table marks this row inferred (inferred: 1); it is shown as "
            "the table states it, never as measured."
        )
    conditions_text = " ".join([conditions(row, log, engine[2], rules), *notes])
    return reported_result(identity, [point], _source(row, round_info, key, conditions_text))


def _power_note(power: tuple[int, str] | None) -> str | None:
    if power is None:
        return None
    return (
        f"Power-capped: MLPerf's power category (MaxQ), each GPU limited to {power[0]} W by the "
        f"submission ({power[1]}; NVIDIA's harness applies it with nvidia-smi -pl), not the "
        "part's stock board power: filed under the part at that limit."
    )


def read_summary(tree: SourceTree, round_name: str | None = None) -> list[dict[str, Any]]:
    """The rows of `summary_results.json`, or of v6.1's `summary.json` renamed to its fields
    (`mlperf_v61`), or, where the source holds neither and `round_name` is given, one row per
    run log built from its system description (`mlperf_systems`); HarvestError when there is
    no table to read or it is malformed."""
    tables = tree.read_many([SUMMARY_FILE, SUMMARY_JSON])
    v61 = tables[SUMMARY_JSON]
    if tables[SUMMARY_FILE] is None and v61 is not None:
        return read_summary_json(v61)
    if tables[SUMMARY_FILE] is None and round_name is not None:
        runs = read_runs(tree, round_name)
        if runs:
            return runs
    text = tree.read_text(SUMMARY_FILE)
    rows = parsed_json(text, SUMMARY_FILE)
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise HarvestError(f"{SUMMARY_FILE}: expected a JSON array of objects")
    for index, row in enumerate(rows):
        for name in ("ID", "Model", "Scenario", "Location", "Submitter", "System"):
            if is_llm_datacenter(row) and not isinstance(row.get(name), str):
                raise HarvestError(f"{SUMMARY_FILE}: [{index}].{name}: expected a string")
    return rows


def _other_run_files(
    tree: SourceTree, rows: list[dict[str, Any]], logs: dict[str, str | None]
) -> list[OtherRunFiles | None]:
    """For each row whose summary log is missing, what its run has instead (None for the
    others), read in one go."""
    missing = [row for row in rows if logs[log_path(row)] is None]
    paths = [detail_path(log_path(row)) for row in missing]
    texts = tree.read_many([*paths, *[summary_path(row) for row in missing]])
    bounds = round_bounds(rows, [logs[log_path(row)] for row in rows])
    return [
        None
        if logs[log_path(row)] is not None
        else OtherRunFiles(
            texts.get(summary_path(row)), texts.get(detail_path(log_path(row))), bounds
        )
        for row in rows
    ]


def harvest_round(
    tree: SourceTree,
    round_info: MlperfRound,
    catalogs: Catalogs,
) -> list[Harvested]:
    """Every datacenter LLM row of the round's summary (closed and open division), as a
    result or a skip; a run submitted under both accuracy targets is one result."""
    table = read_summary(tree, round_info.round)
    check_table_round(table, round_info.round)
    rows = [row for row in table if is_llm_datacenter(row)]
    logs = tree.read_many([log_path(row) for row in rows])
    others = _other_run_files(tree, rows, logs)
    evidence = read_evidence(tree, rows)
    setups = read_setups(tree, rows)
    backends = read_code_backends(tree, rows)
    powers = read_power_limits(tree, rows)
    confs = tree.read_many(sorted({path for row in rows for path in conf_paths(row)}))
    harvested = [
        harvest_row(
            row,
            logs[log_path(row)],
            round_info,
            catalogs,
            evidence[index],
            setups[index],
            next((text for path in conf_paths(row) if (text := confs[path]) is not None), None),
            backends[index],
            powers[index],
            others[index],
        )
        for index, row in enumerate(rows)
    ]
    return one_row_per_run(rows, [logs[log_path(row)] for row in rows], harvested)


def harvest_mlperf(
    source: Path, round_text: str, options: HarvestOptions, *, cited: FileCitation = NOT_CITED
) -> HarvestReport:
    """Harvest one MLPerf Inference round from a checkout of its results repository (`cited`:
    the repository's URL, default mlcommons' of the round; the commit read, default HEAD; where
    the bytes were read, when that is not the repository cited)."""
    round_name = round_name_of(round_text)
    tree = SourceTree.open(source, cited.commit)
    if tree.commit is None:
        raise HarvestError(
            f"--from: {source} is no git repository; name the commit it was copied from "
            "with --commit"
        )
    round_info = MlperfRound(
        round=round_name,
        repository_url=cited.url or f"https://github.com/mlcommons/inference_results_{round_name}",
        commit=tree.commit,
        retrieved_for=options.retrieved_for(result_key),
        submitter=options.submitter,
        read_from=cited.read_from,
    )
    rows = harvest_round(tree, round_info, options.catalogs())
    return options.apply(rows, result_key, f"MLPerf Inference {round_name} at {tree.commit[:12]}")
