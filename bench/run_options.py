"""`RunOptions`: every option of one `bench run` as one typed, strict object (the command builds
it from its flags; a plan file's runs are read into it), with the validators of its fields.
"""

from __future__ import annotations

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

from bench.client import check_extra_body, parse_extra_body
from bench.errors import BenchError
from bench.workloads import PROFILES, LengthDistribution, parse_length
from registry.models.common import SLUG_PATTERN

# What a pattern asks for, in words: an error says this, not the regular expression.
_PATTERN_MEANINGS = {SLUG_PATTERN: "expected lowercase letters, digits, - or ."}


def _length(value: object) -> object:
    if isinstance(value, bool):
        raise ValueError("expected a length such as 512 or lognormal:512:0.7")
    if isinstance(value, int | str):
        try:
            return parse_length(str(value))
        except BenchError as error:
            raise ValueError(str(error)) from None
    return value


def _extra_body(value: object) -> object:
    """A JSON object given as text (the command line) or as a mapping (a plan file)."""
    try:
        if isinstance(value, str):
            return parse_extra_body(value)
        if isinstance(value, dict):
            return check_extra_body(dict(value))
    except BenchError as error:
        raise ValueError(str(error)) from None
    raise ValueError('expected a JSON object such as {"top_p": 0.9}')


def _sequence(value: object) -> object:
    """A single value where a list is expected is a list of one."""
    return value if isinstance(value, list | tuple) else [value]


StrictPositiveInt = Annotated[int, Field(strict=True, ge=1)]
PositiveFloat = Annotated[float, Field(strict=True, gt=0, allow_inf_nan=False)]
Fraction = Annotated[float, Field(strict=True, gt=0, le=1)]
Text = Annotated[str, Field(strict=True, min_length=1)]
Length = Annotated[InstanceOf[LengthDistribution], BeforeValidator(_length)]


class RunOptions(BaseModel):
    """The options of one `bench run` (see `infermeter bench run --help` for each)."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        populate_by_name=True,
        alias_generator=lambda name: name.replace("_", "-"),
    )

    name: Text | None = None
    endpoint: Text | None = None
    model: Text | None = None
    tensor_parallel_size: StrictPositiveInt | None = None
    pipeline_parallel_size: StrictPositiveInt | None = None
    ray_address: Text | None = None
    max_model_len: StrictPositiveInt | None = None
    gpu_memory_utilization: Fraction | None = None
    quantization: Text | None = None
    kv_cache_dtype: Text | None = None
    max_num_seqs: StrictPositiveInt | None = None
    load_format: Text | None = None
    vllm_args: Annotated[tuple[Text, ...], BeforeValidator(_sequence)] = Field((), alias="vllm-arg")
    vllm_executable: Text | None = None
    server_command: Text | None = None
    nodes: StrictPositiveInt | None = None
    port: Annotated[int, Field(strict=True, ge=1, le=65535)] | None = None
    startup_timeout: PositiveFloat = 1800.0
    output: Path | None = None
    raw_records: Annotated[bool, Field(strict=True)] = False
    gpu_id: Text | None = Field(None, alias="gpu")
    model_id: Text | None = None
    gpu_indices: Annotated[
        tuple[Annotated[int, Field(strict=True, ge=0)], ...], BeforeValidator(_sequence)
    ] = ()
    submitter: Text | None = None
    engine: Annotated[str, Field(strict=True, pattern=SLUG_PATTERN)] | None = None
    engine_version: Text | None = None
    price_per_hour: PositiveFloat | None = None
    utilization: Fraction = 1.0
    profile: Text = "chat"
    concurrency: Annotated[tuple[StrictPositiveInt, ...], BeforeValidator(_sequence)] = ()
    request_rate: Annotated[tuple[PositiveFloat, ...], BeforeValidator(_sequence)] = ()
    max_concurrency: StrictPositiveInt | None = None
    find_max_rate: Annotated[bool, Field(strict=True)] = False
    find_max_concurrency: Annotated[bool, Field(strict=True)] = False
    search_start: PositiveFloat | None = None
    search_precision: Annotated[float, Field(strict=True, gt=0, lt=1)] = 0.05
    max_probes: Annotated[int, Field(strict=True, ge=2)] = 16
    stop_when_saturated: Annotated[bool, Field(strict=True)] = False
    turns: Length | None = None
    think_time: Annotated[float, Field(strict=True, ge=0, allow_inf_nan=False)] | None = None
    burstiness: PositiveFloat = 1.0
    num_requests: StrictPositiveInt | None = None
    duration: PositiveFloat | None = None
    warmup: Annotated[int, Field(strict=True, ge=0)] | None = None
    input_len: Length | None = None
    output_len: Length | None = None
    dataset: Path | None = None
    trace: Path | None = None
    trace_speed: PositiveFloat = 1.0
    trace_block_size: StrictPositiveInt | None = None
    tokenizer: Text | None = None
    seed: Annotated[int, Field(strict=True)] = 0
    prompt_salt: Annotated[int, Field(strict=True)] = 0
    shared_prefix_tokens: Annotated[int, Field(strict=True, ge=0)] = 0
    slo_ttft_ms: PositiveFloat | None = None
    slo_tpot_ms: PositiveFloat | None = None
    slo_e2e_ms: PositiveFloat | None = None
    api: Literal["completions", "chat"] = "completions"
    timeout: PositiveFloat = 600.0
    ignore_eos: Annotated[bool, Field(strict=True)] = True
    continuous_usage_stats: Annotated[bool, Field(strict=True)] = False
    workers: StrictPositiveInt = 1
    extra_body: Annotated[dict[str, Any], BeforeValidator(_extra_body)] | None = None
    # Sent as `Authorization: Bearer …`; never stored, printed or written into a command line.
    api_key: Annotated[str | None, Field(exclude=True, repr=False)] = None

    @field_validator("profile")
    @classmethod
    def _known_profile(cls, value: str) -> str:
        if value not in PROFILES:
            raise ValueError(f"unknown profile {value!r}; known: {', '.join(sorted(PROFILES))}")
        return value


def option_error(error: ValidationError) -> str:
    """The first problem of `error` as one line that names the option as the command line
    spells it: `--engine: expected lowercase letters, digits, - or .`."""
    detail = error.errors()[0]
    if not detail["loc"]:
        return plain_message(detail)
    name = str(detail["loc"][0])
    field = RunOptions.model_fields.get(name)
    alias = field.alias if field is not None and field.alias else name.replace("_", "-")
    return f"--{alias}: {plain_message(detail)}"


def plain_message(detail: ErrorDetails) -> str:
    """A validation problem in words: a pattern's meaning rather than its regular expression,
    a validator's message without pydantic's `Value error, `."""
    pattern = detail.get("ctx", {}).get("pattern")
    if detail["type"] == "string_pattern_mismatch" and pattern in _PATTERN_MEANINGS:
        return _PATTERN_MEANINGS[pattern]
    return detail["msg"].removeprefix("Value error, ")
