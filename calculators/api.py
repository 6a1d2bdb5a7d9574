"""The calculators' three entry points, once, for every skin: `infermeter calc vram|cost|fit`
(bench/cli/calc.py) and the calculator pages (site/browser/calc_api.py, in the browser
through Pyodide). Standard library only.

Each skin resolves ids against its own copy of the catalog (the registry on the command line,
`catalog.json` in the browser), builds one request, and calls `vram`, `cost` or `fit`; the
payload returned is what `--json` prints and what the page's `data-output` paths point into.
A request field has no default, so a skin cannot silently drop one (a page that ignored
`retry_rate` once passed every test that did not run a browser).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from infermeter.calculators.cost_report import CostReport, cost_report
from infermeter.calculators.cudagraph_capture import capture_sizes
from infermeter.calculators.errors import CalculatorError, InputError
from infermeter.calculators.fields import same_named
from infermeter.calculators.fit import GpuOption, fit_gpus
from infermeter.calculators.gpu_traits import GpuTraits
from infermeter.calculators.interconnect import Link
from infermeter.calculators.layer_caches import plan_note
from infermeter.calculators.memory import MemoryReport, memory_report
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.perf_labels import BOUND_BASIS, basis_label
from infermeter.calculators.roofline import plan_throughput_bound
from infermeter.calculators.served_formats import check_served
from infermeter.calculators.vllm_settings import (
    DEFAULT_VLLM_VERSION,
    VllmSettings,
    beyond_the_model,
    parse_release,
)

# A catalog price as the payload names it: {"id", "usd_per_gpu_hour", "as_of", "source_url"};
# its `as_of` is the date its source states, or UNDATED where it was only read on a day.
PriceUsed = Mapping[str, Any]
UNDATED = "undated"


def as_of_words(as_of: str) -> str:
    """A catalog price's date as the cost table says it: `as of 2026-09-18`, or `undated`."""
    return UNDATED if as_of == UNDATED else f"as of {as_of}"


# The price fields a GPU fills from its catalog prices, and the tier each takes (None: the
# request's tier).
CATALOG_PRICE_FIELDS: tuple[tuple[str, str | None], ...] = (
    ("price_per_hour", None),
    ("interruptible_price_per_hour", "interruptible"),
    ("reserved_price_per_hour", "reserved"),
)


@dataclass(frozen=True)
class EngineRequest:
    """The `vllm serve` options every calculator takes. None: vLLM's default."""

    quantization: str | None
    kv_cache_dtype: str | None
    dtype: str | None
    gpu_memory_utilization: float | None
    max_num_seqs: int | None
    max_num_batched_tokens: int | None
    enforce_eager: bool
    vllm_version: str | None
    data_parallel_size: int  # replicas: more GPUs, the same plan per GPU (MoE aside)
    enable_expert_parallel: bool
    # VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS (the page's and the CLI's
    # memory_profiler_estimate_cudagraphs): None, the release's default (on from 0.20).
    estimate_cudagraphs: bool | None
    # FlashInfer's sampler (the page's and the CLI's flashinfer_sampler: 0 not installed or
    # VLLM_USE_FLASHINFER_SAMPLER=0, 1 opted in): None, the release's default.
    flashinfer_sampler: bool | None
    # VLLM_USE_V2_MODEL_RUNNER (the page's and the CLI's use_v2_model_runner): None, the
    # runner the release picks (`calculators.model_runner`).
    use_v2_model_runner: bool | None
    # vLLM's --all2all-backend (VLLM_ALL2ALL_BACKEND before 0.11.1): None, the release's
    # default; it matters only for a mixture of experts under data and expert parallelism.
    all2all_backend: str | None
    # The CUDA graph capture sizes as vLLM's three options give them (`calculators.
    # cudagraph_capture`): --max-cudagraph-capture-size, --cuda-graph-sizes ("256" or "1 2 4 8")
    # and the -O / --compilation-config JSON; None: not given.
    max_cudagraph_capture_size: int | None
    cuda_graph_sizes: str | None
    compilation_config: str | None

    @classmethod
    def from_fields(cls, values: Mapping[str, Any]) -> "EngineRequest":
        """The request from the engine fields' values, by their names in `calculators.inputs.
        ENGINE` (the page's and the command line's): a data_parallel_size not given is 1."""
        estimate = values["memory_profiler_estimate_cudagraphs"]
        flashinfer = values["flashinfer_sampler"]
        runner = values["use_v2_model_runner"]
        return same_named(
            cls,
            values,
            data_parallel_size=values["data_parallel_size"] or 1,
            estimate_cudagraphs=None if estimate is None else estimate == "1",
            flashinfer_sampler=None if flashinfer is None else flashinfer == "1",
            use_v2_model_runner=None if runner is None else runner == "1",
        )

    def settings(self, gpu_memory_bytes: int = 1, **extra: Any) -> VllmSettings:
        """vLLM's settings for one GPU of `gpu_memory_bytes` (1: fit sets it per GPU)."""
        version = self.vllm_version or DEFAULT_VLLM_VERSION
        capture = capture_sizes(
            self.max_cudagraph_capture_size,
            self.cuda_graph_sizes,
            self.compilation_config,
            parse_release(version),
        )
        return same_named(
            VllmSettings,
            vars(self),
            gpu_memory_bytes=gpu_memory_bytes,
            vllm_version=version,
            cudagraph_capture_sizes=capture.sizes,
            cudagraph_capture_sizes_compiled=capture.compiled,
            max_cudagraph_capture_size=capture.max_size,
            compilation_config_unread=capture.unread_keys,
            cudagraph_mode=capture.mode,
            **extra,
        )


@dataclass(frozen=True)
class VramRequest:
    """`calc vram`: the memory plan of `arch` on one GPU, and the simple model's headroom."""

    model: str  # the label the payload carries: a catalog id or "config.json"
    arch: ModelArch
    gpu: str | None  # the GPU as asked for, or None when only the memory is given
    gpu_traits: GpuTraits  # its catalog facts (the defaults when only the memory is given)
    gpu_memory_bytes: int
    tensor_parallel_size: int
    pipeline_parallel_size: int
    max_model_len: int | None
    engine: EngineRequest
    context: int | None
    concurrency: int
    # The GPU's peak memory bandwidth (GB/s) and dense rates by dtype, for the decode bound;
    # None when only the memory is given.
    gpu_specs: tuple[float, Mapping[str, float | None]] | None
    # The GPU's links with a sourced bandwidth, for the bound's traffic between GPUs.
    gpu_links: Sequence[Link]


def vram_report(request: VramRequest) -> MemoryReport:
    """The plan and the simple model behind `vram` (the command line prints it as a table)."""
    settings = request.engine.settings(
        request.gpu_memory_bytes,
        tensor_parallel_size=request.tensor_parallel_size,
        pipeline_parallel_size=request.pipeline_parallel_size,
        max_model_len=request.max_model_len,
        gpu=request.gpu_traits,
    )
    release = parse_release(settings.vllm_version)
    check_served(request.arch, request.engine.quantization, request.gpu_traits, release)
    return memory_report(request.arch, settings, request.context, request.concurrency)


def vram_payload(request: VramRequest, report: MemoryReport) -> dict[str, Any]:
    """The `calc vram --json` payload of `report`, with the upper bound on decode throughput at
    the plan's concurrency (`throughput_bound`; None without the GPU's specs)."""
    bound = None
    # The decode reads of caches grouped layer by layer (DeepSeek-V4's windows and compressed
    # latents, MiniMax-M3's block-sparse attention, Inkling's convolutions) have no roofline
    # yet: the plan's notes say so (calculators.layer_caches.plan_note).
    if request.gpu_specs is not None and plan_note(request.arch) is None:
        bandwidth, rates = request.gpu_specs
        bound = plan_throughput_bound(
            request.arch,
            report.plan.settings,
            bandwidth,
            rates,
            report.simple.context_tokens,
            request.concurrency,
            request.gpu_links,
        ).as_dict()
    return {
        "model": request.model,
        "gpu": request.gpu,
        **report.as_dict(),
        "throughput_bound": bound,
    }


def vram(request: VramRequest) -> dict[str, Any]:
    """The `calc vram --json` payload."""
    return vram_payload(request, vram_report(request))


@dataclass(frozen=True)
class CostRequest:
    """`calc cost`: prices per GPU-hour (None: not given), throughput and overheads."""

    gpu: str | None
    tier: str
    price_per_hour: float | None
    interruptible_price_per_hour: float | None
    reserved_price_per_hour: float | None
    serverless_price_per_hour: float | None  # None: the on-demand rate, billed per second
    tokens_per_second: float
    accepted_tokens_per_second: float | None
    gpu_count: int
    utilization: float
    retry_rate: float
    overhead_per_hour: float
    api_price_per_million: float | None
    monthly_tokens: float | None
    scale_to_zero: bool
    # Where tokens_per_second came from (`perf_labels.THROUGHPUT_BASES`); None: typed by hand.
    tokens_per_second_basis: str | None
    # The deployment that basis is of (the perf page's link says it); None: the costed one.
    tokens_per_second_gpu: str | None
    tokens_per_second_gpu_count: int | None


def fill_prices(
    request: CostRequest, catalog_prices: Mapping[str, PriceUsed] | None
) -> tuple[dict[str, float | None], dict[str, PriceUsed | None]]:
    """The request's prices, those not given filled from the GPU's cheapest catalog price of
    their tier (`catalog_prices`: tier → price used; None without a GPU), and the catalog prices
    used (None where a price was given or the catalog has none)."""
    prices = {name: getattr(request, name) for name, _ in CATALOG_PRICE_FIELDS}
    used: dict[str, PriceUsed | None] = dict.fromkeys(prices)
    for name, field_tier in CATALOG_PRICE_FIELDS:
        price = (catalog_prices or {}).get(field_tier or request.tier)
        if prices[name] is None and price is not None:
            prices[name], used[name] = float(price["usd_per_gpu_hour"]), dict(price)
    if prices["price_per_hour"] is None:
        if request.gpu is None:
            raise InputError("price_per_hour: required (or a GPU id, for its catalog price)")
        raise CalculatorError(
            f"price_per_hour: the catalog has no {request.tier} price for {request.gpu}; "
            "give a price"
        )
    return prices, used


def cost(request: CostRequest, catalog_prices: Mapping[str, PriceUsed] | None) -> dict[str, Any]:
    """The `calc cost --json` payload."""
    prices, used = fill_prices(request, catalog_prices)
    report = _cost_report(request, prices)
    basis = throughput_basis(request)
    return {
        "gpu": request.gpu,
        **report.as_dict(),
        "prices": used,
        "tokens_per_second_basis": basis,
    }


def throughput_basis(request: CostRequest) -> dict[str, Any]:
    """Where the request's tokens per second came from: given (typed by hand), or the perf
    calculator's prediction or bound (`--from-perf`, the perf page's link), with its label."""
    basis = request.tokens_per_second_basis
    if basis is None:
        return {"kind": "given"}
    label = basis_label(basis)  # refuses a basis it does not know, whatever the deployment
    gpu = request.tokens_per_second_gpu or request.gpu
    count = request.tokens_per_second_gpu_count or request.gpu_count
    costed = (request.gpu or gpu, request.gpu_count)  # a price typed by hand names no GPU
    if (gpu, count) != costed:
        # the GPU or count changed after the perf calculator gave the figure: its label spoke
        # of that deployment, and says nothing of this one
        return {
            "kind": "other_deployment",
            "basis": basis,
            "label": f"of {count:,} × {gpu}, not the {costed[1]:,} × {costed[0]} costed here: "
            "neither its measured error nor its bound speaks for this deployment",
        }
    kind = "bound" if basis == BOUND_BASIS else "predicted"
    return {"kind": kind, "basis": basis, "label": label}


def _cost_report(request: CostRequest, prices: Mapping[str, float | None]) -> CostReport:
    return cost_report(
        prices["price_per_hour"] or 0.0,
        request.tokens_per_second,
        request.accepted_tokens_per_second,
        request.utilization,
        request.retry_rate,
        request.overhead_per_hour,
        prices["interruptible_price_per_hour"],
        prices["reserved_price_per_hour"],
        request.api_price_per_million,
        request.monthly_tokens,
        gpu_count=request.gpu_count,
        always_on=not request.scale_to_zero,
        serverless_price_per_hour=request.serverless_price_per_hour,
    )


@dataclass(frozen=True)
class FitRequest:
    """`calc fit`: the GPUs (1, 2, 4 or 8 of one kind per replica, times the engine's
    data_parallel_size) that serve `arch` at a load."""

    model: str
    arch: ModelArch
    context: int
    concurrency: int
    engine: EngineRequest
    tier: str
    rank_by: str  # "price" or "price-per-gb"


def _check_context_within_the_model(arch: ModelArch, context: int) -> None:
    """A fit is planned at max_model_len = the context, which vLLM refuses above the length
    it derives from the config ('User-specified max_model_len … is greater than the derived
    max_model_len') unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1: every GPU would "fit" requests
    the model does not serve."""
    refused = beyond_the_model(arch, context)
    if refused is not None:
        raise InputError(f"context: {context:,} tokens {refused}")


def fit(request: FitRequest, options: Sequence[GpuOption]) -> dict[str, Any]:
    """The `calc fit --json` payload; `options` are the candidate GPUs at `request.tier`, each
    planned once however often it is named."""
    if request.rank_by not in ("price", "price-per-gb"):
        raise InputError(f"rank_by: expected price or price-per-gb, got {request.rank_by!r}")
    _check_context_within_the_model(request.arch, request.context)
    once: dict[str, GpuOption] = {}
    for option in options:
        once.setdefault(option.id, option)
    results = fit_gpus(
        request.arch,
        list(once.values()),
        request.engine.settings(),
        request.context,
        request.concurrency,
        "usd_per_hour" if request.rank_by == "price" else "usd_per_gb_hour",
    )
    return {
        "model": request.model,
        "context": request.context,
        "concurrency": request.concurrency,
        "tier": request.tier,
        "rank_by": request.rank_by,
        "options": [result.as_dict() for result in results],
    }
