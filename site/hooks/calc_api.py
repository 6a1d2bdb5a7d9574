"""The calculator pages' Python: form fields, input checks, one compute call, output HTML.

The same module runs twice: at build time (the mkdocs hook renders each page's default result)
and in the browser (the Pyodide worker imports it from the calculators archive). It imports only
the stdlib and `calculators`, and takes the catalogs as plain data (`catalog.json`), so Pyodide
needs no other package.

Each calculator reproduces the payload of `infermeter calc <kind> --json` for the same options;
an output element carries `data-output="<dotted path into that payload>"` (list items by index,
e.g. `options.0.usd_per_hour`) and its raw value as JSON text in `data-value`.
"""

import difflib
import html
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import calculators.api as api
from calculators.all2all import MODELLED_BACKENDS
from calculators.arch import ModelArch, parse_config
from calculators.cost import pays_off_above
from calculators.errors import CalculatorError
from calculators.fit import GpuOption
from calculators.interconnect import Link
from calculators.kv_cache import KV_CACHE_DTYPES
from calculators.limits import gib_to_bytes
from calculators.quantization import QUANTIZATION_CHOICES
from calculators.vllm_plan import DEFAULT_VLLM_VERSION

GIB = 1024**3
TIERS = ("on_demand", "interruptible", "reserved")
Catalog = Mapping[str, Any]


class FieldError(ValueError):
    """A bad value in one form field; the page shows the message next to it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Field:
    """One input: its query key (the CLI option with `_` for `-`), how to read it, its default."""

    name: str
    label: str
    kind: str  # int, float, fraction, rate, nonneg, choice, bool, text, json, id
    default: str = ""
    required: bool = False
    choices: tuple[str, ...] = ()
    help: str = ""
    catalog: str = ""  # "models" or "gpus": a datalist of catalog ids
    blank: str = "(from the checkpoint)"  # how a choice shows its empty value


MODEL = Field("model", "Model", "id", help="Catalog model id.", catalog="models")
CONFIG = Field(
    "config",
    "or paste a config.json",
    "json",
    help="A Hugging Face config.json; used instead of the model id when given.",
)
ENGINE = (
    Field(
        "quantization",
        "Quantization",
        "choice",
        choices=("", *QUANTIZATION_CHOICES),
        help="Weight format; empty: the checkpoint's quantization_config.",
    ),
    Field("kv_cache_dtype", "KV cache dtype", "choice", "auto", choices=KV_CACHE_DTYPES),
    Field("dtype", "dtype", "choice", "auto", choices=("auto", "bfloat16", "float16", "float32")),
    Field(
        "gpu_memory_utilization",
        "GPU memory utilization",
        "fraction",
        help="Empty: vLLM's default (0.9; 0.92 from 0.20).",
    ),
    Field("max_num_seqs", "max_num_seqs", "int", help="Empty: vLLM's default for the GPU."),
    Field(
        "max_num_batched_tokens",
        "max_num_batched_tokens",
        "int",
        help="Empty: vLLM's default for the GPU.",
    ),
    Field("enforce_eager", "enforce_eager (no CUDA graphs)", "bool"),
    Field("vllm_version", "vLLM version", "text", DEFAULT_VLLM_VERSION),
    Field(
        "data_parallel_size",
        "data_parallel_size",
        "int",
        "1",
        help="Replicas: multiply the GPUs and the deployment's concurrency.",
    ),
    Field(
        "enable_expert_parallel",
        "enable_expert_parallel",
        "bool",
        help="A mixture of experts' routed experts spread whole over the TP x DP ranks.",
    ),
    Field(
        "memory_profiler_estimate_cudagraphs",
        "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS",
        "choice",
        choices=("", "0", "1"),
        blank="(the release's default)",
        help="1: CUDA graphs come off the KV budget. Empty: the release's default (1 from 0.20).",
    ),
    Field(
        "all2all_backend",
        "all2all_backend",
        "choice",
        choices=("", *MODELLED_BACKENDS),
        blank="(the release's default)",
        help="All-to-all under data + expert parallelism; DeepEP's buffers come off the KV cache.",
    ),
    Field(
        "max_cudagraph_capture_size",
        "max_cudagraph_capture_size",
        "int",
        help="Largest batch size with a CUDA graph. Empty: min(2 x max_num_seqs, 512).",
    ),
    Field(
        "cuda_graph_sizes",
        "cuda_graph_sizes",
        "text",
        help="One largest size, or the capture list ('1 2 4 8').",
    ),
    Field(
        "compilation_config",
        "compilation_config (JSON)",
        "text",
        help="vLLM's -O JSON: cudagraph_capture_sizes and max_cudagraph_capture_size are read.",
    ),
)
# The concurrency is the deployment's, as vLLM's users count it: --max-num-seqs and the KV cache
# are per data-parallel engine, and the API server balances requests over the engines.
CONCURRENCY_HELP = (
    "Requests at once to the whole deployment; each of the data_parallel_size replicas holds "
    "ceil(N / DP)."
)
FIELDS: dict[str, tuple[Field, ...]] = {
    "vram": (
        Field("model", "Model", "id", "llama-3.1-8b-instruct", help=MODEL.help, catalog="models"),
        CONFIG,
        Field("gpu", "GPU", "id", "h100-sxm", help="Catalog GPU id.", catalog="gpus"),
        Field(
            "gpu_memory_gib",
            "or GPU memory, GiB",
            "float",
            help="Memory of one GPU as CUDA reports it; used instead of the GPU id when given.",
        ),
        Field("tensor_parallel_size", "tensor_parallel_size", "int", "1"),
        Field("pipeline_parallel_size", "pipeline_parallel_size", "int", "1"),
        Field(
            "max_model_len",
            "max_model_len",
            "int",
            "32768",
            help="Empty: the model's context length.",
        ),
        *ENGINE,
        Field("context", "Context per request (simple model)", "int", help="Empty: max_model_len."),
        Field(
            "concurrency",
            "Concurrent requests (simple model)",
            "int",
            "1",
            help=CONCURRENCY_HELP,
        ),
    ),
    "cost": (
        Field(
            "gpu",
            "GPU",
            "id",
            "h100-sxm",
            help="Catalog GPU id: its cheapest catalog prices fill the price fields left empty.",
            catalog="gpus",
        ),
        Field(
            "tier",
            "Catalog price tier",
            "choice",
            "on_demand",
            choices=TIERS,
            help="With a GPU: the tier whose catalog price is the price per hour.",
        ),
        Field(
            "price_per_hour",
            "Price, $/GPU-hour",
            "float",
            help="Empty: the GPU's catalog price; a number overrides it.",
        ),
        Field(
            "tokens_per_second", "Tokens per second (deployment)", "float", "2800", required=True
        ),
        Field(
            "accepted_tokens_per_second",
            "Accepted tokens per second",
            "float",
            help="Output tokens/s of requests that met the SLO.",
        ),
        Field("gpu_count", "GPUs", "int", "1"),
        Field("utilization", "Utilization", "fraction", "1", help="Share of paid hours busy."),
        Field("retry_rate", "Retry rate", "rate", "0", help="Share of requests that are retries."),
        Field("overhead_per_hour", "Overhead, $/hour", "nonneg", "0"),
        Field(
            "interruptible_price_per_hour",
            "Interruptible price, $/GPU-hour",
            "float",
            help="Empty: the GPU's catalog price.",
        ),
        Field(
            "reserved_price_per_hour",
            "Reserved price, $/GPU-hour",
            "float",
            help="Empty: the GPU's catalog price.",
        ),
        Field(
            "serverless_price_per_hour",
            "Serverless price, $/GPU-hour",
            "float",
            help="Billed per second while busy, scales to zero. Empty: the on-demand price.",
        ),
        Field("api_price_per_million", "API price, $/1M tokens", "float"),
        Field("monthly_tokens", "Tokens per month", "float", help="With the API price."),
        Field("scale_to_zero", "Scale to zero (pay busy hours only)", "bool"),
    ),
    "fit": (
        Field("model", "Model", "id", "llama-3.1-70b-instruct", help=MODEL.help, catalog="models"),
        CONFIG,
        Field("context", "Context per request", "int", "32768", required=True),
        Field("concurrency", "Concurrent requests", "int", "16", help=CONCURRENCY_HELP),
        *ENGINE,
        Field("gpu", "Only these GPUs", "text", help="Comma-separated catalog ids; empty: all."),
        Field("tier", "Price tier", "choice", "on_demand", choices=TIERS),
        Field("rank_by", "Rank by", "choice", "price", choices=("price", "price-per-gb")),
    ),
}


def _parse(field: Field, raw: str) -> Any:
    """The field's value from its text, or None when empty and optional."""
    text = raw.strip()
    if field.kind == "bool":
        return text.lower() in ("1", "true", "on", "yes")
    if not text:
        if field.required:
            raise FieldError(field.name, f"{field.name}: required")
        return None
    if field.kind in ("text", "id", "json"):
        return text
    if field.kind == "choice":
        if text not in field.choices:
            raise FieldError(
                field.name,
                f"{field.name}: expected one of {', '.join(c for c in field.choices if c)}",
            )
        return text
    try:
        number = int(text) if field.kind == "int" else float(text)
    except ValueError:
        expected = "an integer" if field.kind == "int" else "a number"
        raise FieldError(field.name, f"{field.name}: expected {expected}, got {text!r}") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise FieldError(field.name, f"{field.name}: expected a finite number, got {text!r}")
    domain = {
        "int": (number >= 1, "an integer >= 1"),
        "float": (number > 0, "a number > 0"),
        "fraction": (0 < number <= 1, "a number in (0, 1]"),
        "rate": (0 <= number < 1, "a number in [0, 1)"),
        "nonneg": (number >= 0, "a number >= 0"),
    }[field.kind]
    if not domain[0]:
        raise FieldError(field.name, f"{field.name}: expected {domain[1]}, got {text!r}")
    return number


def _unknown(field: str, kind: str, wanted: str, known: list[str]) -> FieldError:
    close = difflib.get_close_matches(wanted.lower(), sorted(known), n=5, cutoff=0.4)
    hint = f"; closest: {', '.join(close)}" if close else ""
    return FieldError(field, f"{field}: unknown {kind} id {wanted!r}{hint}")


def _arch(values: Mapping[str, Any], catalog: Catalog) -> tuple[str, ModelArch]:
    """The model to plan: a pasted config.json, else a catalog id."""
    if values.get("config"):
        try:
            config = json.loads(values["config"])
        except json.JSONDecodeError as error:
            message = f"config: line {error.lineno}: not valid JSON: {error.msg}"
            raise FieldError("config", message) from None
        except RecursionError:
            raise FieldError("config", "config: nested too deeply to be a config.json") from None
        if not isinstance(config, dict):
            raise FieldError("config", "config: expected a JSON object (a config.json)")
        try:
            return "config.json", parse_config(config)
        except CalculatorError as error:
            raise FieldError("config", f"config: {error}") from None
    model = values.get("model")
    if not model:
        raise FieldError("model", "model: required (or paste a config.json)")
    models = catalog["models"]
    if model not in models:
        raise _unknown("model", "model", model, list(models))
    return model, parse_config(models[model]["config"])


def _engine(values: Mapping[str, Any]) -> api.EngineRequest:
    return api.EngineRequest(
        quantization=values["quantization"],
        kv_cache_dtype=values["kv_cache_dtype"],
        dtype=values["dtype"],
        gpu_memory_utilization=values["gpu_memory_utilization"],
        max_num_seqs=values["max_num_seqs"],
        max_num_batched_tokens=values["max_num_batched_tokens"],
        enforce_eager=values["enforce_eager"],
        vllm_version=values["vllm_version"],
        data_parallel_size=values["data_parallel_size"] or 1,
        enable_expert_parallel=values["enable_expert_parallel"],
        estimate_cudagraphs=None
        if values["memory_profiler_estimate_cudagraphs"] is None
        else values["memory_profiler_estimate_cudagraphs"] == "1",
        all2all_backend=values["all2all_backend"],
        max_cudagraph_capture_size=values["max_cudagraph_capture_size"],
        cuda_graph_sizes=values["cuda_graph_sizes"],
        compilation_config=values["compilation_config"],
    )


def _vram(values: Mapping[str, Any], catalog: Catalog) -> dict[str, Any]:
    model, arch = _arch(values, catalog)
    gpu_id = values["gpu"]
    if values["gpu_memory_gib"] is not None:
        try:
            memory = gib_to_bytes("gpu_memory_gib", values["gpu_memory_gib"])
        except CalculatorError as error:
            raise FieldError("gpu_memory_gib", str(error)) from None
        gpu_id = None
    elif gpu_id:
        if gpu_id not in catalog["gpus"]:
            raise _unknown("gpu", "GPU", gpu_id, list(catalog["gpus"]))
        memory = catalog["gpus"][gpu_id]["memory_bytes"]
    else:
        raise FieldError("gpu", "gpu: give a GPU id or its memory in GiB")
    request = api.VramRequest(
        model=model,
        arch=arch,
        gpu=gpu_id,
        gpu_name=gpu_id or "",
        gpu_memory_bytes=memory,
        tensor_parallel_size=values["tensor_parallel_size"] or 1,
        pipeline_parallel_size=values["pipeline_parallel_size"] or 1,
        max_model_len=values["max_model_len"],
        engine=_engine(values),
        context=values["context"],
        concurrency=values["concurrency"] or 1,
        gpu_specs=None
        if gpu_id is None
        else (
            catalog["gpus"][gpu_id]["memory_bandwidth_gb_s"],
            catalog["gpus"][gpu_id]["tflops_dense"],
        ),
        gpu_links=()
        if gpu_id is None
        else tuple(Link(**link) for link in catalog["gpus"][gpu_id].get("interconnect_links", [])),
    )
    return api.vram(request)


def _catalog_prices(gpu_id: str | None, catalog: Catalog) -> dict[str, dict[str, Any]] | None:
    """The GPU's cheapest catalog price per tier, as the payload names a price used."""
    if not gpu_id:
        return None
    if gpu_id not in catalog["gpus"]:
        raise _unknown("gpu", "GPU", gpu_id, list(catalog["gpus"]))
    gpu = catalog["gpus"][gpu_id]
    return {
        tier: {
            "id": gpu["price_sources"][tier]["id"],
            "usd_per_gpu_hour": usd,
            "as_of": gpu["price_sources"][tier]["as_of"],
            "source_url": gpu["price_sources"][tier]["source_url"],
        }
        for tier, usd in gpu["prices"].items()
    }


def _cost(values: Mapping[str, Any], catalog: Catalog) -> dict[str, Any]:
    request = api.CostRequest(
        gpu=values["gpu"] or None,
        tier=values["tier"] or "on_demand",
        price_per_hour=values["price_per_hour"],
        interruptible_price_per_hour=values["interruptible_price_per_hour"],
        reserved_price_per_hour=values["reserved_price_per_hour"],
        serverless_price_per_hour=values["serverless_price_per_hour"],
        tokens_per_second=values["tokens_per_second"],
        accepted_tokens_per_second=values["accepted_tokens_per_second"],
        gpu_count=values["gpu_count"] or 1,
        utilization=values["utilization"] if values["utilization"] is not None else 1.0,
        retry_rate=values["retry_rate"] or 0.0,
        overhead_per_hour=values["overhead_per_hour"] or 0.0,
        api_price_per_million=values["api_price_per_million"],
        monthly_tokens=values["monthly_tokens"],
        scale_to_zero=values["scale_to_zero"],
    )
    return api.cost(request, _catalog_prices(request.gpu, catalog))


def gpu_options(catalog: Catalog, tier: str, gpu_ids: list[str] | None) -> list[GpuOption]:
    """Catalog GPUs as fit candidates at their cheapest `tier` price (as `registry.lookup`)."""
    gpus = catalog["gpus"]
    options = []
    for gpu_id in gpu_ids if gpu_ids else sorted(gpus):
        if gpu_id not in gpus:
            raise _unknown("gpu", "GPU", gpu_id, list(gpus))
        gpu = gpus[gpu_id]
        options.append(
            GpuOption(
                gpu_id, gpu["name"], gpu["memory_bytes"], gpu["memory_gb"], gpu["prices"].get(tier)
            )
        )
    return options


def _fit(values: Mapping[str, Any], catalog: Catalog) -> dict[str, Any]:
    model, arch = _arch(values, catalog)
    ids = [part.strip() for part in (values["gpu"] or "").split(",") if part.strip()]
    request = api.FitRequest(
        model=model,
        arch=arch,
        context=values["context"],
        concurrency=values["concurrency"] or 1,
        engine=_engine(values),
        tier=values["tier"] or "on_demand",
        rank_by=values["rank_by"] or "price",
    )
    return api.fit(request, gpu_options(catalog, request.tier, ids or None))


COMPUTE: dict[str, Callable[[Mapping[str, Any], Catalog], dict[str, Any]]] = {
    "vram": _vram,
    "cost": _cost,
    "fit": _fit,
}


def compute(kind: str, query: Mapping[str, str], catalog: Catalog) -> dict[str, Any]:
    """Check every field, then compute. Returns {"errors": {field: message}} or the payload."""
    values: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for field in FIELDS[kind]:
        raw = query.get(field.name)
        try:
            values[field.name] = _parse(field, field.default if raw is None else raw)
        except FieldError as error:
            errors[error.field] = error.message
    if errors:
        return {"errors": errors}
    try:
        return {"payload": COMPUTE[kind](values, catalog)}
    except FieldError as error:
        return {"errors": {error.field: error.message}}
    except CalculatorError as error:
        message = str(error)
        option = message.split(":", 1)[0].strip()
        known = {field.name for field in FIELDS[kind]}
        return {"errors": {option if option in known else "": message}}


# ---------------------------------------------------------------- output HTML


def _value_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _out(path: str, value: Any, text: str) -> str:
    return (
        f'<span data-output="{html.escape(path)}" data-value="{html.escape(_value_text(value))}">'
        f"{html.escape(text)}</span>"
    )


def _gib(value: Any) -> str:
    return "–" if value is None else f"{value / GIB:,.2f} GiB"


def _usd(value: Any, digits: int = 4) -> str:
    return "–" if value is None else f"${value:,.{digits}f}"


def _count(value: Any) -> str:
    return "–" if value is None else f"{value:,.0f}"


def _ratio(value: Any) -> str:
    return "–" if value is None else f"{value:.0%}"


def _pays_off(value: Any) -> str:
    """A break-even utilization; one at or above 100 % is never reached."""
    above = pays_off_above(value)
    return "never" if above is None else f"above {above:.0%} utilization"


def _lookup(payload: Mapping[str, Any], path: str) -> Any:
    value: Any = payload
    for part in path.split("."):
        value = value[int(part)] if isinstance(value, list) else value.get(part)
        if value is None:
            return None
    return value


def _rows(payload: Mapping[str, Any], rows: list[tuple[str, str, Callable[[Any], str]]]) -> str:
    cells = "".join(
        f"<tr><th>{html.escape(label)}</th><td"
        f">{_out(path, _lookup(payload, path), fmt(_lookup(payload, path)))}</td></tr>"
        for label, path, fmt in rows
    )
    return f'<table class="im-results"><tbody>{cells}</tbody></table>'


def _text(value: Any) -> str:
    return "–" if value is None else str(value).replace("_", " ")


def _vram_html(payload: Mapping[str, Any], base: str) -> str:
    plan = payload["vllm_plan"]
    verdict = "fits" if payload["fits"] else f"does not fit: {payload['reason']}"
    bar_total = plan["gpu_memory_bytes"] or 1
    parts = [
        ("weights", plan["weights_bytes"]),
        ("activations", plan["activation_peak_bytes"] + plan["non_torch_bytes"]),
        ("KV cache", max(plan["kv_cache_bytes"], 0)),
        ("CUDA graphs", plan["cuda_graph_bytes"]),
    ]
    bar = "".join(
        f'<span class="im-bar-{index}"'
        f' style="width:{max(0.0, min(100.0, 100 * size / bar_total)):.2f}%" '
        f'title="{html.escape(label)}: {_gib(size)}"></span>'
        for index, (label, size) in enumerate(parts)
    )
    legend = " · ".join(f"{label} {_gib(size)}" for label, size in parts)
    notes = "".join(f"<li>{html.escape(note)}</li>" for note in plan.get("notes") or [])
    return (
        f'<p class="im-verdict">{_out("fits", payload["fits"], verdict)}</p>'
        f'<div class="im-bar" aria-hidden="true">{bar}</div><p class="im-legend"'
        f">{html.escape(legend)}</p>"
        + _rows(
            payload,
            [
                ("Weights per GPU", "weights_bytes", _gib),
                ("KV cache per GPU (vLLM)", "kv_cache_bytes", _gib),
                ("KV cache per token", "kv_cache_bytes_per_token", lambda v: f"{v:,} bytes"),
                ("KV cache tokens", "kv_cache_tokens", _count),
                ("Max concurrency at max_model_len", "max_concurrency", lambda v: f"{v:,.2f}×"),
                (
                    "Max concurrency, all replicas",
                    "vllm_plan.deployment_max_concurrency",
                    lambda v: f"{v:,.2f}×",
                ),
                ("GPUs (TP × PP × DP)", "vllm_plan.gpus", _count),
                ("data_parallel_size", "vllm_plan.data_parallel_size", _count),
                ("Expert parallel size", "vllm_plan.expert_parallel_size", _count),
                ("max_model_len", "max_model_len", _count),
                ("GPU memory (as CUDA reports)", "vllm_plan.gpu_memory_bytes", _gib),
                ("gpu_memory_utilization", "vllm_plan.gpu_memory_utilization", str),
                ("vLLM budget", "vllm_plan.requested_bytes", _gib),
                ("Activation peak", "vllm_plan.activation_peak_bytes", _gib),
                ("Non-torch memory", "vllm_plan.non_torch_bytes", _gib),
                ("All-to-all backend", "vllm_plan.all2all_backend", _text),
                ("All-to-all buffers", "vllm_plan.all2all_buffer_bytes", _gib),
                ("CUDA graphs", "vllm_plan.cuda_graph_bytes", _gib),
                (
                    "CUDA graphs in the KV budget",
                    "vllm_plan.cuda_graph_in_budget",
                    lambda v: "yes" if v else "no",
                ),
                ("KV cache blocks", "vllm_plan.num_blocks", _count),
                ("max_num_seqs", "vllm_plan.max_num_seqs", _count),
                ("max_num_batched_tokens", "vllm_plan.max_num_batched_tokens", _count),
                ("Weight format", "vllm_plan.weight_format", _text),
                ("Context per request (simple)", "context_tokens", _count),
                ("Concurrent requests, all replicas (simple)", "concurrency", _count),
                ("Concurrent requests per replica (simple)", "concurrency_per_replica", _count),
                ("KV cache needed (simple)", "breakdown.kv_cache_bytes", _gib),
                ("Runtime overhead (simple)", "breakdown.runtime_overhead_bytes", _gib),
                ("Safety margin (simple)", "breakdown.safety_margin_bytes", _gib),
                ("Required per GPU (simple)", "required_bytes", _gib),
                ("Headroom per GPU (simple)", "headroom_bytes", _gib),
                ("Headroom state", "headroom_state", _text),
            ],
        )
        + (f'<ul class="im-notes">{notes}</ul>' if notes else "")
        + _bound_html(payload)
    )


def _bound_html(payload: Mapping[str, Any]) -> str:
    """The roofline bound beside the plan: a ceiling no run can pass, not an estimate."""
    bound = payload.get("throughput_bound")
    if not bound:
        return ""

    def tok_s(value: Any) -> str:
        return "–" if value is None else f"≤ {value:,.0f} tok/s"

    return (
        '<h3 id="throughput-bound">Upper bound on decode throughput</h3>'
        f"<p>At {bound['batch']:,} concurrent request(s) in all "
        f"(over {bound.get('data_parallel_size', 1):,} replica(s)) of "
        f"{bound['context_tokens']:,} tokens "
        "on this GPU's peak bandwidth and compute: a physical ceiling that no measurement can "
        "pass, not an estimate of what a run reaches. Bound, "
        f"{html.escape(bound['interconnect'])}.</p>"
        + _rows(
            payload,
            [
                ("Output tokens/s, bound", "throughput_bound.tokens_per_second", tok_s),
                ("Limited by", "throughput_bound.limited_by", _text),
                ("Traffic between GPUs", "throughput_bound.interconnect", _text),
                ("Bandwidth bound", "throughput_bound.bandwidth_tokens_per_second", tok_s),
                (
                    "Bandwidth bound per stream",
                    "throughput_bound.bandwidth_tokens_per_second_per_stream",
                    tok_s,
                ),
                ("Compute bound", "throughput_bound.compute_tokens_per_second", tok_s),
            ],
        )
    )


def _prices_used_html(payload: Mapping[str, Any]) -> str:
    """The catalog prices the figures use: id, price, date and a link to the source."""
    cells = []
    for name, field_tier in api.CATALOG_PRICE_FIELDS:
        price = payload["prices"][name]
        if price is None:
            continue
        path = f"prices.{name}"
        label = "Price" if field_tier is None else f"{field_tier.capitalize()} price"
        url, usd = price["source_url"], _usd(price["usd_per_gpu_hour"], 4)
        source = (
            f' · <a href="{html.escape(url)}" rel="noopener">source</a>'
            if url
            else " · no public address"
        )
        cells.append(
            f"<tr><th>{html.escape(label)} from the catalog</th><td>"
            f"{_out(path + '.id', price['id'], price['id'])}: "
            f"{_out(path + '.usd_per_gpu_hour', price['usd_per_gpu_hour'], usd)}"
            f"/GPU-hour, as of {_out(path + '.as_of', price['as_of'], price['as_of'])}{source}"
            "</td></tr>"
        )
    if not cells:
        return ""
    return f'<table class="im-results im-prices-used"><tbody>{"".join(cells)}</tbody></table>'


def _cost_html(payload: Mapping[str, Any], base: str) -> str:
    rows: list[tuple[str, str, Callable[[Any], str]]] = [
        ("$ / 1M tokens", "usd_per_million_tokens", _usd),
        ("Tokens per $", "tokens_per_dollar", _count),
        ("Deployment $/hour", "deployment_usd_per_hour", _usd),
        ("Effective $/hour", "effective_usd_per_hour", _usd),
        ("  of which idle", "effective_cost.idle_usd_per_hour", _usd),
        ("  of which retries", "effective_cost.retry_usd_per_hour", _usd),
        ("Effective $ / 1M tokens", "effective_usd_per_million_tokens", _usd),
        ("Effective tokens per $", "effective_tokens_per_dollar", _count),
    ]
    if payload["usd_per_million_accepted_tokens"] is not None:
        rows.append(("$ / 1M accepted tokens", "usd_per_million_accepted_tokens", _usd))
    tiers = payload["tiers"]
    for tier in (*TIERS, "serverless"):
        if tiers.get(tier):
            label = tier.replace("_", "-")
            rows.append(
                (
                    f"{label}: effective $ / 1M",
                    f"tiers.{tier}.effective_usd_per_million_tokens",
                    _usd,
                )
            )
    rows.append(
        (
            "serverless: billed $/hour (follows utilization)",
            "tiers.serverless.billed_usd_per_wall_hour",
            _usd,
        )
    )
    rows.append(("Cheapest tier", "tiers.cheapest", _text))
    if tiers.get("reserved_break_even_utilization") is not None:
        rows.append(("Reserved pays off", "tiers.reserved_break_even_utilization", _pays_off))
    if tiers.get("serverless_break_even_utilization") is not None:
        rows.append(
            ("Always-on beats serverless", "tiers.serverless_break_even_utilization", _pays_off)
        )
    if payload.get("versus_api"):
        rows += [
            ("Self-hosted $/month", "versus_api.self_hosted_usd_per_month", lambda v: _usd(v, 2)),
            ("API $/month", "versus_api.api_usd_per_month", lambda v: _usd(v, 2)),
            ("Replicas needed", "versus_api.replicas", _count),
            ("Break-even tokens/month", "versus_api.break_even_monthly_tokens", _count),
            ("Cheaper", "versus_api.winner", _text),
        ]
    return _rows(payload, rows) + _prices_used_html(payload)


def _fit_html(payload: Mapping[str, Any], base: str) -> str:
    head = (
        "GPU",
        "count",
        "GPUs",
        "$/GPU-hour",
        "$/hour",
        "$/GB-hour",
        "memory/GPU",
        "required/GPU",
        "headroom",
        "max concurrency",
        "in all",
    )
    body = []
    misfits = []
    for index, row in enumerate(payload["options"]):
        if not row["fits"]:
            misfits.append((index, row))
            continue
        path = f"options.{index}"
        href = f"{html.escape(base)}gpus/{html.escape(row['gpu'])}/"
        link = f'<a href="{href}">{html.escape(row["name"])}</a>'
        cells = [
            f"{link} {_out(path + '.gpu', row['gpu'], '')}",
            _out(path + ".gpu_count", row["gpu_count"], str(row["gpu_count"])),
            _out(path + ".gpus", row["gpus"], str(row["gpus"])),
            _out(
                path + ".usd_per_gpu_hour",
                row["usd_per_gpu_hour"],
                _usd(row["usd_per_gpu_hour"], 3),
            ),
            _out(path + ".usd_per_hour", row["usd_per_hour"], _usd(row["usd_per_hour"], 2)),
            _out(
                path + ".usd_per_gb_hour", row["usd_per_gb_hour"], _usd(row["usd_per_gb_hour"], 4)
            ),
            _out(
                path + ".memory_bytes_per_gpu",
                row["memory_bytes_per_gpu"],
                _gib(row["memory_bytes_per_gpu"]),
            ),
            _out(
                path + ".required_bytes_per_gpu",
                row["required_bytes_per_gpu"],
                _gib(row["required_bytes_per_gpu"]),
            ),
            _out(path + ".headroom_state", row["headroom_state"], _text(row["headroom_state"])),
            _out(
                path + ".max_concurrency", row["max_concurrency"], f"{row['max_concurrency']:,.1f}"
            ),
            _out(
                path + ".deployment_max_concurrency",
                row["deployment_max_concurrency"],
                f"{row['deployment_max_concurrency']:,.1f}",
            ),
        ]
        body.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>")
    table = (
        '<table class="im-results im-fit"><thead><tr>'
        + "".join(f"<th>{label}</th>" for label in head)
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table>"
    )
    if not body:
        table = "<p>No catalog GPU serves this with 8 or fewer GPUs.</p>"
    missing = "".join(
        f"<li>{html.escape(row['name'])}:"
        f" {_out(f'options.{index}.reason', row['reason'], row['reason'] or '')}</li>"
        for index, row in misfits
    )
    extra = f"<details><summary>Does not fit ({len(misfits)})</summary><ul>{missing}</ul></details>"
    return table + (extra if misfits else "")


RENDER = {"vram": _vram_html, "cost": _cost_html, "fit": _fit_html}


def render(
    kind: str, query: Mapping[str, str], catalog: Catalog, base: str = "../../"
) -> dict[str, Any]:
    """What the page shows: {"errors": {...}} or {"html": outputs, "payload": the CLI's JSON}.

    `base` is the relative URL of the site root from the calculator page (for GPU links).
    """
    result = compute(kind, query, catalog)
    if "errors" in result:
        return result
    return {"html": RENDER[kind](result["payload"], base), "payload": result["payload"]}


def render_json(kind: str, query_json: str, catalog: Catalog, base: str = "../../") -> str:
    """`render` with JSON in and out: the worker's entry point."""
    return json.dumps(render(kind, json.loads(query_json), catalog, base))
