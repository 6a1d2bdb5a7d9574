"""vLLM's memory plan at startup, per GPU: weights, profiling peak, KV cache, concurrency.

This follows what vLLM's V1 engine does when it starts (`gpu_worker.determine_available_memory`
and `kv_cache_utils`):

    requested  = total GPU memory (as the driver reports it) × gpu_memory_utilization
    available  = requested − weights − activation peak of the profiling run − non-torch memory
                 − expert parallelism's all-to-all buffers (DeepEP's; `calculators.all2all`)
                 − the model runner's input buffers (vLLM >= 0.27 charges them)
                 (− CUDA graph memory, which vLLM >= 0.20 estimates before allocating the KV cache)
    num_blocks = available // (block_size × bytes per token per layer) // layers per group
    concurrency at max_model_len = num_blocks / blocks one request needs

The activation peak, non-torch memory and CUDA graph memory are estimates: vLLM measures them,
we approximate them from the architecture (`calculators.vllm_overheads`). Weights and the KV cache
layout (`calculators.kv_blocks`) are exact up to allocator rounding. Behaviour that changed across
vLLM releases is chosen by `vllm_version` (`calculators.vllm_settings`).
"""

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import infermeter.calculators.cache_specs as cache_specs
import infermeter.calculators.deepseek_v4_tuples as deepseek_v4_tuples
import infermeter.calculators.vllm_overheads as overheads
from infermeter.calculators.all2all import All2AllBuffers, all2all_buffers, batched_dp_moe_tokens
from infermeter.calculators.errors import InputError
from infermeter.calculators.first_releases import release_note
from infermeter.calculators.kv_blocks import (
    block_bytes,
    hybrid_block_size,
    in_flight_tokens,
    kv_groups,
    largest_length,
    page_blocks,
    request_blocks,
    state_pages,
)
from infermeter.calculators.kv_cache import KVCacheShape, kv_cache_shape
from infermeter.calculators.layer_caches import LayerCaches, layer_caches, plan_note
from infermeter.calculators.mla_copies import MlaCopies, mla_copies
from infermeter.calculators.mm_profile import EncoderProfile, encoder_profile
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.model_runner import RunnerChoice, model_runner, runner_note
from infermeter.calculators.moe_workspace import MoeCaches, moe_caches
from infermeter.calculators.parallel import sharded_weight_bytes
from infermeter.calculators.quantization import WeightBytes, model_dtype_bytes, weight_format
from infermeter.calculators.vllm_notes import (
    capture_refusal,
    compiled_list_refusal,
    format_gib,
    layout_notes,
    length_notes,
    load_refusal,
    memory_notes,
    refusal,
)
from infermeter.calculators.vllm_overheads import ESTIMATED_TERMS
from infermeter.calculators.vllm_settings import (
    GLM_DSA_FP8_KV_NOTE,
    VllmSettings,
    batch_defaults,
    check_settings,
    check_tensor_parallel,
    default_max_model_len,
    parse_release,
    parse_version,
    release_block_size,
    release_kv_cache_dtype,
    settings_layout,
)

__all__ = ["VllmPlan", "plan_vllm", "plan_weights"]


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
    all2all_buffer_bytes: int  # expert parallelism's all-to-all buffers (DeepEP), outside torch
    all2all_backend: str | None  # None: no all-to-all (no data parallel expert group)
    runner_buffer_bytes: int  # the model runner's input buffers, off the budget from vLLM 0.27
    cuda_graph_bytes: int
    cuda_graph_in_budget: bool
    extensible_reserve_bytes: int  # vLLM >= 0.34: graphs resident and the sizing margin
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
            # The release planned, to its patch (a patch changed what some terms read).
            "vllm_version": ".".join(map(str, parse_release(self.settings.vllm_version))),
            "weight_format": self.weight_format,
            "gpu_memory_bytes": self.settings.gpu_memory_bytes,
            "gpu_memory_utilization": self.gpu_memory_utilization,
            "tensor_parallel_size": self.settings.tensor_parallel_size,
            "pipeline_parallel_size": self.settings.pipeline_parallel_size,
            "data_parallel_size": self.settings.data_parallel_size,
            "expert_parallel_size": settings_layout(self.settings).expert_parallel_size,
            "gpus": settings_layout(self.settings).gpus,
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
            "all2all_backend": self.all2all_backend,
            "all2all_buffer_bytes": self.all2all_buffer_bytes,
            "runner_buffer_bytes": self.runner_buffer_bytes,
            "cuda_graph_bytes": self.cuda_graph_bytes,
            "cuda_graph_in_budget": self.cuda_graph_in_budget,
            "extensible_reserve_bytes": self.extensible_reserve_bytes,
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


def _bytes_per_token(kv: KVCacheShape, pp: int) -> int:
    """KV bytes per token on the most loaded pipeline stage, every layer counted."""
    if kv.full_layer_bytes_per_token or kv.extra_bytes_per_token:
        return math.ceil(kv.bytes_per_token / pp)
    return kv.bytes_per_token_per_layer * math.ceil((kv.full_layers + kv.sliding_layers) / pp)


def plan_weights(arch: ModelArch, settings: VllmSettings) -> WeightBytes:
    """Weights on the most loaded GPU: tensor parallel shards (routed experts whole under expert
    parallelism, `calculators.parallel`), the copies vLLM's MLA layers keep after loading
    (`calculators.mla_copies`), pipeline stages of layers. Data parallel replicas change nothing
    per GPU."""
    version = parse_version(settings.vllm_version)
    # The release to its patch: MXFP4's dense-linear fallback came with 0.11.1.
    fmt = weight_format(
        arch, settings.quantization, settings.dtype, parse_release(settings.vllm_version)
    )
    weights = sharded_weight_bytes(arch, fmt, settings_layout(settings))
    copies = mla_copies(arch, fmt, version, settings.tensor_parallel_size).bytes
    if copies:
        # Kept by the MLA layers' post-load step, inside vLLM's weights measurement.
        by_role = {**weights.by_role, "mla_copies": copies}
        weights = WeightBytes(weights.format, by_role, weights.rotary_cache_bytes)
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


@dataclass(frozen=True)
class _Batch:
    """The scheduler's limits: the options given, or the release's defaults. Named as the
    `VllmPlan` fields that report them, which take them by name."""

    gpu_memory_utilization: float
    max_model_len: int
    max_num_batched_tokens: int
    max_num_seqs: int


@dataclass(frozen=True)
class _Budget:
    """What the startup subtracts from the requested memory before the KV cache."""

    requested_bytes: int
    weights: WeightBytes
    activation_peak_bytes: int
    forward_peak_bytes: int
    non_torch_bytes: int
    all2all: All2AllBuffers
    runner_buffer_bytes: int
    cuda_graph_bytes: int
    cuda_graph_in_budget: bool
    extensible_reserve_bytes: int = 0  # vLLM >= 0.34: graphs resident and the sizing margin
    moe_caches: MoeCaches | None = None  # how the MoE intermediate caches are laid out

    @property
    def available_bytes(self) -> int:
        """The KV cache's share; zero or less when nothing is left."""
        graphs = self.cuda_graph_bytes if self.cuda_graph_in_budget else 0
        return (
            self.requested_bytes
            - self.weights.total
            - self.activation_peak_bytes
            - self.non_torch_bytes
            - self.all2all.total
            - self.runner_buffer_bytes
            - graphs
            - self.extensible_reserve_bytes
        )


@dataclass(frozen=True)
class _Blocks:
    """The KV cache as blocks: how many, what one request needs, how many requests fit."""

    kv: KVCacheShape
    block_size: int
    group_count: int
    num_blocks: int
    kv_cache_tokens: int
    max_concurrency: float
    request_bytes: int
    largest_max_model_len: int


@dataclass(frozen=True)
class _Startup:
    """What every step of the startup reads: the model as the release reads it, the settings,
    the release, the scheduler's limits and the model runner."""

    arch: ModelArch
    settings: VllmSettings
    version: tuple[int, int]
    batch: _Batch
    runner: RunnerChoice


def _check_stages(arch: ModelArch, settings: VllmSettings) -> None:
    check_settings(settings)
    check_tensor_parallel(arch, settings.tensor_parallel_size)
    if settings.pipeline_parallel_size > arch.num_layers:
        raise InputError(
            f"pipeline_parallel_size: {settings.pipeline_parallel_size} stages for the model's "
            f"{arch.num_layers} layers; every stage needs at least one layer"
        )


def _batch(arch: ModelArch, settings: VllmSettings, version: tuple[int, int]) -> _Batch:
    utilization = settings.gpu_memory_utilization
    if utilization is None:
        utilization = 0.92 if version >= (0, 20) else 0.9
        if version >= overheads.EXTENSIBLE_KV_CACHE_SINCE:
            utilization = overheads.EXTENSIBLE_GPU_MEMORY_UTILIZATION
    default_tokens, default_seqs = batch_defaults(settings, version)
    batched = (
        settings.max_num_batched_tokens
        or batched_dp_moe_tokens(
            version,
            settings.all2all_backend,
            settings.data_parallel_size,
            settings.enable_expert_parallel,
        )
        or default_tokens
    )
    return _Batch(
        gpu_memory_utilization=utilization,
        max_model_len=settings.max_model_len or default_max_model_len(arch),
        max_num_batched_tokens=batched,
        max_num_seqs=settings.max_num_seqs or min(default_seqs, batched),
    )


def _activation_peak_bytes(startup: _Startup, caches: MoeCaches) -> int:
    """The profiling run's peak: the decoder's dummy pass and sampler, or, for a vision tower
    `calculators.mm_profile` models, its encoder pass if larger (the pass's pixel values and
    outputs stay allocated under the decoder's). With pipeline stages the tower sits on the
    first rank only and is left out."""
    settings, batch = startup.settings, startup.batch
    tp, dp = settings.tensor_parallel_size, settings.data_parallel_size
    batched, seqs = batch.max_num_batched_tokens, batch.max_num_seqs
    text = overheads.activation_peak_bytes(
        startup.arch, batched, min(seqs, batched), tp, dp, settings, caches
    )
    profile = _encoder_profile(startup)
    if profile is None:
        return text
    return max(text + profile.held_bytes, profile.peak_bytes)


def _encoder_profile(startup: _Startup) -> EncoderProfile | None:
    arch, settings, batch = startup.arch, startup.settings, startup.batch
    encoder = arch.vision_encoder
    if encoder is None or settings.pipeline_parallel_size > 1:
        return None
    return encoder_profile(
        encoder,
        startup.version,
        batch.max_num_batched_tokens,
        batch.max_num_seqs,
        settings.tensor_parallel_size,
        model_dtype_bytes(arch, settings.dtype),
        pixels_held=not startup.runner.v2,
    )


def _encoder_notes(startup: _Startup) -> list[str]:
    profile = _encoder_profile(startup)
    if profile is None:
        return []
    version = startup.version
    return [
        f"the profiling run encodes {profile.items} dummy image(s) of "
        f"{profile.patches // profile.items:,} patches first: a "
        f"{format_gib(profile.peak_bytes, version)} GiB peak, and "
        f"{format_gib(profile.held_bytes, version)} GiB held through the decoder's pass "
        "(calculators/mm_profile.py)"
    ]


def _budget(startup: _Startup) -> _Budget:
    arch, settings, version, batch = startup.arch, startup.settings, startup.version, startup.batch
    tp, dp = settings.tensor_parallel_size, settings.data_parallel_size
    batched, seqs = batch.max_num_batched_tokens, batch.max_num_seqs
    weights = plan_weights(arch, settings)
    rocm = overheads.runs_on_rocm(settings)
    caches = moe_caches(version, weights.format, rocm, settings.gpu)
    budget = _Budget(
        requested_bytes=int(settings.gpu_memory_bytes * batch.gpu_memory_utilization),
        weights=weights,
        activation_peak_bytes=_activation_peak_bytes(startup, caches),
        forward_peak_bytes=overheads.forward_peak_bytes(arch, batched, tp, dp, caches),
        non_torch_bytes=overheads.non_torch_bytes(settings),
        all2all=all2all_buffers(
            arch,
            version,
            backend=settings.all2all_backend,
            layout=settings_layout(settings),
            max_num_batched_tokens=batched,
            deepep_buffer_size_mb=settings.deepep_buffer_size_mb,
        ),
        runner_buffer_bytes=overheads.runner_buffer_bytes(
            arch,
            settings,
            version,
            batched,
            seqs,
            batch.max_model_len,
            model_dtype_bytes(arch, settings.dtype),
            startup.runner.v2,
        ),
        cuda_graph_bytes=overheads.cuda_graph_bytes(
            arch,
            settings.enforce_eager,
            parse_release(settings.vllm_version),  # the step of its sizes changed in 0.11.1
            settings.pipeline_parallel_size,
            seqs,
            settings.cudagraph_capture_sizes,
            settings.max_cudagraph_capture_size,
            settings.cudagraph_mode,
            max_num_batched_tokens=batched,
        ),
        cuda_graph_in_budget=overheads.cuda_graphs_in_budget(settings, version),
    )
    reserve = overheads.extensible_kv_reserve_bytes(
        settings,
        version,
        budget.activation_peak_bytes,
        budget.cuda_graph_bytes,
        budget.requested_bytes,
    )
    return replace(budget, extensible_reserve_bytes=reserve, moe_caches=caches)


def _blocks(startup: _Startup, available: int) -> _Blocks:
    """Blocks of the KV cache in `available` bytes (vLLM's `kv_cache_utils`)."""
    arch, settings, version, batch = startup.arch, startup.settings, startup.version, startup.batch
    dtype_bytes = model_dtype_bytes(arch, settings.dtype)
    tp = settings.tensor_parallel_size
    block_size = release_block_size(settings)
    caches = layer_caches(arch, settings.kv_cache_dtype, tp, block_size, dtype_bytes)
    if caches is not None:
        return _layer_cache_blocks(caches, startup, available)
    kv = kv_cache_shape(arch, settings.kv_cache_dtype, settings.tensor_parallel_size, dtype_bytes)
    max_len = batch.max_model_len
    in_flight = in_flight_tokens(
        batch.max_num_batched_tokens, version, settings.pipeline_parallel_size, startup.runner.v2
    )
    groups = replace(
        kv_groups(kv, settings.pipeline_parallel_size), state_pages=state_pages(kv, version)
    )
    alignment = release_block_size(settings)
    if arch.mla is not None and kv.state_layers and version >= (0, 27):
        # MLA beside state layers (Kimi Linear): from 0.27 the block is a multiple of 128, the
        # MLA decode kernels' alignment (platforms/interface.py _align_hybrid_block_size).
        alignment = max(alignment, 128)
    block, full_block = page_blocks(kv, hybrid_block_size(kv, alignment))
    if kv.state_layers and not kv.full_layers + kv.sliding_layers:
        # Attention-free (Mamba): the only block is the state's, max_model_len tokens long
        # (model_executor/models/config.py MambaModelConfig: mamba_block_size = max_model_len).
        block = full_block = max_len
    page = max(block * kv.bytes_per_token_per_layer, kv.state_bytes_per_sequence_per_layer)
    unit = block_bytes(groups, page, kv, full_block, settings.pipeline_parallel_size)
    num_blocks = max(0, available) // unit if groups.size else 0
    blocks_per_request = request_blocks(groups, kv, max_len, in_flight, block, full_block)
    concurrency = num_blocks / blocks_per_request if blocks_per_request else 0.0
    group_count = groups.full + groups.sliding + groups.state
    if version >= (0, 21):
        tokens = int(concurrency * max_len)
    else:
        tokens = num_blocks // max(1, group_count) * block
    return _Blocks(
        kv=kv,
        block_size=block,
        group_count=group_count,
        num_blocks=num_blocks,
        kv_cache_tokens=tokens,
        max_concurrency=concurrency,
        request_bytes=blocks_per_request * unit,
        largest_max_model_len=largest_length(
            max(0, available), groups, unit, kv, max_len, in_flight, block, full_block
        ),
    )


def _layer_cache_blocks(caches: LayerCaches, startup: _Startup, available: int) -> _Blocks:
    """Caches grouped from per-layer specs (`calculators.layer_caches`): a block of the pool
    holds the widest group's pages, a request takes its pages in every group. The plan's `kv` is
    an approximation for the per-token figures: the growing caches as full layers, the windows
    left out."""
    version = startup.version
    if startup.settings.pipeline_parallel_size > 1:
        raise InputError(
            "pipeline_parallel_size: KV caches grouped layer by layer (DeepSeek-V4, MiniMax-M3, "
            "Inkling) are planned on one stage only; expected 1"
        )
    groups = caches.groups
    block = cache_specs.bytes_per_block(groups)
    max_len = startup.batch.max_model_len
    in_flight = in_flight_tokens(startup.batch.max_num_batched_tokens, version, 1)
    num_blocks = max(0, available) // block
    per_request = cache_specs.request_blocks(groups, max_len, in_flight)
    concurrency = num_blocks / per_request if per_request else 0.0
    growing = cache_specs.growing_bytes_per_token(groups)
    layers = max(1, caches.growing_layers)
    kv = KVCacheShape(
        math.ceil(growing / layers), caches.growing_layers, 0, None, caches.element_bytes
    )
    request = per_request * block
    largest = cache_specs.largest_length(groups, max(0, available), max_len, in_flight)
    if caches.packed and version < deepseek_v4_tuples.PACKED_SINCE:
        # DeepSeek-V4 before 0.29: a request sized by layer tuples (calculators.deepseek_v4_tuples).
        request = deepseek_v4_tuples.request_bytes(caches.specs, max_len, in_flight)
        largest = deepseek_v4_tuples.largest_length(
            caches.specs, max(0, available), max_len, in_flight
        )
    return _Blocks(
        kv=kv,
        block_size=caches.block_size,
        group_count=len(groups),
        num_blocks=num_blocks,
        kv_cache_tokens=int(concurrency * max_len),
        max_concurrency=concurrency,
        request_bytes=request,
        largest_max_model_len=largest,
    )


def _load_error(startup: _Startup, budget: _Budget) -> str | None:
    """vLLM's failure to load weights larger than the whole GPU, or None."""
    total = startup.settings.gpu_memory_bytes
    if budget.weights.total <= total:
        return None
    return load_refusal(startup.version, budget.weights.total, total)


def _error(version: tuple[int, int], max_len: int, available: int, blocks: _Blocks) -> str | None:
    """vLLM's refusal to start, or None when one request at max_model_len fits."""
    if available <= 0:
        return (
            "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
            "when initializing the engine."
        )
    if blocks.request_bytes > available:
        return refusal(
            version, max_len, blocks.request_bytes, available, blocks.largest_max_model_len
        )
    return None


def _capture_error(startup: _Startup, budget: _Budget) -> str | None:
    """vLLM's failure to capture its CUDA graphs, or None. Where they are not in its budget
    (before 0.20, or with VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0, and before 0.34's
    extensible KV cache, which sizes the cache after capture: `extensible_kv_reserve_bytes`),
    `Worker.compile_or_warm_up_model` runs `GPUModelRunner.capture_model` after the KV cache
    holds the requested memory (vllm/v1/worker/gpu_worker.py of the 0.11.0 sdist), so the graphs
    get what the requested memory leaves free; its own advice (`--kv-cache-memory` 'to fully
    utilize gpu memory') takes them off the free memory whole. Graphs larger than that memory
    run out of it at capture or, where they squeeze the activations, at the first full batch.
    Before 0.11.1 a --compilation-config capture list above max_num_batched_tokens fails first
    (`vllm_overheads.CAPTURE_SIZES_CUT_SINCE`)."""
    listed = _uncut_capture_size(startup)
    if listed is not None:
        release = parse_release(startup.settings.vllm_version)
        return compiled_list_refusal(release, listed, startup.batch.max_num_batched_tokens)
    if budget.cuda_graph_in_budget or startup.version >= overheads.EXTENSIBLE_KV_CACHE_SINCE:
        return None
    left = startup.settings.gpu_memory_bytes - budget.requested_bytes
    if budget.cuda_graph_bytes <= left:
        return None
    utilization = startup.batch.gpu_memory_utilization
    return capture_refusal(startup.version, budget.cuda_graph_bytes, left, utilization)


def _uncut_capture_size(startup: _Startup) -> int | None:
    """The largest size of a --compilation-config capture list that a release before 0.11.1
    captures although it is above max_num_batched_tokens (see `_capture_error`), or None."""
    settings = startup.settings
    sizes = settings.cudagraph_capture_sizes
    if (
        sizes is None
        or not settings.cudagraph_capture_sizes_compiled
        or settings.enforce_eager
        or settings.cudagraph_mode == "NONE"
        or not overheads.CAPTURE_SIZE_ASSERTED_SINCE
        <= parse_release(settings.vllm_version)
        < overheads.CAPTURE_SIZES_CUT_SINCE
    ):
        return None
    largest = max(sizes)
    return largest if largest > startup.batch.max_num_batched_tokens else None


def _notes(startup: _Startup, budget: _Budget, copies: MlaCopies) -> list[str]:
    arch, settings, version, batch = startup.arch, startup.settings, startup.version, startup.batch
    unread = settings.compilation_config_unread
    moe_note = None if budget.moe_caches is None else budget.moe_caches.note
    return [
        *arch.reading_notes,
        *([note] if (note := plan_note(arch)) is not None else []),
        *release_note(arch, version),
        *(
            [deepseek_v4_tuples.NOTE]
            if arch.deepseek_v4 is not None and version < deepseek_v4_tuples.PACKED_SINCE
            else []
        ),
        *length_notes(arch, batch.max_model_len),
        *layout_notes(arch, settings, budget.all2all),
        *overheads.release_notes(version, batch.max_num_seqs, arch.vocab_size, settings),
        *(
            ["compilation_config keys the plan does not read: " + ", ".join(unread)]
            if unread
            else []
        ),
        *memory_notes(version, copies, budget.cuda_graph_bytes, budget.cuda_graph_in_budget),
        *_encoder_notes(startup),
        *runner_note(startup.runner, version, settings),
        *([moe_note] if arch.moe is not None and moe_note is not None else []),
    ]


def _estimated_terms(arch: ModelArch, budget: _Budget, copies: MlaCopies) -> tuple[str, ...]:
    return (
        ESTIMATED_TERMS
        + (("kv_cache_bytes_per_token_per_layer",) if arch.indexer is not None else ())
        + (("all2all_buffer_bytes",) if budget.all2all.estimated else ())
        + (("weights_bytes",) if copies.estimated else ())
    )


def plan_vllm(arch: ModelArch, settings: VllmSettings) -> VllmPlan:
    """The memory plan vLLM makes at startup for `arch` with `settings`, per GPU."""
    _check_stages(arch, settings)
    version = parse_version(settings.vllm_version)
    arch = arch.at_release(version)
    kv_dtype = release_kv_cache_dtype(arch, settings)
    kv_notes = [] if kv_dtype == settings.kv_cache_dtype else [GLM_DSA_FP8_KV_NOTE]
    settings = replace(settings, kv_cache_dtype=kv_dtype)
    batch = _batch(arch, settings, version)
    startup = _Startup(arch, settings, version, batch, model_runner(arch, settings, version))
    budget = _budget(startup)
    available = budget.available_bytes
    blocks = _blocks(startup, available)
    error = (
        _load_error(startup, budget)
        or _error(version, batch.max_model_len, available, blocks)
        or _capture_error(startup, budget)
    )
    weights = budget.weights
    copies = mla_copies(arch, weights.format, version, settings.tensor_parallel_size)
    pp = settings.pipeline_parallel_size
    return VllmPlan(
        settings=settings,
        vllm_version=version,
        weight_format=weights.format.description,
        # The scheduler's limits under the plan's names: by name, no two of them can swap.
        **asdict(batch),
        requested_bytes=budget.requested_bytes,
        weights_bytes=weights.total,
        weights_by_role=dict(weights.by_role),
        activation_peak_bytes=budget.activation_peak_bytes,
        forward_peak_bytes=budget.forward_peak_bytes,
        non_torch_bytes=budget.non_torch_bytes,
        all2all_buffer_bytes=budget.all2all.total,
        all2all_backend=budget.all2all.backend,
        runner_buffer_bytes=budget.runner_buffer_bytes,
        cuda_graph_bytes=budget.cuda_graph_bytes,
        cuda_graph_in_budget=budget.cuda_graph_in_budget,
        extensible_reserve_bytes=budget.extensible_reserve_bytes,
        kv_cache_bytes=max(0, available),
        kv_cache_bytes_per_token=_bytes_per_token(blocks.kv, pp),
        state_bytes_per_sequence=blocks.kv.state_bytes_per_sequence_per_layer
        * math.ceil(blocks.kv.state_layers / pp),
        block_size=blocks.block_size,
        kv_cache_bytes_per_token_per_layer=blocks.kv.bytes_per_token_per_layer,
        kv_cache_groups=blocks.group_count,
        num_blocks=blocks.num_blocks,
        kv_cache_tokens=blocks.kv_cache_tokens,
        max_concurrency=blocks.max_concurrency,
        request_bytes_at_max_model_len=blocks.request_bytes,
        fits=error is None,
        largest_max_model_len=0 if available <= 0 else blocks.largest_max_model_len,
        error=error,
        notes=[*_notes(startup, budget, copies), *kv_notes],
        estimated_terms=_estimated_terms(arch, budget, copies),
    )
