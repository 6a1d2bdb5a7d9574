"""vLLM's memory plan at startup, per GPU: weights, profiling peak, KV cache, concurrency.

This follows what vLLM's V1 engine does when it starts (`gpu_worker.determine_available_memory`
and `kv_cache_utils`):

    requested  = total GPU memory (as the driver reports it) × gpu_memory_utilization
    available  = requested − weights − activation peak of the profiling run − non-torch memory
                 (− CUDA graph memory, which vLLM >= 0.20 estimates before allocating the KV cache)
    num_blocks = available // (block_size × bytes per token per layer) // layers per group
    concurrency at max_model_len = num_blocks / blocks one request needs

The activation peak, non-torch memory and CUDA graph memory are estimates: vLLM measures them,
we approximate them from the architecture (see `activation_peak_bytes`). Weights and the KV cache
layout are exact up to allocator rounding. Behaviour that changed across vLLM releases is chosen
by `vllm_version`.
"""

import math
import re
from dataclasses import dataclass, field
from typing import Any

from calculators.arch import ModelArch
from calculators.errors import InputError
from calculators.kv_cache import KVCacheShape, kv_cache_shape
from calculators.limits import (
    MAX_CONCURRENCY,
    MAX_GPU_MEMORY_BYTES,
    MAX_GPUS,
    MAX_TOKENS,
    bounded_int,
)
from calculators.parallel import ParallelLayout, moe_tokens, sharded_weight_bytes
from calculators.quantization import WeightBytes, model_dtype_bytes, weight_format

GIB = 1024**3
MIB = 1024**2
BLOCK_SIZE = 16
DEFAULT_VLLM_VERSION = "0.19"
# 0.11, v0.10.1.1, 0.11.0rc1, 0.9.1+cu121, 0.10.2.dev45
_VERSION = re.compile(r"v?(\d{1,4})\.(\d{1,4})[0-9A-Za-z.+-]{0,40}")

# Where each overhead term comes from in vLLM's own code (vllm-project/vllm):
#   - activation peak: `Worker.determine_available_memory` runs `GPUModelRunner.profile_run` inside
#     `memory_profiling` and takes `torch_peak_increase` (vllm/v1/worker/gpu_worker.py at 35d5cda1);
#     `GPUModelRunner.profile_run` (vllm/v1/worker/gpu_model_runner.py, indexed at 4e179065) is one
#     `_dummy_run` of max_num_batched_tokens, then, if `get_pp_group().is_last_rank`,
#     `_dummy_sampler_run` with max_num_seqs rows of full-vocabulary logits: the other pipeline
#     ranks peak at the forward pass alone (`forward_peak_bytes`). In early V1 (gpu_worker.py at
#     0012cf69) the sampler warm-up ran only after the KV cache was sized. vLLM sizes every rank's
#     KV cache by the smallest rank's free memory.
#   - non-torch memory: `non_torch_increase` of the same profile (cuBLAS/attention workspaces; NCCL
#     buffers of the first collective under tensor parallelism).
#   - CUDA graphs: captured after the KV cache is allocated, outside gpu_memory_utilization, until
#     the release that subtracts vLLM's own estimate first (CUDA_GRAPHS_IN_BUDGET_SINCE): from
#     vLLM PR 30515 on, `determine_available_memory` runs `profile_cudagraph_memory` and takes the
#     estimate off the KV budget when VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS is set. vllm/envs.py
#     defaults that flag to "0" in v0.19.1 (release build b1388b1fb) and to "1" from v0.20.0
#     (b8160878f) on: v0.22.0 (0b3ba88f1), v0.30.0 (ced6857af), v0.31.0 (db9527a46) and v0.33.0
#     (4ba787ec9) still subtract it (gpu_worker.py `cudagraph_memory_estimate_applied`). The log
#     line says "default since v0.21.0", but the v0.20.0 release already defaults it on.
# The sizes below are estimates set from the "fit" cases of tests/data/vllm_startup_logs.yaml only;
# the accuracy tests hold each one to the logged term (activation peak, non-torch, CUDA graphs).

# Bytes per logit the sampler's dummy run holds at its peak: vLLM 0.19's PyTorch top-k/top-p sampler
# (FlashInfer's is opt-in there) peaks at 15.2-15.5 bytes per logit in the fit logs (Llama-3.1-8B
# 1.89 GiB, Qwen2.5-7B 2.21 GiB at 1024 sequences): fp32 logits, the sort's values and int64
# indices, softmax and cumulative sum, over bf16 logits already freed.
SAMPLER_BYTES_PER_LOGIT = 15
# The dummy forward pass peaks ~35 % above the tensors `forward_peak_bytes` counts (allocator
# blocks, torch.compile buffers, the rank's own input and intermediate-tensor buffers): fitted to
# the pipeline ranks that run no sampler (Llama-3.1-8B on 2 and 4 H100s, 1.05-1.10 GiB).
FORWARD_PEAK_FACTOR = 1.35
# Memory outside PyTorch's allocator that the profiling run adds (cuBLAS and attention
# workspaces); tensor parallelism adds the custom all-reduce and NCCL buffers.
NON_TORCH_BYTES = 256 * MIB
NON_TORCH_TP_BYTES = 128 * MIB
# On NVSwitch systems (Hopper and Blackwell SXM) NCCL's NVLink SHARP buffers add ~1.75 GiB per rank
# under tensor parallelism: 2.06-2.21 GiB logged on 2-4 H100 SXM (vLLM 0.19; 3.58 vs 1.79 GiB in
# V0, PR 10511) against 0.25-0.4 GiB on A100 (no NVLS).
NON_TORCH_NVLS_BYTES = 1792 * MIB
NVLS_GPUS = ("h100-sxm", "h200-sxm", "b200", "gb200", "b300", "gb300")
# CUDA graphs: captured for ~51-67 batch sizes; memory grows with the number of layers. From 0.11
# vLLM captures FULL and PIECEWISE graphs by default, about twice the PIECEWISE-only memory: the
# fit logs of 0.19 (one H100, dense: 28 layers 0.87 GiB, 32 layers 0.87-0.91, 40 layers 1.07) give
# ~400 MiB plus ~17 MiB per layer.
CUDA_GRAPH_BASE_BYTES = 256 * MIB
CUDA_GRAPH_PER_LAYER_BYTES = 8 * MIB
CUDA_GRAPH_FULL_BASE_BYTES = 400 * MIB
CUDA_GRAPH_FULL_PER_LAYER_BYTES = 17 * MIB
CUDA_GRAPH_FULL_SINCE = (0, 11)
CUDA_GRAPHS_IN_BUDGET_SINCE = (0, 20)
# Terms of the plan that vLLM measures at startup and the calculators can only estimate; every
# plan names them (`estimated_terms`) so no reader takes them for exact.
ESTIMATED_TERMS = (
    "activation_peak_bytes",
    "forward_peak_bytes",
    "non_torch_bytes",
    "cuda_graph_bytes",
)


@dataclass(frozen=True)
class VllmSettings:
    """The `vllm serve` options that shape the memory plan. None means vLLM's default."""

    gpu_memory_bytes: int
    gpu_memory_utilization: float | None = None
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    data_parallel_size: int = 1  # replicas: more GPUs, the same plan per GPU
    enable_expert_parallel: bool = False  # routed experts spread whole over TP x DP ranks
    max_model_len: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    kv_cache_dtype: str | None = None
    quantization: str | None = None
    dtype: str | None = None
    enforce_eager: bool = False
    block_size: int = BLOCK_SIZE
    gpu_name: str = ""
    vllm_version: str = DEFAULT_VLLM_VERSION
    # VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS: None is the release's default (on from 0.20).
    estimate_cudagraphs: bool | None = None


@dataclass(frozen=True)
class VllmPlan:
    """The memory plan of one GPU (the most loaded one under parallelism)."""

    settings: VllmSettings
    vllm_version: tuple[int, int]
    weight_format: str
    gpu_memory_utilization: float
    max_model_len: int
    max_num_seqs: int
    max_num_batched_tokens: int
    requested_bytes: int
    weights_bytes: int
    weights_by_role: dict[str, int]
    activation_peak_bytes: int
    forward_peak_bytes: int  # the peak of a pipeline rank that runs no sampler
    non_torch_bytes: int
    cuda_graph_bytes: int
    cuda_graph_in_budget: bool
    kv_cache_bytes: int
    kv_cache_bytes_per_token: int
    kv_cache_bytes_per_token_per_layer: int
    kv_cache_groups: int
    state_bytes_per_sequence: int  # Mamba / linear-attention state of one sequence, all layers
    block_size: int
    num_blocks: int
    kv_cache_tokens: int
    max_concurrency: float
    request_bytes_at_max_model_len: int
    fits: bool
    largest_max_model_len: int
    error: str | None
    notes: list[str] = field(default_factory=list)
    estimated_terms: tuple[str, ...] = ESTIMATED_TERMS

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values; bytes as integers."""
        return {
            "vllm_version": f"{self.vllm_version[0]}.{self.vllm_version[1]}",
            "weight_format": self.weight_format,
            "gpu_memory_bytes": self.settings.gpu_memory_bytes,
            "gpu_memory_utilization": self.gpu_memory_utilization,
            "tensor_parallel_size": self.settings.tensor_parallel_size,
            "pipeline_parallel_size": self.settings.pipeline_parallel_size,
            "data_parallel_size": self.settings.data_parallel_size,
            "expert_parallel_size": _layout(self.settings).expert_parallel_size,
            "gpus": _layout(self.settings).gpus,
            "deployment_max_concurrency": round(
                self.max_concurrency * self.settings.data_parallel_size, 4
            ),
            "max_model_len": self.max_model_len,
            "max_num_seqs": self.max_num_seqs,
            "max_num_batched_tokens": self.max_num_batched_tokens,
            "requested_bytes": self.requested_bytes,
            "weights_bytes": self.weights_bytes,
            "weights_by_role": dict(self.weights_by_role),
            "activation_peak_bytes": self.activation_peak_bytes,
            "forward_peak_bytes": self.forward_peak_bytes,
            "non_torch_bytes": self.non_torch_bytes,
            "cuda_graph_bytes": self.cuda_graph_bytes,
            "cuda_graph_in_budget": self.cuda_graph_in_budget,
            "kv_cache_bytes": self.kv_cache_bytes,
            "kv_cache_bytes_per_token": self.kv_cache_bytes_per_token,
            "kv_cache_bytes_per_token_per_layer": self.kv_cache_bytes_per_token_per_layer,
            "kv_cache_groups": self.kv_cache_groups,
            "state_bytes_per_sequence": self.state_bytes_per_sequence,
            "block_size": self.block_size,
            "num_blocks": self.num_blocks,
            "kv_cache_tokens": self.kv_cache_tokens,
            "max_concurrency": round(self.max_concurrency, 4),
            "request_bytes_at_max_model_len": self.request_bytes_at_max_model_len,
            "fits": self.fits,
            "largest_max_model_len": self.largest_max_model_len,
            "error": self.error,
            "notes": list(self.notes),
            "estimated_terms": list(self.estimated_terms),
        }


def _layout(settings: VllmSettings) -> ParallelLayout:
    return ParallelLayout(
        settings.tensor_parallel_size,
        settings.pipeline_parallel_size,
        settings.data_parallel_size,
        settings.enable_expert_parallel,
    )


def parse_version(text: str) -> tuple[int, int]:
    """'0.10.1.1' → (0, 10). Development builds count as the release they precede."""
    match = _VERSION.fullmatch(text.strip())
    if match is None:
        raise InputError(f"vllm_version: expected a version such as 0.11, got {text[:40]!r}")
    return int(match.group(1)), int(match.group(2))


def default_max_model_len(arch: ModelArch) -> int:
    """vLLM's default max_model_len: the config's position limit, stretched by RoPE scaling."""
    length = arch.max_position_embeddings or 2048
    scaling = arch.rope_scaling or {}
    rope_type = str(scaling.get("rope_type") or scaling.get("type") or "")
    factor = scaling.get("factor")
    if not isinstance(factor, int | float) or isinstance(factor, bool) or factor <= 0:
        return length
    if rope_type in ("", "su", "longrope", "llama3", "default", "mrope"):
        return length
    if arch.model_type.startswith("gemma3"):
        return length
    original = scaling.get("original_max_position_embeddings")
    if rope_type == "yarn" and isinstance(original, int) and original > 0:
        return int(original * factor)
    return int(length * factor)


def _batch_defaults(settings: VllmSettings, version: tuple[int, int]) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) defaults of `vllm serve` for this GPU."""
    memory = settings.gpu_memory_bytes
    is_a100 = "a100" in settings.gpu_name.lower() and version >= (0, 9)
    if version >= (0, 28) and memory >= 160 * GIB:
        return 16384, 1024
    if memory >= 70 * GIB and not is_a100:
        return 8192, 1024
    return 2048, 256


def _forward_tensor_bytes(arch: ModelArch, tokens: int, tp: int, dp: int = 1) -> int:
    """Peak of PyTorch memory in the profiling run's dummy forward pass, above the weights.

    The pass runs `tokens` (max_num_batched_tokens) through the model without the attention
    kernel, so the widest MLP or MoE layer, plus the residual stream, sets the peak. Under data
    parallelism the MoE layers see the tokens of all `dp` ranks (`calculators.parallel`).
    """
    element = 2
    hidden = arch.hidden_size
    residual = 2 * tokens * hidden * element
    forward = 0
    if arch.intermediate_size:
        width = arch.intermediate_size // tp
        forward = tokens * 3 * width * element
    moe = arch.moe
    if moe is not None:
        chunk = min(moe_tokens(tokens, ParallelLayout(data_parallel_size=dp)), 32768)
        expert_width = moe.expert_intermediate_size // tp
        routed = chunk * moe.experts_per_token * (max(2 * expert_width, hidden) + expert_width)
        shared = tokens * 3 * (moe.shared_intermediate_size // tp)
        router_logits = tokens * moe.num_experts * 4
        forward = max(forward, routed * element + shared * element + router_logits)
    return forward + residual


def forward_peak_bytes(arch: ModelArch, tokens: int, tp: int, dp: int = 1) -> int:
    """Peak of PyTorch memory in the profiling run's dummy forward pass, above the weights: the
    tensors `_forward_tensor_bytes` counts, times the fitted FORWARD_PEAK_FACTOR. This is the whole
    activation peak of a pipeline rank that does not sample."""
    return int(_forward_tensor_bytes(arch, tokens, tp, dp) * FORWARD_PEAK_FACTOR)


def sampler_peak_bytes(arch: ModelArch, sequences: int) -> int:
    """Peak of the dummy sampler run: `sequences` (max_num_seqs) rows of full-vocabulary logits."""
    return sequences * arch.vocab_size * SAMPLER_BYTES_PER_LOGIT


def activation_peak_bytes(
    arch: ModelArch, tokens: int, sequences: int, tp: int, dp: int = 1
) -> int:
    """Peak of PyTorch memory during vLLM's profiling run, above the weights: the dummy forward
    pass and the dummy sampler run one after the other, so the larger of the two."""
    return max(forward_peak_bytes(arch, tokens, tp, dp), sampler_peak_bytes(arch, sequences))


def cuda_graph_bytes(
    arch: ModelArch, enforce_eager: bool, version: tuple[int, int] = (0, 10), pp: int = 1
) -> int:
    """Rough size of the CUDA graphs vLLM captures on one rank (none with --enforce-eager)."""
    if enforce_eager:
        return 0
    layers = math.ceil(arch.num_layers / pp)
    if version >= CUDA_GRAPH_FULL_SINCE:
        return CUDA_GRAPH_FULL_BASE_BYTES + CUDA_GRAPH_FULL_PER_LAYER_BYTES * layers
    return CUDA_GRAPH_BASE_BYTES + CUDA_GRAPH_PER_LAYER_BYTES * layers


def cuda_graphs_in_budget(settings: VllmSettings, version: tuple[int, int]) -> bool:
    """Whether vLLM takes its CUDA graph estimate off the KV budget: when
    VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS is on, its default from 0.20 (see the sources above),
    and never with --enforce-eager (no graphs)."""
    if settings.enforce_eager:
        return False
    if settings.estimate_cudagraphs is not None:
        return settings.estimate_cudagraphs
    return version >= CUDA_GRAPHS_IN_BUDGET_SINCE


def non_torch_bytes(settings: VllmSettings) -> int:
    """Memory outside PyTorch's allocator that the profiling run adds on one rank."""
    non_torch = NON_TORCH_BYTES
    # Only tensor parallelism all-reduces; pipeline stages send and receive (0.07 GiB logged on
    # each of 2 and 4 pipeline ranks, vLLM 0.19).
    if settings.tensor_parallel_size > 1:
        non_torch += NON_TORCH_TP_BYTES
    if settings.tensor_parallel_size > 1 and settings.gpu_name.lower() in NVLS_GPUS:
        non_torch += NON_TORCH_NVLS_BYTES
    return non_torch


@dataclass(frozen=True)
class _Groups:
    """vLLM's KV cache groups: layers of one attention kind, `size` layers per group."""

    full: int
    sliding: int
    size: int
    state: int = 0  # groups of Mamba / Gated DeltaNet layers: one page per request each


def _group_size(counts: list[int]) -> int:
    """vLLM's `_get_kv_cache_groups_uniform_page_size`: the smallest kind sets the group size,
    unless the largest has fewer than 1.5x as many layers (then the largest, with padding)."""
    smallest, largest = min(counts), max(counts)
    return largest if largest < smallest * 1.5 else smallest


def _kv_groups(kv: KVCacheShape, pp: int) -> _Groups:
    full = math.ceil(kv.full_layers / pp)
    sliding = math.ceil(kv.sliding_layers / pp)
    state = math.ceil(kv.state_layers / pp)
    counts = [count for count in (full, sliding, state) if count]
    if len(counts) > 1:
        size = _group_size(counts)
        return _Groups(
            math.ceil(full / size), math.ceil(sliding / size), size, math.ceil(state / size)
        )
    return _Groups(1 if full else 0, 1 if sliding else 0, full + sliding + state, 1 if state else 0)


def hybrid_block_size(kv: KVCacheShape, block_size: int) -> int:
    """The attention block size vLLM picks for a model with state layers: the smallest multiple
    of `block_size` whose page (all KV of one layer) holds one sequence's state of one layer
    (`HybridAttentionMambaModelConfig.verify_and_update_config`)."""
    if not kv.state_layers or not kv.bytes_per_token_per_layer:
        return block_size
    per_block = block_size * kv.bytes_per_token_per_layer
    return block_size * max(1, math.ceil(kv.state_bytes_per_sequence_per_layer / per_block))


def _request_blocks(
    groups: _Groups, kv: KVCacheShape, max_len: int, batched_tokens: int, block: int
) -> int:
    """Blocks one request of `max_len` tokens takes across all groups."""
    blocks = groups.full * math.ceil(max_len / block) + groups.state
    if groups.sliding and kv.sliding_window is not None:
        span = min(kv.sliding_window - 1 + batched_tokens, max_len)
        blocks += groups.sliding * (math.ceil(span / block) + 1)
    return blocks


def _fits_length(
    available: int,
    groups: _Groups,
    page: int,
    kv: KVCacheShape,
    length: int,
    batched: int,
    block: int,
) -> bool:
    return _request_blocks(groups, kv, length, batched, block) * groups.size * page <= available


def _largest_length(
    available: int,
    groups: _Groups,
    page: int,
    kv: KVCacheShape,
    limit: int,
    batched: int,
    block: int,
) -> int:
    """Binary search, as vLLM's estimate_max_model_len does, for the longest request that fits."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if _fits_length(available, groups, page, kv, middle, batched, block):
            low = middle
        else:
            high = middle - 1
    return low


def _format_gib(value: int, version: tuple[int, int]) -> str:
    gib = value / GIB
    return str(round(gib, 2)) if version >= (0, 18) else f"{gib:.2f}"


def _refusal(
    version: tuple[int, int], max_len: int, needed: int, available: int, largest: int
) -> str:
    """The error text vLLM raises when one request at max_model_len does not fit."""
    model = "model's" if version >= (0, 27) else "models's"
    estimate = (
        f" Based on the available memory, the estimated maximum model length is {largest}."
        if largest > 0
        else ""
    )
    return (
        f"To serve at least one request with the {model} max seq len ({max_len}), "
        f"({_format_gib(needed, version)} GiB KV cache is needed, which is larger than the "
        f"available KV cache memory ({_format_gib(available, version)} GiB).{estimate} "
        "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
        "initializing the engine."
    )


def _check_settings(settings: VllmSettings) -> None:
    if settings.gpu_memory_bytes <= 0:
        raise InputError(
            f"gpu_memory_bytes: expected a number > 0, got {settings.gpu_memory_bytes}"
        )
    utilization = settings.gpu_memory_utilization
    if utilization is not None and not 0 < utilization <= 1:
        raise InputError(
            f"gpu_memory_utilization: expected a fraction in (0, 1], got {utilization}"
        )
    for name in (
        "tensor_parallel_size",
        "pipeline_parallel_size",
        "data_parallel_size",
        "block_size",
    ):
        if getattr(settings, name) < 1:
            raise InputError(f"{name}: expected an integer >= 1, got {getattr(settings, name)}")
    for name in ("max_model_len", "max_num_seqs", "max_num_batched_tokens"):
        value = getattr(settings, name)
        if value is not None and value < 1:
            raise InputError(f"{name}: expected an integer >= 1, got {value}")
    check_settings_bounds(settings)


def check_settings_bounds(settings: VllmSettings) -> None:
    """Refuse settings no deployment has (`calculators.limits`): the answers stay finite."""
    bounded_int("gpu_memory_bytes", settings.gpu_memory_bytes, 1, MAX_GPU_MEMORY_BYTES)
    bounded_int("tensor_parallel_size", settings.tensor_parallel_size, 1, MAX_GPUS)
    bounded_int("pipeline_parallel_size", settings.pipeline_parallel_size, 1, MAX_GPUS)
    bounded_int("data_parallel_size", settings.data_parallel_size, 1, MAX_GPUS)
    gpus = _layout(settings).gpus
    bounded_int(
        "tensor_parallel_size x pipeline_parallel_size x data_parallel_size", gpus, 1, MAX_GPUS
    )
    bounded_int("block_size", settings.block_size, 1, 1 << 20)
    for name, high in (
        ("max_model_len", MAX_TOKENS),
        ("max_num_batched_tokens", MAX_TOKENS),
        ("max_num_seqs", MAX_CONCURRENCY),
    ):
        value = getattr(settings, name)
        if value is not None:
            bounded_int(name, value, 1, high)


def check_tensor_parallel(arch: ModelArch, tensor_parallel_size: int) -> None:
    """vLLM's own rule: the attention heads split evenly, and the KV heads split evenly or are
    replicated whole (MLA has no KV heads to split)."""
    tp = tensor_parallel_size
    if arch.num_attention_heads % tp:
        raise InputError(
            f"tensor_parallel_size: {tp} does not divide the model's "
            f"{arch.num_attention_heads} attention heads"
        )
    kv_heads = arch.num_kv_heads
    if arch.mla is None and kv_heads % tp and tp % kv_heads:
        raise InputError(
            f"tensor_parallel_size: {tp} neither divides nor is a multiple of the model's "
            f"{kv_heads} KV heads"
        )


def plan_weights(arch: ModelArch, settings: VllmSettings) -> WeightBytes:
    """Weights on the most loaded GPU: tensor parallel shards (routed experts whole under expert
    parallelism, `calculators.parallel`), pipeline stages of layers. Data parallel replicas
    change nothing per GPU."""
    fmt = weight_format(arch, settings.quantization, settings.dtype)
    weights = sharded_weight_bytes(arch, fmt, _layout(settings))
    pp = settings.pipeline_parallel_size
    if pp == 1:
        return weights
    # Layers are spread over the stages; the first stage also holds the embedding and the last
    # the lm_head, so the heavier of the two bounds the plan.
    by_role = {
        role: (size if role in ("embedding", "lm_head") else math.ceil(size / pp))
        for role, size in weights.by_role.items()
    }
    lighter_end = min(by_role["embedding"], by_role["lm_head"])
    by_role["lm_head" if by_role["lm_head"] == lighter_end else "embedding"] = 0
    return WeightBytes(weights.format, by_role, weights.rotary_cache_bytes)


def plan_vllm(arch: ModelArch, settings: VllmSettings) -> VllmPlan:
    """The memory plan vLLM makes at startup for `arch` with `settings`, per GPU."""
    _check_settings(settings)
    check_tensor_parallel(arch, settings.tensor_parallel_size)
    if settings.pipeline_parallel_size > arch.num_layers:
        raise InputError(
            f"pipeline_parallel_size: {settings.pipeline_parallel_size} stages for the model's "
            f"{arch.num_layers} layers; every stage needs at least one layer"
        )
    version = parse_version(settings.vllm_version)
    notes: list[str] = []
    tp = settings.tensor_parallel_size
    utilization = settings.gpu_memory_utilization
    if utilization is None:
        utilization = 0.92 if version >= (0, 20) else 0.9
    derived_len = default_max_model_len(arch)
    max_len = settings.max_model_len or derived_len
    if max_len > derived_len:
        notes.append(
            f"max_model_len {max_len} exceeds the model's {derived_len}; vLLM refuses this "
            "unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"
        )
    default_tokens, default_seqs = _batch_defaults(settings, version)
    batched = settings.max_num_batched_tokens or default_tokens
    seqs = settings.max_num_seqs or min(default_seqs, batched)

    weights = plan_weights(arch, settings)
    dtype_bytes = model_dtype_bytes(arch, settings.dtype)
    kv = kv_cache_shape(arch, settings.kv_cache_dtype, tp, dtype_bytes)
    dp = settings.data_parallel_size
    activation = activation_peak_bytes(arch, batched, min(seqs, batched), tp, dp)
    forward = forward_peak_bytes(arch, batched, tp, dp)
    non_torch = non_torch_bytes(settings)
    graphs = cuda_graph_bytes(
        arch, settings.enforce_eager, version, settings.pipeline_parallel_size
    )
    graphs_in_budget = cuda_graphs_in_budget(settings, version)
    requested = int(settings.gpu_memory_bytes * utilization)
    available = (
        requested - weights.total - activation - non_torch - (graphs if graphs_in_budget else 0)
    )

    groups = _kv_groups(kv, settings.pipeline_parallel_size)
    block = hybrid_block_size(kv, settings.block_size)
    page = max(block * kv.bytes_per_token_per_layer, kv.state_bytes_per_sequence_per_layer)
    num_blocks = max(0, available) // page // groups.size if groups.size else 0
    request_blocks = _request_blocks(groups, kv, max_len, batched, block)
    concurrency = num_blocks / request_blocks if request_blocks else 0.0
    group_count = groups.full + groups.sliding + groups.state
    if version >= (0, 21):
        tokens = int(concurrency * max_len)
    else:
        tokens = num_blocks // max(1, group_count) * block
    needed = request_blocks * groups.size * page
    largest = _largest_length(max(0, available), groups, page, kv, max_len, batched, block)
    error: str | None = None
    if available <= 0:
        error = (
            "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
            "when initializing the engine."
        )
        largest = 0
    elif needed > available:
        error = _refusal(version, max_len, needed, available, largest)
    if arch.num_chunked_layers:
        notes.append(
            f"{arch.num_chunked_layers} chunked-attention layers are counted as full attention: "
            "vLLM turns its hybrid KV cache manager off for them unless "
            "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1"
        )
    if settings.enable_expert_parallel and arch.moe is None:
        notes.append("enable_expert_parallel changes nothing: the model has no routed experts")
    if _layout(settings).expert_parallel_size > 1:
        notes.append(
            "expert parallelism's all-to-all buffers are not counted (non-torch memory is the "
            "tensor-parallel estimate)"
        )
    if arch.mtp_layers:
        notes.append(
            f"the checkpoint ships {arch.mtp_layers} multi-token-prediction layer(s) that vLLM "
            "loads only for speculative decoding; they are not counted"
        )
    if not graphs_in_budget and graphs:
        notes.append(
            "CUDA graphs are captured after the KV cache is allocated: they need "
            f"{_format_gib(graphs, version)} GiB of the memory left outside gpu_memory_utilization"
        )
    return VllmPlan(
        settings=settings,
        vllm_version=version,
        weight_format=weights.format.description,
        gpu_memory_utilization=utilization,
        max_model_len=max_len,
        max_num_seqs=seqs,
        max_num_batched_tokens=batched,
        requested_bytes=requested,
        weights_bytes=weights.total,
        weights_by_role=dict(weights.by_role),
        activation_peak_bytes=activation,
        forward_peak_bytes=forward,
        non_torch_bytes=non_torch,
        cuda_graph_bytes=graphs,
        cuda_graph_in_budget=graphs_in_budget,
        kv_cache_bytes=max(0, available),
        kv_cache_bytes_per_token=kv.bytes_per_token_per_layer
        * math.ceil((kv.full_layers + kv.sliding_layers) / settings.pipeline_parallel_size),
        state_bytes_per_sequence=kv.state_bytes_per_sequence_per_layer
        * math.ceil(kv.state_layers / settings.pipeline_parallel_size),
        block_size=block,
        kv_cache_bytes_per_token_per_layer=kv.bytes_per_token_per_layer,
        kv_cache_groups=group_count,
        num_blocks=num_blocks,
        kv_cache_tokens=tokens,
        max_concurrency=concurrency,
        request_bytes_at_max_model_len=needed,
        fits=error is None,
        largest_max_model_len=largest,
        error=error,
        notes=notes,
        estimated_terms=ESTIMATED_TERMS
        + (("kv_cache_bytes_per_token_per_layer",) if arch.indexer is not None else ()),
    )


# What CUDA (and so vLLM) reports as total memory is 0.4-0.75 GiB less than nvidia-smi's total in
# public vLLM logs: H100 SXM 81559 MiB → 79.22 GiB, RTX 3090 24576 MiB → 23.58 GiB, A100 80GB
# 81920 MiB → ~79.26 GiB.
DRIVER_RESERVED_BYTES = 512 * MIB


def gpu_total_bytes(reported_mib: int | None, marketed_gb: float) -> int:
    """Total bytes vLLM sees on a GPU whose nvidia-smi total is `reported_mib`.

    Without a reported total, the marketed capacity read as decimal gigabytes is used: it is
    below what the driver reports on every GPU whose total is known, so the plan stays safe.
    """
    if reported_mib is None:
        return int(marketed_gb * 1e9)
    return reported_mib * MIB - DRIVER_RESERVED_BYTES
