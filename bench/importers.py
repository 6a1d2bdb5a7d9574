"""Turn other tools' result files into registry results: `vllm bench serve --save-result` JSON.

A vLLM file holds the client's view of one run: load, duration, counts, throughput and latency
statistics (`mean_/median_/p<N>_<metric>_ms`; per request with `--save-detailed`). Each JSON
object in the file(s) becomes one load point (`--append-result` writes one object per line).
What the file does not say — GPU, engine version, model catalog id, serving settings, length
distributions, who ran it — comes from `ImportFacts`, i.e. the command's flags; a missing
required fact raises `MissingFactError` naming its flag. Only statistics the file states are
filled in: vLLM's p99 goes to p99, its median to p50, p100 to max; nothing is interpolated.

Errors (beside bench.errors)::

    BenchError
    └── ResultImportError      a file cannot be read or is not in the expected format (exit 1)
        └── MissingFactError   a fact the file lacks was not given; `option` names the flag
"""

import datetime as dt
import difflib
import json
import math
import re
import zoneinfo
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bench.errors import BenchError
from registry.catalog import load_gpus, load_models
from registry.errors import InvalidFileError
from registry.models import Result, ServingSettings
from registry.models.common import HF_REPO_PATTERN
from registry.store import dumps_result, result_path, with_content_id, write_text_atomic

VLLM_TOOL = "vllm-bench-serve"
_LATENCIES = {"ttft": "ttft_ms", "tpot": "tpot_ms", "itl": "itl_ms", "e2el": "e2e_ms"}
_PERCENTILES = {"50": "p50", "90": "p90", "95": "p95", "99": "p99", "100": "max"}


class ResultImportError(BenchError):
    """A file to import cannot be read or is not in the format expected."""


class MissingFactError(ResultImportError):
    """A fact the imported file lacks was not given; `option` names the flag that gives it."""


@dataclass(frozen=True)
class ImportFacts:
    """Facts about a run that the imported file does not hold; None = not given.

    gpu, gpu_count, model_id, engine_version, command, submitter, timezone, input_len and
    output_len are required; the rest are filled in where given and left out otherwise.
    """

    gpu: str | None = None
    gpu_count: int | None = None
    model_id: str | None = None
    engine_version: str | None = None
    command: str | None = None
    submitter: str | None = None
    timezone: str | None = None
    input_len: str | None = None
    output_len: str | None = None
    hf_repo: str | None = None
    revision: str | None = None
    quantization: str | None = None
    dtype: str | None = None
    kv_cache_dtype: str | None = None
    tensor_parallel_size: int | None = None
    pipeline_parallel_size: int | None = None
    max_model_len: int | None = None
    gpu_memory_utilization: float | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    enable_prefix_caching: bool | None = None
    enable_chunked_prefill: bool | None = None
    profile: str = "custom"
    dataset: str | None = None
    seed: int | None = None
    slo_ttft_ms: float | None = None
    slo_tpot_ms: float | None = None
    slo_e2e_ms: float | None = None
    server_command: str | None = None
    gpu_sku: str | None = None
    tool_version: str | None = None


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def _required(facts: ImportFacts, name: str, why: str) -> Any:
    value = getattr(facts, name)
    if value is None:
        raise MissingFactError(f"missing; {why}", _option(name))
    return value


# --- reading vLLM's files ----------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def read_vllm_objects(path: Path) -> list[dict[str, Any]]:
    """The JSON objects in one `--save-result` file (several when written by --append-result)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ResultImportError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ResultImportError(f"{path}: cannot read: {error}") from None
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    objects: list[dict[str, Any]] = []
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
        except ValueError as error:
            raise ResultImportError(f"{path}: invalid JSON: {error}") from None
        if not isinstance(value, dict) or "output_throughput" not in value:
            raise ResultImportError(
                f"{path}: not a `vllm bench serve --save-result` file "
                "(expected JSON objects with `output_throughput`)"
            )
        objects.append(value)
    if not objects:
        raise ResultImportError(f"{path}: empty file")
    return objects


def _number(run: dict[str, Any], key: str, where: str) -> float | None:
    value = run.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ResultImportError(f"{where}: {key}: expected a number, got {value!r}")
    return float(value)


def _count(run: dict[str, Any], key: str, where: str) -> int | None:
    value = run.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ResultImportError(f"{where}: {key}: expected a whole number, got {value!r}")
    return value


def _load(run: dict[str, Any], where: str) -> tuple[dict[str, Any], list[dict[str, str]]]:
    if run.get("ramp_up_strategy") is not None:
        raise ResultImportError(f"{where}: a ramp-up run has no steady load point to import")
    concurrency = _count(run, "max_concurrency", where)
    rate = run.get("request_rate")
    verdicts = []
    if rate in ("inf", None):
        if concurrency is None:
            # Every request was sent at once: as many in flight as there were prompts.
            concurrency = _count(run, "num_prompts", where)
            verdicts.append(
                {
                    "code": "all-at-once",
                    "message": f"vLLM sent all {concurrency} requests at once (request rate inf, "
                    "no max concurrency); recorded as concurrency "
                    f"{concurrency}, but in-flight requests fall as they finish",
                }
            )
        if concurrency is None:
            raise ResultImportError(f"{where}: neither max_concurrency nor num_prompts is given")
        return {"arrival": "closed", "concurrency": concurrency}, verdicts
    request_rate = _number(run, "request_rate", where)
    burstiness = _number(run, "burstiness", where)
    load: dict[str, Any] = {"arrival": "poisson", "request_rate": request_rate}
    if burstiness is not None and burstiness != 1.0:
        load |= {"arrival": "gamma", "burstiness": burstiness}
    if concurrency is not None:
        load["concurrency"] = concurrency
    return load, verdicts


def _latency(run: dict[str, Any], metric: str, n: int | None, where: str) -> dict[str, Any] | None:
    stats: dict[str, Any] = {}
    mean = _number(run, f"mean_{metric}_ms", where)
    if mean is not None:
        stats["mean"] = mean
    median = _number(run, f"median_{metric}_ms", where)
    if median is not None:
        stats["p50"] = median
    for percentile, name in _PERCENTILES.items():
        value = _number(run, f"p{percentile}_{metric}_ms", where)
        if value is not None:
            stats[name] = value
    if not stats:
        return None
    if n is not None:
        stats["n"] = n
    return stats


def _detailed_counts(run: dict[str, Any]) -> tuple[int | None, int | None, int | None]:
    """Failed requests, TPOT samples and ITL samples, from --save-detailed lists if present."""
    output_lens, itls, errors = run.get("output_lens"), run.get("itls"), run.get("errors")
    failed = sum(1 for error in errors if error) if isinstance(errors, list) else None
    if not isinstance(output_lens, list) or not isinstance(itls, list):
        return failed, None, None
    # vLLM counts TPOT over successful requests of more than one token, ITL over their gaps.
    tpot_n = sum(1 for length in output_lens if isinstance(length, int) and length > 1)
    itl_n = sum(
        len(gaps)
        for gaps, length in zip(itls, output_lens, strict=False)
        if isinstance(gaps, list) and isinstance(length, int) and length > 0
    )
    return failed, tpot_n, itl_n


def _point(run: dict[str, Any], where: str, slo_given: bool) -> dict[str, Any]:
    load, verdicts = _load(run, where)
    duration = _number(run, "duration", where)
    completed = _count(run, "completed", where)
    detailed_failed, tpot_n, itl_n = _detailed_counts(run)
    failed = _count(run, "failed", where)
    failed = detailed_failed if failed is None else failed
    output_tokens = _count(run, "total_output_tokens", where)
    output_throughput = _number(run, "output_throughput", where)
    goodput = _number(run, "request_goodput", where)
    if goodput is not None and not slo_given:
        raise MissingFactError(
            f"missing; {where} has request_goodput, so vLLM ran with --goodput: pass the same "
            "limits with --slo-ttft-ms, --slo-tpot-ms and --slo-e2e-ms",
            "--slo-ttft-ms",
        )
    if goodput is None and slo_given:
        raise ResultImportError(
            f"{where} has no request_goodput (vLLM ran without --goodput), so which requests met "
            "the --slo-* limits is unknown; drop those flags or rerun vLLM with --goodput"
        )
    requests: dict[str, Any] = {"completed": completed, "failed": failed}
    if completed is not None and failed is not None:
        requests["sent"] = completed + failed
    tokens: dict[str, Any] = {
        "input": _count(run, "total_input_tokens", where),
        "output": output_tokens,
    }
    throughput: dict[str, Any] = {
        "requests_per_s": _number(run, "request_throughput", where),
        "output_tokens_per_s": output_throughput,
        "total_tokens_per_s": _number(run, "total_token_throughput", where),
    }
    if slo_given and goodput is not None and duration is not None:
        # vLLM stores good requests / duration; the count itself is a whole number.
        requests["accepted"] = round(goodput * duration)
    elif not slo_given:
        # No limits declared: every completed request is accepted, by definition.
        requests["accepted"] = completed
        tokens["accepted_output"] = output_tokens
        throughput["accepted_output_tokens_per_s"] = output_throughput
    point: dict[str, Any] = {
        "load": load,
        "duration_s": duration,
        "requests": requests,
        "tokens": tokens,
        "throughput": throughput,
        "validity": verdicts,
    }
    if completed:
        samples = {"ttft": completed, "e2el": completed, "tpot": tpot_n, "itl": itl_n}
        for metric, field in _LATENCIES.items():
            point[field] = _latency(run, metric, samples[metric], where)
    return point


# --- facts from flags --------------------------------------------------------------------------


def parse_length(spec: str, option: str) -> dict[str, Any]:
    """`N`, `fixed:N`, `uniform:LO:HI`, `normal:MEAN:STD`, `dataset` or `dataset:MAX`."""
    parts = spec.strip().split(":")
    expected = "N, fixed:N, uniform:LO:HI, normal:MEAN:STD, dataset or dataset:MAX"
    try:
        if len(parts) == 1 and parts[0] != "dataset":
            return {"kind": "fixed", "value": int(parts[0])}
        kind, numbers = parts[0], parts[1:]
        if kind == "fixed" and len(numbers) == 1:
            return {"kind": "fixed", "value": int(numbers[0])}
        if kind == "uniform" and len(numbers) == 2:
            return {"kind": "uniform", "min": int(numbers[0]), "max": int(numbers[1])}
        if kind == "normal" and len(numbers) == 2:
            return {"kind": "normal", "mean": float(numbers[0]), "stddev": float(numbers[1])}
        if kind == "dataset" and len(numbers) <= 1:
            return {"kind": "dataset", **({"max": int(numbers[0])} if numbers else {})}
    except ValueError:
        pass
    raise ResultImportError(f"{spec!r} is not a length; expected {expected}", option)


def _timezone(name: str) -> dt.tzinfo:
    match = re.fullmatch(r"([+-])(\d{2}):(\d{2})", name)
    if match:
        sign = 1 if match.group(1) == "+" else -1
        offset = dt.timedelta(hours=int(match.group(2)), minutes=int(match.group(3)))
        return dt.timezone(sign * offset)
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ResultImportError(
            f"{name!r} is not a time zone; expected a name like UTC or Europe/Paris, "
            "or an offset like +02:00",
            "--timezone",
        ) from None


def _window(runs: Sequence[tuple[str, dict[str, Any]]], zone: dt.tzinfo) -> tuple[str, str]:
    starts, ends = [], []
    for where, run in runs:
        stamp, duration = run.get("date"), _number(run, "duration", where)
        try:
            end = dt.datetime.strptime(str(stamp), "%Y%m%d-%H%M%S").replace(tzinfo=zone)
        except ValueError:
            raise ResultImportError(
                f"{where}: date: expected vLLM's YYYYMMDD-HHMMSS, got {stamp!r}"
            ) from None
        ends.append(end)
        # vLLM takes `date` after the run: the run started `duration` seconds before.
        starts.append(end - dt.timedelta(seconds=duration or 0.0))
    return (
        min(starts).astimezone(dt.UTC).isoformat().replace("+00:00", "Z"),
        max(ends).astimezone(dt.UTC).isoformat().replace("+00:00", "Z"),
    )


def _same(runs: Sequence[tuple[str, dict[str, Any]]], key: str) -> Any:
    values = {json.dumps(run.get(key)) for _, run in runs}
    if len(values) > 1:
        raise ResultImportError(
            f"the files disagree on {key} ({', '.join(sorted(values))}): one result is one "
            "deployment; import them separately"
        )
    return runs[0][1].get(key)


def _catalog_id(kind: str, wanted: str, known: Sequence[str], option: str) -> None:
    if wanted not in known:
        close = difflib.get_close_matches(wanted, known, n=3, cutoff=0.4)
        hint = f"; closest: {', '.join(close)}" if close else ""
        raise ResultImportError(f"unknown {kind} id {wanted!r}{hint}", option)


def import_vllm_bench_serve(files: Sequence[Path], facts: ImportFacts) -> Result:
    """One result from one or more `vllm bench serve --save-result` files; a point per run."""
    runs = [
        (f"{path}" if len(objects) == 1 else f"{path} (run {number})", run)
        for path in files
        for objects in [read_vllm_objects(path)]
        for number, run in enumerate(objects, start=1)
    ]
    served_model = _same(runs, "model_id")
    backend = _same(runs, "backend") or _same(runs, "endpoint_type")

    gpu_id = _required(facts, "gpu", "the GPU catalog id, e.g. --gpu h100-sxm")
    gpu_count = _required(facts, "gpu_count", "how many GPUs served the model")
    model_id = _required(facts, "model_id", "the model catalog id, e.g. llama-3.1-8b-instruct")
    engine_version = _required(facts, "engine_version", "the vLLM version of the server")
    gpus = load_gpus()
    _catalog_id("GPU", gpu_id, sorted(gpus), "--gpu")
    _catalog_id("model", model_id, sorted(load_models()), "--model-id")
    hf_repo = facts.hf_repo
    if hf_repo is None and isinstance(served_model, str):
        hf_repo = served_model if re.fullmatch(HF_REPO_PATTERN, served_model) else None
    if hf_repo is None:
        raise MissingFactError(
            f"missing; the file's model_id {served_model!r} is not a Hugging Face repository",
            "--hf-repo",
        )
    input_len = parse_length(
        _required(facts, "input_len", "the prompt length distribution, e.g. 1024"), "--input-len"
    )
    output_len = parse_length(
        _required(facts, "output_len", "the output length distribution, e.g. 128"), "--output-len"
    )
    command = _required(facts, "command", "the exact `vllm bench serve …` command line")
    submitter = _required(facts, "submitter", "your GitHub user name")
    zone = _timezone(
        _required(facts, "timezone", "vLLM's `date` is local time of the benchmark host")
    )
    started_at, finished_at = _window(runs, zone)
    slo = {
        "ttft_ms": facts.slo_ttft_ms,
        "tpot_ms": facts.slo_tpot_ms,
        "e2e_ms": facts.slo_e2e_ms,
    }
    slo_given = any(value is not None for value in slo.values())
    gpu = gpus[gpu_id]
    data = {
        "schema_version": 1,
        "id": "0" * 12,
        "identity": {
            "gpu": {"id": gpu_id, "count": gpu_count, "form_factor": gpu.form_factor},
            "engine": {"name": "vllm", "version": engine_version},
            "model": {
                "id": model_id,
                "hf_repo": hf_repo,
                "revision": facts.revision,
                "quantization": facts.quantization,
                "dtype": facts.dtype,
                "kv_cache_dtype": facts.kv_cache_dtype,
            },
            "serving": {name: getattr(facts, name) for name in ServingSettings.model_fields},
            "workload": {
                "profile": facts.profile,
                "input_len": input_len,
                "output_len": output_len,
                "dataset": facts.dataset,
                "seed": facts.seed,
                "api": {"openai": "completions", "vllm": "completions", "openai-chat": "chat"}.get(
                    str(backend)
                ),
            },
        },
        "slo": slo,
        "points": [_point(run, where, slo_given) for where, run in runs],
        "source": {
            "kind": "measured",
            "tool": {"name": VLLM_TOOL, "version": facts.tool_version or engine_version},
            "command": command,
            "server_command": facts.server_command,
            "host": {
                "gpu_sku": facts.gpu_sku or gpu.name,
                "gpu_count": gpu_count,
                "form_factor": gpu.form_factor,
                "vllm_version": engine_version,
            },
            "started_at": started_at,
            "finished_at": finished_at,
            "submitter": submitter,
            "complete": True,
        },
    }
    try:
        result = Result.model_validate(data)
    except ValidationError as error:
        problems = InvalidFileError.from_validation_error("imported result", error, data).problems
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ResultImportError(f"{problems[0]}{more}") from None
    return with_content_id(result)


@dataclass(frozen=True)
class ImportConfig:
    """What `infermeter bench import` was asked to do."""

    files: tuple[Path, ...]
    facts: ImportFacts
    output: Path | None = None


def import_result(config: ImportConfig) -> tuple[Result, Path]:
    """Import the files and write the result (default: its canonical file name, here)."""
    result = import_vllm_bench_serve(config.files, config.facts)
    output = config.output or Path(result_path(result).name)
    if output.is_dir():
        output = output / result_path(result).name
    try:
        write_text_atomic(output, dumps_result(result))
    except OSError as error:
        raise ResultImportError(f"{output}: cannot write: {error.strerror}", "--output") from None
    return result, output
