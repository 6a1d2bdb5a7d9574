"""`infermeter calc …`: the calculators on the command line (vram, cost, fit).

Each command turns its options into the calculators' inputs, calls one library function and
prints a table, or one JSON object with `--json`.
"""

import functools
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, cast

import click

import calculators.api as api
from bench.commands.oneline import FiniteFloatRange, OneLineCommand, UsageLine
from calculators.all2all import MODELLED_BACKENDS as ALL2ALL_CHOICES
from calculators.cost import pays_off_above
from calculators.errors import CalculatorError, InputError
from calculators.kv_cache import KV_CACHE_DTYPES
from calculators.limits import MAX_TOKENS, gib_to_bytes
from calculators.quantization import QUANTIZATION_CHOICES
from calculators.vllm_plan import DEFAULT_VLLM_VERSION
from registry.catalog import gpu_links
from registry.errors import RegistryError
from registry.lookup import (
    TIERS,
    cheapest_prices,
    gpu_memory_bytes,
    gpu_options,
    model_arch,
    resolve_gpu,
)
from registry.models import PriceEntry

GIB = 1024**3
F = TypeVar("F", bound=Callable[..., Any])

# Bounded where the calculators' own bounds (`calculators.limits`) would name the option less
# plainly; every float finite.
POSITIVE_INT = click.IntRange(min=1, max=MAX_TOKENS)
POSITIVE_FLOAT = FiniteFloatRange(min=0, min_open=True)
FRACTION = FiniteFloatRange(min=0, max=1, min_open=True)


@contextmanager
def _library_errors() -> Iterator[None]:
    """Library errors become one-line CLI errors: bad numbers exit 2, bad files or ids exit 1."""
    try:
        yield
    except InputError as error:
        raise UsageLine(str(error)) from None
    except (CalculatorError, RegistryError) as error:
        raise click.ClickException(str(error)) from None


def _print_json(payload: dict[str, Any]) -> None:
    click.echo(json.dumps(payload, indent=2, sort_keys=False))


def _gib(value: int | None) -> str:
    return "-" if value is None else f"{value / GIB:,.2f} GiB"


def _table(rows: list[tuple[str, str]]) -> str:
    width = max(len(label) for label, _ in rows)
    return "\n".join(f"{label.ljust(width)}  {value}" for label, value in rows)


@click.group(name="calc")
def calc_group() -> None:
    """Memory plan, cost per token and GPU fit.

    \b
    Example:
      infermeter calc vram --model llama-3.1-8b-instruct --gpu h100-sxm
    """


def _engine_options(function: F) -> F:
    """vLLM's own option names, shared by `calc vram` and `calc fit`: the command receives them
    as one `engine: api.EngineRequest`."""
    options = [
        click.option(
            "--quantization",
            type=click.Choice(QUANTIZATION_CHOICES),
            help="Weight format; default: the checkpoint's quantization_config.",
        ),
        click.option(
            "--kv-cache-dtype",
            type=click.Choice(KV_CACHE_DTYPES),
            default="auto",
            show_default=True,
            help="KV cache element type.",
        ),
        click.option(
            "--dtype",
            type=click.Choice(["auto", "bfloat16", "float16", "float32"]),
            default="auto",
            show_default=True,
            help="Model dtype.",
        ),
        click.option(
            "--gpu-memory-utilization",
            type=FRACTION,
            default=None,
            help="Fraction of GPU memory vLLM may use [default: 0.9; 0.92 from 0.20].",
        ),
        click.option("--max-num-seqs", type=POSITIVE_INT, help="vLLM's default for the GPU."),
        click.option(
            "--max-num-batched-tokens",
            type=POSITIVE_INT,
            help="vLLM's default for the GPU (2048, 8192 or 16384).",
        ),
        click.option("--enforce-eager", is_flag=True, help="No CUDA graphs."),
        click.option(
            "--vllm-version",
            default=DEFAULT_VLLM_VERSION,
            show_default=True,
            help="Model the plan of this vLLM release.",
        ),
        click.option(
            "--data-parallel-size",
            "-dp",
            type=POSITIVE_INT,
            default=1,
            show_default=True,
            help="Replicas: multiplies the GPUs and the deployment's concurrency.",
        ),
        click.option(
            "--enable-expert-parallel",
            is_flag=True,
            help="Spread a mixture of experts' routed experts whole over the TP x DP ranks.",
        ),
        click.option(
            "--memory-profiler-estimate-cudagraphs",
            type=click.Choice(["0", "1"]),
            help="vLLM's VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS: 1 takes the CUDA graph "
            "estimate off the KV budget [default: the release's, 1 from 0.20].",
        ),
        click.option(
            "--all2all-backend",
            type=click.Choice(ALL2ALL_CHOICES),
            help="vLLM's all-to-all under data + expert parallelism; DeepEP's buffers come off "
            "the KV cache [default: the release's, allgather_reducescatter from 0.11].",
        ),
        click.option(
            "--max-cudagraph-capture-size",
            type=POSITIVE_INT,
            help="Largest batch size vLLM captures a CUDA graph for [default: min(2 x "
            "max-num-seqs, 512)].",
        ),
        click.option(
            "--cuda-graph-sizes",
            help="vLLM's --cuda-graph-sizes: one largest size, or the capture list ('1 2 4 8').",
        ),
        click.option(
            "--compilation-config",
            "-O",
            help="vLLM's compilation config as JSON; its cudagraph_capture_sizes and "
            "max_cudagraph_capture_size are read, other keys are named as not modelled.",
        ),
    ]

    @functools.wraps(function)
    def with_engine(**given: Any) -> Any:
        engine = _engine_request(**{name: given.pop(name) for name in _ENGINE_OPTION_NAMES})
        return function(engine=engine, **given)

    for option in reversed(options):
        with_engine = option(with_engine)
    return cast(F, with_engine)


# What `_engine_options` adds, as click names the parameters.
_ENGINE_OPTION_NAMES = (
    "quantization",
    "kv_cache_dtype",
    "dtype",
    "gpu_memory_utilization",
    "max_num_seqs",
    "max_num_batched_tokens",
    "enforce_eager",
    "vllm_version",
    "data_parallel_size",
    "enable_expert_parallel",
    "memory_profiler_estimate_cudagraphs",
    "all2all_backend",
    "max_cudagraph_capture_size",
    "cuda_graph_sizes",
    "compilation_config",
)


def _engine_request(
    *,
    quantization: str | None,
    kv_cache_dtype: str,
    dtype: str,
    gpu_memory_utilization: float | None,
    max_num_seqs: int | None,
    max_num_batched_tokens: int | None,
    enforce_eager: bool,
    vllm_version: str,
    data_parallel_size: int,
    enable_expert_parallel: bool,
    memory_profiler_estimate_cudagraphs: str | None,
    all2all_backend: str | None,
    max_cudagraph_capture_size: int | None,
    cuda_graph_sizes: str | None,
    compilation_config: str | None,
) -> api.EngineRequest:
    """The engine options of `_engine_options` as the calculators' request."""
    return api.EngineRequest(
        quantization=quantization,
        kv_cache_dtype=kv_cache_dtype,
        dtype=dtype,
        gpu_memory_utilization=gpu_memory_utilization,
        max_num_seqs=max_num_seqs,
        max_num_batched_tokens=max_num_batched_tokens,
        enforce_eager=enforce_eager,
        vllm_version=vllm_version,
        data_parallel_size=data_parallel_size,
        enable_expert_parallel=enable_expert_parallel,
        estimate_cudagraphs=None
        if memory_profiler_estimate_cudagraphs is None
        else memory_profiler_estimate_cudagraphs == "1",
        all2all_backend=all2all_backend,
        max_cudagraph_capture_size=max_cudagraph_capture_size,
        cuda_graph_sizes=cuda_graph_sizes,
        compilation_config=compilation_config,
    )


def _bound_rows(bound: dict[str, Any] | None, concurrency: int) -> list[tuple[str, str]]:
    if bound is None:
        return []
    return [
        (
            "decode bound",
            f"<= {bound['tokens_per_second']:,.0f} output tok/s at {concurrency} concurrent "
            f"in all ({bound['limited_by']}-bound, {bound['interconnect']}; a ceiling, not an "
            "estimate)",
        )
    ]


@calc_group.command(name="vram", cls=OneLineCommand)
@click.option("--model", required=True, help="Catalog model id, or a path to a config.json.")
@click.option("--gpu", help="Catalog GPU id (its memory as the driver reports it).")
@click.option(
    "--gpu-memory-gib",
    type=POSITIVE_FLOAT,
    help="Total memory of one GPU in GiB as CUDA reports it (instead of --gpu).",
)
@click.option("--tensor-parallel-size", "-tp", type=POSITIVE_INT, default=1, show_default=True)
@click.option("--pipeline-parallel-size", "-pp", type=POSITIVE_INT, default=1, show_default=True)
@click.option("--max-model-len", type=POSITIVE_INT, help="Default: the model's context length.")
@_engine_options
@click.option(
    "--context",
    type=POSITIVE_INT,
    help="Simple model: tokens per request [default: max model len].",
)
@click.option(
    "--concurrency",
    type=POSITIVE_INT,
    default=1,
    show_default=True,
    help="Simple model: concurrent requests of --context tokens to the whole deployment; each "
    "of the --data-parallel-size replicas holds ceil(N / DP) (vLLM's --max-num-seqs is per "
    "replica).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def vram_command(
    model: str,
    gpu: str | None,
    gpu_memory_gib: float | None,
    tensor_parallel_size: int,
    pipeline_parallel_size: int,
    max_model_len: int | None,
    engine: api.EngineRequest,
    context: int | None,
    concurrency: int,
    as_json: bool,
) -> None:
    """The vLLM memory plan of a model on a GPU: weights, KV cache, concurrency, headroom.

    Figures are per GPU. A plan that does not fit is an answer (fits: false, with vLLM's own
    error text), not an error.

    \b
    Example:
      infermeter calc vram --model llama-3.1-70b-instruct --gpu h100-sxm -tp 2 --max-model-len 32768
    """
    if (gpu is None) == (gpu_memory_gib is None):
        raise UsageLine("give exactly one of --gpu ID or --gpu-memory-gib N")
    with _library_errors():
        arch = model_arch(model)
        if gpu is not None:
            entry = resolve_gpu(gpu)
            memory, gpu_name = gpu_memory_bytes(entry), entry.id
        else:
            memory, gpu_name = gib_to_bytes("--gpu-memory-gib", gpu_memory_gib or 0), ""
        request = api.VramRequest(
            model=model,
            arch=arch,
            gpu=gpu,
            gpu_name=gpu_name,
            gpu_memory_bytes=memory,
            tensor_parallel_size=tensor_parallel_size,
            pipeline_parallel_size=pipeline_parallel_size,
            max_model_len=max_model_len,
            engine=engine,
            context=context,
            concurrency=concurrency,
            gpu_specs=None
            if gpu is None
            else (entry.memory_bandwidth_gb_s, entry.tflops_dense.model_dump()),
            gpu_links=() if gpu is None else gpu_links(entry),
        )
        report = api.vram_report(request)
    payload = api.vram_payload(request, report)
    if as_json:
        _print_json(payload)
        return
    plan, simple, plan_json = report.plan, report.simple, payload["vllm_plan"]
    click.echo(
        _table(
            [
                ("model", f"{model} ({plan.weight_format})"),
                ("GPU memory", f"{_gib(plan.settings.gpu_memory_bytes)} per GPU"),
                (
                    "GPUs",
                    f"{plan_json['gpus']} (tensor {tensor_parallel_size} x pipeline "
                    f"{pipeline_parallel_size} x data {engine.data_parallel_size}; expert parallel "
                    f"{plan_json['expert_parallel_size']})",
                ),
                (
                    "vLLM budget",
                    f"{_gib(plan.requested_bytes)} ({plan.gpu_memory_utilization:g} utilization)",
                ),
                ("weights", _gib(plan.weights_bytes)),
                ("activation peak", _gib(plan.activation_peak_bytes)),
                ("non-torch", _gib(plan.non_torch_bytes)),
                (
                    "all-to-all buffers",
                    f"{_gib(plan.all2all_buffer_bytes)} ({plan.all2all_backend or 'none'})",
                ),
                (
                    "CUDA graphs",
                    f"{_gib(plan.cuda_graph_bytes)} "
                    f"({'in' if plan.cuda_graph_in_budget else 'not in'} the KV budget)",
                ),
                ("KV cache", _gib(plan.kv_cache_bytes)),
                ("KV cache per token", f"{plan.kv_cache_bytes_per_token:,} bytes"),
                ("KV cache tokens", f"{plan.kv_cache_tokens:,}"),
                (
                    "max concurrency",
                    f"{plan.max_concurrency:.2f}x at {plan.max_model_len:,} tokens per replica; "
                    f"{plan_json['deployment_max_concurrency']:.2f}x in all",
                ),
                (
                    "required (simple)",
                    f"{_gib(simple.required_bytes)} per GPU for {simple.concurrency_per_replica} "
                    f"x {simple.context_tokens:,} tokens per replica ({concurrency} in all)",
                ),
                (
                    "headroom",
                    f"{_gib(simple.headroom_bytes)} ({simple.headroom_state.replace('_', ' ')})",
                ),
                ("fits", "yes" if report.fits else f"no: {report.reason}"),
                *_bound_rows(payload["throughput_bound"], concurrency),
            ]
        )
    )
    for note in plan.notes:
        click.echo(f"note: {note}")


def _price_used(price: PriceEntry) -> dict[str, Any]:
    return {
        "id": price.id,
        "usd_per_gpu_hour": price.usd_per_gpu_hour,
        "as_of": str(price.as_of),
        "source_url": price.source.url,
    }


def catalog_prices(gpu_id: str) -> dict[str, dict[str, Any]]:
    """The GPU's cheapest catalog price per tier, as the payload names a price used."""
    resolve_gpu(gpu_id)  # an unknown id raises, naming the closest ids
    return {tier: _price_used(price) for tier, price in cheapest_prices(gpu_id).items()}


@calc_group.command(name="cost", cls=OneLineCommand)
@click.option(
    "--price-per-hour",
    type=POSITIVE_FLOAT,
    help="Price of one GPU, USD per hour (the on-demand tier); overrides --gpu's catalog price.",
)
@click.option(
    "--gpu",
    help="Catalog GPU id: its cheapest catalog prices fill the price options not given.",
)
@click.option(
    "--tier",
    type=click.Choice(TIERS),
    default="on_demand",
    show_default=True,
    help="With --gpu: the catalog tier whose price fills --price-per-hour.",
)
@click.option(
    "--tokens-per-second",
    type=POSITIVE_FLOAT,
    required=True,
    help="Tokens per second the deployment sustains.",
)
@click.option(
    "--accepted-tokens-per-second",
    type=POSITIVE_FLOAT,
    help="Output tokens per second of requests that met the SLO.",
)
@click.option("--gpu-count", type=POSITIVE_INT, default=1, show_default=True)
@click.option(
    "--utilization",
    type=FRACTION,
    default=1.0,
    show_default=True,
    help="Share of paid hours doing useful work.",
)
@click.option(
    "--retry-rate",
    type=FiniteFloatRange(min=0, max=1, max_open=True),
    default=0.0,
    show_default=True,
    help="Share of requests that are retries.",
)
@click.option(
    "--overhead-per-hour",
    type=FiniteFloatRange(min=0),
    default=0.0,
    show_default=True,
    help="Fixed costs per paid hour (storage, support), USD.",
)
@click.option("--interruptible-price-per-hour", type=POSITIVE_FLOAT)
@click.option("--reserved-price-per-hour", type=POSITIVE_FLOAT)
@click.option(
    "--serverless-price-per-hour",
    type=POSITIVE_FLOAT,
    help="Serverless price of one GPU, USD per hour billed per second while busy "
    "(default: the on-demand price).",
)
@click.option(
    "--api-price-per-million",
    type=POSITIVE_FLOAT,
    help="An API's price per 1M tokens, to compare with self-hosting.",
)
@click.option("--monthly-tokens", type=POSITIVE_FLOAT, help="Tokens per month (with --api-…).")
@click.option(
    "--scale-to-zero", is_flag=True, help="Self-hosted pays only busy hours (default: always on)."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def cost_command(
    price_per_hour: float | None,
    gpu: str | None,
    tier: str,
    tokens_per_second: float,
    accepted_tokens_per_second: float | None,
    gpu_count: int,
    utilization: float,
    retry_rate: float,
    overhead_per_hour: float,
    interruptible_price_per_hour: float | None,
    reserved_price_per_hour: float | None,
    serverless_price_per_hour: float | None,
    api_price_per_million: float | None,
    monthly_tokens: float | None,
    scale_to_zero: bool,
    as_json: bool,
) -> None:
    """Dollars per 1M tokens, tokens per dollar, effective cost and break-evens.

    The price comes from --price-per-hour, or from the catalog with --gpu (its cheapest price
    of --tier, and the interruptible and reserved prices for the tier comparison).

    \b
    Example:
      infermeter calc cost --gpu h100-sxm --tokens-per-second 2800 --utilization 0.6
    """
    if gpu is None and price_per_hour is None:
        raise UsageLine("give --price-per-hour or --gpu ID (its catalog price)")
    request = api.CostRequest(
        gpu=gpu,
        tier=tier,
        price_per_hour=price_per_hour,
        interruptible_price_per_hour=interruptible_price_per_hour,
        reserved_price_per_hour=reserved_price_per_hour,
        serverless_price_per_hour=serverless_price_per_hour,
        tokens_per_second=tokens_per_second,
        accepted_tokens_per_second=accepted_tokens_per_second,
        gpu_count=gpu_count,
        utilization=utilization,
        retry_rate=retry_rate,
        overhead_per_hour=overhead_per_hour,
        api_price_per_million=api_price_per_million,
        monthly_tokens=monthly_tokens,
        scale_to_zero=scale_to_zero,
    )
    with _library_errors():
        try:
            payload = api.cost(request, catalog_prices(gpu) if gpu is not None else None)
        except CalculatorError as error:  # name the option, as the command line spells it
            if not str(error).startswith("price_per_hour: the catalog has no"):
                raise
            raise click.ClickException(
                str(error).removeprefix("price_per_hour: ").replace("a price", "--price-per-hour")
            ) from None
    used = payload["prices"]
    if as_json:
        _print_json(payload)
        return
    labels = {
        option: f"price ({tier.replace('_', '-')})"
        if option_tier is None
        else f"{option_tier} price"
        for option, option_tier in api.CATALOG_PRICE_FIELDS
    }
    rows = [
        (
            labels[option],
            f"{price['id']}: ${price['usd_per_gpu_hour']:,.4f}/GPU-hour, as of {price['as_of']}",
        )
        for option, price in used.items()
        if price is not None
    ]
    rows += [
        ("$ / 1M tokens", f"{payload['usd_per_million_tokens']:.4f}"),
        ("tokens per $", f"{payload['tokens_per_dollar']:,.0f}"),
        ("effective $/hour", f"{payload['effective_usd_per_hour']:.4f}"),
        ("effective $ / 1M tokens", f"{payload['effective_usd_per_million_tokens']:.4f}"),
    ]
    if payload["usd_per_million_accepted_tokens"] is not None:
        rows.append(("$ / 1M accepted tokens", f"{payload['usd_per_million_accepted_tokens']:.4f}"))
    for tier in (*TIERS, "serverless"):
        tier_cost = payload["tiers"].get(tier)
        if tier_cost:
            rows.append(
                (
                    f"{tier.replace('_', '-')} $ / 1M",
                    f"{tier_cost['effective_usd_per_million_tokens']:.4f}",
                )
            )
    for label, key in (
        ("reserved pays off above", "reserved_break_even_utilization"),
        ("always-on beats serverless above", "serverless_break_even_utilization"),
    ):
        if payload["tiers"].get(key) is not None:
            above = pays_off_above(payload["tiers"][key])
            rows.append((label, "never" if above is None else f"{above:.0%} utilization"))
    versus = payload.get("versus_api")
    if versus:
        rows.append(("self-hosted $/month", f"{versus['self_hosted_usd_per_month']:,.2f}"))
        rows.append(("API $/month", f"{versus['api_usd_per_month']:,.2f}"))
        rows.append(("cheaper", versus["winner"].replace("_", "-")))
    click.echo(_table(rows))


@calc_group.command(name="fit", cls=OneLineCommand)
@click.option("--model", required=True, help="Catalog model id, or a path to a config.json.")
@click.option("--context", type=POSITIVE_INT, required=True, help="Tokens per request.")
@click.option(
    "--concurrency",
    type=POSITIVE_INT,
    default=1,
    show_default=True,
    help="Concurrent requests of --context tokens to the whole deployment; each of the "
    "--data-parallel-size replicas holds ceil(N / DP).",
)
@_engine_options
@click.option("--gpu", "gpu_ids", multiple=True, help="Only these catalog GPUs (repeatable).")
@click.option(
    "--tier",
    type=click.Choice(TIERS),
    default="on_demand",
    show_default=True,
    help="Price tier used for ranking.",
)
@click.option(
    "--rank-by",
    type=click.Choice(["price", "price-per-gb"]),
    default="price",
    show_default=True,
    help="Rank by $/hour of the deployment or by $/GB-hour.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def fit_command(
    model: str,
    context: int,
    concurrency: int,
    engine: api.EngineRequest,
    gpu_ids: tuple[str, ...],
    tier: str,
    rank_by: str,
    as_json: bool,
) -> None:
    """Which GPUs serve a model at a context and concurrency, with the fewest GPUs (1, 2, 4, 8).

    The count is one replica's tensor parallel size; with --data-parallel-size the deployment
    takes that many times as many GPUs (the GPUs column), and its $/hour is theirs. The
    concurrency is the deployment's: each replica holds ceil(concurrency / DP) requests.

    \b
    Example:
      infermeter calc fit --model llama-3.1-70b-instruct --context 32768 --concurrency 16
    """
    with _library_errors():
        arch = model_arch(model)
        request = api.FitRequest(
            model=model,
            arch=arch,
            context=context,
            concurrency=concurrency,
            engine=engine,
            tier=tier,
            rank_by=rank_by,
        )
        payload = api.fit(request, gpu_options(tier, gpu_ids or None))
    rows = payload["options"]
    if as_json:
        _print_json(payload)
        return
    header = (
        f"{'GPU':<18} {'count':>5} {'GPUs':>5} {'$/hour':>8} {'$/GB-h':>8} {'headroom':<16} "
        f"{'max conc.':>9} {'in all':>9}"
    )
    click.echo(header)
    for row in rows:
        if not row["fits"]:
            continue
        price = "-" if row["usd_per_hour"] is None else f"{row['usd_per_hour']:.2f}"
        per_gb = "-" if row["usd_per_gb_hour"] is None else f"{row['usd_per_gb_hour']:.4f}"
        click.echo(
            f"{row['gpu']:<18} {row['gpu_count']:>5} {row['gpus']:>5} {price:>8} {per_gb:>8} "
            f"{row['headroom_state'].replace('_', ' '):<16} {row['max_concurrency']:>9.1f} "
            f"{row['deployment_max_concurrency']:>9.1f}"
        )
    misfits = [row["gpu"] for row in rows if not row["fits"]]
    if misfits:
        click.echo(f"does not fit on 8 or fewer: {', '.join(misfits)}")
