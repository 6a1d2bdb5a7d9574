"""`RunOptions`: every option of one `bench run` as one typed, strict object (the command builds
it from its flags; a plan file's runs are read into it), with the validators of its fields.

Each option is declared here once: its name (the field's alias), type, range and default, and in
its `Cli` its help, metavar and short name; `bench.cli.bench_run_options` generates the
click options from the fields, and `option_error` names the option of a value the model refuses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    InstanceOf,
    ValidationError,
    field_validator,
)
from pydantic_core import ErrorDetails

from infermeter.bench.client.extra_body import extra_body
from infermeter.bench.errors import BenchError
from infermeter.bench.workloads.lengths import (
    MAX_LENGTH_TOKENS,
    LengthDistribution,
    parse_length,
    parse_turns,
)
from infermeter.bench.workloads.profiles import PROFILES
from infermeter.bench.workloads.trace import DEFAULT_BLOCK_SIZE
from infermeter.calculators.limits import MAX_LATENCY_MS
from infermeter.calculators.suggest import unknown_name
from infermeter.registry.errors import validator_message
from infermeter.registry.models.common import SLUG_PATTERN, Seed

# What a pattern asks for, in words: an error says this, not the regular expression.
_PATTERN_MEANINGS = {SLUG_PATTERN: "expected lowercase letters, digits, - or ."}
# A bound a number missed, in words, and where pydantic's error keeps the bound.
_BOUNDS = {
    "greater_than_equal": ("at least", "ge"),
    "greater_than": ("greater than", "gt"),
    "less_than_equal": ("at most", "le"),
    "less_than": ("less than", "lt"),
}


def _parsed(value: object, parse: Callable[[str], LengthDistribution], example: str) -> object:
    if isinstance(value, bool):
        raise ValueError(f"expected {example}")
    if isinstance(value, int | str):
        try:
            return parse(str(value))
        except BenchError as error:
            raise ValueError(str(error)) from None
    return value


def _length(value: object) -> object:
    return _parsed(value, parse_length, "a length such as 512 or lognormal:512:0.7")


def _turns(value: object) -> object:
    return _parsed(value, parse_turns, "a number of turns such as 4 or uniform:2:6")


def _extra_body(value: object) -> object:
    """A JSON object given as text (the command line) or as a mapping (a plan file)."""
    try:
        return extra_body(value)
    except BenchError as error:
        raise ValueError(str(error)) from None


def _sequence(value: object) -> object:
    """A single value where a list is expected is a list of one."""
    return value if isinstance(value, list | tuple) else [value]


@dataclass(frozen=True)
class Cli:
    """How `bench run` shows a field as its option: `--` and the field's alias, this help,
    a metavar (else the type's) and a short name. The type, range and default are the field's
    own: `bench.cli.bench_run_options` generates the click option from all of it."""

    help: str
    metavar: str | None = None
    short: str | None = None


StrictPositiveInt = Annotated[int, Field(strict=True, ge=1)]
PositiveFloat = Annotated[float, Field(strict=True, gt=0, allow_inf_nan=False)]
Fraction = Annotated[float, Field(strict=True, gt=0, le=1)]
Text = Annotated[str, Field(strict=True, min_length=1)]
MIN_RATE = 1e-6
MAX_RATE = 1e6
"""The bounds of an open loop's requests per second and of a trace's speed-up: a factor of a
million either way. At 1e-6 a point sends one request in 11.6 days (at 1e-300 its waits
overflowed: OverflowError, 'cannot convert float infinity to integer'); at 1e6 it sends more
than any client host can (at 1e308 its default request count was infinite)."""
Rate = Annotated[float, Field(strict=True, ge=MIN_RATE, le=MAX_RATE, allow_inf_nan=False)]
MAX_SECONDS = MAX_LATENCY_MS / 1000
"""The longest wait an option sets (a point's duration, a request's timeout, vLLM's start, a
think time): 11.6 days, the longest latency bound. At --duration 1e308 a point's deadline
overflowed ('OverflowError: cannot convert float infinity to integer', a traceback)."""
Seconds = Annotated[float, Field(strict=True, gt=0, le=MAX_SECONDS, allow_inf_nan=False)]
TraceBlockSize = Annotated[int, Field(strict=True, ge=1, le=MAX_LENGTH_TOKENS)]
"""Tokens per hash ID of a trace: a block is at most the longest sequence."""
Length = Annotated[InstanceOf[LengthDistribution], BeforeValidator(_length)]
Turns = Annotated[InstanceOf[LengthDistribution], BeforeValidator(_turns)]

# vLLM's serving options and the SLO bounds, declared once for `bench run` (which passes them to
# the vLLM it launches) and `bench import` (which records them beside an imported file's figures).
TensorParallelSize = Annotated[
    StrictPositiveInt | None,
    Cli(
        "vLLM: GPUs one replica is split over (with bench run --endpoint, also the result's GPU "
        "count).",
        short="-tp",
    ),
]
PipelineParallelSize = Annotated[
    StrictPositiveInt | None,
    Cli(
        "vLLM: pipeline stages of one replica; GPUs = tensor × pipeline parallel size.",
        short="-pp",
    ),
]
MaxModelLen = Annotated[StrictPositiveInt | None, Cli("vLLM: longest sequence, tokens.")]
GpuMemoryUtilization = Annotated[Fraction | None, Cli("vLLM: fraction of GPU memory it may use.")]
Quantization = Annotated[Text | None, Cli("vLLM: weight quantization method, e.g. fp8, awq.")]
KvCacheDtype = Annotated[Text | None, Cli("vLLM: KV cache dtype, e.g. auto, fp8.")]
MaxNumSeqs = Annotated[StrictPositiveInt | None, Cli("vLLM: most sequences per batch.")]
SloTtftMs = Annotated[
    PositiveFloat | None, Cli("SLO: time to first token, as vLLM's --goodput ttft:MS.")
]
SloTpotMs = Annotated[
    PositiveFloat | None, Cli("SLO: time per output token, as vLLM's --goodput tpot:MS.")
]
SloE2eMs = Annotated[
    PositiveFloat | None, Cli("SLO: end-to-end latency, as vLLM's --goodput e2el:MS.")
]


class RunOptions(BaseModel):
    """The options of one `bench run` (see `infermeter bench run --help` for each)."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        populate_by_name=True,
        alias_generator=lambda name: name.replace("_", "-"),
    )

    name: Text | None = None
    endpoint: Annotated[
        Text | None,
        Cli(
            "Root URL of a running OpenAI-compatible server (default: launch vLLM with --model).",
            metavar="URL",
        ),
    ] = None
    model: Annotated[
        Text | None,
        Cli(
            "Model to serve with vLLM (Hugging Face id or path); with --endpoint, the model id "
            "to request (default: the first that /v1/models lists)."
        ),
    ] = None
    tensor_parallel_size: TensorParallelSize = None
    pipeline_parallel_size: PipelineParallelSize = None
    ray_address: Annotated[
        Text | None,
        Cli(
            "Launch vLLM over this Ray cluster (--distributed-executor-backend ray, RAY_ADDRESS), "
            "its ranks across the nodes; the result records nodes and GPUs per node.",
            metavar="HOST:PORT",
        ),
    ] = None
    max_model_len: MaxModelLen = None
    gpu_memory_utilization: GpuMemoryUtilization = None
    quantization: Quantization = None
    kv_cache_dtype: KvCacheDtype = None
    max_num_seqs: MaxNumSeqs = None
    load_format: Annotated[
        Text | None, Cli("vLLM: weight loading, e.g. dummy for random weights.")
    ] = None
    vllm_args: Annotated[
        Annotated[tuple[Text, ...], BeforeValidator(_sequence)],
        Cli(
            "Any other `vllm serve` argument, repeatable; split like a shell would "
            "(--vllm-arg '--max-num-batched-tokens 8192').",
            metavar="ARG",
        ),
    ] = Field((), alias="vllm-arg")
    vllm_executable: Annotated[
        Text | None, Cli("The vllm executable to run (default: vllm on PATH).", metavar="PATH")
    ] = None
    server_command: Annotated[
        Text | None,
        Cli(
            "With --endpoint: the command that started the server there, e.g. 'vllm serve MODEL "
            "--max-model-len 8192'; kept in the result, and its vLLM options are the serving "
            "settings.",
            metavar="COMMAND",
        ),
    ] = None
    nodes: Annotated[
        StrictPositiveInt | None,
        Cli(
            "With --endpoint: the hosts its server spans (vLLM over a Ray cluster, e.g. a "
            "LeaderWorkerSet's pods); the result records the nodes and GPUs per node."
        ),
    ] = None
    port: Annotated[
        Annotated[int, Field(strict=True, ge=1, le=65535)] | None,
        Cli("Port for the launched vLLM (default: a free one)."),
    ] = None
    startup_timeout: Annotated[
        Seconds, Cli("How long vLLM may take to answer /health.", metavar="SECONDS")
    ] = 1800.0
    output: Annotated[
        Path | None,
        Cli(
            "Result file to write (launching vLLM: default ./infermeter-result.json; with "
            "--endpoint: none unless given). vLLM's log goes beside it as <stem>.vllm.log."
        ),
    ] = None
    raw_records: Annotated[
        Annotated[bool, Field(strict=True)],
        Cli("Also write every request's record as <stem>.requests.jsonl.gz beside the result."),
    ] = False
    gpu_id: Annotated[
        Text | None,
        Cli(
            "GPU catalog id for the result (default: detected through NVML where obvious).",
            metavar="ID",
        ),
    ] = Field(None, alias="gpu")
    model_id: Annotated[
        Text | None,
        Cli(
            "Model catalog id for the result (default: the catalog entry of --model's repository).",
            metavar="ID",
        ),
    ] = None
    gpu_indices: Annotated[
        Annotated[tuple[Annotated[int, Field(strict=True, ge=0)], ...], BeforeValidator(_sequence)],
        Cli(
            "With --endpoint: the GPUs the server runs on, as nvidia-smi numbers them, for GPU "
            "telemetry (default: CUDA_VISIBLE_DEVICES, else the only GPU or the busy ones).",
            metavar="I[,I…]",
        ),
    ] = ()
    submitter: Annotated[
        Text | None, Cli("GitHub user name in the result (default: git's github.user).")
    ] = None
    engine: Annotated[
        Annotated[str, Field(strict=True, pattern=SLUG_PATTERN)] | None,
        Cli(
            "With --endpoint: the engine, e.g. sglang, tgi, llama.cpp, tensorrt-llm "
            "(default: what the server says; needed with --output when it says nothing).",
            metavar="NAME",
        ),
    ] = None
    engine_version: Annotated[
        Text | None, Cli("With --engine: the engine's version.", metavar="V")
    ] = None
    price_per_hour: Annotated[
        PositiveFloat | None,
        Cli(
            "Price of one GPU-hour for the cost table (default: the catalog's on-demand price, "
            "the one the site's figures use).",
            metavar="USD",
        ),
    ] = None
    utilization: Annotated[
        Fraction, Cli("Fraction of paid hours doing useful work, for the effective hourly cost.")
    ] = 1.0
    profile: Annotated[
        Text,
        Cli(
            "Traffic profile: its input/output length distributions and default sweep.",
            metavar="[" + "|".join(sorted(PROFILES)) + "]",
        ),
    ] = "chat"
    concurrency: Annotated[
        Annotated[tuple[StrictPositiveInt, ...], BeforeValidator(_sequence)],
        Cli("Closed loop: concurrent requests per point, e.g. 1,4,16,64.", metavar="N[,N…]"),
    ] = ()
    request_rate: Annotated[
        Annotated[tuple[Rate, ...], BeforeValidator(_sequence)],
        Cli("Open loop: requests per second per point, e.g. 1,5,10.", metavar="R[,R…]"),
    ] = ()
    max_concurrency: Annotated[
        StrictPositiveInt | None,
        Cli(
            "Open loop: at most N requests in flight; a request whose time has come waits for a "
            "free slot (as vllm bench serve --max-concurrency).",
            metavar="N",
        ),
    ] = None
    find_max_rate: Annotated[
        Annotated[bool, Field(strict=True)],
        Cli(
            "Search the highest open-loop rate whose p99 TTFT/TPOT/E2E meet the --slo-* bounds "
            "(MLPerf Server): a bracket from --search-start, then a bisection; every probe is a "
            "point."
        ),
    ] = False
    find_max_concurrency: Annotated[
        Annotated[bool, Field(strict=True)], Cli("The same search over closed-loop concurrency.")
    ] = False
    search_start: Annotated[
        PositiveFloat | None,
        Cli("First probe of a search (default: 1 req/s, or concurrency 1).", metavar="LOAD"),
    ] = None
    search_precision: Annotated[
        Annotated[float, Field(strict=True, gt=0, lt=1)],
        Cli("A search stops when the load that met and the one that missed lie this close."),
    ] = 0.05
    max_probes: Annotated[
        Annotated[int, Field(strict=True, ge=2)], Cli("Most load points a search measures.")
    ] = 16
    stop_when_saturated: Annotated[
        Annotated[bool, Field(strict=True)],
        Cli(
            "End a sweep past the knee: an open loop whose completions fall behind its rate, or "
            "a concurrency that brought under 5 % more throughput."
        ),
    ] = False
    turns: Annotated[
        Turns | None,
        Cli(
            "chat-multiturn: turns per session, same syntax as --input-len (default uniform:2:6).",
            metavar="SPEC",
        ),
    ] = None
    think_time: Annotated[
        Annotated[float, Field(strict=True, ge=0, le=MAX_SECONDS, allow_inf_nan=False)] | None,
        Cli(
            "chat-multiturn: mean pause between a reply and the next user message (default 2).",
            metavar="SECONDS",
        ),
    ] = None
    burstiness: Annotated[
        PositiveFloat,
        Cli("Open loop: gamma shape of the arrival gaps (1 = Poisson; < 1 burstier)."),
    ] = 1.0
    num_requests: Annotated[
        StrictPositiveInt | None,
        Cli("Measured requests per point (default: max(100, 4 × concurrency))."),
    ] = None
    duration: Annotated[
        Seconds | None,
        Cli("Stop sending a point's requests after this long.", metavar="SECONDS"),
    ] = None
    warmup: Annotated[
        Annotated[int, Field(strict=True, ge=0)] | None,
        Cli("Warm-up requests per point, excluded (default: one per concurrency slot)."),
    ] = None
    input_len: Annotated[
        Length | None,
        Cli(
            "Prompt tokens: N, uniform:LO:HI, normal:MEAN:STD or lognormal:MEDIAN:SIGMA.",
            metavar="SPEC",
        ),
    ] = None
    output_len: Annotated[
        Length | None, Cli("Output tokens, same syntax as --input-len.", metavar="SPEC")
    ] = None
    dataset: Annotated[Path | None, Cli("ShareGPT-format JSONL file to take prompts from.")] = None
    trace: Annotated[
        Path | None,
        Cli(
            "Replay a request trace (Mooncake JSONL, or infermeter's own format) with its "
            "arrival times and shared prefix blocks, as one open-loop point; --num-requests or "
            "--duration cut it.",
            metavar="FILE[.gz]",
        ),
    ] = None
    trace_speed: Annotated[
        Rate,
        Cli(
            "Replay the trace's arrivals X times as fast (--request-rate re-times them instead).",
            metavar="X",
        ),
    ] = 1.0
    trace_block_size: Annotated[
        TraceBlockSize | None,
        Cli(
            f"Tokens per hash_ids block of a Mooncake trace (default {DEFAULT_BLOCK_SIZE}, as "
            "Mooncake's published traces use).",
            metavar="TOKENS",
        ),
    ] = None
    tokenizer: Annotated[
        Text | None,
        Cli("tokenizer.json (or a Hugging Face id) for exact prompt lengths.", metavar="PATH|ID"),
    ] = None
    seed: Annotated[
        Annotated[Seed, Field(strict=True)], Cli("Seed of lengths, prompts and arrival schedules.")
    ] = 0
    prompt_salt: Annotated[
        Annotated[int, Field(strict=True)],
        Cli("Changes the prompt text but not the lengths (defeats a warm prefix cache)."),
    ] = 0
    shared_prefix_tokens: Annotated[
        Annotated[int, Field(strict=True, ge=0)],
        Cli(
            "Start every prompt with the same N-token prefix (the rest unique), to measure "
            "prefix caching on purpose; the result's workload says so.",
            metavar="N",
        ),
    ] = 0
    slo_ttft_ms: SloTtftMs = None
    slo_tpot_ms: SloTpotMs = None
    slo_e2e_ms: SloE2eMs = None
    api: Annotated[Literal["completions", "chat"], Cli("Which OpenAI API to call.")] = "completions"
    timeout: Annotated[Seconds, Cli("Per-request timeout.", metavar="SECONDS")] = 600.0
    ignore_eos: Annotated[
        Annotated[bool, Field(strict=True)],
        Cli("Ask the server to generate exactly the requested output length."),
    ] = True
    continuous_usage_stats: Annotated[
        Annotated[bool, Field(strict=True)],
        Cli("Ask for a token count in every chunk (vLLM): exact per-token timing."),
    ] = False
    workers: Annotated[
        StrictPositiveInt,
        Cli(
            "Client processes per load point, each with its share of the streams: for loads "
            "one process cannot parse (about 500k streamed tokens/s).",
            metavar="N",
        ),
    ] = 1
    extra_body: Annotated[
        Annotated[dict[str, Any], BeforeValidator(_extra_body)] | None,
        Cli(
            'Extra fields for every request body, e.g. \'{"top_p": 0.9, "temperature": 0.7}\' '
            "(sampling parameters; not the fields the workload sets).",
            metavar="JSON",
        ),
    ] = None
    # Sent as `Authorization: Bearer …`; never stored, printed or written into a command line.
    api_key: Annotated[
        Annotated[str | None, Field(exclude=True, repr=False)],
        Cli(
            "For a server that wants one: sent as `Authorization: Bearer KEY`, never stored or "
            "printed (default: $OPENAI_API_KEY; a launched vLLM's own --api-key).",
            metavar="KEY",
        ),
    ] = None

    @field_validator("endpoint")
    @classmethod
    def _server_url(cls, value: str | None) -> str | None:
        # Refused before anything runs (a launch, a plan's other entries), not when first used.
        from infermeter.bench.client.client import normalize_base_url

        if value is not None:
            try:
                normalize_base_url(value)
            except BenchError as error:
                raise ValueError(str(error)) from None
        return value

    @field_validator("profile")
    @classmethod
    def _known_profile(cls, value: str) -> str:
        if value not in PROFILES:
            raise ValueError(unknown_name("profile", value, PROFILES))
        return value


def option_error(error: ValidationError, model: type[BaseModel] | None = None) -> str:
    """The first problem of `error` as one line that names the option as the command line
    spells it: `--engine: expected lowercase letters, digits, - or .`. `model`: the options'
    model (default `RunOptions`)."""
    detail = error.errors()[0]
    if not detail["loc"]:
        return plain_message(detail)
    name = str(detail["loc"][0])
    field = (model or RunOptions).model_fields.get(name)
    alias = field.alias if field is not None and field.alias else name.replace("_", "-")
    return f"--{alias}: {plain_message(detail)}"


def plain_message(detail: ErrorDetails) -> str:
    """A validation problem in words: a pattern's meaning rather than its regular expression,
    a validator's message without pydantic's `Value error, `."""
    context = detail.get("ctx", {})
    if detail["type"] == "string_pattern_mismatch" and context.get("pattern") in _PATTERN_MEANINGS:
        return _PATTERN_MEANINGS[context["pattern"]]
    if detail["type"] in _BOUNDS:
        words, key = _BOUNDS[detail["type"]]
        return f"must be {words} {_shown(context[key])}, got {_shown(detail['input'])}"
    return validator_message(detail)


def _shown(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else repr(value)
