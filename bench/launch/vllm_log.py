"""What a vLLM startup log says: the startup figures, or why the start failed.

`parse_startup_log` reads vLLM's own lines, whose texts differ by version:
- weights: "Model loading took X GiB" (V1), "Loading model weights took X GB" (V0), "model
  weights take X GiB" (V0's memory profile table), "weights memory: XGiB" (V1's DEBUG memory
  profile line);
- KV cache memory: "Available KV cache memory: X GiB" (negative when the weights and
  activations leave nothing), "kv_cache_size=XGiB", "available_kv_cache_memory XGiB" and "the
  rest of the memory reserved for KV Cache is XGiB" (V0),
  "Current kv cache memory in use is X GiB" (0.2x);
- "GPU KV cache size: N tokens", "Maximum concurrency for N tokens per request: X.XXx" (one line
  or two), "Graph capturing finished in N secs, took X GiB" or the memory summary's "X GiB for
  CUDAGraph memory" (0.2x);
- the CPU build's: "CPU KV cache size: N tokens, Maximum concurrency …" (one line), "Explicitly
  set (X/Y) GiB for KV cache" (VLLM_CPU_KVCACHE_SPACE or --kv-cache-memory-bytes) or "Auto set
  (X/Y) GiB for KV cache …, Z GiB memory was consumed by non-kv usages" (X the KV cache, Y the
  NUMA node's memory), and the loader's "Checkpoint size: X GiB" (the files on disk).
Every rank of a tensor- or pipeline-parallel server logs its own memory lines, in any order.
vLLM sizes the one KV cache of all ranks by the smallest (it gives every worker the minimum
number of blocks), so KV memory, KV tokens and concurrency are the minimum over the lines;
weights and CUDA graph memory, which differ between pipeline stages, are the largest (the GPU
that is fullest).

`diagnose_startup_failure` turns the errors vLLM and its libraries print for the common failed
starts into one line that says what to change; the texts are the ones in vLLM's source and in
users' logs (see tests/data/vllm_startup_failures.yaml).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class StartupFigures:
    """What vLLM logged while starting (None where the log does not say); see the module
    docstring for which rank's figure each one is."""

    weights_gib: float | None = None
    available_kv_cache_gib: float | None = None
    kv_cache_tokens: int | None = None
    max_concurrency: float | None = None
    max_concurrency_tokens: int | None = None
    cuda_graph_gib: float | None = None
    startup_s: float | None = None
    block_size: int | None = None
    checkpoint_gib: float | None = None
    non_kv_gib: float | None = None  # the CPU worker's "memory was consumed by non-kv usages"

    def filled_from(self, other: StartupFigures | None) -> StartupFigures:
        """These figures, each one missing here taken from `other` (e.g. the log's figures
        completed by `vllm:cache_config_info`'s)."""
        if other is None:
            return self
        mine, theirs = self.__dict__, other.__dict__
        return StartupFigures(
            **{name: mine[name] if mine[name] is not None else theirs[name] for name in mine}
        )


_NUMBER = r"([0-9][0-9,]*(?:\.[0-9]+)?)"
_SIGNED = r"(-?[0-9][0-9,]*(?:\.[0-9]+)?)"
_WEIGHTS = (
    re.compile(rf"(?:Model loading|Loading model weights) took {_NUMBER} Gi?B"),
    re.compile(rf"model weights take\s+{_NUMBER}\s*GiB"),
    re.compile(rf"; weights memory: {_NUMBER}\s*GiB"),
)
_CPU_KV = re.compile(rf"(?:Explicitly|Auto) set \({_NUMBER}/{_NUMBER}\) GiB for KV cache")
_AVAILABLE_KV = (
    re.compile(rf"Available KV cache memory: {_SIGNED} GiB"),
    re.compile(rf"\bkv_cache_size={_SIGNED}\s*GiB"),
    re.compile(rf"available_kv_cache_memory\s+{_SIGNED}\s*GiB"),
    re.compile(rf"the rest of the memory reserved for KV Cache is {_SIGNED}\s*GiB"),
    re.compile(rf"Current kv cache memory in use is {_SIGNED} GiB"),
    _CPU_KV,  # vLLM's CPU worker: (KV cache GiB / the node's memory GiB)
    # V1's refusal when one request at max_model_len does not fit states the memory too
    re.compile(rf"larger than the available KV cache memory \({_SIGNED} GiB\)"),
)
_NON_KV = re.compile(rf"{_NUMBER} GiB memory was consumed by non-kv usages")
_CHECKPOINT = re.compile(rf"Checkpoint size: {_NUMBER} GiB")
# "GPU KV cache size: N tokens", or on the CPU "CPU KV cache size: N tokens, Maximum …"
_KV_TOKENS = (re.compile(rf"KV cache size: {_NUMBER} tokens"),)
_CONCURRENCY = re.compile(rf"Maximum concurrency for {_NUMBER} tokens per request: {_NUMBER}x")
_GRAPH = (
    re.compile(rf"Graph capturing finished in {_NUMBER} secs?, took {_NUMBER} GiB"),
    # the empty group puts the figure in group 2, as in the line above
    re.compile(rf"(){_NUMBER} GiB for CUDAGraph memory"),
)

_KV_TOO_SMALL = re.compile(
    rf"\({_NUMBER} GiB KV cache is needed, which is larger than the available KV cache "
    rf"memory \({_SIGNED} GiB\)\. Based on the available memory, the estimated maximum model "
    r"length is ([0-9]+)"
)
_ESTIMATED_LEN = re.compile(r"estimated maximum model length is ([0-9]+)")
_V0_KV_TOO_SMALL = re.compile(
    r"max seq len \(([0-9]+)\) is larger than the maximum number of tokens that can be stored "
    r"in KV cache \(([0-9]+)\)"
)
_FREE_MEMORY = re.compile(
    rf"free memory on device (?:\S+ )?\({_NUMBER}/{_NUMBER} GiB\) on startup is less than "
    rf"desired GPU memory utilization \({_NUMBER}, {_NUMBER} GiB\)",
    re.IGNORECASE,
)
_LONGER_THAN_DERIVED = re.compile(
    r"User-specified max_model_len \(([0-9]+)\) is greater than the derived max_model_len "
    r"\(([^)]*)\)"
)
_NODE_KV = re.compile(
    rf"Available memory on node ([0-9]+) \({_NUMBER}/{_NUMBER} GiB\) on kv cache allocation is "
    rf"less than requested memory for kv \({_SIGNED}(?:/{_NUMBER})? GiB\)"
)
_NODE_UTILIZATION = re.compile(
    rf"Available memory on node ([0-9]+) \({_NUMBER}/{_NUMBER} GiB\) on startup is less than "
    rf"desired CPU memory utilization \({_NUMBER}, {_NUMBER} GiB\)"
)
_ARCHITECTURES = re.compile(r"Model architectures? (\[[^\]]*\]) (?:are|is) not supported")
_HF_URL = re.compile(r"https://huggingface\.co/(?:api/models/)?([\w./-]+)")
_INVALID_REPO = re.compile(r"Invalid repository ID or local directory specified: '([^']+)'")


def _to_float(text: str) -> float:
    return float(text.replace(",", ""))


def _all(patterns: tuple[re.Pattern[str], ...], text: str, group: int = 1) -> list[float]:
    return [_to_float(m.group(group)) for pattern in patterns for m in pattern.finditer(text)]


def _smallest(values: list[float]) -> float | None:
    return min(values) if values else None


def _largest(values: list[float]) -> float | None:
    return max(values) if values else None


def parse_startup_log(text: str) -> StartupFigures:
    """The startup figures in a vLLM log (see the module docstring for multi-rank logs)."""
    kv_tokens = _smallest(_all(_KV_TOKENS, text))
    concurrency = [
        (_to_float(m.group(2)), int(_to_float(m.group(1)))) for m in _CONCURRENCY.finditer(text)
    ]
    lowest = min(concurrency) if concurrency else None
    return StartupFigures(
        weights_gib=_largest(_all(_WEIGHTS, text)),
        available_kv_cache_gib=_smallest(_all(_AVAILABLE_KV, text)),
        kv_cache_tokens=int(kv_tokens) if kv_tokens is not None else None,
        max_concurrency=lowest[0] if lowest else None,
        max_concurrency_tokens=lowest[1] if lowest else None,
        cuda_graph_gib=_largest(_all(_GRAPH, text, 2)),
        checkpoint_gib=_largest(_all((_CHECKPOINT,), text)),
        non_kv_gib=_largest(_all((_NON_KV,), text)),
    )


_RAISE = "raise --gpu-memory-utilization, quantize, or use more GPUs (--tensor-parallel-size)"


def on_cpu(text: str) -> bool:
    """True when the log is a CPU build's (vLLM's CPU worker or platform logged)."""
    return "cpu_worker.py" in text or "CPU KV cache size" in text or "[cpu.py:" in text


_CPU_KV_KNOB = "VLLM_CPU_KVCACHE_SPACE (GiB) or --kv-cache-memory-bytes"


def _cpu_memory_cause(text: str) -> str | None:
    """The memory failures of vLLM's CPU worker (cpu_worker.py): its KV cache is host memory."""
    if match := _NODE_KV.search(text):
        node, free, total, wanted = match.group(1), *(match.group(i) for i in (2, 3, 4))
        return (
            f"the KV cache asked for {_to_float(wanted):g} GiB of host memory but only "
            f"{_to_float(free):g} of {_to_float(total):g} GiB is free on NUMA node {node}: "
            f"lower {_CPU_KV_KNOB}, or free memory"
        )
    if match := _NODE_UTILIZATION.search(text):
        node, free, total, fraction, wanted = match.groups()
        return (
            f"only {_to_float(free):g} of {_to_float(total):g} GiB of host memory is free on "
            f"NUMA node {node}, less than the {_to_float(wanted):g} GiB --gpu-memory-utilization "
            f"{_to_float(fraction):g} reserves on the CPU: set {_CPU_KV_KNOB}, or lower "
            "--gpu-memory-utilization"
        )
    return None


def _memory_cause(text: str) -> str | None:
    if cause := _cpu_memory_cause(text):
        return cause
    raise_knob = f"raise {_CPU_KV_KNOB}" if on_cpu(text) else "raise --gpu-memory-utilization"
    if match := _KV_TOO_SMALL.search(text):
        needed, available, estimate = match.groups()
        return (
            f"--max-model-len needs {_to_float(needed):g} GiB of KV cache but "
            f"{_to_float(available):g} GiB is available; vLLM estimates the maximum model "
            f"length at {int(estimate):,} tokens: lower --max-model-len to it or below, or "
            f"{raise_knob}"
        )
    if match := _ESTIMATED_LEN.search(text):
        return (
            "--max-model-len is larger than the KV cache can hold: vLLM estimates the "
            f"maximum model length at {int(match.group(1)):,} tokens; lower --max-model-len "
            f"or {raise_knob}"
        )
    if match := _V0_KV_TOO_SMALL.search(text):
        return (
            f"--max-model-len ({int(match.group(1)):,}) is larger than the KV cache can hold "
            f"({int(match.group(2)):,} tokens); lower --max-model-len or raise "
            "--gpu-memory-utilization"
        )
    if match := _FREE_MEMORY.search(text):
        free, total, fraction, wanted = (_to_float(group) for group in match.groups())
        return (
            f"only {free:g} of {total:g} GiB of GPU memory is free, less than the {wanted:g} GiB "
            f"--gpu-memory-utilization {fraction:g} asks for: another process holds the GPU "
            "(see nvidia-smi), or lower --gpu-memory-utilization"
        )
    negative = [value for value in _all(_AVAILABLE_KV, text) if value <= 0]
    if "No available memory for the cache blocks" in text or negative:
        shown = f" (vLLM: {min(negative):g} GiB available for it)" if negative else ""
        if on_cpu(text):
            return (
                f"the KV cache has no room for one block{shown}: {raise_knob} (on the CPU they "
                "size the cache, not --gpu-memory-utilization)"
            )
        return f"no GPU memory is left for the KV cache after loading the model{shown}; {_RAISE}"
    if "CUDA out of memory" in text or "OutOfMemoryError" in text:
        return (
            "the GPU ran out of memory (CUDA out of memory) while starting; lower "
            "--gpu-memory-utilization, --max-model-len or --max-num-seqs, quantize, or use "
            "more GPUs (--tensor-parallel-size)"
        )
    if "CUDA error: out of memory" in text or "Cuda failure 'out of memory'" in text:
        return (
            "CUDA could not allocate GPU memory (CUDA error: out of memory) while starting: "
            "another process may hold the GPU (see nvidia-smi); lower --gpu-memory-utilization"
        )
    return None


def _repository_cause(text: str) -> str | None:
    gated = (
        "GatedRepoError" in text
        or "Cannot access gated repo" in text
        or "You are trying to access a gated repo" in text
    )
    missing = "RepositoryNotFoundError" in text or "Repository Not Found for url" in text
    if not (gated or missing):
        if match := _INVALID_REPO.search(text):
            return (
                f"the model {match.group(1)!r} is neither a Hugging Face repository nor a local "
                "folder with a config.json; check --model"
            )
        return None
    url = _HF_URL.search(text)
    repo = ""
    if url:
        path = re.split(r"/resolve/|/revision/", url.group(1))[0].rstrip(".")
        repo = f" {path}"
    if gated:
        return (
            f"the Hugging Face repository{repo} is gated (HTTP 401/403): accept its licence on "
            "huggingface.co and log in (huggingface-cli login, or set HF_TOKEN)"
        )
    return (
        f"the Hugging Face repository{repo} was not found (or is private): check --model, or "
        "log in (HF_TOKEN) if it is private"
    )


def _setup_cause(text: str) -> str | None:
    """Failures of the command line or of the installation, before any memory is sized."""
    if match := _LONGER_THAN_DERIVED.search(text):
        wanted, derived = match.groups()
        return (
            f"--max-model-len {int(wanted):,} is longer than the model allows ({derived}): "
            "lower --max-model-len (VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 overrides it, at the risk "
            "of wrong output)"
        )
    if "No package metadata was found for vllm" in text:
        return (
            "the `vllm` command cannot find a distribution named vllm (PackageNotFoundError): "
            "the installed build has another name (vllm-cpu); run it through a launcher that "
            "maps vLLM's version lookup (tests/bench/vllm_cpu_launcher.py) with "
            "--vllm-executable, or add a vllm dist-info alias"
        )
    return None


def diagnose_startup_failure(text: str, port: int | None = None) -> str | None:
    """The cause of a failed start, when the log shows one vLLM is known to print; found
    anywhere in the log (vLLM prints the root cause far above its last line)."""
    if cause := _setup_cause(text):
        return cause
    if cause := _memory_cause(text):
        return cause
    if cause := _repository_cause(text):
        return cause
    if "Failed to infer device type" in text:
        return (
            "vLLM found no GPU platform (Failed to infer device type): no NVIDIA driver or GPU "
            "is visible to it (check nvidia-smi and CUDA_VISIBLE_DEVICES), or this vLLM build "
            "does not match the machine"
        )
    if "address already in use" in text.lower():
        where = f"port {port}" if port is not None else "the port"
        return f"{where} is already in use; pass a free --port"
    if match := _ARCHITECTURES.search(text):
        return f"unsupported model: vLLM does not support the architecture {match.group(1)}"
    if "does not recognize this architecture" in text:
        return "unsupported model: Transformers does not recognize its architecture"
    return None
