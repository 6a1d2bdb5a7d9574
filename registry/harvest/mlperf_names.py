"""The names MLPerf Inference uses for accelerators, benchmarks, engines and precisions, and
their catalog ids and result fields.

Kept apart from the reader (`registry.harvest.mlperf`) so that a round that names a new
accelerator or benchmark is one line here.
"""

import re

ACCELERATORS: dict[str, str] = {
    "NVIDIA B200-SXM-180GB": "b200",
    "NVIDIA H200-SXM-141GB": "h200-sxm",
    "Virtualized NVIDIA H200-SXM-141GB": "h200-sxm",
    "NVIDIA H200-SXM-141GB-CTS": "h200-sxm",
    "NVIDIA H200-NVL-141GB": "h200-nvl",
    "NVIDIA H100-SXM-80GB": "h100-sxm",
    "NVIDIA H100-NVL-94GB": "h100-nvl",
    "NVIDIA H100-PCIe-80GB": "h100-pcie",
    "NVIDIA GH200 Grace Hopper Superchip 144GB": "gh200-144gb",
    "NVIDIA GH200 Grace Hopper Superchip 96GB": "gh200-96gb",
    "NVIDIA GB200": "gb200",
    "NVIDIA GB300": "gb300",
    "NVIDIA L40S": "l40s",
    "NVIDIA RTX PRO 6000 Blackwell Server Edition": "rtx-pro-6000",
    "AMD Instinct MI300X 192GB HBM3": "mi300x",
    "AMD Instinct MI300X-NPS1-SPX-192GB-750W": "mi300x",
    "AMD MI300X-NPS1-SPX-192GB-750W": "mi300x",
    "AMD Instinct MI325X 256GB HBM3e": "mi325x",
    "AMD Instinct MI355X 288GB HBM3E": "mi355x",
}
"""MLPerf's accelerator names → GPU catalog ids (exact names; anything else is skipped)."""

BENCHMARK_MODELS: dict[str, str] = {
    "llama2-70b": "llama-2-70b-chat",
    "llama3.1-8b": "llama-3.1-8b-instruct",
    "llama3.1-405b": "llama-3.1-405b-instruct",
    "mixtral-8x7b": "mixtral-8x7b-instruct-v0.1",
    "deepseek-r1": "deepseek-r1",
    # MLPerf's GPT-J is a CNN/DailyMail fine-tune of GPT-J 6B (the same shapes).
    "gptj": "gpt-j-6b",
}
"""MLPerf's LLM benchmarks (without the accuracy suffix) → model catalog ids."""

LLM_FAMILIES = ("llama", "mixtral", "deepseek", "gptj")
"""Prefixes of the LLM benchmarks; other benchmarks (ResNet, DLRM …) are not considered."""

ENGINES = (
    (re.compile(r"^vLLM[ -]([0-9][^\s,]*)", re.I), "vllm"),
    (re.compile(r"^vllm-([0-9][^\s,]*)", re.I), "vllm"),
    (re.compile(r"^TensorRT-LLM[ -]([0-9][^\s,]*)", re.I), "tensorrt-llm"),
    (re.compile(r"^TensorRT[ -]([0-9][^\s,]*)", re.I), "tensorrt"),
    (re.compile(r"^SGLang[ -]([0-9][^\s,]*)", re.I), "sglang"),
)


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
    """(engine name, version, the component that named it) from MLPerf's `Software`."""
    for component in (part.strip() for part in software.split(",")):
        for pattern, name in ENGINES:
            match = pattern.match(component)
            if match:
                return name, match.group(1), component
    return None


def precision(stated: str) -> dict[str, str]:
    """`weight_data_types` as the result's model fields: fp16/bf16 a dtype, else a quantization."""
    lowered = stated.strip().lower()
    if lowered in ("fp16", "float16"):
        return {"dtype": "float16"}
    if lowered in ("bf16", "bfloat16"):
        return {"dtype": "bfloat16"}
    return {"quantization": lowered}
