"""The overhead terms of vLLM's memory plan on one rank: the profiling run's activation peak (dummy
forward pass and dummy sampler run), memory outside PyTorch's allocator, CUDA graphs.

vLLM measures these at startup; the calculators estimate them from the architecture. The plan
(`calculators.vllm_plan`) reads them through this module's attributes, so a test that patches one
here (tests/accuracy/mutations.py) changes the plan.
"""

import math

from infermeter.calculators.model_arch import MixtureOfExperts, ModelArch
from infermeter.calculators.moe_workspace import MoeCaches
from infermeter.calculators.parallel import ParallelLayout, moe_tokens
from infermeter.calculators.vllm_settings import (
    MIB,
    VllmSettings,
    parse_release,
    parse_version,
    release_block_size,
)

# Where each overhead term comes from in vLLM's own code (vllm-project/vllm):
#   - activation peak: `Worker.determine_available_memory` runs `GPUModelRunner.profile_run` inside
#     `memory_profiling` and takes `torch_peak_increase` (vllm/v1/worker/gpu_worker.py at 35d5cda1);
#     `GPUModelRunner.profile_run` (vllm/v1/worker/gpu_model_runner.py, indexed at 4e179065) is one
#     `_dummy_run` of max_num_batched_tokens, then, if `get_pp_group().is_last_rank`,
#     `_dummy_sampler_run` with max_num_seqs rows of full-vocabulary logits: the other pipeline
#     ranks peak at the forward pass alone (`forward_peak_bytes`). Under tensor parallelism every
#     rank samples the full vocabulary: `LogitsProcessor._gather_logits` all-gathers the
#     vocab-parallel logits (use_all_gather is on under V1 in 0.10.0 and always in 0.19.1,
#     vllm/platforms/interface.py), so the sampler term is not divided by TP. In early V1
#     (gpu_worker.py at 0012cf69) the sampler warm-up ran only after the KV cache was sized. vLLM
#     sizes every rank's KV cache by the smallest rank's free memory.
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

# Bytes per logit the sampler's dummy run holds at its peak on the fused paths (FlashInfer's
# sampler, or from 0.17 vLLM's Triton top-k/top-p kernel; the sort path is further down): 0.19 peaks
# at 15.2-15.5 bytes per logit in the fit logs (Llama-3.1-8B 1.89 GiB, Qwen2.5-7B 2.21 GiB at
# 1024 sequences): the bf16 logits and their fp32 copy, the probabilities and the kernel's buffer.
SAMPLER_BYTES_PER_LOGIT = 15
# The dummy forward pass peaks ~35 % above the tensors `forward_peak_bytes` counts (allocator
# blocks, torch.compile buffers, the rank's own input and intermediate-tensor buffers): fitted to
# the pipeline ranks that run no sampler (Llama-3.1-8B on 2 and 4 H100s, 1.05-1.10 GiB).
FORWARD_PEAK_FACTOR = 1.35
# Memory outside PyTorch's allocator that the profiling run adds (cuBLAS and attention
# workspaces); tensor parallelism adds the custom all-reduce and NCCL buffers. The custom
# all-reduce is the same in 0.10.0, 0.11.0 and 0.19.1 (device_communicators/custom_all_reduce.py,
# PyPI sdists): two cudaMalloc'd IPC buffers of max_size = 8 MiB (plus its meta block) and an
# 8 MiB torch rank_data, so ~16 MiB of the TP term; the rest is NCCL's communicator buffers.
NON_TORCH_BYTES = 256 * MIB
NON_TORCH_TP_BYTES = 128 * MIB
# On NVSwitch systems with NVLink SHARP (Hopper and Blackwell SXM: the catalog's `nvlink_sharp`,
# `GpuTraits.nvlink_sharp`) NCCL's NVLink SHARP buffers add ~1.75 GiB per rank
# under tensor parallelism: 2.06-2.21 GiB logged on 2-4 H100 SXM (vLLM 0.19; 3.58 vs 1.79 GiB in
# V0, PR 10511) against 0.25-0.4 GiB on A100 (no NVLS).
NON_TORCH_NVLS_BYTES = 1792 * MIB
# Which releases keep those buffers, as read in vLLM's released sources (the PyPI sdists
# vllm-0.10.0, 0.10.1.1, 0.11.0 and 0.19.1): NCCL registers NVLS buffers only with its cuMem
# allocator, and vllm/env_override.py of 0.10.0 and 0.10.1.1 sets NCCL_CUMEM_ENABLE=0 on import
# unless the user set it or /dev/nvidia-caps-imex-channels exists (multi-node NVLink, the
# GB200/GB300 NVL racks); 0.11.0 drops that override (NCCL's default, cuMem on) and adds the torch
# symmetric-memory all-reduce (device_communicators/symm_mem.py, on by default through
# VLLM_ALLREDUCE_USE_SYMM_MEM=1 for compute capability 9.0 and 10.0; a 32-64 MiB buffer on 9.0,
# SYMM_MEM_ALL_REDUCE_MAX_SIZES); 0.19.1 keeps both. So a plan before 0.11 counts no NVLS term
# except on the NVL racks: the held-out 0.10 H100 logs at TP 2 (llm-d-benchmark) show 0.54-0.55 GiB
# outside PyTorch in all, against the plan's 0.375 GiB (NON_TORCH_BYTES + NON_TORCH_TP_BYTES).
NVLS_CUMEM_SINCE = (0, 11)
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
# How many graphs vLLM captures (its default `cudagraph_capture_sizes`, as its logs print them): the
# batch sizes 1, 2, 4, then every 8 up to 256, then every 8 (to 0.11.0; 67 sizes at 512) or every
# 16 (0.11.1 on; 51 sizes at 512) up to max_cudagraph_capture_size = min(2 x max_num_seqs, 512)
# (`VllmConfig._set_cudagraph_sizes`: range(8, n + 1, 8) in vllm/config/__init__.py of the 0.11.0
# sdist, range(256, n + 1, 16) above 256 in vllm/config/vllm.py of 0.11.1, 0.11.2, 0.28.0, 0.34.0:
# a patch release, so the plan reads it with `parse_release`). Before 0.10 the V1 engine's
# default list went up to 512 whatever max_num_seqs: [1, 2, 4] + range(8, 513, 8) in
# vllm/config.py of the 0.7.3 and 0.8.5 sdists, SchedulerConfig.cuda_graph_sizes defaulting to
# [512] in 0.9.0 and 0.9.2; 0.10.0's SchedulerConfig.__post_init__ sets [min(max_num_seqs x 2,
# 512)] (CUDA_GRAPH_SIZES_FOLLOW_SEQS_SINCE; 0.7's V0 engine, its default, captured up to
# max_num_seqs rounded up to 8, which the plan does not model). From
# 0.11 (FULL_AND_PIECEWISE) each size <= max_num_seqs also gets a decode-only FULL graph. Logged:
# 0.8.5 and 0.10.2 at 256 sequences, 67 sizes to 512; 0.11.0 at 128 sequences, 35 PIECEWISE to 256
# and 19 FULL to 128; 0.15 and 0.21 at 256 sequences, 51 PIECEWISE and 35 FULL; 0.19 at 1024, 51 and
# 51. Graph memory is taken to grow with the number of graphs: the constants above were set from
# fit logs that captured CUDA_GRAPH_REFERENCE_COUNT graphs (0.10 on an A100 at its 256-sequence
# default: 67 PIECEWISE; 0.19 on an H100 at 1024 sequences: 51 + 51), so those plans are unchanged.
# No size above max_num_batched_tokens is captured (vllm/config/vllm.py
# `VllmConfig._set_cudagraph_sizes`): from 0.11.1 the largest size is
# min(max_num_batched_tokens, max_cudagraph_capture_size) and a given capture list loses its larger
# sizes. 0.8.5-0.11.0 (vllm/config.py, then vllm/config/__init__.py) dropped them only from the
# list they built from --cuda-graph-sizes or the default; a --compilation-config
# cudagraph_capture_sizes list replaced it whole (`CompilationConfig.init_with_cudagraph_sizes`),
# and capturing a size above max_num_batched_tokens failed `GPUModelRunner._dummy_run`'s
# `assert num_tokens <= self.scheduler_config.max_num_batched_tokens` (vllm/v1/worker/
# gpu_model_runner.py of 0.8.5, 0.10.2 and 0.11.0; V1 is the default engine from 0.8): such a
# plan does not start (`vllm_notes.compiled_list_refusal`).
CUDA_GRAPH_MAX_CAPTURE_SIZE = 512
CUDA_GRAPH_STEP_16_SINCE = (0, 11, 1)
CUDA_GRAPH_SIZES_FOLLOW_SEQS_SINCE = (0, 10)
CAPTURE_SIZES_CUT_SINCE = (0, 11, 1)
CAPTURE_SIZE_ASSERTED_SINCE = (0, 8)
CUDA_GRAPH_REFERENCE_COUNT = 67
CUDA_GRAPH_FULL_REFERENCE_COUNT = 102
# The model runner's persistent input buffers come off the KV budget from vLLM 0.27.0, read in the
# PyPI sdists 0.26.0-0.29.0: `Worker.init_device` (vllm/v1/worker/gpu_worker.py) takes its memory
# snapshot after NCCL is set up and before the model runner exists, and from 0.27.0
# `memory_profiling` (vllm/utils/mem_utils.py) charges `total_consumed`, the drop in free memory
# since that snapshot, where 0.20-0.26 charged the weights, `non_torch_increase` and the profiling
# run's `torch_peak_increase` only, so what the runner allocates before profiling counted nowhere.
# `GPUModelRunner.__init__` (vllm/v1/worker/gpu_model_runner.py) allocates on the GPU, per batched
# token: inputs_embeds (hidden size x the model dtype), input_ids (int32), positions, req_indices
# and query_pos (int64 each), is_token_ids (bool), and its placeholder InputBatch's slot_mapping
# (int64, vllm/v1/worker/block_table.py); per sequence, the placeholder block table of
# ceil(max_model_len / block size) int32 entries (--block-size, default 16). Per-sequence vectors
# of a few bytes and M-RoPE's 3 x int64 positions are left out (under 1 MiB, and 24 bytes a token).
RUNNER_BUFFERS_IN_BUDGET_SINCE = (0, 27)
RUNNER_BYTES_PER_TOKEN = 4 + 8 + 8 + 8 + 1 + 8
# The V2 model runner (vllm/v1/worker/gpu/; which configurations start it:
# `calculators.model_runner`), read in the PyPI sdists 0.27.0-0.34.0: `InputBuffers`
# (gpu/input_batch.py, allocated in `GPUModelRunner.__init__`) holds input_ids (int32), positions
# (int64) and is_padding (bool) per batched token; a multimodal model's encoder runner
# (gpu/mm/encoder_runner.py) the inputs_embeds (hidden size x the model dtype); no other model has
# them. The sampler that `load_model` builds on the last pipeline rank, the rank the plan sizes
# (gpu/sample/): per sequence, `PenaltiesState`'s output_bin_counts (an int32 per vocabulary
# entry) and prompt_bin_mask (a bit per entry, in int32 words), and the GPU halves of
# `StagedWriteTensor`s of 4-byte entries: `LogitBiasState`'s allowed token ids, logit-bias ids and
# values (1,024 each) and stop token ids (128), `BadWordsState`'s tokens (1,024) and offsets (128
# + 1; VLLM_MAX_BAD_WORDS_TOTAL_TOKENS and VLLM_MAX_NUM_BAD_WORDS), `LogprobTokenIdsState`'s ids
# (MAX_LOGPROB_TOKEN_IDS, 128). Per-sequence vectors of a few bytes are left out, as for V1.
# `BlockTables` (gpu/block_table.py: an int64 slot mapping per token and, per sequence, the block
# table twice, its staged copy and the input copy, int32; one KV cache group counted) is built in
# `initialize_kv_cache`, after the cache is sized, so before 0.34 it comes off nothing; with 0.34's
# extensible KV cache all of it is resident when the cache is sized, so all of it comes off.
RUNNER_V2_BYTES_PER_TOKEN = 4 + 8 + 1
RUNNER_V2_SLOT_MAPPING_BYTES_PER_TOKEN = 8
RUNNER_V2_BLOCK_TABLE_COPIES = 2
RUNNER_V2_BLOCK_TABLES_IN_BUDGET_SINCE = (0, 34)
RUNNER_V2_SAMPLER_BYTES_PER_SEQUENCE = 4 * (3 * 1024 + 128 + 1024 + 129 + 128)
RUNNER_V2_SAMPLER_BYTES_PER_LOGIT = 4
RUNNER_V2_PROMPT_MASK_BITS_PER_WORD = 32


def _v2_runner_bytes_per_token(arch: ModelArch, version: tuple[int, int], dtype_bytes: int) -> int:
    """The V2 runner's buffers per batched token that come off the KV budget (see above)."""
    per_token = RUNNER_V2_BYTES_PER_TOKEN
    if arch.vision is not None or arch.vision_params:
        per_token += arch.hidden_size * dtype_bytes
    if version >= RUNNER_V2_BLOCK_TABLES_IN_BUDGET_SINCE:
        per_token += RUNNER_V2_SLOT_MAPPING_BYTES_PER_TOKEN
    return per_token


def _v2_sampler_bytes_per_sequence(arch: ModelArch) -> int:
    """The V2 runner's sampler buffers per sequence (see above)."""
    mask_words = -(-arch.vocab_size // RUNNER_V2_PROMPT_MASK_BITS_PER_WORD)
    return (
        RUNNER_V2_SAMPLER_BYTES_PER_SEQUENCE
        + arch.vocab_size * RUNNER_V2_SAMPLER_BYTES_PER_LOGIT
        + mask_words * 4
    )


def runner_buffer_bytes(
    arch: ModelArch,
    settings: VllmSettings,
    version: tuple[int, int],
    tokens: int,
    sequences: int,
    max_model_len: int,
    dtype_bytes: int,
    v2: bool,
) -> int:
    """The model runner's persistent buffers that vLLM takes off the KV budget from 0.27 (none
    before: see above): the V1 runner's, or with `v2` the V2 runner's. `tokens` is
    max_num_batched_tokens, `sequences` max_num_seqs."""
    if version < RUNNER_BUFFERS_IN_BUDGET_SINCE:
        return 0
    block_table = sequences * -(-max_model_len // release_block_size(settings)) * 4
    if not v2:
        return tokens * (arch.hidden_size * dtype_bytes + RUNNER_BYTES_PER_TOKEN) + block_table
    # Before 0.34 the V2 runner builds its block tables after the cache is sized (see above).
    tables_in_budget = version >= RUNNER_V2_BLOCK_TABLES_IN_BUDGET_SINCE
    return (
        tokens * _v2_runner_bytes_per_token(arch, version, dtype_bytes)
        + sequences * _v2_sampler_bytes_per_sequence(arch)
        + (block_table * RUNNER_V2_BLOCK_TABLE_COPIES if tables_in_budget else 0)
    )


# From vLLM 0.34.0 the KV cache is sized from memory measured after warmup and CUDA graph capture
# (the extensible KV cache, on by default on CUDA and ROCm: `enable_extensible_kv_cache` in
# vllm/config/cache.py and vllm/config/vllm.py of the 0.34.0 sdist; 0.30.0-0.33.0 have no such
# option). `measure_kv_cache_bytes` (vllm/v1/worker/extensible_kv_cache.py, 0.34.0) gives the
# cache min(requested - used, free + committed - margin) - transient, where `used` is everything
# resident after warmup but the cache (so the captured graphs themselves), `transient` is the
# profiled peak `peak_activation_memory` (gpu_worker.py: the transient peak plus the CUDA graph
# estimate while VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS is on, still its default in envs.py) and
# margin = max(KV_CACHE_MARGIN_FLOOR_BYTES, KV_CACHE_MARGIN_FRACTION x transient), the floor 1 GiB
# on CUDA and 3 GiB on ROCm. `gpu_memory_utilization` now defaults to None, read as 1.0 with the
# extensible cache (`CacheConfig.resolved_gpu_memory_utilization`; 0.92 without it). The plan
# takes the driver's total memory as free at start, as it does for `requested`.
EXTENSIBLE_KV_CACHE_SINCE = (0, 34)
EXTENSIBLE_GPU_MEMORY_UTILIZATION = 1.0
KV_CACHE_MARGIN_FLOOR_BYTES = 1 << 30
KV_CACHE_MARGIN_FLOOR_ROCM_BYTES = 3 << 30
KV_CACHE_MARGIN_FRACTION = 0.75


def extensible_kv_reserve_bytes(
    settings: VllmSettings,
    version: tuple[int, int],
    activation_peak: int,
    graph_bytes: int,
    requested_bytes: int,
) -> int:
    """What vLLM >= 0.34 keeps out of the KV cache beyond the earlier releases' budget (none
    before 0.34): the captured graphs, resident after warmup, on top of the graph estimate that
    stays in the transient reserve, and the part of the sizing margin that the requested memory
    does not already leave free (see above). `graph_bytes` is `cuda_graph_bytes`."""
    if version < EXTENSIBLE_KV_CACHE_SINCE:
        return 0
    estimate = graph_bytes if cuda_graphs_in_budget(settings, version) else 0
    rocm = runs_on_rocm(settings)
    floor = KV_CACHE_MARGIN_FLOOR_ROCM_BYTES if rocm else KV_CACHE_MARGIN_FLOOR_BYTES
    margin = max(floor, int((activation_peak + estimate) * KV_CACHE_MARGIN_FRACTION))
    left_free = settings.gpu_memory_bytes - requested_bytes
    return graph_bytes + max(0, margin - left_free)


# Terms of the plan that vLLM measures at startup and the calculators can only estimate; every
# plan names them (`estimated_terms`) so no reader takes them for exact.
ESTIMATED_TERMS = (
    "activation_peak_bytes",
    "forward_peak_bytes",
    "non_torch_bytes",
    "cuda_graph_bytes",
)


def _forward_tensor_bytes(
    arch: ModelArch, tokens: int, tp: int, dp: int = 1, caches: MoeCaches | None = None
) -> int:
    """Peak of PyTorch memory in the profiling run's dummy forward pass, above the weights.

    The pass runs `tokens` (max_num_batched_tokens) through the model without the attention
    kernel, so the widest MLP or MoE layer, plus the residual stream, sets the peak. Under data
    parallelism the MoE layers see the tokens of all `dp` ranks (`calculators.parallel`); their
    intermediate caches are laid out and capped as `caches` says (`calculators.moe_workspace`).
    """
    element = 2
    hidden = arch.hidden_size
    # The residual stream in and out, and any hidden states kept beside it (AliceAI's bank).
    residual = (2 + arch.residual_bank_states) * tokens * hidden * element
    forward = 0
    if arch.intermediate_size and has_dense_mlp(arch):
        width = arch.intermediate_size // tp
        forward = tokens * 3 * width * element
    moe = arch.moe
    if moe is not None:
        moe_in = moe_tokens(tokens, ParallelLayout(data_parallel_size=dp))
        routed = _moe_cache_elements(arch, moe, moe_in, tp, caches)
        shared = tokens * moe.expert_matrices * (moe.shared_intermediate_size // tp)
        router_logits = tokens * moe.num_experts * 4
        forward = max(forward, routed * element + shared * element + router_logits)
    return forward + residual


def has_dense_mlp(arch: ModelArch) -> bool:
    """Whether some layer runs a dense MLP of `intermediate_size`, as `param_count` counts its
    weights: a layer outside the MoE layers, or Gemma 4's MLP beside every MoE block. A config
    whose every layer is MoE may still name a dense width (Qwen3-30B-A3B's 6,144: qwen3_moe.py
    builds Qwen3MoeMLP only for `mlp_only_layers` and the layers `decoder_sparse_step` skips)."""
    moe = arch.moe
    return moe is None or arch.mlp_beside_moe or len(moe.moe_layers) < arch.num_layers


def _moe_cache_elements(
    arch: ModelArch, moe: MixtureOfExperts, tokens: int, tp: int, caches: MoeCaches | None
) -> int:
    """Elements of the routed experts' intermediate caches for `tokens` tokens (the shapes:
    `calculators.moe_workspace`)."""
    cap = None if caches is None else caches.token_cap
    chunk = tokens if cap is None else min(tokens, cap)
    hidden = arch.hidden_size
    expert_width = moe.expert_intermediate_size // tp  # the activation's output, N'
    first = (moe.expert_matrices - 1) * expert_width  # gate and up, or up alone: N
    if caches is None or not caches.modular:
        return chunk * moe.experts_per_token * (max(first, hidden) + expert_width)
    output = tokens * hidden if chunk < tokens else 0  # the full output, apart when chunked
    return chunk * moe.experts_per_token * (max(expert_width, hidden) + max(first, hidden)) + output


def forward_peak_bytes(
    arch: ModelArch, tokens: int, tp: int, dp: int = 1, caches: MoeCaches | None = None
) -> int:
    """Peak of PyTorch memory in the profiling run's dummy forward pass, above the weights: the
    tensors `_forward_tensor_bytes` counts, times the fitted FORWARD_PEAK_FACTOR. This is the whole
    activation peak of a pipeline rank that does not sample."""
    forward = _forward_tensor_bytes(arch, tokens, tp, dp, caches)
    return int(forward * FORWARD_PEAK_FACTOR)


def sampler_peak_bytes(
    arch: ModelArch, sequences: int, settings: VllmSettings | None = None
) -> int:
    """Peak of the dummy sampler run: `sequences` (max_num_seqs) rows of full-vocabulary logits,
    at the bytes per logit of the path the release takes (`sampler_bytes_per_logit`)."""
    per_logit = SAMPLER_BYTES_PER_LOGIT
    if settings is not None:
        per_logit = sampler_bytes_per_logit(settings, sequences)
    return sequences * arch.vocab_size * per_logit


def activation_peak_bytes(
    arch: ModelArch,
    tokens: int,
    sequences: int,
    tp: int,
    dp: int = 1,
    settings: VllmSettings | None = None,
    caches: MoeCaches | None = None,
) -> int:
    """Peak of PyTorch memory during vLLM's profiling run, above the weights: the dummy forward
    pass and the dummy sampler run one after the other, so the larger of the two."""
    forward = forward_peak_bytes(arch, tokens, tp, dp, caches)
    return max(forward, sampler_peak_bytes(arch, sequences, settings))


def captured_cuda_graphs(
    version: tuple[int, ...],
    max_num_seqs: int,
    capture_sizes: tuple[int, ...] | None = None,
    max_capture_size: int | None = None,
    mode: str | None = None,
    *,
    max_num_batched_tokens: int,
) -> int:
    """How many CUDA graphs vLLM captures for `max_num_seqs`: its default pattern (see the sizes
    above) up to `max_capture_size` (default `default_largest_capture_size`), or the `capture_sizes`
    given (--compilation-config / --cuda-graph-sizes), none above `max_num_batched_tokens`. Per
    size, `mode` (vLLM's cudagraph_mode; default PIECEWISE before 0.11, FULL_AND_PIECEWISE from
    0.11) captures a PIECEWISE graph (PIECEWISE, FULL_AND_PIECEWISE), a FULL graph (FULL), and
    for sizes up to max_num_seqs a FULL decode graph (FULL_DECODE_ONLY, FULL_AND_PIECEWISE);
    NONE captures none. `version` is the release to its patch (`parse_release`)."""
    if capture_sizes is None:
        largest = max_capture_size or default_largest_capture_size(version, max_num_seqs)
        largest = min(largest, max_num_batched_tokens)
        step = 16 if version >= CUDA_GRAPH_STEP_16_SINCE else 8
        sizes = _default_sizes_up_to(largest, step)
        decode = _default_sizes_up_to(min(largest, max_num_seqs), step)
    else:
        kept = [size for size in capture_sizes if size <= max_num_batched_tokens]
        sizes = len(kept)
        decode = sum(1 for size in kept if size <= max_num_seqs)
    if mode is None:
        mode = "FULL_AND_PIECEWISE" if version >= CUDA_GRAPH_FULL_SINCE else "PIECEWISE"
    every_size = sizes if mode in ("PIECEWISE", "FULL", "FULL_AND_PIECEWISE") else 0
    return every_size + (decode if mode in ("FULL_DECODE_ONLY", "FULL_AND_PIECEWISE") else 0)


def default_largest_capture_size(version: tuple[int, ...], max_num_seqs: int) -> int:
    """The largest size of vLLM's default capture list: min(2 x max_num_seqs, 512), or 512
    before 0.10 (see CUDA_GRAPH_SIZES_FOLLOW_SEQS_SINCE)."""
    if version < CUDA_GRAPH_SIZES_FOLLOW_SEQS_SINCE:
        return CUDA_GRAPH_MAX_CAPTURE_SIZE
    return min(2 * max_num_seqs, CUDA_GRAPH_MAX_CAPTURE_SIZE)


def _default_sizes_up_to(limit: int, step: int) -> int:
    """How many of vLLM's default capture sizes (1, 2, 4, 8 to 256 by 8, then by `step`) are at
    most `limit`: counted, not listed (a largest size of 10^8 listed 6 million sizes a plan)."""
    below_8 = sum(1 for size in (1, 2, 4) if size <= limit)
    return below_8 + min(limit, 256) // 8 + max(0, (limit - 256) // step)


def cuda_graph_bytes(
    arch: ModelArch,
    enforce_eager: bool,
    version: tuple[int, ...] = (0, 10),
    pp: int = 1,
    max_num_seqs: int = 1024,
    capture_sizes: tuple[int, ...] | None = None,
    max_capture_size: int | None = None,
    mode: str | None = None,
    *,
    max_num_batched_tokens: int,
) -> int:
    """Rough size of the CUDA graphs vLLM captures on one rank (none with --enforce-eager): a base
    and a per-layer size, scaled by how many graphs vLLM captures (`captured_cuda_graphs`)."""
    if enforce_eager:
        return 0
    layers = math.ceil(arch.num_layers / pp)
    graphs = captured_cuda_graphs(
        version,
        max_num_seqs,
        capture_sizes,
        max_capture_size,
        mode,
        max_num_batched_tokens=max_num_batched_tokens,
    )
    if version >= CUDA_GRAPH_FULL_SINCE:
        size = CUDA_GRAPH_FULL_BASE_BYTES + CUDA_GRAPH_FULL_PER_LAYER_BYTES * layers
        return size * graphs // CUDA_GRAPH_FULL_REFERENCE_COUNT
    size = CUDA_GRAPH_BASE_BYTES + CUDA_GRAPH_PER_LAYER_BYTES * layers
    return size * graphs // CUDA_GRAPH_REFERENCE_COUNT


def cuda_graphs_in_budget(settings: VllmSettings, version: tuple[int, int]) -> bool:
    """Whether vLLM takes its CUDA graph estimate off the KV budget: when
    VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS is on, its default from 0.20 (see the sources above),
    and never with --enforce-eager (no graphs)."""
    if settings.enforce_eager:
        return False
    if settings.estimate_cudagraphs is not None:
        return settings.estimate_cudagraphs
    return version >= CUDA_GRAPHS_IN_BUDGET_SINCE


def nccl_nvls_buffers(settings: VllmSettings) -> bool:
    """Whether NCCL keeps NVLS buffers on this rank: tensor parallelism on an NVSwitch GPU, with
    NCCL's cuMem allocator on (vLLM >= 0.11, or a multi-node NVLink rack; see above)."""
    if settings.tensor_parallel_size == 1 or not settings.gpu.nvlink_sharp:
        return False
    cumem = parse_version(settings.vllm_version) >= NVLS_CUMEM_SINCE
    return cumem or settings.gpu.multi_node_nvlink


def non_torch_bytes(settings: VllmSettings) -> int:
    """Memory outside PyTorch's allocator that the profiling run adds on one rank."""
    non_torch = NON_TORCH_BYTES
    # Only tensor parallelism all-reduces; pipeline stages send and receive (0.07 GiB logged on
    # each of 2 and 4 pipeline ranks, vLLM 0.19).
    if settings.tensor_parallel_size > 1:
        non_torch += NON_TORCH_TP_BYTES
    if nccl_nvls_buffers(settings):
        non_torch += NON_TORCH_NVLS_BYTES
    return non_torch


# Which top-k/top-p path the dummy sampler run takes, per release, read in vLLM's released sources
# (PyPI sdists; vllm/v1/sample/ops/topk_topp_sampler.py, envs.py): `_dummy_sampler_run`
# (vllm/v1/worker/gpu_model_runner.py) samples max_num_seqs rows with top_k = vocabulary - 1 and
# top_p = 0.9, so both filters run.
#   - 0.10.0-0.11.0: FlashInfer's sampler whenever flashinfer imports and
#     VLLM_USE_FLASHINFER_SAMPLER is not 0, else `apply_top_k_top_p`, which sorts the whole
#     vocabulary ("FlashInfer is not available. Falling back to the PyTorch-native implementation"
#     in the log). `pip install vllm`
#     0.10.0 does not pull flashinfer, 0.11.0 only as the extra vllm[flashinfer]; the Docker image
#     has it. The plan takes FlashInfer unless told otherwise (`flashinfer_sampler`) and names the
#     risk (`release_notes`).
#   - 0.11.1-0.16: FlashInfer's sampler is opt-in (VLLM_USE_FLASHINFER_SAMPLER=1, "available but
#     disabled by default"): the sort path, installed or not.
#   - 0.17 on: `apply_top_k_top_p` takes a Triton kernel (ops/topk_topp_triton.py) for 8 rows or
#     more, the sort below that; from 0.24 FlashInfer's sampler is on by default again (envs.py
#     defaults VLLM_USE_FLASHINFER_SAMPLER to True). Both keep the fused path's 15 bytes.
#   - AMD Instinct GPUs (ROCm) have no FlashInfer: before 0.17 the sort path (0.12-0.16 take
#     aiter's sampler only with VLLM_ROCM_USE_AITER=1, off by default), from 0.17 the Triton kernel.
# What the sort path holds per logit at its peak, the sort itself (PyTorch's CUDA sort,
# aten/src/ATen/native/cuda/SortStable.cu at 061531e8, for rows of more than 4096): the bf16 logits
# `_dummy_sampler_run` keeps (2), the sampler's fp32 copy (4), the sorted values (4) and int64
# indices (8); for 128 rows or more `segmented_sort_pairs` allocates int64 reverse indices (8) and
# cub's DeviceSegmentedRadixSort::SortPairs its alternate key and value buffers (4 + 8): 38 bytes.
# Below 128 rows `segmented_sort_pairs_by_full_sort` holds two int2 index-and-segment arrays
# (8 + 8), the keys cub writes (4) and cub's alternate buffers (4 + 8): 50 bytes. The masks,
# softmax and scatter that follow hold less (28 bytes). Not fitted: the held-out 0.10 logs without
# flashinfer show 38.5-38.9 bytes a logit at 1024 rows (llm-d-benchmark's H100 study, benyucong's
# H100 log).
SAMPLER_SORT_BYTES_PER_LOGIT = 38
SAMPLER_SORT_FEW_ROWS_BYTES_PER_LOGIT = 50
SORT_SEGMENTED_MIN_ROWS = 128
FLASHINFER_SAMPLER_OPT_IN_SINCE = (0, 11, 1)
TRITON_TOP_K_TOP_P_SINCE = (0, 17, 0)
TRITON_TOP_K_TOP_P_MIN_ROWS = 8
FLASHINFER_SAMPLER_DEFAULT_SINCE = (0, 24, 0)


def runs_on_rocm(settings: VllmSettings) -> bool:
    """Whether the plan's GPU is an AMD Instinct GPU, where vLLM runs on ROCm."""
    return settings.gpu.rocm


def sampler_sorts(settings: VllmSettings, rows: int) -> bool:
    """Whether the dummy sampler run sorts the whole vocabulary (see the releases above).
    `settings.flashinfer_sampler`: None, the release's default (FlashInfer taken as installed);
    False, VLLM_USE_FLASHINFER_SAMPLER=0 or flashinfer not installed; True, opted in."""
    release = parse_release(settings.vllm_version)
    chosen = settings.flashinfer_sampler
    if runs_on_rocm(settings):
        return release < TRITON_TOP_K_TOP_P_SINCE or rows < TRITON_TOP_K_TOP_P_MIN_ROWS
    if release < FLASHINFER_SAMPLER_OPT_IN_SINCE:
        return chosen is False
    if release < TRITON_TOP_K_TOP_P_SINCE:
        return chosen is not True
    flashinfer = chosen if chosen is not None else release >= FLASHINFER_SAMPLER_DEFAULT_SINCE
    return not flashinfer and rows < TRITON_TOP_K_TOP_P_MIN_ROWS


def sampler_bytes_per_logit(settings: VllmSettings, rows: int) -> int:
    """Bytes per logit at the dummy sampler run's peak: the sort path's or the fused path's."""
    if not sampler_sorts(settings, rows):
        return SAMPLER_BYTES_PER_LOGIT
    if rows >= SORT_SEGMENTED_MIN_ROWS:
        return SAMPLER_SORT_BYTES_PER_LOGIT
    return SAMPLER_SORT_FEW_ROWS_BYTES_PER_LOGIT


def release_notes(
    version: tuple[int, int], sequences: int, vocab_size: int, settings: VllmSettings | None = None
) -> list[str]:
    """Risks of a release the plan does not count, with their size for this plan."""
    if settings is None or settings.flashinfer_sampler is not None:
        return []
    if runs_on_rocm(settings):
        return []
    if parse_release(settings.vllm_version) >= FLASHINFER_SAMPLER_OPT_IN_SINCE:
        return []
    if version < (0, 10):
        return []
    extra = sequences * vocab_size * (SAMPLER_SORT_BYTES_PER_LOGIT - SAMPLER_BYTES_PER_LOGIT)
    return [
        f"vLLM {version[0]}.{version[1]} without flashinfer installed (pip install vllm does not "
        "pull it; the Docker image has it; the log then says 'FlashInfer is not available') "
        "warms its sampler up by sorting the whole vocabulary: "
        f"{extra / 2**30:.2f} GiB more out of the KV cache than planned ({sequences} sequences x "
        f"{vocab_size} logits at {SAMPLER_SORT_BYTES_PER_LOGIT} bytes per logit, not the "
        f"{SAMPLER_BYTES_PER_LOGIT} of FlashInfer's sampler); flashinfer_sampler=0 plans it"
    ]
