"""The index: every result × load point as one flat row, with figures derived at current prices.

The site and readers use the index instead of the result files. It is written as JSON and CSV
under content-hashed names (`index-<sha12>.json`, `index-<sha12>.csv`) beside a small, stable
`index.json` manifest that points at them, so a cache can keep the hashed files forever.

Derived figures are never stored in result files; they are computed here by `calculators` from
the measured throughput and the price catalog, so they follow price changes:

- `$/1M output tokens` and `$/1M accepted output tokens` at the cheapest on-demand,
  interruptible and reserved price of the GPU (per GPU-hour × GPU count), with the price id used;
- output tokens per dollar at each of those prices;
- output tokens/s per GPU; tokens/s per user; output tokens per joule.

A figure whose inputs are missing is null, never estimated. Writing the same registry twice gives
the same bytes: rows sorted by file and point, keys in a fixed order, floats to 6 significant
digits where derived.
"""

import csv
import dataclasses
import hashlib
import io
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from calculators.cost import tokens_per_dollar, usd_per_million_tokens
from registry.catalog import load_prices
from registry.checks.structure import result_schema_errors
from registry.corrections import (
    CORRECTIONS_FILE,
    CorrectionEntry,
    latest_entries,
    load_corrections,
)
from registry.errors import InvalidFileError, Problem, json_path
from registry.lookup import TIERS, cheapest_prices
from registry.models import (
    LatencyStats,
    LoadPoint,
    PriceEntry,
    ReportedSource,
    Result,
    comparability_key,
    load_point_key,
)
from registry.models.measurements import INTERRUPTED_VERDICT
from registry.pareto import front_flags
from registry.roofline_share import RooflineBounds, RooflineShare
from registry.store import (
    RESULTS_DIR,
    canonical_json,
    parse_json,
    parse_result_data,
    result_path,
    write_text_atomic,
)
from registry.tree import walk_results
from registry.workloads import scenario, workload_key, workload_label

INDEX_SCHEMA_VERSION = 1
MANIFEST_NAME = "index.json"
_HASHED_NAME = re.compile(r"^index-[0-9a-f]{12}\.(?:json|csv)$")
_SIGNIFICANT_DIGITS = 6


def _column(description: str) -> Any:
    return field(metadata={"description": description})


@dataclass(frozen=True)
class IndexRow:
    """One load point of one result, flattened; the field order is the column order."""

    # identity
    result_id: str = _column("Content id of the result file.")
    file: str = _column("Path of the result file in the registry repository.")
    point_index: int = _column("Position of the load point in the file's `points`, from 0.")
    source_kind: str = _column("`measured` by a tool, or `reported` from a cited source.")
    lane: str = _column(
        "`measured`, `reported`, or `mlperf` (MLPerf results: shown apart, never ranked against "
        "other lanes; figures derived from them are not verified by MLCommons)."
    )
    mlperf_result_id: str | None = _column("MLPerf result ID (MLPerf lane only).")
    unofficial: bool = _column("True when the source is a copy or fork, not the publisher's own.")
    gpu: str = _column("GPU catalog id.")
    gpu_count: int = _column("GPUs that served the model.")
    model: str = _column("Model catalog id.")
    quantization: str | None = _column("Weight quantization; null for unquantized weights.")
    engine: str = _column("Inference engine.")
    engine_version: str = _column("Engine version.")
    tensor_parallel_size: int | None = _column("Tensor parallel size; null if not stated.")
    profile: str = _column("Traffic profile.")
    workload: str = _column(
        "Input → output lengths in tokens (fixed, a range `min–max`, `~mean` of a distribution, "
        "or a dataset's own) and the dataset, in a reader's words."
    )
    workload_key: str = _column(
        "Hash of the workload's lengths and dataset: rows compare only within one workload."
    )
    scenario: str = _column(
        "What the point measured: `closed` (fixed concurrency), `open` (arrival rate), `offline` "
        "(all requests queued at once), `server_at_slo` (highest rate or concurrency within "
        "stated bounds) or `static_batch` (requests started together as one batch)."
    )
    arrival: str = _column(
        "`closed` (fixed concurrency), an open arrival process (`poisson`, `gamma`, `constant`), "
        "`offline` (every request queued at once; no concurrency, rate or per-user rate), or "
        "`static_batch` (`concurrency` requests started together as one batch)."
    )
    concurrency: int | None = _column(
        "Requests in flight (level, cap for open arrival, or a static batch's size)."
    )
    request_rate: float | None = _column(
        "Arrival rate, requests/s (open arrival): the target, or the highest rate that met "
        "the rate search's bounds."
    )
    load_label: str = _column("The load in a reader's words.")
    rate_search_percentile: float | None = _column(
        "Server at an SLO (the highest rate, or for `closed` arrival the highest concurrency, "
        "that met the bounds): the percentile the bounds apply to (99 = p99); null otherwise."
    )
    rate_search_ttft_ms: float | None = _column(
        "Server at an SLO: bound on that percentile of TTFT, ms."
    )
    rate_search_tpot_ms: float | None = _column(
        "Server at an SLO: bound on that percentile of TPOT, ms."
    )
    rate_search_e2e_ms: float | None = _column(
        "Server at an SLO: bound on that percentile of end-to-end latency, ms."
    )
    correction: str | None = _column(
        "`withdrawal` or `correction` when registry/corrections.yaml lists the result (it is "
        "then left out of rankings and replicate spreads); null for a current result."
    )
    correction_date: str | None = _column("When the correction or withdrawal was made.")
    correction_reason: str | None = _column("Why the result was corrected or withdrawn.")
    replaced_by: str | None = _column("Content id of the result that corrects this one.")
    interrupted: bool = _column(
        "True for a load point cut short by a Ctrl-C or SIGTERM (its `interrupted` verdict): its "
        "figures cover only the requests that finished, so it is shown on its result's page "
        "but left out of rankings, replicate spreads and the Pareto front."
    )
    replicate_key: str = _column(
        "Hash of the point's comparability key: rows that share it are replicates of one setup."
    )
    replicates: int = _column("Rows in the index with this replicate_key (1 = no replicate).")
    output_tokens_per_s_min: float | None = _column(
        "Lowest output tokens/s among the replicates (the spread's low end)."
    )
    output_tokens_per_s_max: float | None = _column(
        "Highest output tokens/s among the replicates (the spread's high end)."
    )
    # measured
    duration_s: float | None = _column("Wall time of the measured window, seconds.")
    requests_completed: int | None = _column("Requests that finished successfully.")
    requests_failed: int | None = _column("Requests that failed.")
    failure_rate: float | None = _column("Failed / (completed + failed) requests.")
    output_tokens_per_s: float | None = _column("Output tokens/s of the whole deployment.")
    total_tokens_per_s: float | None = _column(
        "Prompt plus output tokens/s of the whole deployment, where the source states that "
        "figure (never derived from the output rate, nor the output rate from it)."
    )
    accepted_output_tokens_per_s: float | None = _column(
        "Output tokens/s of requests that met the SLO."
    )
    ttft_ms_p50: float | None = _column("Time to first token, median, ms.")
    ttft_ms_p95: float | None = _column("Time to first token, 95th percentile, ms.")
    ttft_ms_p99: float | None = _column("Time to first token, 99th percentile, ms.")
    tpot_ms_p50: float | None = _column("Time per output token, median, ms.")
    tpot_ms_mean: float | None = _column("Time per output token, mean, ms.")
    tpot_ms_p99: float | None = _column("Time per output token, 99th percentile, ms.")
    e2e_ms_mean: float | None = _column(
        "End-to-end latency, mean, ms (a static batch's: the whole batch's time)."
    )
    e2e_ms_p95: float | None = _column("End-to-end latency, 95th percentile, ms.")
    e2e_ms_p99: float | None = _column("End-to-end latency, 99th percentile, ms.")
    gpu_utilization_pct: float | None = _column("Mean GPU utilization, percent.")
    energy_j: float | None = _column("Energy of all GPUs over the window, joules.")
    # derived
    output_tokens_per_s_per_gpu: float | None = _column("Output tokens/s ÷ GPU count.")
    tokens_per_s_per_user: float | None = _column(
        "Output tokens/s one request sees (see `tokens_per_s_per_user_basis`)."
    )
    tokens_per_s_per_user_basis: str | None = _column(
        "`concurrency`: output tokens/s ÷ concurrency (closed loop); "
        "`tpot`: 1000 ÷ mean (else median) TPOT ms; null for an offline point without TPOT."
    )
    output_tokens_per_joule: float | None = _column(
        "Output tokens ÷ energy, or output tokens/s ÷ mean power."
    )
    roofline_tokens_per_s: float | None = _column(
        "The physical upper bound on the deployment's output tokens/s at this load (the smaller "
        "of the memory-bandwidth and compute bounds, `registry.roofline_share`); null where the "
        "catalogs give none (`roofline_basis` says why)."
    )
    roofline_pct: float | None = _column("Output tokens/s as a percentage of that bound.")
    roofline_basis: str | None = _column(
        "Which bound: bandwidth or compute, at which batch and context; where the catalogs "
        "give none, why not (`no sourced compute rate`: the batch is not stated and the GPU "
        "states no peak rate)."
    )
    on_pareto_front: bool | None = _column(
        "On the Pareto front (tokens/s per user against output tokens/s per GPU) of its model × "
        "workload × GPU × count, among the points of real sweeps (results with two or more "
        "closed- or open-loop points); null for points outside a sweep (offline, server at an "
        "SLO, a single point, no per-user rate)."
    )
    on_demand_price_id: str | None = _column("Price catalog id of the cheapest on-demand price.")
    on_demand_usd_per_hour: float | None = _column("That price × GPU count, $/hour.")
    on_demand_usd_per_million_output_tokens: float | None = _column(
        "$ per 1M output tokens at that price."
    )
    on_demand_usd_per_million_accepted_tokens: float | None = _column(
        "$ per 1M accepted output tokens at that price."
    )
    on_demand_output_tokens_per_dollar: float | None = _column("Output tokens per $ at that price.")
    interruptible_price_id: str | None = _column(
        "Price catalog id of the cheapest interruptible (spot) price."
    )
    interruptible_usd_per_hour: float | None = _column("That price × GPU count, $/hour.")
    interruptible_usd_per_million_output_tokens: float | None = _column(
        "$ per 1M output tokens at that price."
    )
    interruptible_usd_per_million_accepted_tokens: float | None = _column(
        "$ per 1M accepted output tokens at that price."
    )
    interruptible_output_tokens_per_dollar: float | None = _column(
        "Output tokens per $ at that price."
    )
    reserved_price_id: str | None = _column("Price catalog id of the cheapest reserved price.")
    reserved_usd_per_hour: float | None = _column("That price × GPU count, $/hour.")
    reserved_usd_per_million_output_tokens: float | None = _column(
        "$ per 1M output tokens at that price."
    )
    reserved_usd_per_million_accepted_tokens: float | None = _column(
        "$ per 1M accepted output tokens at that price."
    )
    reserved_output_tokens_per_dollar: float | None = _column("Output tokens per $ at that price.")

    def as_dict(self) -> dict[str, Any]:
        """The row as JSON data, keys in column order."""
        return {name: getattr(self, name) for name in COLUMNS}


COLUMNS: tuple[str, ...] = tuple(column.name for column in dataclasses.fields(IndexRow))
"""The index's columns, in order."""

COLUMN_DESCRIPTIONS: dict[str, str] = {
    column.name: column.metadata["description"] for column in dataclasses.fields(IndexRow)
}


@dataclass(frozen=True)
class IndexFiles:
    """What `write_index` wrote."""

    manifest: Path
    json_file: Path
    csv_file: Path
    results: int
    rows: int
    removed: tuple[Path, ...]


def _rounded(value: float | None) -> float | None:
    # Derived figures carry no more precision than their inputs; fewer digits, calmer diffs.
    if value is None:
        return None
    return float(f"{value:.{_SIGNIFICANT_DIGITS}g}")


def _positive(value: float | None) -> float | None:
    return value if value is not None and value > 0 and math.isfinite(value) else None


def _stat(stats: LatencyStats | None, name: str) -> float | None:
    return None if stats is None else getattr(stats, name)


def _failure_rate(point: LoadPoint) -> float | None:
    completed, failed = point.requests.completed, point.requests.failed
    if completed is None or failed is None or completed + failed == 0:
        return None
    return failed / (completed + failed)


def _per_user(
    point: LoadPoint, output_tokens_per_s: float | None
) -> tuple[float | None, str | None]:
    load = point.load
    if load.arrival == "closed" and load.concurrency is not None and output_tokens_per_s:
        return output_tokens_per_s / load.concurrency, "concurrency"
    tpot = _positive(_stat(point.tpot_ms, "mean")) or _positive(_stat(point.tpot_ms, "p50"))
    if tpot is not None:
        return 1000.0 / tpot, "tpot"
    return None, None


def _tokens_per_joule(point: LoadPoint) -> float | None:
    gpu = point.telemetry.gpu if point.telemetry is not None else None
    if gpu is None:
        return None
    energy_j, output_tokens = _positive(gpu.energy_j), point.tokens.output
    if energy_j is not None and output_tokens is not None:
        return output_tokens / energy_j
    power_w, throughput = _positive(gpu.power_w_mean), point.throughput.output_tokens_per_s
    if power_w is not None and throughput is not None:
        return throughput / power_w
    return None


def _tier_columns(
    tier: str,
    price: PriceEntry | None,
    gpu_count: int,
    output_tokens_per_s: float | None,
    accepted_tokens_per_s: float | None,
) -> dict[str, Any]:
    columns: dict[str, Any] = {
        f"{tier}_price_id": None,
        f"{tier}_usd_per_hour": None,
        f"{tier}_usd_per_million_output_tokens": None,
        f"{tier}_usd_per_million_accepted_tokens": None,
        f"{tier}_output_tokens_per_dollar": None,
    }
    if price is None:
        return columns
    deployment_usd_per_hour = price.usd_per_gpu_hour * gpu_count
    columns[f"{tier}_price_id"] = price.id
    columns[f"{tier}_usd_per_hour"] = _rounded(deployment_usd_per_hour)
    if output_tokens_per_s is not None:
        columns[f"{tier}_usd_per_million_output_tokens"] = _rounded(
            usd_per_million_tokens(deployment_usd_per_hour, output_tokens_per_s)
        )
        columns[f"{tier}_output_tokens_per_dollar"] = _rounded(
            tokens_per_dollar(deployment_usd_per_hour, output_tokens_per_s)
        )
    if accepted_tokens_per_s is not None:
        columns[f"{tier}_usd_per_million_accepted_tokens"] = _rounded(
            usd_per_million_tokens(deployment_usd_per_hour, accepted_tokens_per_s)
        )
    return columns


def _roofline_columns(share: RooflineShare | None) -> dict[str, Any]:
    if share is None:
        return {"roofline_tokens_per_s": None, "roofline_pct": None, "roofline_basis": None}
    bound = share.bound_tokens_per_s
    return {
        "roofline_tokens_per_s": None if bound is None else _rounded(bound),
        "roofline_pct": _rounded(share.pct),
        "roofline_basis": share.basis,
    }


def _lane(result: Result) -> str:
    source = result.source
    if isinstance(source, ReportedSource) and source.mlperf is not None:
        return "mlperf"
    return source.kind


def _replicate_key(
    result: Result, point: LoadPoint, result_key: tuple[Any, ...] | None = None
) -> str:
    text = json.dumps(load_point_key(result, point, result_key), sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _stands_alone(row: IndexRow) -> bool:
    return row.correction is not None or row.interrupted


def with_replicate_spread(rows: Sequence[IndexRow]) -> list[IndexRow]:
    """Rows with the replicate count and the output-throughput spread of their group; a
    corrected or withdrawn result, and an interrupted point, is no replicate of anything (it
    stands alone)."""
    groups: dict[str, list[IndexRow]] = {}
    for row in rows:
        if _stands_alone(row):
            continue
        groups.setdefault(row.replicate_key, []).append(row)
    spread = []
    for row in rows:
        group = [row] if _stands_alone(row) else groups[row.replicate_key]
        values = [r.output_tokens_per_s for r in group if r.output_tokens_per_s is not None]
        spread.append(
            dataclasses.replace(
                row,
                replicates=len(group),
                output_tokens_per_s_min=min(values) if values else None,
                output_tokens_per_s_max=max(values) if values else None,
            )
        )
    return spread


def index_rows(
    result: Result,
    file: str,
    prices: Iterable[PriceEntry],
    correction: CorrectionEntry | None = None,
    bounds: RooflineBounds | None = None,
) -> list[IndexRow]:
    """The rows of one result: one per load point, priced with `prices`, marked with the
    corrections file's entry for it (`correction`) when there is one, each with its share of
    the roofline bound when `bounds` (the GPU and model catalogs) are given."""
    identity = result.identity
    shares = bounds.shares(result) if bounds is not None else [None] * len(result.points)
    gpu_count = identity.gpu.count
    cheapest = cheapest_prices(identity.gpu.id, prices)
    result_key = comparability_key(result)  # once per result: its points share it
    rows = []
    for point_index, point in enumerate(result.points):
        output_tokens_per_s = _positive(point.throughput.output_tokens_per_s)
        accepted_tokens_per_s = _positive(point.throughput.accepted_output_tokens_per_s)
        per_user, per_user_basis = _per_user(point, output_tokens_per_s)
        gpu_telemetry = point.telemetry.gpu if point.telemetry is not None else None
        search = point.load.slo_search
        mlperf = getattr(result.source, "mlperf", None)
        tiers: dict[str, Any] = {}
        for tier in TIERS:
            tiers |= _tier_columns(
                tier, cheapest.get(tier), gpu_count, output_tokens_per_s, accepted_tokens_per_s
            )
        rows.append(
            IndexRow(
                result_id=result.id,
                file=file,
                point_index=point_index,
                source_kind=result.source.kind,
                lane=_lane(result),
                mlperf_result_id=mlperf.result_id if mlperf is not None else None,
                unofficial=bool(getattr(result.source, "unofficial", None)),
                gpu=identity.gpu.id,
                gpu_count=gpu_count,
                model=identity.model.id,
                quantization=identity.model.quantization,
                engine=identity.engine.name,
                engine_version=identity.engine.version,
                tensor_parallel_size=identity.serving.tensor_parallel_size,
                profile=identity.workload.profile,
                workload=workload_label(identity.workload),
                workload_key=workload_key(identity.workload),
                scenario=scenario(point.load),
                arrival=point.load.arrival,
                concurrency=point.load.concurrency,
                request_rate=point.load.request_rate,
                load_label=point.load.label(),
                rate_search_percentile=search.percentile if search is not None else None,
                rate_search_ttft_ms=search.ttft_ms if search is not None else None,
                rate_search_tpot_ms=search.tpot_ms if search is not None else None,
                rate_search_e2e_ms=search.e2e_ms if search is not None else None,
                correction=correction.kind if correction is not None else None,
                correction_date=correction.date if correction is not None else None,
                correction_reason=correction.reason if correction is not None else None,
                replaced_by=correction.replaced_by if correction is not None else None,
                interrupted=any(v.code == INTERRUPTED_VERDICT for v in point.validity),
                replicate_key=_replicate_key(result, point, result_key),
                replicates=1,
                output_tokens_per_s_min=point.throughput.output_tokens_per_s,
                output_tokens_per_s_max=point.throughput.output_tokens_per_s,
                duration_s=point.duration_s,
                requests_completed=point.requests.completed,
                requests_failed=point.requests.failed,
                failure_rate=_rounded(_failure_rate(point)),
                output_tokens_per_s=point.throughput.output_tokens_per_s,
                total_tokens_per_s=point.throughput.total_tokens_per_s,
                accepted_output_tokens_per_s=point.throughput.accepted_output_tokens_per_s,
                ttft_ms_p50=_stat(point.ttft_ms, "p50"),
                ttft_ms_p95=_stat(point.ttft_ms, "p95"),
                ttft_ms_p99=_stat(point.ttft_ms, "p99"),
                tpot_ms_p50=_stat(point.tpot_ms, "p50"),
                tpot_ms_mean=_stat(point.tpot_ms, "mean"),
                tpot_ms_p99=_stat(point.tpot_ms, "p99"),
                e2e_ms_mean=_stat(point.e2e_ms, "mean"),
                e2e_ms_p95=_stat(point.e2e_ms, "p95"),
                e2e_ms_p99=_stat(point.e2e_ms, "p99"),
                gpu_utilization_pct=(
                    None if gpu_telemetry is None else gpu_telemetry.gpu_utilization_pct_mean
                ),
                energy_j=None if gpu_telemetry is None else gpu_telemetry.energy_j,
                output_tokens_per_s_per_gpu=_rounded(
                    None if output_tokens_per_s is None else output_tokens_per_s / gpu_count
                ),
                tokens_per_s_per_user=_rounded(per_user),
                tokens_per_s_per_user_basis=per_user_basis,
                output_tokens_per_joule=_rounded(_tokens_per_joule(point)),
                **_roofline_columns(shares[point_index]),
                on_pareto_front=None,
                **tiers,
            )
        )
    return rows


# --- reading the registry --------------------------------------------------------------------


def result_files(root: Path) -> list[Path]:
    """Every result file under `<root>/registry/results/`, sorted by path: the files
    `registry validate` reads (`registry.tree`), never a link, FIFO or hidden file."""
    files = walk_results(root / RESULTS_DIR).files
    return sorted(files, key=lambda path: path.as_posix())


def _schema_problems(file: str, data: Any) -> list[Problem]:
    errors = sorted(result_schema_errors(data), key=lambda e: list(map(str, e.path)))
    return [
        Problem(file, json_path(error.absolute_path), f"schema: {error.message}")
        for error in errors
    ]


def check_result_text(text: str, file: str) -> Result:
    """Check the text of one result file against the committed JSON Schema and the model."""
    data = parse_json(text, file)
    problems = _schema_problems(file, data)
    try:
        result = parse_result_data(data, file)
    except InvalidFileError as error:
        # The model's messages are the more precise; the schema's add what the model misses.
        seen = {problem.path for problem in error.problems}
        problems = [*error.problems, *(p for p in problems if p.path not in seen)]
    if problems:
        raise InvalidFileError(problems)
    return result


def _read_text(path: Path, file: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidFileError([Problem(file, "", f"cannot read: {error}")]) from None


def read_valid_result(path: Path, file: str) -> Result:
    """Read one result file and check it against the committed JSON Schema and the model."""
    return check_result_text(_read_text(path, file), file)


@dataclass(frozen=True)
class LoadedResult:
    """A valid result file as `load_result_files` read it."""

    file: str  # path relative to the registry root
    result: Result
    text: str


def load_result_files(root: Path, files: Sequence[Path]) -> list[LoadedResult]:
    """Validate `files` (paths under `root`), each read and parsed once; every problem of every
    file, then fail once."""
    # Swap point: `registry.validate` checks far more (physics, duplicates, catalogs); the index
    # needs only files that parse, pass the schema and the model, and sit where they belong.
    loaded: list[LoadedResult] = []
    problems: list[Problem] = []
    for path in files:
        relative = path.relative_to(root).as_posix()
        try:
            text = _read_text(path, relative)
            result = check_result_text(text, relative)
        except InvalidFileError as error:
            problems.extend(error.problems)
            continue
        expected = result_path(result).as_posix()
        if relative != expected:
            problems.append(Problem(relative, "", f"path does not match its content: {expected}"))
            continue
        loaded.append(LoadedResult(relative, result, text))
    if problems:
        raise InvalidFileError(problems)
    return loaded


def load_results(root: Path, files: Sequence[Path]) -> list[tuple[str, Result]]:
    """Validate `files` (paths under `root`); every problem of every file, then fail once."""
    return [(loaded.file, loaded.result) for loaded in load_result_files(root, files)]


def _sweep_group(row: IndexRow) -> tuple[Any, ...] | None:
    if row.scenario not in ("closed", "open"):
        return None
    return (row.model, row.workload_key, row.gpu, row.gpu_count, row.scenario, row.lane)


def _front_point(row: IndexRow) -> tuple[float, float] | None:
    if row.interrupted:  # a point cut short is no point of the sweep's curve
        return None
    if row.tokens_per_s_per_user is None or row.output_tokens_per_s_per_gpu is None:
        return None
    return (row.tokens_per_s_per_user, row.output_tokens_per_s_per_gpu)


def with_pareto_front(rows: Sequence[IndexRow]) -> list[IndexRow]:
    """Rows with `on_pareto_front` set, from real sweeps only: a result's closed- or open-loop
    points count when it has two or more of them."""
    in_sweep: dict[str, int] = {}
    for row in rows:
        if _sweep_group(row) is not None and _front_point(row) is not None:
            in_sweep[row.result_id] = in_sweep.get(row.result_id, 0) + 1
    swept = [row for row in rows if in_sweep.get(row.result_id, 0) >= 2]
    flags = dict(zip(map(id, swept), front_flags(swept, _sweep_group, _front_point), strict=True))
    return [dataclasses.replace(row, on_pareto_front=flags.get(id(row))) for row in rows]


def across_rows(rows: Iterable[IndexRow]) -> list[IndexRow]:
    """The rows in the index's order (file, point) with the figures that need all of them:
    the replicate spread and the Pareto front."""
    ordered = sorted(rows, key=lambda row: (row.file, row.point_index))
    return with_pareto_front(with_replicate_spread(ordered))


def build_index(root: Path) -> tuple[list[IndexRow], int]:
    """The rows of every result under `root` (a registry checkout), and the number of results."""
    results = load_results(root, result_files(root))
    catalogs = root / "registry" / "catalogs"
    prices = list(load_prices(catalogs / "prices.yaml").values())
    bounds = RooflineBounds.from_catalogs(catalogs)
    corrections = latest_entries(load_corrections(root / CORRECTIONS_FILE))
    rows = [
        row
        for file, result in results
        for row in index_rows(result, file, prices, corrections.get(result.id), bounds)
    ]
    return across_rows(rows), len(results)


# --- writing ---------------------------------------------------------------------------------


def render_json(rows: Sequence[IndexRow]) -> str:
    """The JSON index text: columns with their descriptions, then the rows."""
    data = {
        "schema_version": INDEX_SCHEMA_VERSION,
        "columns": [{"name": name, "description": COLUMN_DESCRIPTIONS[name]} for name in COLUMNS],
        "rows": [row.as_dict() for row in rows],
    }
    # Not canonical_json: rows keep column order, which sorted keys would scramble.
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def render_csv(rows: Sequence[IndexRow]) -> str:
    """The CSV index text: a header row of the column names, empty cells for null."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow([_csv_cell(value) for value in row.as_dict().values()])
    return buffer.getvalue()


def _hashed_name(text: str, suffix: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return f"index-{digest}.{suffix}"


def write_index(root: Path, out_dir: Path) -> IndexFiles:
    """Index the registry at `root` into `out_dir`; stale hashed index files there are removed.

    Raises InvalidFileError listing every problem when a result file is invalid; nothing is
    written then.
    """
    rows, result_count = build_index(root)
    json_text, csv_text = render_json(rows), render_csv(rows)
    json_name, csv_name = _hashed_name(json_text, "json"), _hashed_name(csv_text, "csv")
    manifest = {
        "schema_version": INDEX_SCHEMA_VERSION,
        "json": json_name,
        "csv": csv_name,
        "results": result_count,
        "rows": len(rows),
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out_dir / json_name, json_text)
    write_text_atomic(out_dir / csv_name, csv_text)
    # The manifest last: a reader that follows it never finds a missing file.
    write_text_atomic(out_dir / MANIFEST_NAME, canonical_json(manifest))
    removed = []
    for path in sorted(out_dir.iterdir()):
        if _HASHED_NAME.match(path.name) and path.name not in (json_name, csv_name):
            path.unlink()
            removed.append(path)
    return IndexFiles(
        manifest=out_dir / MANIFEST_NAME,
        json_file=out_dir / json_name,
        csv_file=out_dir / csv_name,
        results=result_count,
        rows=len(rows),
        removed=tuple(removed),
    )
