"""`infermeter calc perf` and the performance calculator page, once for both skins: the request
(`PerfRequest`, every input of `calculators.perf_inputs` resolved against a catalog) and its
payload (`perf`), which is what `--json` prints and the page's `data-output` paths point into.

The payload carries the prediction (`calculators.predict`), its kind of figure and that kind's
measured error (`calculators.perf_labels`), and whether the prediction or the roofline bound is
the figure to show: where the kind missed its target, `shown` is `bound` and `missed_target`
says which target and by how much.
"""

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from infermeter.calculators.cost_inputs import check_positive
from infermeter.calculators.errors import InputError
from infermeter.calculators.fields import same_named
from infermeter.calculators.limits import MAX_GPUS, MAX_TOKENS, bounded_int
from infermeter.calculators.perf_datasets import dataset_lengths
from infermeter.calculators.perf_fit import HELD_OUT
from infermeter.calculators.perf_labels import (
    BOUND_BASIS,
    basis_of,
    beyond_measured,
    error_kind,
    error_label,
    held_out_error,
    missed_target,
)
from infermeter.calculators.predict import (
    Deployment,
    Load,
    P99Bounds,
    Workload,
    engine_family,
    predict,
)
from infermeter.calculators.roofline import plan_throughput_bound
from infermeter.calculators.served_formats import check_served
from infermeter.calculators.token_cost import usd_per_million_tokens
from infermeter.calculators.vllm_settings import (
    DEFAULT_VLLM_VERSION,
    VllmSettings,
    beyond_the_model,
    parse_release,
)


@dataclass(frozen=True)
class PerfRequest:
    """A prediction as asked: the deployment (the GPU resolved), the lengths or a data set, one
    load, an optional SLO and price (None: the catalog's on-demand price, where it has one)."""

    model: str
    deployment: Deployment
    input_len: int | None
    output_len: int | None
    dataset: str | None
    concurrency: int | None
    request_rate: float | None
    offline: bool
    static_batch: int | None
    slo_ttft_ms: float | None
    slo_tpot_ms: float | None
    price_per_hour: float | None


# The request's fields that are inputs as given (`calculators.perf_inputs`), beside the model
# and the deployment the skins resolve.
PERF_REQUEST_FIELDS = (
    "input_len",
    "output_len",
    "dataset",
    "concurrency",
    "request_rate",
    "offline",
    "static_batch",
    "slo_ttft_ms",
    "slo_tpot_ms",
    "price_per_hour",
)


def request_load(request: PerfRequest) -> Load:
    """The one load the request names; InputError when it names none or several."""
    given = [
        Load(kind, value)
        for kind, value in (
            ("concurrency", request.concurrency),
            ("request_rate", request.request_rate),
            ("static_batch", request.static_batch),
        )
        if value is not None
    ]
    if request.offline:
        given.append(Load("offline"))
    if len(given) != 1:
        raise InputError(
            "load: give exactly one of concurrency, request_rate, offline or static_batch"
        )
    if request.request_rate is not None:  # 1e-300 requests/s made $/1M infinite
        check_positive("request_rate", request.request_rate)
    return given[0]


def request_workload(request: PerfRequest) -> Workload:
    """The lengths asked for, or the named data set's means."""
    if request.dataset:
        lengths = dataset_lengths(request.dataset)
        return Workload(lengths.input_tokens, lengths.output_tokens)
    if request.input_len is None or request.output_len is None:
        raise InputError("input_len: give input_len and output_len, or a dataset")
    total = request.input_len + request.output_len
    if total > MAX_TOKENS:  # else refused as the plan's max_model_len, which perf does not take
        raise InputError(
            f"input_len: input_len + output_len is {total:,} tokens a request; expected at most "
            f"{MAX_TOKENS:,}"
        )
    refused = beyond_the_model(request.deployment.arch, total)
    if refused is not None:
        raise InputError(f"input_len: input_len + output_len, {total:,} tokens, {refused}")
    return Workload(request.input_len, request.output_len)


def _bound_tokens_per_s(request: PerfRequest, workload: Workload, batch: float) -> float:
    """The roofline bound at the prediction's batch (what a page shows where the kind missed
    its target)."""
    deployment = request.deployment
    settings = same_named(
        VllmSettings, vars(deployment), gpu_memory_bytes=deployment.gpu.memory_bytes
    )
    bound = plan_throughput_bound(
        deployment.arch,
        settings,
        deployment.gpu.memory_bandwidth_gb_s,
        deployment.gpu.tflops_dense,
        round(workload.input_tokens + workload.output_tokens / 2),
        max(1, round(batch * deployment.data_parallel_size)),
        deployment.gpu.links,
    )
    return bound.tokens_per_second


def perf(request: PerfRequest, catalog_price: Mapping[str, Any] | None) -> dict[str, Any]:
    """The `calc perf --json` payload; `catalog_price` is the GPU's on-demand price the figures use
    ({"id", "usd_per_gpu_hour", "as_of", "source_url"}) used when the request gives none."""
    deployment = request.deployment
    if engine_family(deployment.engine) == "vllm":  # the release the prediction plans
        release = parse_release(DEFAULT_VLLM_VERSION)
        check_served(deployment.arch, deployment.quantization, deployment.gpu.traits, release)
    load, workload = request_load(request), request_workload(request)
    slo = None
    if request.slo_ttft_ms is not None or request.slo_tpot_ms is not None:
        slo = P99Bounds(ttft_ms=request.slo_ttft_ms, tpot_ms=request.slo_tpot_ms)
    price = request.price_per_hour
    if price is not None:  # within calc cost's bounds: 1e308 $/GPU-hour made $/1M infinite
        check_positive("price_per_hour", price)
    if price is None and catalog_price is not None:
        price = float(catalog_price["usd_per_gpu_hour"])
    prediction = predict(request.deployment, workload, load, slo=slo, price_usd_per_gpu_hour=price)
    kind = error_kind(load.kind)
    missed = missed_target(kind) or beyond_measured(load.kind, load.value, deployment.gpu.id)
    bound = _bound_tokens_per_s(request, workload, prediction.batch_per_replica)
    return {
        "model": request.model,
        "gpu": request.deployment.gpu.id,
        "engine": request.deployment.engine,
        "workload": {
            "input_tokens": workload.input_tokens,
            "output_tokens": workload.output_tokens,
            "dataset": request.dataset or None,
        },
        **prediction.as_dict(),
        "roofline_bound_tokens_per_s": bound,
        # the bound's $ figure: no run costs less (what a page shows where the kind missed)
        "roofline_bound_usd_per_million_output_tokens": None
        if price is None
        else usd_per_million_tokens(price * prediction.gpu_count, bound),
        "price": None
        if price is None
        else {
            "usd_per_gpu_hour": price,
            "catalog": None if request.price_per_hour else catalog_price,
        },
        "kind": kind,
        "error": held_out_error(kind),
        "error_label": error_label(kind),
        "shown": "bound" if missed else "prediction",
        "missed_target": missed,
    }


# The longest GPU id a prediction names (the catalog's are about 20 characters).
_GPU_CHARS = 64


@dataclass(frozen=True)
class PredictedThroughput:
    """What `calc cost --from-perf` (and the perf page's "cost of this" link) takes from a
    `calc perf --json` payload: the figure the payload shows, the prediction or, where its
    kind missed its target, the roofline bound."""

    tokens_per_second: float
    gpu: str
    gpu_count: int
    basis: str  # `calculators.perf_labels.THROUGHPUT_BASES`: bound, or predicted-<kind>


def predicted_throughput(payload: Mapping[str, Any], source: str) -> PredictedThroughput:
    """The throughput a `calc perf --json` payload shows (the prediction at its SLO where it
    names one, or the roofline bound where `shown` says so); InputError naming `source` and the
    field when the payload is not one, or holds what no prediction does (a count or throughput
    out of the calculators' bounds, a text that would not print as one line)."""

    def field(name: str, kinds: tuple[type, ...], expected: str) -> Any:
        value = payload.get(name) if isinstance(payload, Mapping) else None
        if not isinstance(value, kinds) or isinstance(value, bool):
            raise InputError(f"{source}: {name}: expected {expected} (a calc perf --json output)")
        return value

    def choice(name: str, choices: Collection[str]) -> str:
        value = payload.get(name) if isinstance(payload, Mapping) else None
        if value not in choices:
            shown = repr(value) if len(repr(value)) <= 40 else f"{repr(value)[:40]}…"
            raise InputError(f"{source}: {name}: expected {' or '.join(choices)}, got {shown}")
        return str(value)

    gpu = field("gpu", (str,), "a text")
    if len(gpu) > _GPU_CHARS or not gpu.isprintable():
        shown = repr(gpu) if len(gpu) <= 40 else f"{gpu[:40]!r}…"
        expected = f"a text on one line of at most {_GPU_CHARS} characters"
        raise InputError(f"{source}: gpu: expected {expected}, got {shown}")
    at_slo = payload.get("output_tokens_per_s_at_slo") if isinstance(payload, Mapping) else None
    name = "output_tokens_per_s" if at_slo is None else "output_tokens_per_s_at_slo"
    if at_slo is not None and field(name, (int, float), "a number") == 0:
        raise InputError(
            f"{source}: {name}: 0, no request rate meets the prediction's SLO; cost the "
            "prediction without the SLO, or with a looser one"
        )
    basis = basis_of(choice("shown", ("prediction", BOUND_BASIS)), choice("kind", HELD_OUT))
    if basis == BOUND_BASIS:
        name = "roofline_bound_tokens_per_s"
    gpu_count = field("gpu_count", (int,), "an integer")
    return PredictedThroughput(
        tokens_per_second=check_positive(
            f"{source}: {name}", field(name, (int, float), "a number")
        ),
        gpu=gpu,
        gpu_count=bounded_int(f"{source}: gpu_count", gpu_count, 1, MAX_GPUS),
        basis=basis,
    )
