"""The names MLPerf Inference uses for accelerators, benchmarks, engines and precisions, and
their catalog ids and result fields.

Kept apart from the reader (`registry.harvest.mlperf`) so that a round that names a new
benchmark is one line here; a new accelerator name is a `source_names` line of its GPU in the
GPU catalog.
"""

import re

from infermeter.registry.harvest.reported import Precision
from infermeter.registry.harvest.sources import MLPERF

GPU_NAMES = MLPERF.gpu_names
"""The source whose names (the results table's Accelerator, exactly, e.g. `NVIDIA
H100-SXM-80GB`) the GPU catalog lists (`GpuEntry.source_names`); anything else is skipped."""

BENCHMARK_MODELS: dict[str, str] = {
    "llama2-70b": "llama-2-70b-chat",
    "llama3.1-8b": "llama-3.1-8b-instruct",
    "llama3.1-405b": "llama-3.1-405b-instruct",
    "mixtral-8x7b": "mixtral-8x7b-instruct-v0.1",
    "deepseek-r1": "deepseek-r1",
    "gpt-oss-120b": "gpt-oss-120b",
    # A vision-language benchmark (product images and text), measured in samples, not tokens.
    "qwen3-vl-235b-a22b": "qwen3-vl-235b-a22b-instruct",
    # MLPerf's GPT-J is a CNN/DailyMail fine-tune of GPT-J 6B (the same shapes).
    "gptj": "gpt-j-6b",
}
"""MLPerf's LLM benchmarks (without the accuracy suffix) → model catalog ids."""

OPEN_MODELS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"^llama3_1-70b-fp8_"), "llama-3.1-70b-instruct", "fp8"),
    (re.compile(r"^llama2-70b-fp8_"), "llama-2-70b-chat", "fp8"),
    # NeuralMagic's v4.1 runs: their FP8 checkpoint of Llama-2-7b-chat-hf.
    (re.compile(r"^neuralmagic_Llama-2-7b-chat-hf-FP8$"), "llama-2-7b-chat", "fp8"),
)
"""The open division's own models (`UsedModel`: Krai's v5.1 runs, NeuralMagic's v4.1 runs) →
(catalog id, weight format the name states); run on the benchmark's data set and accuracy
target."""


def open_model(used_model: str) -> tuple[str, str] | None:
    """(catalog id, weight format) of an open-division `UsedModel`; None: not one we file."""
    for pattern, model_id, fmt in OPEN_MODELS:
        if pattern.match(used_model):
            return model_id, fmt
    return None


INFERRED_TOKEN_BENCHMARKS = ("gptj",)
"""Benchmarks whose LoadGen log infers tokens per second from samples per second by a fixed
factor (`mlperf.conf`'s `token_latency_scaling_factor`) and states no token latencies: measured
in samples, and a Server run is bounded end to end (`target_latency`)."""

LLM_FAMILIES = ("llama", "mixtral", "deepseek", "gptj", "gpt-oss", "qwen3-vl")
"""Prefixes of the LLM benchmarks; other benchmarks (ResNet, DLRM …) are not considered."""

ENGINES = (
    (re.compile(r"^vLLM[ -]v?([0-9][^\s,]*)", re.I), "vllm"),
    (re.compile(r"^vllm-([0-9][^\s,]*)", re.I), "vllm"),
    (re.compile(r"^TensorRT-LLM[ -]([0-9a-z][^\s,]*)", re.I), "tensorrt-llm"),
    (re.compile(r"^SGLang[ -]v?([0-9][^\s,]*)", re.I), "sglang"),
)
"""Components of `Software` that name an LLM runtime and its version."""

_TENSORRT = re.compile(r"^TensorRT[ -]([0-9][^\s,]*)$", re.I)
"""NVIDIA's LLM submissions name only TensorRT: the runtime of their LLM harness is
TensorRT-LLM (its code builds TensorRT-LLM engines), whose release they do not state."""

_UNVERSIONED = (
    (re.compile(r"^Mango LLMBoost\b", re.I), "llmboost"),
    (re.compile(r"^vLLM$", re.I), "vllm"),
    (re.compile(r"^TRTLLM-[a-z]+$", re.I), "tensorrt-llm"),
)
"""Runtimes named without a version of their own (MangoBoost's LLMBoost platform; vLLM named
bare, as some v6.0 submissions do; a TensorRT-LLM build named for a part, not a release, as
NVIDIA's v6.1 Vera Rubin rows name `TRTLLM-rubin`)."""


def benchmark_family(benchmark: str) -> str:
    """`llama2-70b-99.9` → `llama2-70b`; `llama3_1-405b` → `llama3.1-405b`."""
    name = benchmark.replace("_", ".")
    return re.sub(r"-99(?:\.9)?$", "", name)


def accuracy_target(benchmark: str) -> str:
    """The workload's accuracy target: `-99` / `-99.9` of the reference, else the benchmark's."""
    suffix = re.search(r"-(99(?:\.9)?)$", benchmark)
    if suffix:
        return f"MLPerf {benchmark}: {suffix.group(1)} % of the reference implementation's accuracy"
    return f"MLPerf {benchmark}: the benchmark's accuracy target"


def parse_engine(software: str) -> tuple[str, str, str] | None:
    """(engine name, version, the component that named it) from MLPerf's `Software`.

    A runtime named with its version wins; else TensorRT alone is TensorRT-LLM of an unstated
    release (the version says which TensorRT it ran on), and a runtime named without a version
    has the version `unstated`."""
    components = [part.strip() for part in re.split(r"[,;]| \+ ", software)]
    for component in components:
        for pattern, name in ENGINES:
            match = pattern.match(component)
            if match:
                return name, match.group(1), component
    for component in components:
        tensorrt = _TENSORRT.match(component)
        if tensorrt:
            return "tensorrt-llm", f"unstated (TensorRT {tensorrt.group(1)})", component
        for pattern, name in _UNVERSIONED:
            if pattern.match(component):
                return name, "unstated", component
    return None


def precision(stated: str) -> Precision:
    """`weight_data_types` as the result's precision: fp32/fp16/bf16 a dtype, else a
    quantization."""
    # A format with a qualifier in parentheses (v6.1: `fp8 (static per-tensor PTQ, NVIDIA
    # ModelOpt)`) is the format; the conditions keep the whole string.
    lowered = re.sub(r"\s*\(.*\)$", "", stated.strip()).lower()
    if lowered in ("fp16", "float16"):
        return Precision(dtype="float16")
    if lowered in ("bf16", "bfloat16"):
        return Precision(dtype="bfloat16")
    if lowered in ("fp32", "float32"):
        return Precision(dtype="float32")
    return Precision(quantization=lowered)
