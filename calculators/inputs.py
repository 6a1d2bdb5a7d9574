"""The calculators' inputs, each declared once (`calculators.fields.Field`): `infermeter calc
vram|cost|fit|perf` generate their options from `FIELDS` (bench/cli/calc_options.py), and
the calculator pages their forms (site/hooks/calc_pages.py). The performance predictor's inputs
are `calculators.perf_inputs.PERF_INPUTS`; the answer question's, `infermeter registry answer`'s
options and the answer page's query (site/browser/answer_render.py), are `ANSWER`."""

from dataclasses import replace

from infermeter.calculators.all2all import MODELLED_BACKENDS
from infermeter.calculators.fields import Field
from infermeter.calculators.limits import MAX_LATENCY_MS
from infermeter.calculators.perf_inputs import (
    DATA_PARALLEL,
    GPU_ID,
    KV_CACHE_DTYPE,
    MODEL_ID,
    PERF_INPUTS,
    PIPELINE_PARALLEL,
    QUANTIZATION,
    TENSOR_PARALLEL,
)
from infermeter.calculators.perf_labels import THROUGHPUT_BASES
from infermeter.calculators.price_tiers import PRICE_TIERS
from infermeter.calculators.vllm_settings import DEFAULT_VLLM_VERSION, modelled_releases

MODEL = replace(
    MODEL_ID, help="Catalog model id (the command line also takes a path to a config.json)."
)
CONFIG = Field(
    "config",
    "or paste a config.json",
    "json",
    help="A Hugging Face config.json; used instead of the model id when given.",
    where="page",
)
# vLLM's own engine options, shared by the memory plan and the GPU fit.
ENGINE = (
    QUANTIZATION,
    KV_CACHE_DTYPE,
    Field(
        "dtype",
        "dtype",
        "choice",
        "auto",
        choices=("auto", "bfloat16", "float16", "float32"),
        help="Model dtype.",
    ),
    Field(
        "gpu_memory_utilization",
        "GPU memory utilization",
        "fraction",
        help="Fraction of GPU memory vLLM may use; default: vLLM's (0.9; 0.92 from 0.20).",
    ),
    Field("max_num_seqs", "max_num_seqs", "int", help="Default: vLLM's default for the GPU."),
    Field(
        "max_num_batched_tokens",
        "max_num_batched_tokens",
        "int",
        help="Default: vLLM's default for the GPU (2048, 8192 or 16384).",
    ),
    Field("enforce_eager", "enforce_eager (no CUDA graphs)", "bool", help="No CUDA graphs."),
    Field(
        "vllm_version",
        "vLLM version",
        "release",
        DEFAULT_VLLM_VERSION,
        help=f"Model the plan of this vLLM release ({modelled_releases()}).",
    ),
    replace(DATA_PARALLEL, help="Replicas: multiply the GPUs and the deployment's concurrency."),
    Field(
        "enable_expert_parallel",
        "enable_expert_parallel",
        "bool",
        help="Spread a mixture of experts' routed experts whole over the TP x DP ranks.",
    ),
    Field(
        "memory_profiler_estimate_cudagraphs",
        "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS",
        "choice",
        choices=("", "0", "1"),
        blank="(the release's default)",
        help="vLLM's VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS: 1 takes the CUDA graph estimate "
        "off the KV budget; default: the release's (1 from 0.20).",
    ),
    Field(
        "flashinfer_sampler",
        "FlashInfer sampler",
        "choice",
        choices=("", "0", "1"),
        blank="(the release's default)",
        help="FlashInfer's top-k/top-p sampler: 0 when flashinfer is not installed or "
        "VLLM_USE_FLASHINFER_SAMPLER=0 (the sampler warm-up then sorts the vocabulary), 1 when "
        "VLLM_USE_FLASHINFER_SAMPLER=1; default: the release's (see the methodology).",
    ),
    Field(
        "use_v2_model_runner",
        "VLLM_USE_V2_MODEL_RUNNER",
        "choice",
        choices=("", "0", "1"),
        blank="(the release's choice)",
        help="vLLM's VLLM_USE_V2_MODEL_RUNNER: 1 starts the V2 model runner, 0 the V1 runner "
        "(0.34 has only V2); default: the runner the release picks (see the methodology).",
    ),
    Field(
        "all2all_backend",
        "all2all_backend",
        "choice",
        choices=("", *MODELLED_BACKENDS),
        blank="(the release's default)",
        help="vLLM's all-to-all under data + expert parallelism; DeepEP's buffers come off the "
        "KV cache; default: the release's (allgather_reducescatter from 0.11).",
    ),
    Field(
        "max_cudagraph_capture_size",
        "max_cudagraph_capture_size",
        "int",
        help=(
            "Largest batch size with a CUDA graph; default: min(2 x max_num_seqs, 512) (512 "
            "before 0.10)."
        ),
    ),
    Field(
        "cuda_graph_sizes",
        "cuda_graph_sizes",
        "text",
        help="vLLM's --cuda-graph-sizes: one largest size, or the capture list ('1 2 4 8').",
    ),
    Field(
        "compilation_config",
        "compilation_config (JSON)",
        "text",
        short="-O",
        help="vLLM's compilation config as JSON (-O): its cudagraph_capture_sizes and "
        "max_cudagraph_capture_size are read, other keys are named as not modelled.",
    ),
)
# The concurrency is the deployment's, as vLLM's users count it: --max-num-seqs and the KV cache
# are per data-parallel engine, and the API server balances requests over the engines.
_CONCURRENCY = Field(
    "concurrency",
    "Concurrent requests",
    "int",
    "1",
    help="Requests at once to the whole deployment; each of the data_parallel_size replicas "
    "holds ceil(N / DP).",
)
_TIER = Field(
    "tier",
    "Catalog price tier",
    "choice",
    "on_demand",
    choices=PRICE_TIERS,
    help="With a GPU: the tier whose catalog price is the price per hour.",
)
_PRICE = "Price of one GPU, USD per hour"
VRAM = (
    MODEL,
    CONFIG,
    replace(GPU_ID, help="Catalog GPU id (its memory as the driver reports it)."),
    Field(
        "gpu_memory_gib",
        "or GPU memory, GiB",
        "float",
        help="Total memory of one GPU in GiB as CUDA reports it; used instead of the GPU id.",
    ),
    TENSOR_PARALLEL,
    PIPELINE_PARALLEL,
    # No example: left out, the page plans the model's own context length, as the command line
    # and vLLM do (ModelConfig's max_model_len from the config's position limit: vllm/config.py
    # _get_and_verify_max_len of the 0.7.3-0.10.2 sdists, vllm/config/model.py from 0.11.0).
    Field("max_model_len", "max_model_len", "int", help="Default: the model's context length."),
    *ENGINE,
    Field(
        "context",
        "Context per request (simple model)",
        "int",
        help="Simple model: tokens per request; default: max_model_len.",
    ),
    replace(
        _CONCURRENCY,
        label=f"{_CONCURRENCY.label} (simple model)",
        help=f"Simple model: requests of that context. {_CONCURRENCY.help}",
    ),
)
COST = (
    replace(
        GPU_ID,
        help="Catalog GPU id: its catalog prices (those the site's figures use) fill the prices "
        "not given.",
    ),
    _TIER,
    Field(
        "price_per_hour",
        "Price, $/GPU-hour",
        "float",
        help=f"{_PRICE} (the tier's); overrides the GPU's catalog price.",
    ),
    Field(
        "tokens_per_second",
        "Tokens per second (deployment)",
        "float",
        required="page",
        help="Tokens per second the deployment sustains.",
        example="2800",
    ),
    Field(
        "tokens_per_second_basis",
        "Tokens per second from",
        "choice",
        choices=("", *THROUGHPUT_BASES),
        blank="(typed by hand)",
        help="Where the tokens per second came from, said beside the cost: the perf "
        "calculator's prediction of a kind (its measured error) or its roofline bound "
        "(--from-perf and the perf page's link set it).",
    ),
    *(
        Field(
            name,
            label,
            kind,
            catalog=catalog,
            help="The deployment the perf calculator's tokens per second are of (the perf "
            "page's link sets it; default: the one costed): another GPU or count than the one "
            "costed is said beside the cost instead of the basis's error or bound.",
        )
        for name, label, kind, catalog in (
            ("tokens_per_second_gpu", "Tokens per second of GPU", "id", "gpus"),
            ("tokens_per_second_gpu_count", "Tokens per second of GPUs, count", "int", ""),
        )
    ),
    Field(
        "accepted_tokens_per_second",
        "Accepted tokens per second",
        "float",
        help="Output tokens per second of requests that met the SLO.",
    ),
    Field("gpu_count", "GPUs", "int", "1"),
    Field("utilization", "Utilization", "fraction", "1", help="Share of paid hours busy."),
    Field("retry_rate", "Retry rate", "rate", "0", help="Share of requests that are retries."),
    Field(
        "overhead_per_hour",
        "Overhead, $/hour",
        "nonneg",
        "0",
        help="Fixed costs per paid hour (storage, support), USD.",
    ),
    *(
        Field(
            f"{tier}_price_per_hour",
            f"{tier.capitalize()} price, $/GPU-hour",
            "float",
            help="Default: the GPU's catalog price.",
        )
        for tier in ("interruptible", "reserved")
    ),
    Field(
        "serverless_price_per_hour",
        "Serverless price, $/GPU-hour",
        "float",
        help="Billed per second while busy, scales to zero; default: the on-demand price.",
    ),
    Field(
        "api_price_per_million",
        "API price, $/1M tokens",
        "float",
        help="An API's price per 1M tokens, to compare with self-hosting.",
    ),
    Field("monthly_tokens", "Tokens per month", "float", help="With the API price."),
    Field(
        "scale_to_zero",
        "Scale to zero (pay busy hours only)",
        "bool",
        help="Self-hosted pays only busy hours (default: always on).",
    ),
)
FIT = (
    replace(MODEL, example="llama-3.1-70b-instruct"),
    CONFIG,
    Field("context", "Context per request", "int", required="always", example="32768"),
    _CONCURRENCY,
    *ENGINE,
    Field(
        "gpu",
        "Only these GPUs",
        "ids",
        help="Catalog GPU ids, comma-separated (the command line also repeats the option); "
        "default: all.",
    ),
    replace(_TIER, label="Price tier", help="For ranking."),
    Field(
        "rank_by",
        "Rank by",
        "choice",
        "price",
        choices=("price", "price-per-gb"),
        help="Rank by $/hour of the deployment or by $/GB-hour.",
    ),
)
FIELDS: dict[str, tuple[Field, ...]] = {"vram": VRAM, "cost": COST, "fit": FIT, "perf": PERF_INPUTS}


# A latency bound of the answer question: its page's query key is the name, its option --slo-….
def _bound(metric: str, label: str, what: str, note: str = "") -> Field:
    return Field(
        f"{metric}_ms",
        f"{label} ≤ ms",
        "ms",
        flag=f"--slo-{metric}-ms",
        help=f"{what} bound, ms (above 0, at most {MAX_LATENCY_MS:,.0f}); left out: none{note}.",
    )


ANSWER = (
    replace(MODEL_ID, help="Model catalog id, e.g. llama-3.1-70b-instruct.", example=""),
    Field(
        "workload",
        "Workload",
        "text",
        help="Workload key, or its label as the site shows it; default: each in turn.",
    ),
    Field(
        "precision",
        "Weight precision",
        "text",
        help="Weight precision (fp8, fp4, 16-bit …); default: each.",
    ),
    Field(
        "percentile",
        "Percentile",
        "percentile",
        "99",
        help="The percentile every latency bound applies to (above 0, at most 100).",
    ),
    _bound("ttft", "TTFT", "TTFT"),
    _bound("tpot", "TPOT", "TPOT"),
    _bound("e2e", "E2E", "End-to-end", " (no bound at all asks the batch question)"),
    Field(
        "tier",
        "Price tier",
        "text",
        "on_demand",
        help="Price tier: one of those the price catalog holds prices of, or market: each "
        "GPU's on-demand market floor (the cheapest price two providers agree on).",
    ),
)
