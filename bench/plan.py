"""Benchmark plans: the options of `bench run` as one typed object, for one run or a matrix.

`RunOptions` holds every option of one `bench run` (the command builds it from its flags);
`session_config` turns it into the `SessionConfig` that `bench.session.run_session` runs.
A plan file (`bench run --plan FILE.yaml`) lists many runs, each a mapping whose keys are the
option names without their dashes (`model`, `profile`, `concurrency`, `request-rate`,
`input-len`, `slo-ttft-ms`, `max-model-len`, `vllm-arg`, `output`, …; snake_case is accepted
too), plus an optional `name`; optional `defaults:` hold keys every run starts from:

    defaults: {model: meta-llama/Llama-3.1-8B-Instruct, max-model-len: 32768, gpu: h100-sxm}
    runs:
      - {name: chat, profile: chat, concurrency: [1, 4, 16, 64], output: results/chat.json}
      - {name: rag, profile: rag, concurrency: [1, 4, 16], output: results/rag.json}

`load_plan` checks the whole file before anything runs, and raises `PlanError` carrying every
problem as `FILE: runs[2].concurrency[0]: message`. Paths in a plan (output, dataset,
tokenizer) are relative to the current folder, as on the command line; two runs may not write
the same result file. Each run's provenance records the equivalent single `bench run` command.

A run (or `defaults:`) may also say `gpus:`, the GPU kinds a fleet runs it on
(`gpus: [h100-sxm, mi300x:2]`, see `bench.placement`); one host's `--plan` ignores it.
"""

from __future__ import annotations

import difflib
import json
import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    InstanceOf,
    ValidationError,
    field_validator,
)

from bench.client import check_extra_body, parse_extra_body
from bench.errors import BenchConfigError, BenchError
from bench.metrics import Slo
from bench.placement import GpuRequest, parse_gpus
from bench.runner import RunConfig, plan_points
from bench.search import SearchSpec
from bench.server import ServerConfig
from bench.session import DEFAULT_OUTPUT, SessionConfig
from bench.workloads import PROFILES, LengthDistribution, parse_length


class PlanError(BenchError):
    """A plan file cannot be read or holds invalid runs; `problems` lists each one."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


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
    engine: Annotated[str, Field(strict=True, pattern=r"^[a-z0-9]+(?:[-.][a-z0-9]+)*$")] | None = (
        None
    )
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


_LAUNCH_ONLY = (
    "ray_address",
    "max_model_len",
    "gpu_memory_utilization",
    "quantization",
    "kv_cache_dtype",
    "max_num_seqs",
    "load_format",
    "vllm_args",
    "vllm_executable",
    "port",
)


def _option(field: str) -> str:
    alias = RunOptions.model_fields[field].alias
    return "--" + (alias or field)


MAX_STREAMS = 1_000_000  # concurrent requests of one point (sockets of one client host)
MAX_REQUESTS = 100_000_000  # requests of one point


def _magnitude(count: int) -> str:
    """A count too large to show whole, as `1e+20` (a 400-digit one too, which no float holds)."""
    digits = str(count)
    return f"{count:.3g}" if len(digits) < 300 else f"{digits[0]}e+{len(digits) - 1}"


def _check_bounds(options: RunOptions) -> None:
    """Refuse loads no client host can run, before anything starts."""
    for value in (*options.concurrency, options.max_concurrency or 0):
        if value > MAX_STREAMS:
            raise BenchConfigError(
                f"{_magnitude(value)} concurrent requests; at most {MAX_STREAMS:,}",
                "--concurrency",
            )
    counts = (("--num-requests", options.num_requests), ("--warmup", options.warmup))
    for name, count in counts:
        if count is not None and count > MAX_REQUESTS:
            raise BenchConfigError(f"{_magnitude(count)} requests; at most {MAX_REQUESTS:,}", name)
    for argument in options.vllm_args:
        try:
            shlex.split(argument)
        except ValueError as error:
            raise BenchConfigError(
                f"{argument[:80]!r} cannot be split like a shell line: {error}", "--vllm-arg"
            ) from None


def _api_key(options: RunOptions) -> str | None:
    """The key the server wants: --api-key, else the key a launched vLLM is given
    (`--vllm-arg "--api-key K"`), else $OPENAI_API_KEY."""
    if options.api_key:
        return options.api_key
    words = [word for argument in options.vllm_args for word in shlex.split(argument)]
    for index, word in enumerate(words):
        if word == "--api-key" and index + 1 < len(words):
            return words[index + 1]
        if word.startswith("--api-key="):
            return word.partition("=")[2]
    return os.environ.get("OPENAI_API_KEY") or None


def session_config(options: RunOptions, command: str) -> SessionConfig:
    """The session that runs `options`; raises BenchConfigError for options that conflict."""
    if options.endpoint is None and options.model is None:
        raise BenchConfigError(
            "missing; give the model for vLLM to serve, or --endpoint URL of a running server",
            "--model",
        )
    if options.endpoint is not None:
        for name in _LAUNCH_ONLY:
            if getattr(options, name):
                raise BenchConfigError(
                    "only applies when bench run launches vLLM (no --endpoint)", _option(name)
                )
    if options.gpu_indices and options.endpoint is None:
        raise BenchConfigError(
            "only applies with --endpoint; a launched vLLM uses the first GPUs that "
            "CUDA_VISIBLE_DEVICES shows",
            "--gpu-indices",
        )
    if options.server_command is not None and options.endpoint is None:
        raise BenchConfigError(
            "only applies with --endpoint (bench run records the vLLM it launches itself)",
            "--server-command",
        )
    if options.server_command is not None:
        try:
            shlex.split(options.server_command)
        except ValueError as error:
            raise BenchConfigError(
                f"not a shell command line ({error})", "--server-command"
            ) from None
    if options.endpoint is None and (options.engine or options.engine_version):
        option = "--engine" if options.engine else "--engine-version"
        raise BenchConfigError("only applies with --endpoint (bench run launches vLLM)", option)
    if options.pipeline_parallel_size is not None and any(
        "pipeline-parallel-size" in argument for argument in options.vllm_args
    ):
        raise BenchConfigError(
            "give --pipeline-parallel-size once, not also in --vllm-arg", "--pipeline-parallel-size"
        )
    if options.shared_prefix_tokens and options.dataset is not None:
        raise BenchConfigError(
            "applies to synthesised prompts, not to a --dataset's", "--shared-prefix-tokens"
        )
    _check_bounds(options)
    output = options.output
    result_path = output if output is not None or options.endpoint is not None else DEFAULT_OUTPUT
    server = None
    if options.endpoint is None and options.model is not None:
        log_base = result_path or DEFAULT_OUTPUT
        server = ServerConfig(
            model=options.model,
            log_path=log_base.with_name(log_base.stem + ".vllm.log"),
            executable=options.vllm_executable,
            port=options.port,
            tensor_parallel_size=options.tensor_parallel_size,
            pipeline_parallel_size=options.pipeline_parallel_size,
            ray_address=options.ray_address,
            max_model_len=options.max_model_len,
            gpu_memory_utilization=options.gpu_memory_utilization,
            quantization=options.quantization,
            kv_cache_dtype=options.kv_cache_dtype,
            max_num_seqs=options.max_num_seqs,
            load_format=options.load_format,
            extra_args=options.vllm_args,
            startup_timeout_s=options.startup_timeout,
        )
    run = RunConfig(
        endpoint=options.endpoint or "",
        model=options.model,
        api=options.api,
        profile=options.profile,
        input_len=options.input_len,
        output_len=options.output_len,
        dataset=options.dataset,
        tokenizer=options.tokenizer,
        concurrency=options.concurrency,
        request_rates=options.request_rate,
        max_concurrency=options.max_concurrency,
        burstiness=options.burstiness,
        num_requests=options.num_requests,
        duration_s=options.duration,
        warmup_requests=options.warmup,
        seed=options.seed,
        prompt_salt=options.prompt_salt,
        shared_prefix_tokens=options.shared_prefix_tokens,
        timeout_s=options.timeout,
        slo=Slo(
            ttft_ms=options.slo_ttft_ms, tpot_ms=options.slo_tpot_ms, e2e_ms=options.slo_e2e_ms
        ),
        ignore_eos=options.ignore_eos,
        continuous_usage_stats=options.continuous_usage_stats,
        workers=options.workers,
        extra_body=options.extra_body,
        api_key=_api_key(options),
        search=_search(options),
        stop_when_saturated=options.stop_when_saturated,
        turns=options.turns,
        think_time_s=options.think_time,
    )
    return SessionConfig(
        run=run,
        command=command,
        server=server,
        output=result_path,
        raw_records=options.raw_records,
        gpu_id=options.gpu_id,
        model_id=options.model_id,
        tensor_parallel_size=options.tensor_parallel_size,
        gpu_indices=options.gpu_indices or None,
        pipeline_parallel_size=options.pipeline_parallel_size,
        submitter=options.submitter,
        engine=options.engine,
        engine_version=options.engine_version,
        server_command=options.server_command,
    )


def _search(options: RunOptions) -> SearchSpec | None:
    """The max-load search the options ask for, or None."""
    if options.find_max_rate and options.find_max_concurrency:
        raise BenchConfigError(
            "give one of --find-max-rate and --find-max-concurrency", "--find-max-concurrency"
        )
    if not (options.find_max_rate or options.find_max_concurrency):
        for name in ("search_start", "search_precision", "max_probes"):
            if getattr(options, name) != RunOptions.model_fields[name].default:
                raise BenchConfigError(
                    "applies to --find-max-rate or --find-max-concurrency", _option(name)
                )
        return None
    return SearchSpec(
        kind="rate" if options.find_max_rate else "concurrency",
        slo=Slo(
            ttft_ms=options.slo_ttft_ms, tpot_ms=options.slo_tpot_ms, e2e_ms=options.slo_e2e_ms
        ),
        start=options.search_start or 1.0,
        precision=options.search_precision,
        max_probes=options.max_probes,
    )


def command_line(options: RunOptions) -> str:
    """The single `infermeter bench run …` command equivalent to `options`."""
    words = ["infermeter", "bench", "run"]
    for name, field in RunOptions.model_fields.items():
        value = getattr(options, name)
        if name in ("name", "api_key") or value == field.default:
            continue
        option = _option(name)
        if isinstance(value, bool):
            words.append(option if value else "--no-" + option[2:])
        elif name == "vllm_args":
            for argument in value:
                words += [option, argument]
        elif isinstance(value, tuple):
            words += [option, ",".join(f"{item:g}" for item in value)]
        elif isinstance(value, dict):
            words += [option, json.dumps(value, sort_keys=True)]
        elif isinstance(value, LengthDistribution):
            words += [option, value.describe()]
        elif isinstance(value, float):
            words += [option, f"{value:g}"]
        else:
            words += [option, str(value)]
    return shlex.join(words)


@dataclass(frozen=True)
class PlanRun:
    """One run of a plan: its label (`name`, else `runs[i]`), options and session."""

    label: str
    options: RunOptions
    session: SessionConfig
    gpus: tuple[GpuRequest, ...] = ()


def _where(location: tuple[int | str, ...]) -> str:
    text = ""
    for part in location:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text


def _keys(mapping: Mapping[Any, Any], where: str, problems: list[str]) -> dict[str, Any]:
    """The mapping with snake_case keys spelt as the options are (kebab-case)."""
    known = [field.alias or name for name, field in RunOptions.model_fields.items()]
    normalised: dict[str, Any] = {}
    for key, value in mapping.items():
        if not isinstance(key, str):
            problems.append(f"{where}: key {key!r} is not a name")
            continue
        spelt = key.replace("_", "-")
        if spelt in normalised:
            problems.append(f"{where}.{spelt}: given twice")
        elif spelt not in known:
            close = difflib.get_close_matches(spelt, known, n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            problems.append(f"{where}.{key}: unknown key{hint}")
        else:
            normalised[spelt] = value
    return normalised


def _options(data: dict[str, Any], where: str, problems: list[str]) -> RunOptions | None:
    try:
        return RunOptions.model_validate(data)
    except ValidationError as error:
        for detail in error.errors():
            location = (where, *detail["loc"])
            message = detail["msg"].removeprefix("Value error, ")
            problems.append(f"{_where(location)}: {message}")
    return None


def _read(path: Path) -> object:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise PlanError([f"{path}: cannot read the plan: {reason}"]) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        at = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or "cannot be parsed"
        raise PlanError([f"{path}{at}: not valid YAML: {problem}"]) from None


def load_plan(path: Path, *, shared_outputs: bool = False) -> list[PlanRun]:
    """The runs of the plan file at `path`, all checked; raises PlanError with every problem.

    `shared_outputs` lets runs name the same result file (a fleet gives each entry its own)."""
    data = _read(path)
    if not isinstance(data, dict):
        raise PlanError([f"{path}: expected a mapping with `runs:` (and optional `defaults:`)"])
    problems: list[str] = []  # each `where: message`; the file's path is added at the end
    for key in data:
        if key not in ("defaults", "runs"):
            problems.append(f"{key}: unknown key; a plan has `defaults:` and `runs:`")
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        problems.append("defaults: expected a mapping of run options")
        defaults = {}
    defaults = dict(defaults)
    default_gpus: tuple[GpuRequest, ...] = ()
    if "gpus" in defaults:
        default_gpus = parse_gpus(defaults.pop("gpus"), "defaults.gpus", problems) or ()
    default_keys = _keys(defaults, "defaults", problems)
    if _options(default_keys, "defaults", problems) is None:
        default_keys = {}
    runs = data.get("runs")
    if not isinstance(runs, list) or not runs:
        problems.append("runs: expected a list of at least one run")
        runs = []
    planned: list[PlanRun] = []
    outputs: dict[Path, str] = {}
    for index, run in enumerate(runs):
        where = f"runs[{index}]"
        if not isinstance(run, dict):
            problems.append(f"{where}: expected a mapping of run options")
            continue
        own: list[str] = []
        run = dict(run)
        gpus = default_gpus
        if "gpus" in run:
            gpus = parse_gpus(run.pop("gpus"), f"{where}.gpus", own) or ()
        keys = _keys(run, where, own)
        if _options(keys, where, own) is None or own:
            problems += own
            continue
        options = RunOptions.model_validate({**default_keys, **keys})
        label = options.name or where
        try:
            session = session_config(options, command_line(options))
            plan_points(session.run)
        except BenchConfigError as error:
            key = (error.option or "").lstrip("-")
            at = f"{where}.{key}" if key else where
            problems.append(f"{at}: {' '.join(str(error).split())}")
            continue
        if session.output is not None and not shared_outputs:
            other = outputs.setdefault(session.output.resolve(), where)
            if other != where:
                problems.append(f"{where}.output: {session.output} is also {other}'s result file")
                continue
        planned.append(PlanRun(label, options, session, gpus))
    if problems:
        raise PlanError([f"{path}: {problem}" for problem in problems])
    return planned
