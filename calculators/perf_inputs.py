"""The inputs of the performance predictor, declared once: `infermeter calc perf` builds its
options from them (bench/commands/calc_perf.py) and the calculator page its form fields
(site/hooks/calc_fields.py). A name is the CLI option with `_` for `-` and the page's query key.
"""

from dataclasses import dataclass

from calculators.kv_cache import KV_CACHE_DTYPES
from calculators.perf_datasets import DATASETS
from calculators.predict import ENGINE_FAMILIES
from calculators.quantization import QUANTIZATION_CHOICES


@dataclass(frozen=True)
class PerfInput:
    """One input: its name, label, kind (`id`, `int`, `float`, `choice`, `bool`), default (as
    text; empty: none), choices, help, and the CLI's short flag."""

    name: str
    label: str
    kind: str
    default: str = ""
    choices: tuple[str, ...] = ()
    help: str = ""
    short: str = ""
    catalog: str = ""  # `models` or `gpus`: the page offers the catalog's ids


LOAD_INPUTS = ("concurrency", "request_rate", "offline", "static_batch")
# Defaults the page fills in but the command line asks for: the model and GPU, and one load
# with lengths (a data set may stand for the lengths).
PAGE_ONLY_DEFAULTS = ("model", "gpu", "input_len", "output_len", "concurrency")

PERF_INPUTS: tuple[PerfInput, ...] = (
    PerfInput(
        "model", "Model", "id", "llama-3.1-8b-instruct", help="Catalog model id.", catalog="models"
    ),
    PerfInput("gpu", "GPU", "id", "h100-sxm", help="Catalog GPU id.", catalog="gpus"),
    PerfInput("tensor_parallel_size", "tensor_parallel_size", "int", "1", short="-tp"),
    PerfInput("pipeline_parallel_size", "pipeline_parallel_size", "int", "1", short="-pp"),
    PerfInput(
        "data_parallel_size",
        "data_parallel_size",
        "int",
        "1",
        short="-dp",
        help="Replicas; the GPUs are TP x PP x DP.",
    ),
    PerfInput(
        "quantization",
        "Weight quantization",
        "choice",
        choices=("", *QUANTIZATION_CHOICES),
        help="Weight format; empty: the checkpoint's own.",
    ),
    PerfInput("kv_cache_dtype", "KV cache dtype", "choice", "auto", choices=KV_CACHE_DTYPES),
    PerfInput(
        "engine",
        "Engine family",
        "choice",
        "vllm",
        choices=ENGINE_FAMILIES,
        help="Its fitted efficiency factor applies.",
    ),
    PerfInput("input_len", "Input tokens (mean)", "int", "1000", help="Prompt length."),
    PerfInput("output_len", "Output tokens (mean)", "int", "1000", help="Output length."),
    PerfInput(
        "dataset",
        "or a named data set",
        "choice",
        choices=("", *sorted(DATASETS)),
        help="Its mean lengths instead of the two above.",
    ),
    PerfInput(
        "concurrency",
        "Concurrency (closed loop)",
        "int",
        "16",
        help="Requests in flight to the whole deployment.",
    ),
    PerfInput(
        "request_rate",
        "or request rate, /s (Poisson)",
        "float",
        help="Requests per second to the whole deployment.",
    ),
    PerfInput("offline", "or offline (all requests queued)", "bool"),
    PerfInput(
        "static_batch",
        "or a static batch of",
        "int",
        help="Requests started together, run to the end.",
    ),
    PerfInput(
        "slo_ttft_ms",
        "SLO: p99 TTFT, ms",
        "float",
        help="With an SLO: the highest rate whose predicted p99 meets it.",
    ),
    PerfInput("slo_tpot_ms", "SLO: p99 TPOT, ms", "float"),
    PerfInput(
        "price_per_hour",
        "Price, $/GPU-hour",
        "float",
        help="Empty: the GPU's cheapest on-demand catalog price.",
    ),
)
