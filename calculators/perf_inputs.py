"""The inputs of the performance predictor, declared once as `calculators.fields.Field`s:
`infermeter calc perf` builds its options from them (bench/cli/calc_perf.py) and the
calculator page its form fields (site/hooks/calc_pages.py). A name is the CLI option with `_`
for `-` and the page's query key.
"""

from dataclasses import replace

from infermeter.calculators.fields import Field
from infermeter.calculators.kv_cache import KV_CACHE_DTYPES
from infermeter.calculators.perf_datasets import DATASETS
from infermeter.calculators.predict import ENGINE_FAMILIES
from infermeter.calculators.quantization import QUANTIZATION_CHOICES

# The memory plan's, the cost's and the GPU fit's inputs too (`calculators.inputs`): the model
# and the GPU by catalog id, and how the deployment is split over GPUs.
MODEL_ID = Field(
    "model",
    "Model",
    "id",
    required="cli",
    help="Catalog model id.",
    catalog="models",
    example="llama-3.1-8b-instruct",
)
GPU_ID = Field("gpu", "GPU", "id", catalog="gpus", example="h100-sxm")
TENSOR_PARALLEL = Field(
    "tensor_parallel_size",
    "tensor_parallel_size",
    "int",
    "1",
    short="-tp",
    help="GPUs that split each layer.",
)
PIPELINE_PARALLEL = Field(
    "pipeline_parallel_size",
    "pipeline_parallel_size",
    "int",
    "1",
    short="-pp",
    help="GPUs that split the layers into stages.",
)
DATA_PARALLEL = Field(
    "data_parallel_size",
    "data_parallel_size",
    "int",
    "1",
    short="-dp",
    help="Replicas; the GPUs are TP x PP x DP.",
)

# vLLM's --quantization and --kv-cache-dtype, as the memory plan and the GPU fit take them too.
QUANTIZATION = Field(
    "quantization",
    "Weight quantization",
    "choice",
    choices=("", *QUANTIZATION_CHOICES),
    help="Weight format; empty: the checkpoint's own (its quantization_config).",
)
KV_CACHE_DTYPE = Field(
    "kv_cache_dtype",
    "KV cache dtype",
    "choice",
    "auto",
    choices=KV_CACHE_DTYPES,
    help="KV cache element type (auto: the model's dtype).",
)

LOAD_INPUTS = ("concurrency", "request_rate", "offline", "static_batch")

PERF_INPUTS: tuple[Field, ...] = (
    MODEL_ID,
    replace(GPU_ID, required="cli", help="Catalog GPU id."),
    TENSOR_PARALLEL,
    PIPELINE_PARALLEL,
    DATA_PARALLEL,
    QUANTIZATION,
    KV_CACHE_DTYPE,
    Field(
        "engine",
        "Engine family",
        "choice",
        "vllm",
        choices=ENGINE_FAMILIES,
        help="Its fitted efficiency factor applies.",
    ),
    Field("input_len", "Input tokens (mean)", "int", help="Prompt length.", example="1000"),
    Field("output_len", "Output tokens (mean)", "int", help="Output length.", example="1000"),
    Field(
        "dataset",
        "or a named data set",
        "choice",
        choices=("", *sorted(DATASETS)),
        blank="(none)",
        help="Its mean lengths instead of the two above.",
    ),
    Field(
        "concurrency",
        "Concurrency (closed loop)",
        "int",
        example="16",
        help="Requests in flight to the whole deployment.",
        group="load",
    ),
    Field(
        "request_rate",
        "or request rate, /s (Poisson)",
        "float",
        help="Requests per second to the whole deployment.",
        group="load",
    ),
    Field("offline", "or offline (all requests queued)", "bool", group="load"),
    Field(
        "static_batch",
        "or a static batch of",
        "int",
        help="Requests started together, run to the end.",
        group="load",
    ),
    Field(
        "slo_ttft_ms",
        "SLO: p99 TTFT, ms",
        "float",
        help="With an SLO: the highest rate whose predicted p99 meets it.",
    ),
    Field("slo_tpot_ms", "SLO: p99 TPOT, ms", "float"),
    Field(
        "price_per_hour",
        "Price, $/GPU-hour",
        "float",
        help="Empty: the GPU's on-demand catalog price, the one the site's figures use.",
    ),
)
