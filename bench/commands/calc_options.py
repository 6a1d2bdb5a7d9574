"""What the `infermeter calc …` commands share: the option bounds, library errors as
one-line CLI errors, `--json` printing, and vLLM's engine options (`engine_options`)."""

import functools
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, cast

import click

import calculators.api as api
from bench.commands.oneline import FiniteFloatRange, UsageLine
from calculators.all2all import MODELLED_BACKENDS as ALL2ALL_CHOICES
from calculators.errors import CalculatorError, InputError
from calculators.kv_cache import KV_CACHE_DTYPES
from calculators.limits import MAX_TOKENS
from calculators.quantization import QUANTIZATION_CHOICES
from calculators.vllm_plan import DEFAULT_VLLM_VERSION
from registry.errors import RegistryError

F = TypeVar("F", bound=Callable[..., Any])

# Bounded where the calculators' own bounds (`calculators.limits`) would name the option less
# plainly; every float finite.
POSITIVE_INT = click.IntRange(min=1, max=MAX_TOKENS)
POSITIVE_FLOAT = FiniteFloatRange(min=0, min_open=True)
FRACTION = FiniteFloatRange(min=0, max=1, min_open=True)


@contextmanager
def library_errors() -> Iterator[None]:
    """Library errors become one-line CLI errors: bad numbers exit 2, bad files or ids exit 1."""
    try:
        yield
    except InputError as error:
        raise UsageLine(str(error)) from None
    except (CalculatorError, RegistryError) as error:
        raise click.ClickException(str(error)) from None


def print_json(payload: dict[str, Any]) -> None:
    click.echo(json.dumps(payload, indent=2, sort_keys=False))


def engine_options(function: F) -> F:
    """vLLM's own option names, shared by `calc vram` and `calc fit`: the command receives them
    as one `engine: api.EngineRequest`."""

    @functools.wraps(function)
    def with_engine(**given: Any) -> Any:
        engine = _engine_request(**{name: given.pop(name) for name in _ENGINE_OPTION_NAMES})
        return function(engine=engine, **given)

    for option in reversed(_ENGINE_OPTIONS):
        with_engine = option(with_engine)
    return cast(F, with_engine)


def _vllm_version(context: click.Context, parameter: click.Parameter, value: str) -> str:
    """A release such as 0.11 or 0.10.1.1 (not '', nor a number such as 0.9e9)."""
    from calculators.errors import InputError
    from calculators.vllm_settings import parse_version

    try:
        parse_version(value)
    except InputError:
        raise click.BadParameter(
            f"expected a vLLM release such as 0.11 or 0.10.1.1, got {value[:40]!r}"
        ) from None
    return value


# What `engine_options` adds, as click names the parameters.
# vLLM's own option names, as `engine_options` gives them to a command.
_ENGINE_OPTIONS = [
    click.option(
        "--quantization",
        type=click.Choice(QUANTIZATION_CHOICES),
        help="Weight format; default: the checkpoint's quantization_config.",
    ),
    click.option(
        "--kv-cache-dtype",
        type=click.Choice(KV_CACHE_DTYPES),
        default="auto",
        show_default=True,
        help="KV cache element type.",
    ),
    click.option(
        "--dtype",
        type=click.Choice(["auto", "bfloat16", "float16", "float32"]),
        default="auto",
        show_default=True,
        help="Model dtype.",
    ),
    click.option(
        "--gpu-memory-utilization",
        type=FRACTION,
        default=None,
        help="Fraction of GPU memory vLLM may use [default: 0.9; 0.92 from 0.20].",
    ),
    click.option("--max-num-seqs", type=POSITIVE_INT, help="vLLM's default for the GPU."),
    click.option(
        "--max-num-batched-tokens",
        type=POSITIVE_INT,
        help="vLLM's default for the GPU (2048, 8192 or 16384).",
    ),
    click.option("--enforce-eager", is_flag=True, help="No CUDA graphs."),
    click.option(
        "--vllm-version",
        default=DEFAULT_VLLM_VERSION,
        show_default=True,
        callback=_vllm_version,
        help="Model the plan of this vLLM release.",
    ),
    click.option(
        "--data-parallel-size",
        "-dp",
        type=POSITIVE_INT,
        default=1,
        show_default=True,
        help="Replicas: multiplies the GPUs and the deployment's concurrency.",
    ),
    click.option(
        "--enable-expert-parallel",
        is_flag=True,
        help="Spread a mixture of experts' routed experts whole over the TP x DP ranks.",
    ),
    click.option(
        "--memory-profiler-estimate-cudagraphs",
        type=click.Choice(["0", "1"]),
        help="vLLM's VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS: 1 takes the CUDA graph "
        "estimate off the KV budget [default: the release's, 1 from 0.20].",
    ),
    click.option(
        "--all2all-backend",
        type=click.Choice(ALL2ALL_CHOICES),
        help="vLLM's all-to-all under data + expert parallelism; DeepEP's buffers come off "
        "the KV cache [default: the release's, allgather_reducescatter from 0.11].",
    ),
    click.option(
        "--max-cudagraph-capture-size",
        type=POSITIVE_INT,
        help="Largest batch size vLLM captures a CUDA graph for [default: min(2 x "
        "max-num-seqs, 512)].",
    ),
    click.option(
        "--cuda-graph-sizes",
        help="vLLM's --cuda-graph-sizes: one largest size, or the capture list ('1 2 4 8').",
    ),
    click.option(
        "--compilation-config",
        "-O",
        help="vLLM's compilation config as JSON; its cudagraph_capture_sizes and "
        "max_cudagraph_capture_size are read, other keys are named as not modelled.",
    ),
]

_ENGINE_OPTION_NAMES = (
    "quantization",
    "kv_cache_dtype",
    "dtype",
    "gpu_memory_utilization",
    "max_num_seqs",
    "max_num_batched_tokens",
    "enforce_eager",
    "vllm_version",
    "data_parallel_size",
    "enable_expert_parallel",
    "memory_profiler_estimate_cudagraphs",
    "all2all_backend",
    "max_cudagraph_capture_size",
    "cuda_graph_sizes",
    "compilation_config",
)


def _engine_request(
    *,
    quantization: str | None,
    kv_cache_dtype: str,
    dtype: str,
    gpu_memory_utilization: float | None,
    max_num_seqs: int | None,
    max_num_batched_tokens: int | None,
    enforce_eager: bool,
    vllm_version: str,
    data_parallel_size: int,
    enable_expert_parallel: bool,
    memory_profiler_estimate_cudagraphs: str | None,
    all2all_backend: str | None,
    max_cudagraph_capture_size: int | None,
    cuda_graph_sizes: str | None,
    compilation_config: str | None,
) -> api.EngineRequest:
    """The engine options of `engine_options` as the calculators' request."""
    return api.EngineRequest(
        quantization=quantization,
        kv_cache_dtype=kv_cache_dtype,
        dtype=dtype,
        gpu_memory_utilization=gpu_memory_utilization,
        max_num_seqs=max_num_seqs,
        max_num_batched_tokens=max_num_batched_tokens,
        enforce_eager=enforce_eager,
        vllm_version=vllm_version,
        data_parallel_size=data_parallel_size,
        enable_expert_parallel=enable_expert_parallel,
        estimate_cudagraphs=None
        if memory_profiler_estimate_cudagraphs is None
        else memory_profiler_estimate_cudagraphs == "1",
        all2all_backend=all2all_backend,
        max_cudagraph_capture_size=max_cudagraph_capture_size,
        cuda_graph_sizes=cuda_graph_sizes,
        compilation_config=compilation_config,
    )
