"""From `RunOptions` to what runs: the `SessionConfig` that `bench.session.session.run_session` runs
(`config`, every option checked, bounds included) and the equivalent single
`bench run` command line a run's provenance records (`command_line`).
"""

from __future__ import annotations

import json
import os
import shlex
import urllib.parse
from pathlib import Path

from infermeter.bench.errors import BenchConfigError
from infermeter.bench.launch.parallel_fit import check_parallel_fit
from infermeter.bench.launch.server import ServerConfig
from infermeter.bench.plan.options import RunOptions
from infermeter.bench.run.config import MULTITURN, RunConfig
from infermeter.bench.run.search import SearchSpec
from infermeter.bench.session.config import SessionConfig
from infermeter.bench.session.session import DEFAULT_OUTPUT
from infermeter.bench.workloads.lengths import LengthDistribution
from infermeter.calculators.fields import same_named
from infermeter.registry.models import Slo
from infermeter.registry.plain_text import unsafe_character
from infermeter.registry.store import beside

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
MAX_POINTS = 1_000  # load points of one run (a sweep of hundreds is already days of GPU time)


def _magnitude(count: int) -> str:
    """A count too large to show whole, as `1e+20` (a 400-digit one too, which no float holds)."""
    digits = str(count)
    return f"{count:.3g}" if len(digits) < 300 else f"{digits[0]}e+{len(digits) - 1}"


def _check_bounds(options: RunOptions) -> None:
    """Refuse loads no client host can run, before anything starts."""
    for name, values in (("--concurrency", options.concurrency),
                         ("--request-rate", options.request_rate)):  # fmt: skip
        if len(values) > MAX_POINTS:
            raise BenchConfigError(f"{len(values):,} load points; at most {MAX_POINTS:,}", name)
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


def _check_words(options: RunOptions) -> None:
    """Refuse a NUL in a value that becomes a word of a command line (the `bench run`, the
    `vllm serve`, a rendered Job's): no command line can hold one (execve ends each word at
    it), so vLLM would not start, and a rendered file would run something else. Only a plan
    file gives one; a command line cannot. Refuse too, before anything is sent, what the
    result would refuse after the run: a character no published string may hold
    (`registry.plain_text`: an ESC, U+2028) in any value, since the result records the command
    line, and a file named with a line break, since it names the file (a dataset's, a trace's)
    in a field of one line."""
    for name in RunOptions.model_fields:
        value = getattr(options, name)
        words = value if isinstance(value, tuple) else (value,)
        for word in words:
            problem = _word_problem(word)
            if problem is not None:
                raise BenchConfigError(problem, _option(name))


def _word_problem(word: object) -> str | None:
    if not isinstance(word, str | Path):
        return None
    text = str(word)
    if "\0" in text:
        return "holds a NUL character, which no command-line word can hold"
    character = unsafe_character(text)
    if character is not None:
        return (
            f"holds the character U+{ord(character):04X}, which no result may hold (it "
            "records the command line)"
        )
    if isinstance(word, Path) and "\n" in word.name:
        return "names a file whose name holds a line break; the result names it on one line"
    return None


def _api_key(options: RunOptions) -> str | None:
    """The key the server wants (`_given_api_key`), refused when it is no header value: an HTTP
    header is one line (a key with a line break reached the client, which refused it as a
    'header injection attack' blamed on --endpoint)."""
    key = _given_api_key(options)
    if key is not None and not key.isprintable():
        raise BenchConfigError(
            "the key holds a control character or a line break, and it is sent as one HTTP "
            "header line (the key of --api-key, $OPENAI_API_KEY or a launched vLLM's own)",
            "--api-key",
        )
    return key


def _given_api_key(options: RunOptions) -> str | None:
    """The key the server wants: --api-key, else the key a launched vLLM is given
    (`--vllm-arg "--api-key K"`), else $OPENAI_API_KEY; none for an --endpoint URL that carries
    its own credentials (`user:password@`: HTTP cannot send both)."""
    if options.endpoint is not None and "@" in urllib.parse.urlsplit(options.endpoint).netloc:
        if options.api_key:
            raise BenchConfigError(
                "the --endpoint URL carries its own credentials (user:password@); give one or "
                "the other",
                "--api-key",
            )
        return None
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
    _check_launch_or_endpoint(options)
    _check_conflicts(options)
    _check_bounds(options)
    _check_words(options)
    if options.endpoint is None and options.model is not None:
        check_parallel_fit(options)  # before vLLM spends minutes finding out
    output = options.output
    result_path = output if output is not None or options.endpoint is not None else DEFAULT_OUTPUT
    server = None
    if options.endpoint is None and options.model is not None:
        server = _server_config(options, options.model, result_path or DEFAULT_OUTPUT)
    return SessionConfig(options, _run_config(options), command, server, result_path)


def _check_launch_or_endpoint(options: RunOptions) -> None:
    """A model to launch or an endpoint, and no option of the other kind of run."""
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
    if options.nodes is not None and options.endpoint is None:
        raise BenchConfigError(
            "only applies with --endpoint (a launched vLLM's nodes are read from the Ray "
            "cluster of --ray-address)",
            "--nodes",
        )


def _check_conflicts(options: RunOptions) -> None:
    """Options that cannot go together, or that are given twice."""
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
    if options.dataset is not None:
        _check_dataset_keeps_its_own(options)


def _check_dataset_keeps_its_own(options: RunOptions) -> None:
    """Options a --dataset's prompts (a chat-multiturn run's conversations: also their turns
    and replies) would pass over without a word."""
    synthesised = [
        (options.shared_prefix_tokens or None, "--shared-prefix-tokens"),
        (options.input_len, "--input-len"),
    ]
    if options.profile == MULTITURN:
        synthesised += [(options.output_len, "--output-len"), (options.turns, "--turns")]
    for value, option in synthesised:
        if value is not None:
            raise BenchConfigError(
                "applies to synthesised prompts, not to a --dataset's, which keep their own "
                "lengths" + (" and turns" if options.profile == MULTITURN else ""),
                option,
            )


def _server_config(options: RunOptions, model: str, log_base: Path) -> ServerConfig:
    """The vLLM that `bench run` launches, its log beside the result."""
    return same_named(
        ServerConfig,
        dict(options),
        model=model,
        log_path=beside(log_base, ".vllm.log"),
        executable=options.vllm_executable,
        extra_args=options.vllm_args,
        startup_timeout_s=options.startup_timeout,
    )


def _run_config(options: RunOptions) -> RunConfig:
    """The load points, workload and client the options ask for."""
    return same_named(
        RunConfig,
        dict(options),
        endpoint=options.endpoint or "",
        request_rates=options.request_rate,
        duration_s=options.duration,
        warmup_requests=options.warmup,
        timeout_s=options.timeout,
        slo=_slo(options),
        api_key=_api_key(options),
        search=_search(options),
        think_time_s=options.think_time,
    )


def _slo(options: RunOptions) -> Slo:
    """The latency limits a request must meet to be accepted, as the --slo-* options give them."""
    return Slo(ttft_ms=options.slo_ttft_ms, tpot_ms=options.slo_tpot_ms, e2e_ms=options.slo_e2e_ms)


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
        slo=_slo(options),
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
