"""The one builder of a harvested result: each harvester states what its source row says as the
registry's typed models, and this makes the `Result` of them.

A harvester reads its source and gives only what it read: the `Deployment` (catalog GPU and
count, engine and version, catalog model at the stated `Precision`, serving settings), the
workload (`fixed_lengths` for a table row), the load points (`table_point`; `offline_point` for
the common offline cell) and the `ReportedSource` that cites it. `reported_result` assembles
them through `registry.builder.build_from_parts`; `harvest_row` turns one row into a result or a
skip with its reason. A part that is no valid model (a bound the measured percentile broke)
skips the row as `not a valid result: …`, as does a result the builder refuses.
"""

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel, ValidationError

from infermeter.calculators.kv_cache import KvCacheDtype
from infermeter.registry.builder import ResultBuildError, build_from_parts
from infermeter.registry.errors import InvalidFileError
from infermeter.registry.harvest.errors import RowSkipped
from infermeter.registry.harvest.outcome import Harvested
from infermeter.registry.models import (
    EngineIdentity,
    FixedLength,
    GpuEntry,
    GpuIdentity,
    Identity,
    Load,
    LoadPoint,
    ModelEntry,
    ModelIdentity,
    ReportedSource,
    RequestCounts,
    Result,
    ServingSettings,
    Throughput,
    TokenCounts,
    Workload,
)
from infermeter.registry.models.identity import Dtype

Model = TypeVar("Model", bound=BaseModel)


class Catalogs(NamedTuple):
    """The GPU and model catalogs (id → entry) a harvester files its rows under."""

    gpus: dict[str, GpuEntry]
    models: dict[str, ModelEntry]


@dataclass(frozen=True)
class Precision:
    """The numeric formats a row states (None: not stated): the weights' quantization, the
    activation dtype, the KV cache dtype."""

    quantization: str | None = None
    dtype: Dtype | None = None
    kv_cache_dtype: KvCacheDtype | None = None


@dataclass(frozen=True)
class Deployment:
    """What served, as a row states it: `count` GPUs of a catalog entry (over `nodes` hosts
    where the source says), the engine and its version, the catalog model at the stated
    precision (`hf_repo`: the checkpoint the source names, default the catalog's), and the
    serving settings stated."""

    gpu: GpuEntry
    count: int
    engine: str
    version: str
    model: ModelEntry
    precision: Precision
    hf_repo: str | None = None
    serving: ServingSettings = field(default_factory=ServingSettings)
    nodes: int | None = None

    def identity(self, workload: Workload) -> Identity:
        """The result's identity: this deployment serving `workload`."""
        return Identity(
            gpu=gpu_identity(self.gpu, self.count, self.nodes),
            engine=EngineIdentity(name=self.engine, version=self.version),
            model=model_identity(self.model, self.precision, self.hf_repo),
            serving=self.serving,
            workload=workload,
        )


def gpu_identity(gpu: GpuEntry, count: int, nodes: int | None = None) -> GpuIdentity:
    """`count` GPUs of a catalog entry (over `nodes` hosts where the source says)."""
    return GpuIdentity(id=gpu.id, count=count, form_factor=gpu.form_factor, nodes=nodes)


def model_identity(
    model: ModelEntry, precision: Precision, hf_repo: str | None = None
) -> ModelIdentity:
    """A catalog model at the stated precision; `hf_repo`: the checkpoint the source names
    (default: the catalog's repository)."""
    return ModelIdentity(
        id=model.id,
        hf_repo=hf_repo or model.hf_repo,
        quantization=precision.quantization,
        dtype=precision.dtype,
        kv_cache_dtype=precision.kv_cache_dtype,
    )


def fixed_lengths(input_len: int, output_len: int) -> Workload:
    """The workload of a row with fixed prompt and output lengths, as the table states them."""
    return Workload(
        profile="custom",
        input_len=FixedLength(kind="fixed", value=input_len),
        output_len=FixedLength(kind="fixed", value=output_len),
    )


def table_point(load: Load, sent: int | None, throughput: Throughput, **stated: Any) -> LoadPoint:
    """A load point as a source states it: its load, the requests sent where the source gives
    them, no token counts (a table states rates), its throughput and any other stated figure
    (`stated`: LoadPoint fields such as `e2e_ms` or `validity`)."""
    return LoadPoint(
        load=load,
        requests=RequestCounts(sent=sent or None),
        tokens=TokenCounts(),
        throughput=throughput,
        **stated,
    )


def offline_point(output_tokens_per_s: float, sent: int | None) -> LoadPoint:
    """One offline point (every request queued at once) with its stated output throughput and,
    where the page gives it, the number of requests sent."""
    return table_point(
        Load(arrival="offline"), sent, Throughput(output_tokens_per_s=output_tokens_per_s)
    )


def replaced(model: Model, **changes: Any) -> Model:
    """A copy of a model with some fields changed, validated as a new one is."""
    return type(model)(**(dict(model) | changes))


def reported_result(
    identity: Identity, points: Sequence[LoadPoint], source: ReportedSource
) -> Result:
    """The result of one source row with its content id (`identity`: usually
    `Deployment.identity(workload)`). Raises RowSkipped when the parts make no valid result."""
    try:
        return build_from_parts(identity, points, source, file="harvested result")
    except ResultBuildError as error:
        raise RowSkipped(f"not a valid result: {error.first_line()}") from None


def harvest_row(key: str, make: Callable[[], Result]) -> Harvested:
    """The row `key` as the result `make` builds, or skipped with the reason it raised."""
    try:
        return Harvested(key, result=make())
    except RowSkipped as skip:
        return Harvested(key, skipped=str(skip))
    except ValidationError as error:
        first = InvalidFileError.from_validation_error(error.title, error).problems[0]
        where = f"{first.file}.{first.path}" if first.path else first.file
        return Harvested(key, skipped=f"not a valid result: {where}: {first.message}")


def cell_marker(layout: str, cell: str) -> str:
    """The mark a TensorRT-LLM harvester of `layout` ends a result's conditions with: the cell
    the value was read from, read back by `marked_key`."""
    return f"[{layout} cell: {cell}]"


def marked_key(result: Result, layout: str) -> str | None:
    """The source key a harvester of `layout` wrote into a result's conditions (`cell_marker`),
    as `trtllm <revision> <layout> <cell>`; None for a result of another source."""
    source = result.source
    match = re.search(rf"\[{layout} cell: (?P<cell>[^\]]+)\]", getattr(source, "conditions", ""))
    revision = getattr(source, "revision", None)
    if match is None or revision is None:
        return None
    return f"trtllm {revision[:12]} {layout} {match['cell']}"
