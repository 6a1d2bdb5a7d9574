"""The result file: one benchmark run of one deployment, as identity, measurements and provenance.

Every number here is plain data as measured or as published. Derived figures ($ per token,
tokens per joule, throughput per GPU) are never stored: the index computes them.
A number that a source does not state is left out (null), never estimated.
"""

import json
from typing import Annotated

from pydantic import BaseModel, Field

from infermeter.registry.models.common import PositiveFloat, ResultSchemaVersion, StrictModel
from infermeter.registry.models.identity import Identity
from infermeter.registry.models.measurements import LoadPoint, Startup
from infermeter.registry.models.provenance import Source

__all__ = [
    "COMPARABLE_PROPERTIES",
    "LOAD_PROPERTIES",
    "NOT_COMPARABLE_PROPERTIES",
    "RUN_OWNER_PROPERTIES",
    "Result",
    "Slo",
    "comparability_key",
    "load_point_key",
]

CONTENT_ID_PATTERN = r"^[0-9a-f]{12}$"
ContentId = Annotated[str, Field(pattern=CONTENT_ID_PATTERN)]


class Slo(StrictModel):
    """Latency targets a request must meet to count as accepted; null = no limit."""

    ttft_ms: PositiveFloat | None = Field(None, description="Time to first token limit, ms.")
    tpot_ms: PositiveFloat | None = Field(None, description="Time per output token limit, ms.")
    e2e_ms: PositiveFloat | None = Field(None, description="End-to-end latency limit, ms.")


class Result(StrictModel):
    """One benchmark run of one deployment: identity, load points, provenance."""

    schema_version: ResultSchemaVersion = Field(
        description="Version of this file format (see registry/migration.py for older ones)."
    )
    id: ContentId = Field(
        description="Content id: the first 12 hex digits of the SHA-256 of the file's canonical "
        "JSON without this field."
    )
    identity: Identity = Field(description="What makes runs comparable.")
    slo: Slo = Field(description="Latency targets that decide which requests are accepted.")
    points: list[LoadPoint] = Field(min_length=1, description="One entry per load level measured.")
    startup: Startup | None = Field(None, description="vLLM's startup figures.")
    source: Source = Field(description="Where the numbers come from.")


# --- comparability --------------------------------------------------------------------------

COMPARABLE_PROPERTIES: tuple[str, ...] = (
    "identity.gpu.id",
    "identity.gpu.count",
    "identity.gpu.form_factor",
    "identity.gpu.nodes",
    "identity.gpu.gpus_per_node",
    "identity.engine.name",
    "identity.engine.version",
    "identity.model.id",
    "identity.model.quantization",
    "identity.model.dtype",
    "identity.model.kv_cache_dtype",
    "identity.serving.tensor_parallel_size",
    "identity.serving.pipeline_parallel_size",
    "identity.serving.data_parallel_size",
    "identity.serving.max_model_len",
    "identity.serving.gpu_memory_utilization",
    "identity.serving.max_num_seqs",
    "identity.serving.max_num_batched_tokens",
    "identity.serving.enable_prefix_caching",
    "identity.serving.enable_chunked_prefill",
    "identity.serving.load_format",
    "identity.serving.other_options",
    "identity.serving.expert_parallel_size",
    "identity.serving.speculative.method",
    "identity.serving.speculative.draft_tokens",
    "identity.serving.speculative.draft_model",
    "identity.serving.disaggregated.prefill_gpus",
    "identity.serving.disaggregated.decode_gpus",
    "identity.serving.disaggregated.prefill_workers",
    "identity.serving.disaggregated.decode_workers",
    "identity.workload.profile",
    "identity.workload.input_len",
    "identity.workload.output_len",
    "identity.workload.dataset",
    "identity.workload.dataset_sha256",
    "identity.workload.api",
    "identity.workload.accuracy_target",
    "identity.workload.ignore_eos",
    "identity.workload.turns",
    "identity.workload.think_time_s",
    # A replayed trace: its bytes, its blocks, what of it was replayed and how fast.
    "identity.workload.trace.sha256",
    "identity.workload.trace.block_size",
    "identity.workload.trace.requests",
    "identity.workload.trace.cut",
    "identity.workload.trace.speed",
    "identity.workload.trace.rate",
    "identity.workload.trace.concurrency",
)
"""The properties that make two results comparable: same values, same experiment.

Two results with the same key from different runs are replicates (their spread is shown);
a load point is compared with the points of the same `LOAD_PROPERTIES` only.
"""

NOT_COMPARABLE_PROPERTIES: tuple[str, ...] = (
    # The catalog id already names the model; the repository is where the weights came from.
    "identity.model.hf_repo",
    # A new revision of the same weights is the same experiment; one that changes them is a new id.
    "identity.model.revision",
    # Another seed draws other requests of the same distribution: a replicate, not a new experiment.
    "identity.workload.seed",
    # A trace's SHA-256 names it: its name and format are labels of the same bytes, and the
    # requests it holds and its reuse ceiling follow from them and the block size.
    "identity.workload.trace.name",
    "identity.workload.trace.format",
    "identity.workload.trace.requests_in_file",
    "identity.workload.trace.prefix_reuse_max",
)
"""Identity fields that do not separate experiments (each with the reason beside it)."""

RUN_OWNER_PROPERTIES: tuple[str, ...] = (
    "source.mlperf.submitter",
    "source.mlperf.system",
    "source.mlperf.result_id",
)
"""Whose run it is, where the source says: replicates are runs of one submitter's one system.
MLPerf results of different submitters, systems or result IDs are never merged as replicates
(MLCommons' guidelines forbid presenting a composite as an MLPerf result); null for results
without an MLPerf entry."""

LOAD_PROPERTIES: tuple[str, ...] = (
    "load.concurrency",
    "load.request_rate",
    "load.arrival",
    "load.burstiness",
    "load.rate_search",
    "load.concurrency_search",
)
"""Properties of a load point, relative to the point, that make two points comparable."""

KeyValue = str | int | float | bool | None


def _steps(paths: tuple[str, ...]) -> tuple[tuple[tuple[str, ...], bool], ...]:
    # Each property's attribute names, split once (a result's key reads 53 properties, and
    # `registry validate` keys every result twice), and whether it is a run owner's field: a
    # measured source has no `mlperf` at all, so those fields may be absent.
    return tuple((tuple(path.split(".")), path in RUN_OWNER_PROPERTIES) for path in paths)


_RESULT_STEPS = _steps(COMPARABLE_PROPERTIES + RUN_OWNER_PROPERTIES)
_LOAD_STEPS = _steps(LOAD_PROPERTIES)


def _property(root: BaseModel, names: tuple[str, ...], optional: bool) -> KeyValue:
    value: object = root
    for name in names:
        if value is None:
            # An optional group that is absent (no speculative decoding): each leaf is absent.
            return None
        value = getattr(value, name, None) if optional else getattr(value, name)
    if isinstance(value, BaseModel):
        # A nested value (a length distribution) compares by its canonical JSON.
        return json.dumps(value.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(f"{'.'.join(names)} is not a scalar or a model")


def comparability_key(result: Result) -> tuple[KeyValue, ...]:
    """The values of COMPARABLE_PROPERTIES, then RUN_OWNER_PROPERTIES, for `result`, in that
    order (hashable)."""
    return tuple(_property(result, names, optional) for names, optional in _RESULT_STEPS)


def load_point_key(
    result: Result, point: LoadPoint, result_key: tuple[KeyValue, ...] | None = None
) -> tuple[KeyValue, ...]:
    """The comparability key of one load point: the result's key and the point's load.
    `result_key`: `comparability_key(result)` when the caller has it (one per result, not per
    point)."""
    identity = comparability_key(result) if result_key is None else result_key
    return identity + tuple(_property(point, names, optional) for names, optional in _LOAD_STEPS)
