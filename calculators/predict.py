"""Predicted throughput, latency and cost of a deployment at a load, where no result measures it.

    prediction = predict(deployment, workload, load)            # with the FITTED factors
    label = error_label("offline")                               # its measured error, in words

The physics (`calculators.perf_model`): a replica decodes a batch in steps whose time is the
longer of its memory reads (weights, KV cache, further experts) and its compute, plus its link
traffic; each prompt is prefilled at peak compute. How many sequences a replica can hold comes
from the vLLM memory plan (`calculators.vllm_plan`) at the workload's request length, capped by
the engine's batch limit. Every time is divided by the product of a few fitted efficiencies
(`Factors`: a base for reads and for compute, one on compute per doubling of the tensor
parallel size, and one per GPU generation, weight precision and engine family, each with its
count of results),
and every decode step carries the engine's own fitted overhead (`calculators.perf_fit` holds
the fitted factors and their measured error).

With B sequences decoding on a replica and output length O, every step also prefills the
prompts of the (B − 1) / O sequences that finish and are replaced per step, so

    TPOT = (step(B) + (B − 1) / O × prefill) / efficiency
    TTFT = (prefill + step(B)) / efficiency + queueing
    output tokens/s per replica = B × O / (TTFT + (O − 1) × TPOT)

Loads: `offline` (the replica full: B at its most; no TTFT or E2E, `OFFLINE_TTFT` says why),
`concurrency` N (closed loop: B = N per replica up to the most, the rest wait), `static_batch`
N (all prompts prefilled, then O steps together), and `request_rate` R (open loop, Poisson:
B solves Little's law, B = R × E2E; a request waits only when the replica is near capacity:
Kingman's approximation with the replica's time per request at capacity as the service time,
the share that waits Erlang C's over its batch slots, an exponential tail, so TTFT's p99
grows as the load nears saturation).
p99 TPOT is taken equal to the mean (a request's TPOT averages many steps); p99 TTFT prefills
the workload's p99 prompt where it states one.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from typing import Any, Literal

from infermeter.calculators.cost_inputs import per_million
from infermeter.calculators.errors import CalculatorError, InputError
from infermeter.calculators.gpu_traits import UNKNOWN_GPU, GpuTraits
from infermeter.calculators.interconnect import Link
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.parallel import ParallelLayout
from infermeter.calculators.perf_model import (
    Replica,
    StepModel,
    StepTime,
    prefill_seconds,
    step_model,
)
from infermeter.calculators.quantization import WeightFormat, weight_format
from infermeter.calculators.vllm_plan import plan_vllm
from infermeter.calculators.vllm_settings import DEFAULT_VLLM_VERSION, VllmSettings, parse_release

LoadKind = Literal["offline", "concurrency", "request_rate", "static_batch"]
LOAD_KINDS: tuple[str, ...] = ("offline", "concurrency", "request_rate", "static_batch")
ENGINE_FAMILIES: tuple[str, ...] = ("vllm", "tensorrt-llm", "sglang")
# The most sequences an engine batches when nothing else limits it: vLLM's own default comes
# from the memory plan; trtllm-bench's default max batch size is 2048.
ENGINE_MAX_BATCH: Mapping[str, int] = {"tensorrt-llm": 2048}
# The share of GPU memory an engine takes: vLLM's default comes from the plan; TensorRT-LLM's
# benchmarks give the KV cache 0.90-0.95 of what the weights leave.
ENGINE_MEMORY_UTILIZATION: Mapping[str, float] = {"tensorrt-llm": 0.95}


@dataclass(frozen=True)
class Gpu:
    """The GPU facts the predictor reads (from the catalog)."""

    id: str
    generation: str  # the architecture, e.g. `Hopper`: its efficiency factor's name
    memory_bytes: int  # as the driver reports it
    memory_bandwidth_gb_s: float
    tflops_dense: Mapping[str, float | None]
    links: Sequence[Link] = ()
    traits: GpuTraits = UNKNOWN_GPU  # what the memory plan reads (`registry.catalog.gpu_traits`)


@dataclass(frozen=True)
class Deployment:
    """What runs: the model, its formats, the GPUs and their parallelism, the engine family."""

    arch: ModelArch
    gpu: Gpu
    quantization: str | None = None  # vLLM's --quantization; None: the checkpoint's
    kv_cache_dtype: str | None = None
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    data_parallel_size: int = 1
    engine: str = "vllm"

    @property
    def layout(self) -> ParallelLayout:
        return ParallelLayout(
            self.tensor_parallel_size, self.pipeline_parallel_size, self.data_parallel_size
        )


@dataclass(frozen=True)
class Workload:
    """Mean prompt and output lengths in tokens; a p99 prompt where the lengths vary."""

    input_tokens: float
    output_tokens: float
    input_tokens_p99: float | None = None


@dataclass(frozen=True)
class Load:
    """One load: `offline`, or a `concurrency`, `request_rate` (requests/s of the whole
    deployment) or `static_batch` with its value."""

    kind: str
    value: float | None = None


@dataclass(frozen=True)
class P99Bounds:
    """The latency bounds the predictor judges a load by: p99 TTFT and TPOT, ms (None: no
    bound); a reader's SLO (`calculators.accepted.Slo`) is read as them by
    `calculators.answer_estimate.predicted_bounds`."""

    ttft_ms: float | None = None
    tpot_ms: float | None = None


@dataclass(frozen=True)
class Factors:
    """The fitted efficiencies: the share of peak memory bandwidth (`memory`, reads and link)
    and of peak compute (`compute`) the physical model's steps reach, each multiplied by a
    factor per GPU generation, weight precision and engine family (a name without one counts
    1), and the results behind each (`rows`, keyed `memory`, `compute`, `generation:<name>`,
    `precision:<name>`, `engine:<name>`)."""

    memory: float
    compute: float
    tensor_parallel: float = 1.0  # compute, per doubling of the tensor parallel size (1: none)
    step_overhead_ms: float = 0.0  # per decode step: scheduling, sampling, kernel launches
    generation: Mapping[str, float] = field(default_factory=dict)
    precision: Mapping[str, float] = field(default_factory=dict)
    engine: Mapping[str, float] = field(default_factory=dict)
    rows: Mapping[str, int] = field(default_factory=dict)

    def used(
        self, generation: str, precision: str, engine: str, tensor_parallel_size: int = 1
    ) -> dict[str, float]:
        """The factors a deployment takes, by name (the tensor-parallel one raised to the
        number of doublings of its tensor parallel size)."""
        return {
            "memory": self.memory,
            "compute": self.compute,
            "tensor_parallel": self.tensor_parallel ** math.log2(max(1, tensor_parallel_size)),
            f"generation:{generation}": self.generation.get(generation, 1.0),
            f"precision:{precision}": self.precision.get(precision, 1.0),
            f"engine:{engine}": self.engine.get(engine, 1.0),
        }


def generation_of(architecture: str) -> str:
    """A GPU's generation (its efficiency factor's name) from the catalog's architecture:
    the name before any parenthesis (`Hopper (GH100)` is `Hopper`)."""
    return architecture.split("(")[0].strip()


def precision_name(method: str) -> str:
    """The efficiency group of a weight format's method: bf16, fp8, fp4 or int4."""
    if method in ("nvfp4", "mxfp4", "modelopt_fp4", "fp4"):
        return "fp4"
    if method in ("fp8", "fbgemm_fp8", "modelopt", "int8"):
        return "fp8"
    if method in ("awq", "awq_marlin", "gptq", "gptq_marlin", "int4"):
        return "int4"
    return "bf16"


def engine_family(engine: str) -> str:
    """The engine family of an engine's name (`tensorrt` and `trtllm` are TensorRT-LLM)."""
    name = engine.lower()
    if name.startswith(("tensorrt", "trtllm", "trt-llm")):
        return "tensorrt-llm"
    return name


@dataclass(frozen=True)
class Prediction:
    """The predicted figures of one deployment at one load (times in ms, rates per second)."""

    load: str
    output_tokens_per_s: float  # the whole deployment
    requests_per_s: float
    ttft_ms: dict[str, float | None]  # {"p50", "p99"}; None: see ttft_not_predicted
    tpot_ms: dict[str, float]
    e2e_ms_p50: float | None
    batch_per_replica: float  # sequences decoding at once on one replica
    max_batch_per_replica: int  # the most one replica holds (memory plan, engine limit)
    max_output_tokens_per_s: float  # the deployment saturated (offline)
    saturated: bool  # the load asks more than the deployment serves
    limited_by: str  # what limits a decode step at this batch: memory or compute
    gpu_count: int
    memory_efficiency: float  # the share of peak bandwidth the steps reach (all factors)
    factors: dict[str, float]
    max_request_rate_at_slo: float | None = None  # with an SLO: the highest rate meeting it
    output_tokens_per_s_at_slo: float | None = None
    usd_per_million_output_tokens: float | None = None  # with a price
    usd_per_million_accepted_tokens: float | None = None  # with a price and an SLO met
    ttft_not_predicted: str | None = None  # why TTFT and E2E are None, where they are

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Prepared:
    """What a deployment and workload give before any efficiency: the step model, the batch
    limit, the prefill times at peak, and the names of the factors that apply."""

    steps: StepModel
    workload: Workload
    max_batch: int
    prefill_peak_s: float  # the mean prompt's
    prefill_p99_peak_s: float  # the p99 prompt's (the mean's where none is stated)
    generation: str
    precision: str
    engine: str
    replicas: int
    gpu_count: int
    tensor_parallel_size: int = 1


@dataclass(frozen=True)
class _Engine:
    """A replica at its efficiencies: what every load's figures need."""

    steps: StepModel
    workload: Workload
    max_batch: int
    memory_efficiency: float
    compute_efficiency: float
    prefill_s: float
    prefill_p99_s: float

    step_overhead_s: float = 0.0
    # Each batch's step, worked out once: a load's figures read one batch's step up to six
    # times (its TTFT, its TPOT, E2E holding both, the limit), and the fit predicts 270,000 loads.
    _steps: dict[float, StepTime] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def step(self, batch: float) -> StepTime:
        known = self._steps.get(batch)
        if known is None:
            known = self._steps[batch] = self.steps.step(
                max(1.0, batch),
                self.memory_efficiency,
                self.compute_efficiency,
                self.step_overhead_s,
            )
        return known

    def step_s(self, batch: float) -> float:
        return self.step(batch).seconds

    def tpot_s(self, batch: float) -> float:
        replaced = max(0.0, batch - 1) / self.workload.output_tokens
        return self.step_s(batch) + replaced * self.prefill_s

    def e2e_s(self, batch: float) -> float:
        ttft = self.prefill_s + self.step_s(batch)
        return ttft + max(0.0, self.workload.output_tokens - 1) * self.tpot_s(batch)

    def tokens_per_s(self, batch: float) -> float:
        return batch * self.workload.output_tokens / self.e2e_s(batch)

    @cached_property
    def capacity_tokens_per_s(self) -> float:
        """The replica's output tokens/s with its batch full (what every queue is measured by)."""
        return self.tokens_per_s(self.max_batch)


def _check(workload: Workload, load: Load) -> None:
    if not workload.input_tokens >= 0 or not workload.output_tokens >= 1:
        raise InputError(
            f"workload: expected input_tokens >= 0 and output_tokens >= 1, got "
            f"{workload.input_tokens} and {workload.output_tokens}"
        )
    if load.kind not in LOAD_KINDS:
        raise InputError(f"load: expected one of {', '.join(LOAD_KINDS)}, got {load.kind!r}")
    if load.kind != "offline" and not (load.value is not None and load.value > 0):
        raise InputError(f"{load.kind}: expected a number > 0, got {load.value}")


def replica_capacity(deployment: Deployment, workload: Workload) -> int:
    """The most sequences of the workload's length one replica holds at once: the vLLM memory
    plan's KV cache over a sequence's mean tokens in flight (its prompt and half its output:
    continuous batching holds sequences at every stage), capped by the engine's batch limit."""
    length = math.ceil(workload.input_tokens + workload.output_tokens)
    family = engine_family(deployment.engine)
    settings = VllmSettings(
        gpu_memory_bytes=deployment.gpu.memory_bytes,
        gpu_memory_utilization=ENGINE_MEMORY_UTILIZATION.get(family),
        tensor_parallel_size=deployment.tensor_parallel_size,
        pipeline_parallel_size=deployment.pipeline_parallel_size,
        max_model_len=max(length, 16),
        kv_cache_dtype=deployment.kv_cache_dtype,
        quantization=deployment.quantization,
        gpu=deployment.gpu.traits,
    )
    plan = plan_vllm(deployment.arch, settings)
    if not plan.fits or plan.kv_cache_tokens < length:
        gpus = deployment.layout.replica_gpus
        raise CalculatorError(
            f"the model does not fit {gpus} x {deployment.gpu.id} at {length} tokens per "
            f"request: {plan.error or 'no KV cache'}"
        )
    limit = ENGINE_MAX_BATCH.get(family, plan.max_num_seqs)
    in_flight = workload.input_tokens + workload.output_tokens / 2
    return max(1, min(limit, math.floor(plan.kv_cache_tokens / in_flight)))


def planned_format(deployment: Deployment) -> WeightFormat:
    """The deployment's weight format as the release its memory plan models (vLLM's default,
    `replica_capacity`) applies it."""
    version = parse_release(DEFAULT_VLLM_VERSION)
    return weight_format(deployment.arch, deployment.quantization, None, version)


def prepare(deployment: Deployment, workload: Workload) -> Prepared:
    """The efficiency-free part of a prediction (the memory plan, the step model, the prefill
    at peak): worked out once where many factors are tried on one case."""
    fmt = planned_format(deployment)
    replica = Replica(
        arch=deployment.arch,
        fmt=fmt,
        kv_cache_dtype=deployment.kv_cache_dtype,
        layout=deployment.layout,
        memory_bandwidth_gb_s=deployment.gpu.memory_bandwidth_gb_s,
        tflops_dense=deployment.gpu.tflops_dense,
        links=tuple(deployment.gpu.links),
    )
    context = round(workload.input_tokens + workload.output_tokens / 2)
    return Prepared(
        steps=step_model(replica, context),
        workload=workload,
        max_batch=replica_capacity(deployment, workload),
        prefill_peak_s=prefill_seconds(replica, workload.input_tokens),
        prefill_p99_peak_s=prefill_seconds(
            replica, workload.input_tokens_p99 or workload.input_tokens
        ),
        generation=deployment.gpu.generation,
        precision=precision_name(fmt.method),
        engine=engine_family(deployment.engine),
        replicas=deployment.data_parallel_size,
        gpu_count=deployment.layout.gpus,
        tensor_parallel_size=deployment.tensor_parallel_size,
    )


def _engine(prepared: Prepared, factors: Factors) -> tuple[_Engine, dict[str, float]]:
    used = factors.used(
        prepared.generation, prepared.precision, prepared.engine, prepared.tensor_parallel_size
    )
    # The tensor-parallel factor slows the compute only (smaller shards of every product
    # reach less of the peak); a shard's reads run at the same share of its bandwidth.
    own = ("memory", "compute", "tensor_parallel")
    shared = math.prod(value for name, value in used.items() if name not in own)
    memory = factors.memory * shared
    compute = factors.compute * shared * used["tensor_parallel"]
    engine = _Engine(
        steps=prepared.steps,
        workload=prepared.workload,
        max_batch=prepared.max_batch,
        memory_efficiency=memory,
        compute_efficiency=compute,
        prefill_s=prepared.prefill_peak_s / compute,
        prefill_p99_s=prepared.prefill_p99_peak_s / compute,
        step_overhead_s=factors.step_overhead_ms / 1000,
    )
    return engine, used


def _wait_quantile_s(engine: _Engine, utilisation: float, quantile: float) -> float:
    """Queueing at `utilisation` of the replica's capacity: Kingman's approximation for one
    queue (deterministic service) whose service time is the replica's time per request at
    capacity (continuous batching serves many requests at once: a request waits for capacity,
    not for another's whole prefill), its waiting time's tail taken exponential."""
    waiting = _waiting_share(utilisation, engine.max_batch)
    if waiting <= 1 - quantile:
        return 0.0
    service = engine.workload.output_tokens / engine.capacity_tokens_per_s
    mean_if_waiting = service / (2 * (1 - utilisation))
    return mean_if_waiting * math.log(waiting / (1 - quantile))


def _waiting_share(utilisation: float, slots: int) -> float:
    """The share of requests that find every one of `slots` busy at `utilisation` (Erlang C
    by the Halfin-Whitt approximation): a replica batching many requests makes few wait until
    it nears capacity."""
    beta = (1 - utilisation) * math.sqrt(max(1, slots))
    if beta <= 0:
        return 1.0
    if beta > 8:  # far from capacity: practically none wait
        return 0.0
    density = math.exp(-beta * beta / 2) / math.sqrt(2 * math.pi)
    below = 0.5 * (1 + math.erf(beta / math.sqrt(2)))
    return min(utilisation, 1 / (1 + beta * below / density))


@dataclass(frozen=True)
class _Point:
    """One load's per-replica figures (seconds, per second)."""

    batch: float
    tokens_per_s: float
    ttft_p50_s: float | None
    ttft_p99_s: float | None
    tpot_s: float
    saturated: bool = False


def _closed_loop(engine: _Engine, per_replica: float) -> _Point:
    batch = min(per_replica, engine.max_batch)
    tokens = engine.tokens_per_s(batch)
    tpot = engine.tpot_s(batch)
    # Requests beyond the batch wait their turn: Little's law gives the whole E2E.
    e2e = per_replica * engine.workload.output_tokens / tokens
    ttft = e2e - max(0.0, engine.workload.output_tokens - 1) * tpot
    p99_extra = engine.prefill_p99_s - engine.prefill_s
    return _Point(
        batch, tokens, ttft, ttft + max(0.0, p99_extra), tpot, per_replica > engine.max_batch
    )


def _static_batch(engine: _Engine, per_replica: float) -> _Point:
    """Requests started together: the engine runs them in rounds of its largest batch, and a
    request of a later round waits for every round before it (its TTFT counts them)."""
    batch = min(per_replica, engine.max_batch)
    rounds = math.ceil(per_replica / batch)
    ttft = batch * engine.prefill_s + engine.step_s(batch)
    tpot = engine.step_s(batch)
    e2e = ttft + max(0.0, engine.workload.output_tokens - 1) * tpot

    def ttft_at(quantile: float) -> float:
        before = max(0, math.ceil(quantile * per_replica / batch) - 1)  # whole rounds before
        return before * e2e + ttft

    tokens = per_replica * engine.workload.output_tokens / (e2e * rounds)
    return _Point(batch, tokens, ttft_at(0.5), ttft_at(0.99), tpot, rounds > 1)


def _at_batch(engine: _Engine, batch: float, rate: float | None = None) -> _Point:
    """The open loop whose rate keeps `batch` sequences in flight (Little's law: the rate is
    the batch over E2E), with its queueing for the prefill; a `rate` given below one in flight
    runs each request alone, at `batch` 1's latencies."""
    rate = batch / engine.e2e_s(batch) if rate is None else rate
    out = engine.workload.output_tokens
    utilisation = min(rate * out / engine.capacity_tokens_per_s, 1.0 - 1e-9)
    base = engine.prefill_s + engine.step_s(batch)
    longest = max(0.0, engine.prefill_p99_s - engine.prefill_s)
    p50 = base + _wait_quantile_s(engine, utilisation, 0.5)
    p99 = base + longest + _wait_quantile_s(engine, utilisation, 0.99)
    return _Point(batch, rate * out, p50, p99, engine.tpot_s(batch))


def _open_loop(engine: _Engine, rate_per_replica: float) -> _Point:
    out = engine.workload.output_tokens
    most = engine.capacity_tokens_per_s
    if rate_per_replica * out >= most:
        return _Point(engine.max_batch, most, None, None, engine.tpot_s(engine.max_batch), True)
    low, high = 1.0, float(engine.max_batch)
    if rate_per_replica * engine.e2e_s(low) <= low:  # under one in flight: each runs alone
        return _at_batch(engine, low, rate_per_replica)
    for _ in range(40):  # the batch whose Little's-law rate is the asked one
        middle = (low + high) / 2
        if middle / engine.e2e_s(middle) < rate_per_replica:
            low = middle
        else:
            high = middle
    return _at_batch(engine, high)


# Why an offline load states no TTFT (nor E2E, which holds it): the replica runs full, but
# how long a request waits for a slot depends on how many were queued before it.
OFFLINE_TTFT = (
    "offline: every request is queued at once, so a request's TTFT counts its wait for those "
    "queued before it, which depends on how many were queued (not an input): none is "
    "predicted, nor an E2E"
)
# Why an open loop beyond capacity states none: its queue grows for as long as it runs.
SATURATED_TTFT = (
    "the load asks more than the deployment serves, so its queue grows for as long as it runs: "
    "no TTFT is predicted, nor an E2E"
)


def _why_no_ttft(point: _Point, load: Load) -> str | None:
    if point.ttft_p50_s is not None:
        return None
    return OFFLINE_TTFT if load.kind == "offline" else SATURATED_TTFT


def _point(engine: _Engine, load: Load, replicas: int) -> _Point:
    if load.kind == "offline":
        return replace(_closed_loop(engine, engine.max_batch), ttft_p50_s=None, ttft_p99_s=None)
    value = float(load.value or 0)
    if load.kind == "concurrency":
        return _closed_loop(engine, value / replicas)
    if load.kind == "static_batch":
        return _static_batch(engine, math.ceil(value / replicas))
    return _open_loop(engine, value / replicas)


def _meets(point: _Point, slo: P99Bounds) -> bool:
    if point.saturated or point.ttft_p99_s is None:
        return False
    ttft_ok = slo.ttft_ms is None or point.ttft_p99_s * 1000 <= slo.ttft_ms
    return ttft_ok and (slo.tpot_ms is None or point.tpot_s * 1000 <= slo.tpot_ms)


def max_rate_at_slo(engine: _Engine, slo: P99Bounds) -> float:
    """The highest request rate per replica whose predicted p99 TTFT and TPOT meet `slo`; 0
    when even one request at a time misses it. Every figure grows with the batch in flight,
    so the search runs over the batch."""
    low, high = 1.0, float(engine.max_batch)
    if not _meets(_at_batch(engine, low), slo):
        return 0.0
    if _meets(_at_batch(engine, high), slo):
        return high / engine.e2e_s(high)
    for _ in range(30):
        middle = (low + high) / 2
        if _meets(_at_batch(engine, middle), slo):
            low = middle
        else:
            high = middle
    return low / engine.e2e_s(low)


def _usd(
    price_usd_per_gpu_hour: float | None, gpus: int, tokens_per_s: float | None
) -> float | None:
    if price_usd_per_gpu_hour is None or not tokens_per_s:
        return None
    return per_million(price_usd_per_gpu_hour * gpus, tokens_per_s)


def predict(
    deployment: Deployment,
    workload: Workload,
    load: Load,
    slo: P99Bounds | None = None,
    price_usd_per_gpu_hour: float | None = None,
) -> Prediction:
    """The predicted figures of `deployment` serving `workload` at `load` (see the module
    docstring), with the fitted factors; with an `slo`, also the highest rate meeting it; with a
    price per GPU-hour, $ per 1M output tokens (and per 1M accepted ones: all of them when the
    load meets the SLO). Other factors (the fitting's): `predict_prepared`."""
    _check(workload, load)
    return predict_prepared(prepare(deployment, workload), load, None, slo, price_usd_per_gpu_hour)


def predict_prepared(
    prepared: Prepared,
    load: Load,
    factors: Factors | None = None,
    slo: P99Bounds | None = None,
    price_usd_per_gpu_hour: float | None = None,
) -> Prediction:
    """`predict` from a `prepare`d case (the fitting tries many factors on one case)."""
    if factors is None:
        from infermeter.calculators.perf_fit import FITTED  # generated; imported late, it is data

        factors = FITTED
    engine, used = _engine(prepared, factors)
    replicas, workload = prepared.replicas, prepared.workload
    point = _point(engine, load, replicas)
    at_slo = None if slo is None else max_rate_at_slo(engine, slo) * replicas
    tokens = point.tokens_per_s * replicas
    accepted = tokens if slo is None or _meets(point, slo) else None
    e2e = None
    if point.ttft_p50_s is not None:
        e2e = (point.ttft_p50_s + max(0.0, workload.output_tokens - 1) * point.tpot_s) * 1000
    gpus = prepared.gpu_count
    return Prediction(
        load=load.kind,
        output_tokens_per_s=tokens,
        requests_per_s=tokens / workload.output_tokens,
        ttft_ms=_ms(point.ttft_p50_s, point.ttft_p99_s),
        tpot_ms={"p50": point.tpot_s * 1000, "p99": point.tpot_s * 1000},
        e2e_ms_p50=e2e,
        batch_per_replica=point.batch,
        max_batch_per_replica=engine.max_batch,
        max_output_tokens_per_s=engine.capacity_tokens_per_s * replicas,
        saturated=point.saturated,
        limited_by=engine.step(point.batch).limited_by,
        gpu_count=gpus,
        memory_efficiency=engine.memory_efficiency,
        factors=used,
        max_request_rate_at_slo=at_slo,
        output_tokens_per_s_at_slo=None if at_slo is None else at_slo * workload.output_tokens,
        usd_per_million_output_tokens=_usd(price_usd_per_gpu_hour, gpus, tokens),
        usd_per_million_accepted_tokens=_usd(price_usd_per_gpu_hour, gpus, accepted),
        ttft_not_predicted=_why_no_ttft(point, load),
    )


def _ms(p50_s: float | None, p99_s: float | None) -> dict[str, float | None]:
    return {
        "p50": None if p50_s is None else p50_s * 1000,
        "p99": None if p99_s is None else p99_s * 1000,
    }


def smallest_tensor_parallel(deployment: Deployment, most: int) -> int:
    """The smallest power-of-two tensor parallel size up to `most` whose replica holds the
    model with room for 32 sequences of 4,096 tokens (`most` when none does)."""
    size = 1
    while size < most:
        try:
            trial = replace(deployment, tensor_parallel_size=size)
            if replica_capacity(trial, Workload(2048, 4096)) >= 32:
                return size
        except CalculatorError:
            pass
        size *= 2
    return most
