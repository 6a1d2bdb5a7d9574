"""How close a load point came to its physical limit: measured output tokens/s as a share of
the roofline bound (`calculators.roofline`) of its deployment at its load.

The bound is the one the physics check (`registry.checks.physics`) reasons with, taken at the
point's batch: the smaller of the memory-bandwidth bound (every decode step reads the weights a
token touches and the KV cache of the batch's sequences) and the compute bound (two FLOPs per
parameter per token plus its attention, at the GPU's peak dense rate). The context is the
shortest mean context the workload allows and an unknown weight format (`fp4`, naming neither
NVFP4 nor MXFP4) counts as the most compact one read at the GPU's fastest dense rate, as in the
physics check, so the bound stays a bound and the share is at most about 100 %. On more than
one GPU the bandwidth bound's step also sends its tensor-parallel all-reduces over the GPU's
sourced link (`calculators.interconnect`; the basis names the link, or says none is sourced),
which the physics check leaves out: at its batch of one the term is negligible. Pipeline
stages each read their own layers, and the step takes the slowest stage's time
(`calculators.pipeline_stages`).

The batch is the point's concurrency (closed loop, or an open loop's cap); else the serving
settings' `max_num_seqs`; else none is known, and only the compute bound applies (the basis
says so). Data-parallel replicas (`data_parallel_size`, else more GPUs than tensor × pipeline)
each decode their share of the batch. A disaggregated deployment (prefill and decode on
separate GPU pools) gets no bound: the model is one pool of one layout serving both, and the
decode pool's layout (attention data parallel, expert parallel) is not stated as settings;
drawn as one tensor-parallel replica over every GPU, the "bound" sat at 7 % of what such runs
measured. A point whose GPU or model is not in the catalogs, whose
model the calculators cannot read, or whose GPU states no compute rate when the batch is not
known, gets no bound: its share says why, in a reader's words (`NO_COMPUTE_RATE` …).
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infermeter.calculators.decode_batch import DecodeBatch
from infermeter.calculators.errors import CalculatorError
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.parallel import ParallelLayout
from infermeter.calculators.quantization import WeightFormat
from infermeter.calculators.roofline import (
    ThroughputBound,
    deployment_throughput_bound,
)
from infermeter.registry.catalog import (
    GPUS_FILE,
    MODELS_FILE,
    catalog_arch,
    catalogs_holding,
    gpu_links,
    load_gpus,
    load_models,
)
from infermeter.registry.checks.physics import (
    decode_context_tokens,
    generous_dense_tflops,
    most_compact_format,
    result_format,
)
from infermeter.registry.models import GpuEntry, LoadPoint, ModelEntry, Result


@dataclass(frozen=True)
class RooflineShare:
    """A load point's bound and its share of it; or, where no bound can be drawn, why not."""

    bound_tokens_per_s: float | None  # output tokens/s of the whole deployment; None: no bound
    pct: float | None  # measured output tokens/s ÷ the bound × 100; None: no bound or no figure
    basis: str  # which bound, or why there is none, in a reader's words


# Why a point has no bound, short enough for a table cell.
GPU_NOT_IN_CATALOG = "GPU not in the catalog"
MODEL_NOT_IN_CATALOG = "model not in the catalog"
MODEL_UNREADABLE = "model config not readable"
NOT_BOUNDED = "deployment not bounded"
NO_COMPUTE_RATE = "no sourced compute rate"  # and the batch not stated: no bandwidth bound
DISAGGREGATED = "prefill and decode on separate GPUs: not modelled"


def _no_bound(reason: str, points: int) -> list["RooflineShare"]:
    return [RooflineShare(None, None, reason)] * points


@dataclass
class _Memo:
    """Weight formats and bounds already worked out: many results share them, and each costs
    far more than the lookup (the index of 10,000 results stays fast). Each model's config is
    parsed once by `catalog_arch`."""

    formats: dict[tuple[str, str | None, str | None], tuple[ModelArch, WeightFormat | None]] = (
        field(default_factory=dict)
    )
    bounds: dict[tuple[Any, ...], ThroughputBound | None] = field(default_factory=dict)


def _arch(model: ModelEntry) -> ModelArch | None:
    try:
        return catalog_arch(model)
    except CalculatorError:
        return None


def _format(arch: ModelArch, result: Result, memo: _Memo) -> tuple[ModelArch, WeightFormat | None]:
    """The architecture the result ran and its weight format, None where the calculators do
    not know it (`fp4`, naming neither NVFP4 nor MXFP4), as the physics check reads them
    (`result_format`: an FP4 export of an FP8 checkpoint is planned as that export)."""
    identity = result.identity.model
    key = (identity.id, identity.quantization, identity.dtype)
    if key not in memo.formats:
        memo.formats[key] = result_format(arch, identity.quantization, identity.dtype)
    return memo.formats[key]


def _bound(
    arch: ModelArch,
    fmt: WeightFormat | None,
    gpu: GpuEntry,
    key: tuple[Any, ...],
    memo: _Memo,
    decode: DecodeBatch,
    kv_cache_dtype: str | None,
) -> ThroughputBound | None:
    if key in memo.bounds:
        return memo.bounds[key]
    bound = None
    # A KV cache layout the calculators do not know: bounded at the smallest (fp8), as the
    # physics check does.
    for dtype in (kv_cache_dtype, "fp8"):
        try:
            bound = deployment_throughput_bound(
                arch,
                fmt or most_compact_format(arch),
                gpu.memory_bandwidth_gb_s * 1e9,
                generous_dense_tflops(gpu, fmt),
                decode,
                kv_cache_dtype=dtype,
                links=gpu_links(gpu),
            )
            break
        except CalculatorError:
            continue
    memo.bounds[key] = bound
    return bound


def point_batch(result: Result, point: LoadPoint) -> int | None:
    """The most sequences the point can have decoded at once, where the result says."""
    if point.load.concurrency is not None:
        return point.load.concurrency
    return result.identity.serving.max_num_seqs


def roofline_shares(
    result: Result,
    gpus: Mapping[str, GpuEntry],
    models: Mapping[str, ModelEntry],
    memo: _Memo | None = None,
) -> list[RooflineShare]:
    """One share per load point of `result` (without a bound where none can be drawn, its
    basis saying why); `memo` keeps what was worked out between calls."""
    memo = _Memo() if memo is None else memo
    gpu = gpus.get(result.identity.gpu.id)
    model = models.get(result.identity.model.id)
    arch = _arch(model) if model is not None else None
    if gpu is None:
        return _no_bound(GPU_NOT_IN_CATALOG, len(result.points))
    if result.identity.serving.disaggregated is not None:
        return _no_bound(DISAGGREGATED, len(result.points))
    if arch is None:
        reason = MODEL_NOT_IN_CATALOG if model is None else MODEL_UNREADABLE
        return _no_bound(reason, len(result.points))
    arch, fmt = _format(arch, result, memo)
    identity = result.identity
    serving = identity.serving
    count = identity.gpu.count
    pipeline = serving.pipeline_parallel_size or 1
    tensor = serving.tensor_parallel_size or max(1, count // pipeline)
    layout = ParallelLayout(tensor, pipeline)
    replicas = serving.data_parallel_size or max(1, count // layout.replica_gpus)
    context = decode_context_tokens(result)
    shares: list[RooflineShare] = []
    for point in result.points:
        batch = point_batch(result, point)
        per_replica = max(1, math.ceil((batch or 1) / replicas))
        key = (
            *(identity.model.id, identity.model.quantization, identity.model.dtype),
            *(identity.model.kv_cache_dtype, gpu.id, tensor, pipeline, context, per_replica),
        )
        bound = _bound(
            arch,
            fmt,
            gpu,
            key,
            memo,
            DecodeBatch(layout, context, per_replica),
            identity.model.kv_cache_dtype,
        )
        shares.append(_share(point, bound, batch, replicas, context))
    return shares


def _share(
    point: LoadPoint,
    bound: ThroughputBound | None,
    batch: int | None,
    replicas: int,
    context: int,
) -> RooflineShare:
    """The point's measured throughput against the deployment's bound (all `replicas`); at
    an unstated batch, against the peak dense compute rate."""
    if bound is None:
        return RooflineShare(None, None, NOT_BOUNDED)
    if batch is None and bound.compute_tokens_per_second is None:
        return RooflineShare(None, None, NO_COMPUTE_RATE)
    if batch is None:
        tokens_per_s = (bound.compute_tokens_per_second or 0) * replicas
        basis = "compute bound (peak dense rate; batch not stated)"
    else:
        tokens_per_s = bound.tokens_per_second * replicas
        basis = f"{bound.limited_by} bound at batch {batch:,}, {context:,} tokens of context"
        if bound.gpu_count > 1:
            basis += f"; {bound.interconnect}"
    measured = point.throughput.output_tokens_per_s
    pct = None if measured is None or tokens_per_s <= 0 else measured / tokens_per_s * 100
    return RooflineShare(tokens_per_s, pct, basis)


class RooflineBounds:
    """`roofline_shares` against fixed catalogs, remembering what it worked out."""

    def __init__(self, gpus: Mapping[str, GpuEntry], models: Mapping[str, ModelEntry]) -> None:
        self._gpus, self._models = gpus, models
        self._memo = _Memo()

    @classmethod
    def from_catalogs(cls, folder: Path) -> "RooflineBounds":
        """Bounds against the GPU and model catalogs in the catalogs folder `folder`; one the
        folder lacks is the package's own."""
        return cls(
            load_gpus(catalogs_holding(folder, GPUS_FILE)),
            load_models(catalogs_holding(folder, MODELS_FILE)),
        )

    def shares(self, result: Result) -> list[RooflineShare]:
        return roofline_shares(result, self._gpus, self._models, self._memo)
