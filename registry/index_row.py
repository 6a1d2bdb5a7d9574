"""One row of the index: a result's load point, flattened (`IndexRow`); its fields are the
index's columns, in order, each with the description the JSON index and the site show.
"""

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from infermeter.calculators.units import SECONDS_PER_HOUR


@dataclass(frozen=True)
class Figure:
    """How a column reads wherever a table shows it (a result's point table, `bench report`,
    `bench compare`, the compare pages): its label with its unit, the digits it is written to,
    which way is better, and `scale` (100 for a fraction shown in %)."""

    label: str
    digits: int
    higher_is_better: bool
    scale: float = 1.0


LATENCY_LABELS = {"ttft_ms": "TTFT", "tpot_ms": "TPOT", "e2e_ms": "E2E"}
"""The latency distributions of a load point (`registry.models.LoadPoint`) the index has
columns of, by the label their columns read."""


def _column(description: str, figure: Figure | None = None, stated: str | None = None) -> Any:
    """A column; `stated`: the load point's field it copies, as a dotted path
    (`throughput.output_tokens_per_s`), which `index_rows` fills it from."""
    return field(metadata={"description": description, "figure": figure, "stated": stated})


def _latency(metric: str, stat: str, description: str, digits: int = 1) -> Any:
    """A column of one statistic (`p99`, `mean`) of a load point's latency distribution
    `metric`: `index_rows` fills it, and it reads `TTFT p99 ms` (lower is better)."""
    figure = Figure(f"{LATENCY_LABELS[metric]} {stat} ms", digits, higher_is_better=False)
    return _column(description, figure, stated=f"{metric}.{stat}")


TIER_COLUMNS: dict[str, str] = {
    "price_id": "Price catalog id of the {tier_long} price used: the cheapest of the best-sourced.",
    "price_provider": "Provider of that {tier} price.",
    "price_as_of": "Date of that price; null when undated (only the day its source was read is "
    "known).",
    "price_confidence": "Confidence of that price: `high`, `medium` or `low`, from how many "
    "providers and offers agree with it and its date (Methodology, Prices, says how).",
    "usd_per_hour": "That price × GPU count, $/hour.",
    "usd_per_million_output_tokens": "$ per 1M output tokens at that price.",
    "usd_per_million_accepted_tokens": "$ per 1M accepted output tokens at that price.",
    "output_tokens_per_dollar": "Output tokens per $ at that price.",
}
"""The columns of each price tier (`<tier>_<column>`, a `TierColumns` field), by what they
say; `{tier}` and `{tier_long}` name the tier."""


@dataclass(frozen=True)
class TierColumns:
    """A row's figures at one price tier: the index's `<tier>_<name>` columns (`IndexRow`'s
    `on_demand`, `interruptible` and `reserved`); all None where the GPU has no price there."""

    price_id: str | None = None
    price_provider: str | None = None
    price_as_of: str | None = None
    price_confidence: str | None = None
    usd_per_hour: float | None = None
    usd_per_million_output_tokens: float | None = None
    usd_per_million_accepted_tokens: float | None = None
    output_tokens_per_dollar: float | None = None


_TIER_WORDS = {
    "on_demand": ("on-demand", "on-demand"),
    "interruptible": ("interruptible", "interruptible (spot)"),
    "reserved": ("reserved", "reserved"),
}


def _tier(figures: dict[str, Figure] | None = None) -> dict[str, Any]:
    """The metadata of a price tier's field (named after the tier); `figures`: how its columns
    that tables show read, by `TierColumns` field."""
    return {"tier": True, "figures": figures or {}}


@dataclass(frozen=True)
class IndexRow:
    """One load point of one result, flattened; the field order is the column order."""

    # identity
    result_id: str = _column("Content id of the result file.")
    file: str = _column("Path of the result file in the registry repository.")
    point_index: int = _column("Position of the load point in the file's `points`, from 0.")
    source_kind: str = _column("`measured` by a tool, or `reported` from a cited source.")
    lane: str = _column(
        "`measured`, `reported`, `mlperf` (MLPerf's closed division) or `mlperf-open` (its "
        "open division, which may change the model or the rules): MLPerf results are shown "
        "apart, never ranked against other lanes or each other's division; figures derived "
        "from them are not verified by MLCommons."
    )
    mlperf_result_id: str | None = _column(
        "MLPerf result ID (MLPerf lanes only); for a round whose table gives none (v6.1), the "
        "run's path in the results repository (`closed/…/performance/run_1`)."
    )
    mlperf_round: str | None = _column("MLPerf Inference round, e.g. `v5.1` (MLPerf lanes only).")
    mlperf_division: str | None = _column("MLPerf division, `closed` or `open`.")
    mlperf_category: str | None = _column(
        "MLPerf availability category: `available`, `preview` or `rdi` (research, development "
        "or internal)."
    )
    mlperf_scenario: str | None = _column(
        "MLPerf scenario: `Offline`, `Server` or `Interactive` (Interactive's latency bounds are "
        "tighter than Server's: the two are never merged or ranked together)."
    )
    mlperf_submitter: str | None = _column("MLPerf submitter (MLPerf lanes only).")
    mlperf_system: str | None = _column("MLPerf system under test, as submitted.")
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
        "Lowest output tokens/s among the replicates (the spread's low end).",
        stated="throughput.output_tokens_per_s",
    )
    output_tokens_per_s_max: float | None = _column(
        "Highest output tokens/s among the replicates (the spread's high end).",
        stated="throughput.output_tokens_per_s",
    )
    # measured
    duration_s: float | None = _column(
        "Wall time of the measured window, seconds.", stated="duration_s"
    )
    requests_completed: int | None = _column(
        "Requests that finished successfully.", stated="requests.completed"
    )
    requests_failed: int | None = _column("Requests that failed.", stated="requests.failed")
    failure_rate: float | None = _column(
        "Failed / (completed + failed) requests.", Figure("failed %", 1, False, scale=100.0)
    )
    output_tokens_per_s: float | None = _column(
        "Output tokens/s of the whole deployment.", stated="throughput.output_tokens_per_s"
    )
    total_tokens_per_s: float | None = _column(
        "Prompt plus output tokens/s of the whole deployment, where the source states that "
        "figure (never derived from the output rate, nor the output rate from it).",
        stated="throughput.total_tokens_per_s",
    )
    accepted_output_tokens_per_s: float | None = _column(
        "Accepted output tokens/s at the point's own SLO (`calculators.accepted`): a server at an "
        "SLO's whole throughput at its bounds; per-request records' tokens of requests that met "
        "the result's SLO; a fixed-length static batch's throughput at the batch's own time "
        "(derived where the source states the time only); null where the point proves no "
        "latency (offline, or none stated)."
    )
    ttft_ms_p50: float | None = _latency("ttft_ms", "p50", "Time to first token, median, ms.")
    ttft_ms_p95: float | None = _latency(
        "ttft_ms", "p95", "Time to first token, 95th percentile, ms."
    )
    ttft_ms_p99: float | None = _latency(
        "ttft_ms", "p99", "Time to first token, 99th percentile, ms."
    )
    tpot_ms_p50: float | None = _latency(
        "tpot_ms", "p50", "Time per output token, median, ms.", digits=2
    )
    tpot_ms_mean: float | None = _latency(
        "tpot_ms", "mean", "Time per output token, mean, ms.", digits=2
    )
    tpot_ms_p99: float | None = _latency(
        "tpot_ms", "p99", "Time per output token, 99th percentile, ms.", digits=2
    )
    e2e_ms_mean: float | None = _latency(
        "e2e_ms", "mean", "End-to-end latency, mean, ms (a static batch's: the whole batch's time)."
    )
    e2e_ms_p95: float | None = _latency("e2e_ms", "p95", "End-to-end latency, 95th percentile, ms.")
    e2e_ms_p99: float | None = _latency("e2e_ms", "p99", "End-to-end latency, 99th percentile, ms.")
    gpu_utilization_pct: float | None = _column(
        "Mean GPU utilization, percent.", stated="telemetry.gpu.gpu_utilization_pct_mean"
    )
    energy_j: float | None = _column(
        "Energy of all GPUs over the window, joules.", stated="telemetry.gpu.energy_j"
    )
    # derived
    output_tokens_per_s_per_gpu: float | None = _column(
        "Output tokens/s ÷ GPU count.", Figure("output tok/s per GPU", 1, True)
    )
    tokens_per_s_per_user: float | None = _column(
        "Output tokens/s one request sees (see `tokens_per_s_per_user_basis`).",
        Figure("tok/s per user", 1, True),
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
        "workload × GPU × count, among its closed- (or open-) loop points of every result; null "
        "where there is no front to be on (offline, server at an SLO, no per-user rate, or the "
        "only such point of its GPU × count)."
    )
    on_demand: TierColumns = field(
        default_factory=TierColumns,
        metadata=_tier(
            {
                "usd_per_hour": Figure("$/h on-demand", 2, False),
                "usd_per_million_output_tokens": Figure("$ per 1M output tokens", 3, False),
                "usd_per_million_accepted_tokens": Figure("$ per 1M accepted tokens", 3, False),
            }
        ),
    )
    interruptible: TierColumns = field(default_factory=TierColumns, metadata=_tier())
    reserved: TierColumns = field(default_factory=TierColumns, metadata=_tier())

    @property
    def accepted_output_tokens_per_hour(self) -> float | None:
        """Accepted output tokens an hour at the point's rate (tables show it; not a column)."""
        tps = self.accepted_output_tokens_per_s
        return None if tps is None else tps * SECONDS_PER_HOUR

    def column(self, name: str) -> Any:
        """The value of the index column `name` (`on_demand_usd_per_hour` is
        `self.on_demand.usd_per_hour`)."""
        value: Any = self
        for part in _COLUMNS[name].path:
            value = getattr(value, part)
        return value

    def tier(self, tier: str) -> TierColumns:
        """The row's figures at the price tier `tier` (`on_demand`, `interruptible`, `reserved`)."""
        columns = getattr(self, tier)
        if not isinstance(columns, TierColumns):
            raise KeyError(tier)
        return columns

    def as_dict(self) -> dict[str, Any]:
        """The row as JSON data, keys in column order."""
        return {name: self.column(name) for name in COLUMNS}

    @classmethod
    def from_columns(cls, values: Mapping[str, Any]) -> "IndexRow":
        """The row of the index columns `values`, by name (as `as_dict` gives them; a tier
        column left out is None)."""
        fields: dict[str, Any] = {}
        tiers: dict[str, dict[str, Any]] = {}
        for name, value in values.items():
            path = _COLUMNS[name].path
            if len(path) == 1:
                fields[name] = value
            else:
                tiers.setdefault(path[0], {})[path[1]] = value
        fields |= {tier: TierColumns(**parts) for tier, parts in tiers.items()}
        return cls(**fields)

    def with_columns(self, **values: Any) -> "IndexRow":
        """This row with the index columns `values` replaced, by name."""
        return IndexRow.from_columns(self.as_dict() | values)


@dataclass(frozen=True)
class _Column:
    """An index column: where a row holds it (`("on_demand", "usd_per_hour")`), its
    description, how tables show it and the load point's field it copies."""

    path: tuple[str, ...]
    description: str
    figure: Figure | None
    stated: str | None


def _index_columns() -> dict[str, _Column]:
    """Every column of the index by name, in order: `IndexRow`'s fields, each price tier's
    `TierColumns` as `<tier>_<name>`."""
    columns = {}
    for column in dataclasses.fields(IndexRow):
        meta = column.metadata
        if not meta.get("tier"):
            columns[column.name] = _Column(
                (column.name,), meta["description"], meta["figure"], meta["stated"]
            )
            continue
        short, long = _TIER_WORDS[column.name]
        for part in dataclasses.fields(TierColumns):
            description = TIER_COLUMNS[part.name].format(tier=short, tier_long=long)
            columns[f"{column.name}_{part.name}"] = _Column(
                (column.name, part.name), description, meta["figures"].get(part.name), None
            )
    return columns


_COLUMNS = _index_columns()

COLUMNS: tuple[str, ...] = tuple(_COLUMNS)
"""The index's columns, in order."""

COLUMN_DESCRIPTIONS: dict[str, str] = {name: c.description for name, c in _COLUMNS.items()}

FIGURES: dict[str, Figure] = {
    name: c.figure for name, c in _COLUMNS.items() if c.figure is not None
}
"""How each column a table shows reads, by column."""

STATED_COLUMNS: dict[str, str] = {
    name: c.stated for name, c in _COLUMNS.items() if c.stated is not None
}
"""The columns that copy a figure of the load point: column → the field's dotted path."""
