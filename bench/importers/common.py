"""What every importer shares: the errors, the facts from flags, JSON reading and the assembly
of a registry result from measured load points.

Errors (beside bench.errors)::

    BenchError
    └── ResultImportError      a file cannot be read or is not in the expected format (exit 1)
        └── MissingFactError   a fact the file lacks was not given; `option` names the flag
"""

import datetime as dt
import json
import math
import re
import zoneinfo
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from infermeter.bench.errors import BenchConfigError, BenchError
from infermeter.bench.plan.options import (
    Cli,
    GpuMemoryUtilization,
    KvCacheDtype,
    MaxModelLen,
    MaxNumSeqs,
    PipelineParallelSize,
    Quantization,
    SloE2eMs,
    SloTpotMs,
    SloTtftMs,
    TensorParallelSize,
    TraceBlockSize,
)
from infermeter.bench.result.deployment import Deployment, identity
from infermeter.bench.result.provenance import cpu_gpu_sku
from infermeter.bench.run.metrics import PERCENTILE_MIN_REQUESTS, too_few_requests
from infermeter.bench.workloads.lengths import Length, length_model, parse_length_spec
from infermeter.bench.workloads.trace_plan import trace_workload
from infermeter.calculators.suggest import unknown_name
from infermeter.registry.builder import ResultBuildError, build_from_parts, unchecked
from infermeter.registry.catalog import load_gpus, load_models
from infermeter.registry.input_files import InputFileError, read_input_text
from infermeter.registry.models import (
    EngineIdentity,
    GpuEntry,
    GpuIdentity,
    LoadPoint,
    MeasuredSource,
    ModelIdentity,
    RequestCounts,
    Result,
    ServingSettings,
    Slo,
    Verdict,
    Workload,
)
from infermeter.registry.models.common import (
    CPU_DEVICE_ID,
    HF_REPO_PATTERN,
    DeviceFormFactor,
    Seed,
)
from infermeter.registry.models.provenance import Host, Tool
from infermeter.registry.secrets import redact
from infermeter.registry.store import reject_duplicate_keys

IMPORT_SERVING_NOT_STATED = frozenset(
    {"data_parallel_size", "expert_parallel_size", "speculative", "disaggregated"}
    | {"load_format", "other_options"}
)
"""The registry's serving settings no importer states; every other `ServingSettings` field is an
`ImportFacts` field of the same name, which `assemble` reads (a field added to the model and not
to the flags fails every import, as tests/bench/test_importers.py shows)."""


class ResultImportError(BenchError):
    """A file to import cannot be read or is not in the format expected."""


class MissingFactError(ResultImportError):
    """A fact the imported file lacks was not given; `option` names the flag that gives it."""


PositiveInt = Annotated[int, Field(ge=1)]


class ImportFacts(BaseModel):
    """Facts about a run that the imported file does not hold; None = not given. Each field is
    `bench import`'s option of the same name (`--` and its alias), declared once here: the click
    options are generated from these fields (bench/cli/bench_run_options.py), checked once
    by this model.

    gpu, gpu_count, model_id, engine_version, submitter, input_len and output_len are always
    required; command, timezone and tool_version when the file does not state them (vLLM's
    files never do). The rest are filled in where given and left out otherwise.
    """

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        populate_by_name=True,
        alias_generator=lambda name: name.replace("_", "-"),
    )

    gpu: Annotated[
        str | None, Cli("GPU catalog id, e.g. h100-sxm (cpu: the engine ran on the CPU). Required.")
    ] = None
    gpu_count: Annotated[PositiveInt | None, Cli("GPUs that served. Required.")] = None
    model_id: Annotated[
        str | None, Cli("Model catalog id, e.g. llama-3.1-8b-instruct. Required.")
    ] = None
    engine_version: Annotated[
        str | None, Cli("vLLM version of the server, e.g. 0.9.1. Required.")
    ] = None
    command: Annotated[
        str | None,
        Cli(
            "The exact benchmark command line (`vllm bench serve …`, `guidellm benchmark …`). "
            "Required unless the file states it (AIPerf)."
        ),
    ] = None
    submitter: Annotated[str | None, Cli("Your GitHub user name. Required.")] = None
    timezone: Annotated[
        str | None,
        Cli(
            "Time zone of the benchmark host, e.g. UTC or +02:00. Required for vLLM and AIPerf "
            "files, whose times are local."
        ),
    ] = None
    input_len: Annotated[
        str | None,
        Cli(
            "Prompt lengths: N, uniform:LO:HI, normal:MEAN:STD, dataset[:MAX]. Required.",
            metavar="SPEC",
        ),
    ] = None
    output_len: Annotated[
        str | None, Cli("Output lengths, as --input-len. Required.", metavar="SPEC")
    ] = None
    hf_repo: Annotated[
        str | None, Cli("Hugging Face repository served (default: the file's model_id).")
    ] = None
    revision: Annotated[str | None, Cli("Revision of the weights.")] = None
    quantization: Quantization = None
    dtype: Annotated[Literal["bfloat16", "float16", "float32"] | None, Cli("vLLM --dtype.")] = None
    kv_cache_dtype: KvCacheDtype = None
    tensor_parallel_size: TensorParallelSize = None
    pipeline_parallel_size: PipelineParallelSize = None
    max_model_len: MaxModelLen = None
    gpu_memory_utilization: GpuMemoryUtilization = None
    max_num_seqs: MaxNumSeqs = None
    max_num_batched_tokens: Annotated[PositiveInt | None, Cli("vLLM --max-num-batched-tokens.")] = (
        None
    )
    enable_prefix_caching: Annotated[
        bool | None, Cli("vLLM --enable-prefix-caching or --no-…; default: not stated.")
    ] = None
    enable_chunked_prefill: Annotated[
        bool | None, Cli("vLLM --enable-chunked-prefill or --no-…; default: not stated.")
    ] = None
    profile: Annotated[
        Literal["chat", "rag", "batch", "custom"],
        Cli("infermeter traffic profile the run matches."),
    ] = "custom"
    dataset: Annotated[
        str | None, Cli("Dataset the prompts came from, e.g. sharegpt or random.")
    ] = None
    seed: Annotated[Seed | None, Cli("vLLM --seed of the benchmark.")] = None
    slo_ttft_ms: SloTtftMs = None
    slo_tpot_ms: SloTpotMs = None
    slo_e2e_ms: SloE2eMs = None
    server_command: Annotated[str | None, Cli("The exact `vllm serve …` command line.")] = None
    gpu_sku: Annotated[
        str | None, Cli("GPU name as nvidia-smi reports it (default: the catalog name).")
    ] = None
    tool_version: Annotated[
        str | None,
        Cli("Version of the benchmark tool (default: the file's; for vLLM, --engine-version)."),
    ] = None
    trace: Annotated[
        Path | None,
        Cli(
            "The trace file the run replayed (AIPerf's mooncake_trace --input-file, GuideLLM's "
            "--data path): its SHA-256 names the workload, as bench run --trace states it. "
            "Required for a trace replay."
        ),
    ] = None
    trace_block_size: Annotated[
        TraceBlockSize | None,
        Cli(
            "Tokens per hash ID of the trace, where the file does not state it (default: the "
            "trace's header, else 512)."
        ),
    ] = None

    @property
    def slo_given(self) -> bool:
        """Whether any SLO limit was declared."""
        return any(
            value is not None for value in (self.slo_ttft_ms, self.slo_tpot_ms, self.slo_e2e_ms)
        )


def option_name(name: str) -> str:
    """The flag of an ImportFacts field: `gpu_count` → `--gpu-count`."""
    return "--" + name.replace("_", "-")


RUN_FACTS = {
    "gpu": "the GPU catalog id, e.g. --gpu h100-sxm",
    "gpu_count": "how many GPUs served the model",
    "model_id": "the model catalog id, e.g. llama-3.1-8b-instruct",
    "engine_version": "the vLLM version of the server",
    "submitter": "your GitHub user name",
    "input_len": "the prompt length distribution, e.g. 1024",
    "output_len": "the output length distribution, e.g. 128",
}
"""The facts every import needs and no file states (the lengths: but a trace replay's), with
what each flag gives."""


def require_given(facts: ImportFacts, wanted: dict[str, str | None]) -> None:
    """Refuse at once every flag of `wanted` not given: MissingFactError names the first with
    what it gives (its `wanted` value, else what `RUN_FACTS` says) and the others after it, so
    one try shows every flag the import still needs."""
    missing = [name for name in wanted if getattr(facts, name) is None]
    if not missing:
        return
    first, *others = missing
    also = f" (and {', '.join(map(option_name, others))}: missing too)" if others else ""
    why = wanted[first] or RUN_FACTS[first]
    raise MissingFactError(f"missing; {why}{also}", option_name(first))


def required(facts: ImportFacts, name: str, why: str | None = None) -> Any:
    """The fact `name`, or MissingFactError naming its flag with `why` (default: what
    `RUN_FACTS` says the flag gives)."""
    value = getattr(facts, name)
    if value is None:
        raise MissingFactError(f"missing; {why or RUN_FACTS[name]}", option_name(name))
    return value


# --- reading JSON -------------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def read_json_values(path: Path) -> list[Any]:
    """Every JSON value in a file, one after another (vLLM's --append-result writes several)."""
    try:
        text = read_input_text(path, "benchmark file")
    except InputFileError as error:
        raise ResultImportError(str(error)) from None
    decoder = json.JSONDecoder(
        parse_constant=_reject_constant, object_pairs_hook=reject_duplicate_keys
    )
    values: list[Any] = []
    position = 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position == len(text):
            break
        try:
            value, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as error:
            raise ResultImportError(
                f"{path}: invalid JSON at line {error.lineno} column {error.colno}: {error.msg}"
            ) from None
        except (ValueError, RecursionError) as error:
            raise ResultImportError(f"{path}: invalid JSON: {error}") from None
        values.append(value)
    if not values:
        raise ResultImportError(f"{path}: empty file")
    return values


@dataclass(frozen=True)
class ImportFormat:
    """One tool's benchmark file as `bench import` reads it, declared once by the format's
    module: its `--format` name, what the file is and the shape its JSON takes (for the errors),
    how its parsed JSON is recognised, what files of it measured, and what --command must give
    when the files do not name the command. The format reads; `import_files` makes the result."""

    name: str
    description: str  # e.g. "a GuideLLM benchmarks.json report"
    shape: str  # e.g. "an object with `metadata` and `benchmarks`"
    looks_like: Callable[[Sequence[Any]], bool]
    measure: Callable[[Sequence[Path], ImportFacts], "Measured"]
    command_why: str  # e.g. "the exact `guidellm benchmark …` command line"

    def import_files(self, files: Sequence[Path], facts: ImportFacts) -> Result:
        """One registry result of what `files` measured and the `facts` the flags state."""
        return assemble(facts, self.measure(files, facts), self.command_why, files)

    def read(self, path: Path) -> list[Any]:
        """The JSON values in `path`, when they are this format's; ResultImportError otherwise."""
        values = read_json_values(path)
        if not self.looks_like(values):
            raise ResultImportError(f"{path}: not {self.description} ({self.shape})")
        return values


def number(data: dict[str, Any], key: str, where: str) -> float | None:
    """`data[key]` as a finite number >= 0 (no figure a benchmark writes is negative); None when
    absent or null."""
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ResultImportError(f"{where}: {key}: expected a number, got {value!r}")
    if value < 0:
        raise ResultImportError(f"{where}: {key}: expected a number >= 0, got {value!r}")
    return float(value)


def positive(data: dict[str, Any], key: str, where: str) -> float | None:
    """`data[key]` as a finite number > 0 (a duration, a rate); None when absent or null."""
    value = number(data, key, where)
    if value == 0:
        raise ResultImportError(f"{where}: {key}: expected a number > 0, got {data[key]!r}")
    return value


def count(data: dict[str, Any], key: str, where: str) -> int | None:
    """`data[key]` as a whole number >= 0 (a float with no fraction is accepted); None if absent."""
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ResultImportError(f"{where}: {key}: expected a whole number, got {value!r}")
    return value


def mapping(data: Any, key: str, where: str) -> dict[str, Any] | None:
    """`data[key]` when it is an object; None when absent; an error when it is something else."""
    if not isinstance(data, dict):
        return None
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ResultImportError(f"{where}: {key}: expected an object, got {type(value).__name__}")
    return value


def scaled(value: float, factor: float) -> float:
    """`value × factor`, rounded to 9 decimals so a unit change adds no binary noise (1604.6, not
    1604.6000000000001); far below any stated precision."""
    return round(value * factor, 9)


def same(values: Sequence[tuple[str, Any]], key: str) -> Any:
    """The one value every (where, value) pair agrees on; an error naming them when they differ."""
    seen = {json.dumps(value) for _, value in values}
    if len(seen) > 1:
        raise ResultImportError(
            f"the files disagree on {key} ({', '.join(sorted(seen))}): one result is one "
            "deployment; import them separately"
        )
    return values[0][1] if values else None


# --- facts from flags --------------------------------------------------------------------------


def parse_length(spec: str, option: str) -> Length:
    """A length in bench run's syntax (`bench.workloads.lengths.LENGTH_SYNTAX`), as the result
    file states it (`bench.workloads.lengths.length_model`)."""
    try:
        return length_model(parse_length_spec(spec, option))
    except BenchConfigError as error:
        raise ResultImportError(str(error), option) from None


def timezone_of(name: str) -> dt.tzinfo:
    """`UTC`, an IANA name or an offset like `+02:00`; an error naming --timezone otherwise."""
    match = re.fullmatch(r"([+-])(\d{2}):(\d{2})", name)
    if match:
        sign = 1 if match.group(1) == "+" else -1
        hours, minutes = int(match.group(2)), int(match.group(3))
        if hours > 14 or minutes > 59 or (hours == 14 and minutes):
            raise ResultImportError(
                f"{name!r} is not a UTC offset; offsets run from -14:00 to +14:00", "--timezone"
            )
        return dt.timezone(sign * dt.timedelta(hours=hours, minutes=minutes))
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ResultImportError(
            f"{name[:40]!r} is not a time zone; expected a name like UTC or Europe/Paris, "
            "or an offset like +02:00",
            "--timezone",
        ) from None


def utc_stamp(moment: dt.datetime) -> str:
    """RFC 3339 in UTC with a `Z`."""
    return moment.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def _catalog_id(kind: str, wanted: str, known: Sequence[str], option: str) -> None:
    if wanted not in known:
        raise ResultImportError(unknown_name(f"{kind} id", wanted, known), option)


# --- one result from measured points -----------------------------------------------------------


@dataclass(frozen=True)
class Measured:
    """What an importer read from the files: the points and what the files say about the run."""

    tool_name: str
    points: list[LoadPoint]
    started_at: str
    finished_at: str
    served_model: Any
    api: str | None = None
    tool_version: str | None = None
    command: str | None = None
    seed: int | None = None
    complete: bool = True
    extra: dict[str, Any] = field(default_factory=dict)
    trace: dict[str, Any] | None = None  # the replayed trace's identity (trace_runs)
    # The --slo-* limits the files state themselves (AIPerf's goodput limits), by ImportFacts
    # field, already checked against the flags.
    slo: dict[str, float | None] = field(default_factory=dict)
    # Flags the file itself makes necessary (AIPerf's local times: --timezone), with why.
    needs: dict[str, str] = field(default_factory=dict)
    # The tool times itl_ms per streamed chunk (vLLM's and AIPerf's clients), bench run per
    # token: a chunk of several tokens is one gap (`_itl_per_chunk`).
    itl_per_chunk: bool = False


def _workload(facts: ImportFacts, measured: Measured) -> Workload:
    """The result's `identity.workload`: the replayed trace's (its lengths are the trace's own,
    so the length flags are refused), else the lengths and dataset the flags state."""
    seed = facts.seed if facts.seed is not None else measured.seed
    if measured.trace is not None:
        for name in ("input_len", "output_len", "dataset"):
            if getattr(facts, name) is not None:
                raise ResultImportError(
                    "does not apply to a trace replay, whose requests are the trace's",
                    option_name(name),
                )
        return trace_workload(measured.trace, seed, measured.api)
    if facts.trace is not None:
        raise ResultImportError("the run replayed no trace (the file names none)", "--trace")
    return unchecked(
        Workload,
        profile=facts.profile,
        input_len=parse_length(
            required(facts, "input_len"),
            "--input-len",
        ),
        output_len=parse_length(
            required(facts, "output_len"),
            "--output-len",
        ),
        dataset=facts.dataset,
        seed=seed,
        api=measured.api,
    )


def assemble(
    facts: ImportFacts, measured: Measured, command_why: str, files: Sequence[Path]
) -> Result:
    """The validated registry result (with its content id) of what `files` `measured` and
    `facts`, made by the one builder of results (`registry.builder`). Without SLO limits every
    completed request is accepted."""
    facts = facts.model_copy(update=measured.slo)
    points = measured.points if facts.slo_given else [_all_accepted(p) for p in measured.points]
    points = [_too_few_for_percentiles(point) for point in points]
    if measured.itl_per_chunk:
        points = [_itl_per_chunk(point, measured.tool_name) for point in points]
    require_given(facts, _needed(facts, measured, command_why))
    gpu_id = required(facts, "gpu")
    gpu_count = required(facts, "gpu_count")
    model_id = required(facts, "model_id")
    engine_version = required(facts, "engine_version")
    gpus = load_gpus()
    if gpu_id != CPU_DEVICE_ID:  # `--gpu cpu`, as bench run takes it: an engine on the CPU
        _catalog_id("GPU", gpu_id, sorted(gpus), "--gpu")
    _catalog_id("model", model_id, sorted(load_models()), "--model-id")
    hf_repo = _hf_repo(facts, measured.served_model)
    workload = _workload(facts, measured)
    command, submitter, tool_version = _who_and_how(facts, measured, command_why)
    gpu = gpus.get(gpu_id)
    stated = _flags(facts, ModelIdentity, frozenset({"id", "hf_repo"}))
    deployment = Deployment(
        gpu=unchecked(GpuIdentity, id=gpu_id, count=gpu_count, form_factor=_form_factor(gpu)),
        engine=unchecked(EngineIdentity, name="vllm", version=engine_version),
        model=unchecked(ModelIdentity, id=model_id, hf_repo=hf_repo, **stated),
        serving=unchecked(
            ServingSettings, **_flags(facts, ServingSettings, IMPORT_SERVING_NOT_STATED)
        ),
    )
    slo = unchecked(
        Slo, ttft_ms=facts.slo_ttft_ms, tpot_ms=facts.slo_tpot_ms, e2e_ms=facts.slo_e2e_ms
    )
    source = _source(
        facts, measured, gpu, gpu_count, engine_version, command, tool_version, submitter
    )
    try:
        return build_from_parts(
            identity(deployment, workload),
            points,
            source,
            slo=slo,
            file="imported result",
        )
    except ResultBuildError as error:
        raise ResultImportError(refused(files, error.first_line())) from None


def refused(files: Sequence[Path], problem: str) -> str:
    """Why the result of `files` is not written: the first problem the registry finds in it."""
    names = ", ".join(map(str, files))
    return f"{names}: registry validate would reject the result, so it is not written: {problem}"


def lengths_needed(facts: ImportFacts, replayed_trace: bool) -> dict[str, str | None]:
    """--input-len and --output-len, which a run that replayed no trace needs; not where a
    --trace is given (`_workload` then says whether the run replayed one)."""
    if replayed_trace or facts.trace is not None:
        return {}
    return dict.fromkeys(("input_len", "output_len"))


def _needed(facts: ImportFacts, measured: Measured, command_why: str) -> dict[str, str | None]:
    """The flags `measured` needs, in the order a reader gives them, with what each gives where
    `RUN_FACTS` does not say."""
    needed: dict[str, str | None] = dict.fromkeys(
        ("gpu", "gpu_count", "model_id", "engine_version")
    )
    needed.update(lengths_needed(facts, measured.trace is not None))
    if measured.command is None:
        needed["command"] = command_why
    needed["submitter"] = None
    if measured.tool_version is None:
        needed["tool_version"] = _tool_version_why(measured)
    needed.update(measured.needs)
    return needed


def _tool_version_why(measured: Measured) -> str:
    return f"the file does not say which {measured.tool_name} version wrote it"


def _flags(facts: ImportFacts, model: type[BaseModel], not_flags: frozenset[str]) -> dict[str, Any]:
    """The fields of `model` an import takes from its flags: each `ImportFacts` field of the
    same name, less those `not_flags` names."""
    return {name: getattr(facts, name) for name in model.model_fields if name not in not_flags}


def _hf_repo(facts: ImportFacts, served_model: Any) -> str:
    """--hf-repo, else the file's model when it names a Hugging Face repository."""
    hf_repo = facts.hf_repo
    if hf_repo is None and isinstance(served_model, str):
        hf_repo = served_model if re.fullmatch(HF_REPO_PATTERN, served_model) else None
    if hf_repo is None:
        raise MissingFactError(
            f"missing; the file's model {served_model!r} is not a Hugging Face repository",
            "--hf-repo",
        )
    return hf_repo


def _who_and_how(facts: ImportFacts, measured: Measured, command_why: str) -> tuple[str, str, str]:
    """The command that measured, who submits it, and the version of the tool that wrote it."""
    command = facts.command or measured.command
    if command is None:
        raise MissingFactError(f"missing; {command_why}", "--command")
    submitter = required(facts, "submitter")
    tool_version = facts.tool_version or measured.tool_version
    if tool_version is None:
        raise MissingFactError(f"missing; {_tool_version_why(measured)}", "--tool-version")
    return command, submitter, tool_version


def _source(
    facts: ImportFacts,
    measured: Measured,
    gpu: GpuEntry | None,
    gpu_count: int,
    engine_version: str,
    command: str,
    tool_version: str,
    submitter: str,
) -> MeasuredSource:
    """The result's `source`: a measured run, by which tool, on which host (`gpu` None: the
    CPU), when and by whom."""
    return unchecked(
        MeasuredSource,
        kind="measured",
        tool=unchecked(Tool, name=measured.tool_name, version=tool_version),
        command=redact(command),  # no API key or token is ever stored
        server_command=redact(facts.server_command) if facts.server_command else None,
        host=unchecked(
            Host,
            gpu_sku=facts.gpu_sku or (gpu.name if gpu else cpu_gpu_sku(None)),
            gpu_count=gpu_count,
            form_factor=_form_factor(gpu),
            vllm_version=engine_version,
        ),
        started_at=measured.started_at,
        finished_at=measured.finished_at,
        submitter=submitter,
        complete=measured.complete,
    )


def _form_factor(gpu: GpuEntry | None) -> DeviceFormFactor:
    """The GPU's form factor in the catalog; `cpu` for no GPU (`--gpu cpu`)."""
    return gpu.form_factor if gpu else CPU_DEVICE_ID


def request_counts(
    completed: int | None, failed: int | None, accepted: int | None = None
) -> RequestCounts:
    """A load point's `requests`: the completed and failed, as sent their sum when both are
    known, and those `accepted` within the SLO where stated."""
    sent = completed + failed if completed is not None and failed is not None else None
    return unchecked(
        RequestCounts, sent=sent, completed=completed, failed=failed, accepted=accepted
    )


def goodput_matches_slo(stated: bool, slo_given: bool, where: str, key: str, tool: str) -> None:
    """Refuse a run whose count of good requests (`key`, `stated` or not in the file at
    `where`) and the --slo-* flags disagree: a tool counts them only under limits (its
    --goodput), which the flags must restate, and without the count which requests met the
    flags' limits is unknown."""
    if stated and not slo_given:
        raise MissingFactError(
            f"missing; {where} has {key}, so {tool} ran with --goodput: pass the same limits "
            "with --slo-ttft-ms, --slo-tpot-ms and --slo-e2e-ms",
            "--slo-ttft-ms",
        )
    if slo_given and not stated:
        raise ResultImportError(
            f"{where} has no {key} ({tool} ran without --goodput), so which requests met the "
            f"--slo-* limits is unknown; drop those flags or rerun {tool} with --goodput"
        )


def _too_few_for_percentiles(point: LoadPoint) -> LoadPoint:
    """`point` with `bench run`'s `too_few_requests` verdict first where its completed requests
    are too few for a percentile the file states (the tool's p99 of 40 requests is their
    maximum in disguise, as bench run says of its own 40)."""
    stated = {
        name
        for stats in (point.ttft_ms, point.itl_ms, point.tpot_ms, point.e2e_ms)
        if stats is not None
        for name in PERCENTILE_MIN_REQUESTS
        if getattr(stats, name) is not None
    }
    message = too_few_requests(point.requests.completed or 0, stated)
    if message is None or any(v.code == "too_few_requests" for v in point.validity):
        return point
    verdict = unchecked(Verdict, code="too_few_requests", message=message)
    return point.model_copy(update={"validity": [verdict, *point.validity]})


def _itl_per_chunk(point: LoadPoint, tool: str) -> LoadPoint:
    """`point` with an `itl_per_chunk` verdict where its itl_ms, timed per streamed chunk by
    `tool`, may not be per token: it timed fewer gaps than the tokens after each request's
    first, or does not say how many it timed."""
    itl, output, completed = point.itl_ms, point.tokens.output, point.requests.completed
    if itl is None:
        return point
    token_gaps = output - completed if output is not None and completed else None
    if itl.n is not None and token_gaps is not None and itl.n >= token_gaps:
        return point  # a token a chunk: its gaps are the tokens'
    if itl.n is not None and token_gaps is not None:
        how = (
            f": {itl.n:,} gaps for the {token_gaps:,} tokens after each request's first, so a "
            "chunk of several tokens counts once"
        )
    else:
        how = "; the file does not say how many it timed, so whether a chunk held several "
        how += "tokens is not known"
    message = f"itl_ms is {tool}'s gap per streamed chunk, not per token as bench run's{how}"
    verdict = unchecked(Verdict, code="itl_per_chunk", message=message)
    return point.model_copy(update={"validity": [*point.validity, verdict]})


def _all_accepted(point: LoadPoint) -> LoadPoint:
    """No limits declared: every completed request is accepted, by definition."""
    update = {
        "requests": point.requests.model_copy(update={"accepted": point.requests.completed}),
        "tokens": point.tokens.model_copy(update={"accepted_output": point.tokens.output}),
        "throughput": point.throughput.model_copy(
            update={"accepted_output_tokens_per_s": point.throughput.output_tokens_per_s}
        ),
    }
    return point.model_copy(update=update)
