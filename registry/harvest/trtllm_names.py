"""The names TensorRT-LLM's performance overview uses for GPUs, models and precisions, and what
they stand for (catalog ids, numeric formats); and one value of its tables under those names.

Kept apart from the readers (`registry.harvest.trtllm`, `trtllm_grid`) so that a new version of
the page that names a new model is one line here; a new GPU name is a `source_names` line of its
GPU in the GPU catalog.
"""

from dataclasses import dataclass

from infermeter.registry.harvest.reported import Precision
from infermeter.registry.harvest.sources import TRTLLM

GPU_NAMES = TRTLLM.gpu_names
"""The source whose GPU names (every layout's: `B200`, `H100 80GB HBM3`, `B300* (beta)`, the RTX
PRO 6000 tables' label) the GPU catalog lists (`GpuEntry.source_names`)."""

PRECISIONS = {
    "FP8": Precision(quantization="fp8", kv_cache_dtype="fp8"),
    "FP16": Precision(dtype="float16"),
}
"""What the static and the 0.14-era tables' precision names stand for: FP8 (weights and KV cache
in FP8) and FP16."""

RTX_SUFFIX = " - RTX 6000 Pro Blackwell Server Edition"

MODELS: dict[str, tuple[str, dict[str, str | None]]] = {
    "Deepseek R1 0528": (
        "deepseek-r1",
        {"FP4": "nvidia/DeepSeek-R1-0528-NVFP4-v2", "FP8": "deepseek-ai/DeepSeek-R1-0528"},
    ),
    "GPT-OSS 120B": ("gpt-oss-120b", {}),
    "GPT-OSS 20B": ("gpt-oss-20b", {}),
    "LLaMA v3.3 70B": (
        "llama-3.3-70b-instruct",
        {"FP4": "nvidia/Llama-3.3-70B-Instruct-FP4", "FP8": "nvidia/Llama-3.3-70B-Instruct-FP8"},
    ),
    "LLaMA v4 Maverick": (
        "llama-4-maverick-17b-128e-instruct",
        {
            "FP4": "nvidia/Llama-4-Maverick-17B-128E-Instruct-NVFP4",
            "FP8": "nvidia/Llama-4-Maverick-17B-128E-Instruct-FP8",
        },
    ),
    "Qwen3 235B A22B": (
        "qwen3-235b-a22b",
        {"FP4": "nvidia/Qwen3-235B-A22B-FP4", "FP8": "nvidia/Qwen3-235B-A22B-FP8"},
    ),
    "Qwen3 30B A3B": ("qwen3-30b-a3b", {"FP4": "nvidia/Qwen3-30B-A3B-FP4"}),
    # The `####` headings of the 1.0 layout and of the 0.19/0.20 grids (`trtllm_grid`).
    "Llama 4 Scout": ("llama-4-scout-17b-16e-instruct", {"FP4": None, "FP8": None}),
    "Llama 3.3 70B": (
        "llama-3.3-70b-instruct",
        {"FP4": "nvidia/Llama-3.3-70B-Instruct-FP4", "FP8": "nvidia/Llama-3.3-70B-Instruct-FP8"},
    ),
    "Qwen3-235B-A22B": (
        "qwen3-235b-a22b",
        {"FP4": "nvidia/Qwen3-235B-A22B-FP4", "FP8": "nvidia/Qwen3-235B-A22B-FP8"},
    ),
    "Qwen3-30B-A3B": ("qwen3-30b-a3b", {"FP4": "nvidia/Qwen3-30B-A3B-FP4"}),
    "Llama 4 Maverick": (
        "llama-4-maverick-17b-128e-instruct",
        {"FP4": None, "FP8": "nvidia/Llama-4-Maverick-17B-128E-Instruct-FP8"},
    ),
    "Llama 3.1 405B": (
        "llama-3.1-405b-instruct",
        {"FP4": "nvidia/Llama-3.1-405B-Instruct-FP4", "FP8": "nvidia/Llama-3.1-405B-Instruct-FP8"},
    ),
    "Llama 3.1 8B": ("llama-3.1-8b-instruct", {"FP8": "nvidia/Llama-3.1-8B-Instruct-FP8"}),
}
"""Table headings → (model catalog id, the checkpoint per precision the page's model lists
name). A checkpoint is used only where the page read lists it; None (or one the page does not
list): the page names none, the result is filed under the catalog's repository and says so; a
precision absent: the catalog's repository is the checkpoint (gpt-oss, published by OpenAI)."""

TOTAL_METRIC = "The reported metric is `Total Output Throughput (tokens/sec)`"
"""The 1.0 layout's one statement of its unit: every table is the deployment's total."""
RTX_LABEL = RTX_SUFFIX.removeprefix(" - ")


@dataclass(frozen=True)
class TableCell:
    """One value of a performance table, under the names the page prints: model, precision, GPU,
    tensor parallel size, input and output length, and the value as printed. The 0.1x single
    table (`trtllm_legacy`), the 0.19/0.20 grids (`trtllm_grid`) and the 0.5–0.9 static batches
    (`trtllm_static`, which add the release and the batch size) read their values into it."""

    model: str
    precision: str
    gpu: str
    tensor_parallel: int
    input_len: int
    output_len: int
    printed: str
