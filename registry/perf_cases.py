"""The registry's results as cases for the performance predictor (`calculators.predict`): each
load point that the protocol (benchmarks/PERF_PROTOCOL.md) compares, with the deployment,
workload and load it was measured at, its measured figure, and its place in the splits.

Kinds: `offline` (offline throughput), `server` (throughput of the highest rate that met the
point's own p99 bounds), `latency` (a static batch of at most `LOW_LOAD_BATCH` requests, as
calculators.perf_labels declares it beside what a larger batch's prediction says: its
end-to-end time where the source states it, else its throughput). Left out, and counted by
reason: corrected or withdrawn results, interrupted points, GPUs or models the catalogs lack or
the calculators cannot read, data sets without known lengths, other loads.
"""

import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from infermeter.calculators.answer_estimate import QUANTIZATION_BY_PRECISION
from infermeter.calculators.checkpoint_export import checkpoint_run
from infermeter.calculators.errors import CalculatorError
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.perf_datasets import dataset_key, dataset_lengths
from infermeter.calculators.perf_labels import LOW_LOAD_BATCH
from infermeter.calculators.predict import (
    Deployment,
    Gpu,
    Load,
    P99Bounds,
    Workload,
    engine_family,
    generation_of,
    planned_format,
    precision_name,
    smallest_tensor_parallel,
)
from infermeter.calculators.quantization import WeightFormat
from infermeter.registry.catalog import (
    catalog_arch,
    gpu_links,
    gpu_traits,
    load_gpus,
    load_models,
)
from infermeter.registry.corrections import CORRECTIONS_FILE, latest_entries, load_corrections
from infermeter.registry.estimate import workload_dataset, workload_tokens
from infermeter.registry.location import catalogs_folder
from infermeter.registry.lookup import gpu_memory_bytes
from infermeter.registry.models import GpuEntry, LoadPoint, ModelEntry, Result
from infermeter.registry.result_reader import load_results, result_files

INTERRUPTED = "interrupted"


@dataclass(frozen=True)
class PerfCase:
    """One measured load point, as the predictor is asked for it."""

    case_id: str  # `<result id>#<point>`
    file: str
    url: str  # the public source
    kind: str  # offline, server, latency
    scenario: str  # as a reader names it: offline, server p99 (TTFT, TPOT), static batch N
    gpu: str
    model: str
    family: str
    generation: str
    precision: str
    engine: str
    source: str  # lane and release: `mlperf v5.1`, `tensorrt-llm 0.20`, `amd vllm` …
    fitting: bool  # the time split's fitting part
    deployment: Deployment
    workload: Workload
    load: Load
    slo: P99Bounds | None
    measured: float
    measured_name: str  # output_tokens_per_s or e2e_ms


def gpu_for_prediction(entry: GpuEntry) -> Gpu:
    """The predictor's view of a catalog GPU: its generation is the architecture's name."""
    return Gpu(
        id=entry.id,
        generation=generation_of(entry.architecture),
        memory_bytes=int(gpu_memory_bytes(entry)),
        memory_bandwidth_gb_s=entry.memory_bandwidth_gb_s,
        tflops_dense=entry.tflops_dense.model_dump(),
        links=gpu_links(entry),
        traits=gpu_traits(entry),
    )


def is_fitting(result: Result) -> bool:
    """The time split: MLPerf up to v5.1 and numbered TensorRT-LLM releases up to 0.20 fit."""
    mlperf = getattr(result.source, "mlperf", None)
    if mlperf is not None:
        found = re.match(r"v?(\d+)\.(\d+)", mlperf.round)
        return found is not None and (int(found[1]), int(found[2])) <= (5, 1)
    engine = result.identity.engine
    if engine_family(engine.name) != "tensorrt-llm" or result.source.kind != "reported":
        return False
    found = re.match(r"(\d+)\.(\d+)", engine.version)
    return found is not None and (int(found[1]), int(found[2])) <= (0, 20)


def _source(result: Result) -> str:
    mlperf = getattr(result.source, "mlperf", None)
    if mlperf is not None:
        return f"mlperf {mlperf.round}"
    engine = engine_family(result.identity.engine.name)
    if result.source.kind == "measured":
        return f"measured {engine}"
    version = result.identity.engine.version.split(" ")[0]
    publisher = getattr(result.source, "publisher", "reported")
    return f"{publisher} {engine} {version}".lower()


def _workload(result: Result) -> Workload | None:
    name = workload_dataset(result)
    if name is None:
        tokens = workload_tokens(result.identity.workload)
        return None if tokens is None else Workload(*tokens)
    if dataset_key(name) is None:
        return None
    lengths = dataset_lengths(name)
    return Workload(lengths.input_tokens, lengths.output_tokens)


def _deployment(result: Result, arch: ModelArch, gpu: GpuEntry) -> Deployment:
    """The result's deployment; where it states no parallelism (MLPerf), the fewest GPUs per
    replica that hold the model, as throughput submissions run it, and replicas for the rest."""
    identity = result.identity
    serving = identity.serving
    count = identity.gpu.count
    pipeline = serving.pipeline_parallel_size or 1
    quantization = QUANTIZATION_BY_PRECISION.get((identity.model.quantization or "").lower())
    deployment = Deployment(
        arch=checkpoint_run(arch, quantization),
        gpu=gpu_for_prediction(gpu),
        quantization=quantization,
        kv_cache_dtype="fp8" if identity.model.quantization else None,
        pipeline_parallel_size=pipeline,
        engine=engine_family(identity.engine.name),
    )
    if serving.tensor_parallel_size is not None:
        tensor = serving.tensor_parallel_size
    else:
        tensor = smallest_tensor_parallel(deployment, count // pipeline)
    deployment = replace(deployment, tensor_parallel_size=tensor)
    # A stated data parallel size whose GPUs the result does not have is attention data
    # parallel inside one replica (TensorRT-LLM's DP attention with expert parallel: DP 4 and
    # EP 4 on 4 GPUs), not more replicas: the replicas are the GPUs over the replica's.
    most = max(1, count // deployment.layout.replica_gpus)
    replicas = min(serving.data_parallel_size or most, most)
    return replace(deployment, data_parallel_size=replicas)


def _kind(point: LoadPoint) -> tuple[str, Load, P99Bounds | None, str] | None:
    """(kind, load, slo, scenario) of a point the protocol compares; None otherwise."""
    load = point.load
    search = load.rate_search
    if load.arrival == "offline":
        return "offline", Load("offline"), None, "offline"
    if search is not None and load.request_rate is not None and search.percentile == 99.0:
        slo = P99Bounds(ttft_ms=search.ttft_ms, tpot_ms=search.tpot_ms)
        scenario = f"server p99 TTFT {search.ttft_ms:g} ms, TPOT {search.tpot_ms:g} ms"
        return "server", Load("request_rate", load.request_rate), slo, scenario
    if load.arrival == "static_batch" and (load.concurrency or 0) <= LOW_LOAD_BATCH:
        batch = load.concurrency or 1
        return "latency", Load("static_batch", batch), None, f"static batch {batch}"
    return None


def _measured(kind: str, point: LoadPoint) -> tuple[float, str] | None:
    if kind == "latency" and point.e2e_ms is not None and point.e2e_ms.mean:
        return point.e2e_ms.mean, "e2e_ms"
    tokens = point.throughput.output_tokens_per_s
    return (tokens, "output_tokens_per_s") if tokens else None


class _Catalogs:
    """The catalogs, and each model's architecture (None: the calculators cannot read it)."""

    def __init__(self, root: Path) -> None:
        folder = catalogs_folder(root)
        self.gpus: Mapping[str, GpuEntry] = load_gpus(folder)
        self.models: Mapping[str, ModelEntry] = load_models(folder)

    def arch(self, model_id: str) -> ModelArch | None:
        model = self.models.get(model_id)
        try:
            return None if model is None else catalog_arch(model)
        except CalculatorError:
            return None


def _known_format(deployment: Deployment) -> WeightFormat | None:
    """The weight format the predictor plans the deployment's checkpoint in, or None where it
    has none: a format the calculators do not read, or a quantized checkpoint whose format
    quantizes nothing of this model as the predictor's vLLM release applies it (MXFP4 of a model
    without experts: AMD's MXFP4 Llama 2 70B is a Quark checkpoint with every linear layer in
    MXFP4, where vLLM's mxfp4 converts only experts before 0.28)."""
    try:
        fmt = planned_format(deployment)
    except CalculatorError:
        return None
    return None if deployment.quantization and not fmt.quantized_roles else fmt


def _result_cases(
    file: str, result: Result, catalogs: _Catalogs, skipped: Counter[str]
) -> Iterator[PerfCase]:
    identity = result.identity
    gpu = catalogs.gpus.get(identity.gpu.id)
    arch = catalogs.arch(identity.model.id)
    workload = _workload(result)
    reason = (
        "GPU not in the catalog"
        if gpu is None
        else "model not read by the calculators"
        if arch is None
        else "lengths not known"
        if workload is None
        else None
    )
    if reason is not None or gpu is None or arch is None or workload is None:
        skipped[reason or ""] += len(result.points)
        return
    if getattr(result.source, "mlperf", None) is not None and not identity.model.quantization:
        skipped["MLPerf result without its precision"] += len(result.points)
        return
    deployment = _deployment(result, arch, gpu)
    fmt = _known_format(deployment)
    if fmt is None:
        skipped["weight format not known"] += len(result.points)
        return
    for index, point in enumerate(result.points):
        kind = _kind(point)
        measured = None if kind is None else _measured(kind[0], point)
        if any(v.code == INTERRUPTED for v in point.validity):
            skipped["interrupted"] += 1
            continue
        if kind is None or measured is None:
            skipped["load not compared (closed/open loop, large static batch)"] += 1
            continue
        yield PerfCase(
            case_id=f"{result.id}#{index}",
            file=file,
            url=str(getattr(result.source, "url", "")),
            kind=kind[0],
            scenario=kind[3],
            gpu=gpu.id,
            model=identity.model.id,
            family=catalogs.models[identity.model.id].family,
            generation=deployment.gpu.generation,
            precision=precision_name(fmt.method),
            engine=deployment.engine,
            source=_source(result),
            fitting=is_fitting(result),
            deployment=deployment,
            workload=workload,
            load=kind[1],
            slo=kind[2],
            measured=measured[0],
            measured_name=measured[1],
        )


def perf_cases(root: Path) -> tuple[list[PerfCase], Counter[str]]:
    """Every case of the registry checkout at `root`, and the load points left out by reason."""
    catalogs = _Catalogs(root)
    corrections = latest_entries(load_corrections(root / CORRECTIONS_FILE))
    skipped: Counter[str] = Counter()
    cases: list[PerfCase] = []
    for file, result in load_results(root, result_files(root)):
        if result.id in corrections:
            skipped["corrected or withdrawn"] += len(result.points)
            continue
        cases.extend(_result_cases(file, result, catalogs, skipped))
    return cases, skipped
