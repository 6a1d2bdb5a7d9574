"""The calculator pages' form fields: one `Field` per input, the fields of each calculator
(`FIELDS`), and how a field's text becomes its value (`parse_field`, raising `FieldError`).

Part of the calculators archive the browser imports (see `calc_api`): the stdlib and
`calculators` only.
"""

from dataclasses import dataclass
from typing import Any

from calculators.all2all import MODELLED_BACKENDS
from calculators.kv_cache import KV_CACHE_DTYPES
from calculators.perf_inputs import PERF_INPUTS
from calculators.price_tiers import PRICE_TIERS
from calculators.quantization import QUANTIZATION_CHOICES
from calculators.vllm_plan import DEFAULT_VLLM_VERSION


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
            choices=PRICE_TIERS,
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
        Field("tier", "Price tier", "choice", "on_demand", choices=PRICE_TIERS),
        Field("rank_by", "Rank by", "choice", "price", choices=("price", "price-per-gb")),
    ),
}

# The performance calculator's fields are its CLI options (`calculators.perf_inputs`).
FIELDS["perf"] = tuple(
    Field(
        spec.name,
        spec.label,
        spec.kind,
        spec.default,
        choices=spec.choices,
        help=spec.help,
        catalog=spec.catalog,
        blank="(none)",
    )
    for spec in PERF_INPUTS
)


def parse_field(field: Field, raw: str) -> Any:
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
