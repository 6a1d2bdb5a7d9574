"""How many tokens vLLM's fused-MoE kernels size their intermediate caches for in the profiling
run's dummy forward pass, which runs all max_num_batched_tokens at once (the caches' shapes:
`calculators.vllm_overheads._forward_tensor_bytes`).

Read in the PyPI sdists (vllm/envs.py, vllm/model_executor/layers/fused_moe/):
  - The Triton path (`fused_experts_impl` in fused_moe.py, and the modular kernel's chunking of
    experts that `supports_chunking`) runs the tokens in chunks of VLLM_FUSED_MOE_CHUNK_SIZE and
    sizes intermediate_cache1/2/3 for one chunk: 32768 by default in 0.8.5-0.11.2, 16 x 1024 in
    0.12.0-0.17.0 (0.8.5, 0.9.2, 0.10.0, 0.10.2, 0.11.0-0.11.2, 0.12.0, 0.13.0, 0.14.1, 0.16.0 and
    0.17.0 read). 0.18.0 removes the variable and the chunking (vLLM PR 34086; 0.18.0, 0.19.1 and
    0.22.0 read): every path sizes its caches for all the tokens.
  - The Marlin path never chunks: AWQ and GPTQ MoE (awq_marlin.py, gptq_marlin.py) and
    compressed-tensors W4A16 (`CompressedTensorsWNA16MarlinMoEMethod.apply`, the method
    `get_moe_method` picks on CUDA when `check_moe_marlin_supports_layer` holds) call
    `fused_marlin_moe`, whose `_fused_marlin_moe` allocates intermediate_cache13 (M x top-k x
    max(2N, K)) and intermediate_cache2 (M x top-k x N) for all M tokens of the call (0.8.5-0.22.0
    read). ROCm takes the Triton WNA16 method instead (`current_platform.is_rocm()`).
  - From 0.14 the unquantized and FP8 experts run through the modular kernel
    (`FusedMoEModularKernel`, built in unquantized_fused_moe_method.py and oracle/fp8.py; 0.14.1,
    0.19.1, 0.22.0 and 0.34.0 read) instead of `fused_experts_impl` (0.13.0's fp8.py and
    unquantized_fused_moe_method.py still call `fused_experts`). Its
    `TritonExperts.workspace_shapes` asks for workspace13 (M x top-k x max(N', K)), N' the
    activation's output width, and workspace2 (M x top-k x max(N, K)), N the w13 output width, held
    at once (`_allocate_buffers`), where `fused_experts_impl` lays cache1 and cache3 over one M x
    top-k x max(N, K) buffer beside cache2 (M x top-k x N'). When it chunks, the full M x K output
    is a third buffer.
  - Which kernel runs the unquantized experts (oracle/unquantized.py): Triton on every GPU in
    0.14.1-0.19.1 (FlashInfer only with VLLM_USE_FLASHINFER_MOE_FP16=1) and on ROCm (AITER only with
    VLLM_ROCM_USE_AITER_MOE); from 0.22.0 (the first read with the priority list; 0.20-0.21 not
    read) FlashInfer TRT-LLM (SM 10.x) and FlashInfer CUTLASS (SM 9.0, 10.x, 12.x; flashinfer-python
    is in requirements/cuda.txt) come before Triton, and from 0.23.0 (0.23.0-0.34.0 read) Hopper
    moves both behind Triton. FlashInfer's workspace is allocated inside its own op and is not
    modelled: the plan keeps fused_experts' caches there and says so. FP8 experts keep
    fused_experts' shapes (see MODULAR_TRITON_METHODS), whatever kernel fp8's oracle picks (Marlin
    below SM 8.9, DeepGEMM for blocks on SM 9.0/10.0, CUTLASS for per-tensor scales, else Triton).
"""

from dataclasses import dataclass

from infermeter.calculators.gpu_traits import GpuTraits
from infermeter.calculators.quantization import WeightFormat

FUSED_MOE_CHUNK_TOKENS_BY_RELEASE = (((0, 12), 32768), ((0, 18), 16384))
# The group-wise integer formats whose MoE layers run vLLM's Marlin kernels on CUDA.
MARLIN_MOE_METHODS = ("awq", "gptq", "int4")
MODULAR_TRITON_SINCE = (0, 14)
# The formats whose experts take the modular TritonExperts from MODULAR_TRITON_SINCE: unquantized
# only. FP8 experts go through it too where the oracle picks Triton, but on the one FP8 log with a
# logged activation peak (Qwen3-235B-FP8, 4x RTX Pro 6000, 0.27.1) the wider workspace doubles
# the predicted peak against the log (1.52 vs 0.76 GiB), so it is not applied there.
MODULAR_TRITON_METHODS = ("bf16", "fp16", "fp32")
FLASHINFER_UNQUANTIZED_MOE_SINCE = (0, 22)
HOPPER_TRITON_MOE_SINCE = (0, 23)
# The compute capabilities where the oracle tells GPUs apart: Hopper 9.0; Blackwell 10.x, 12.x.
HOPPER_CAPABILITY = (9, 0)
BLACKWELL_CAPABILITY_MAJORS = (10, 12)
TRITON = "triton"
FLASHINFER = "flashinfer"
FP8 = "fp8"
KERNEL_NOTES = {
    TRITON: "MoE workspace: the unquantized experts are planned with vLLM's Triton kernel "
    "(TritonExperts), its default for this GPU and release; VLLM_USE_FLASHINFER_MOE_FP16=1 or "
    "VLLM_ROCM_USE_AITER_MOE=1 picks another, whose workspace differs",
    FLASHINFER: "MoE workspace: vLLM runs these unquantized experts with FlashInfer on this GPU "
    "and release; its workspace is not modelled, the plan keeps fused_experts' Triton caches",
    FP8: "MoE workspace: the FP8 experts are planned with fused_experts' Triton caches; vLLM "
    "picks DeepGEMM, CUTLASS, FlashInfer, Marlin or Triton's modular kernel (TritonExperts, "
    "wider) by GPU, scales and installed packages, and their workspaces differ",
}


@dataclass(frozen=True)
class MoeCaches:
    """How the profiling run's MoE intermediate caches are laid out (see above)."""

    token_cap: int | None  # the most tokens they are sized for; None: every token at once
    modular: bool  # TritonExperts' workspace13 + workspace2, not fused_experts_impl's caches
    note: str | None = None  # which kernel the plan assumed, where the GPU decides


def flashinfer_unquantized_moe(version: tuple[int, int], gpu: GpuTraits) -> bool:
    """Whether vLLM's oracle picks FlashInfer for unquantized experts on this GPU (see above)."""
    capability = gpu.compute_capability
    if capability is None or version < FLASHINFER_UNQUANTIZED_MOE_SINCE:
        return False
    hopper = capability == HOPPER_CAPABILITY and version < HOPPER_TRITON_MOE_SINCE
    return hopper or gpu.capability_major in BLACKWELL_CAPABILITY_MAJORS


def marlin_moe(fmt: WeightFormat, rocm: bool) -> bool:
    """Whether the routed experts run `fused_marlin_moe` (see above)."""
    return not rocm and fmt.method in MARLIN_MOE_METHODS and "experts" in fmt.quantized_roles


def moe_caches(
    version: tuple[int, int], fmt: WeightFormat, rocm: bool, gpu: GpuTraits
) -> MoeCaches:
    """The MoE intermediate caches of `version` for experts stored in `fmt` on `gpu` (see
    above)."""
    cap = moe_cache_token_cap(version, fmt, rocm)
    # Experts in another format than the other linears run another kernel.
    if version < MODULAR_TRITON_SINCE or fmt.expert_bytes_per_param is not None:
        return MoeCaches(cap, modular=False)
    if fmt.method == FP8:
        return MoeCaches(cap, modular=False, note=KERNEL_NOTES[FP8])
    if fmt.method not in MODULAR_TRITON_METHODS:
        return MoeCaches(cap, modular=False)
    if not rocm and flashinfer_unquantized_moe(version, gpu):
        return MoeCaches(cap, modular=False, note=KERNEL_NOTES[FLASHINFER])
    return MoeCaches(cap, modular=True, note=KERNEL_NOTES[TRITON])


def moe_cache_token_cap(version: tuple[int, int], fmt: WeightFormat, rocm: bool) -> int | None:
    """The most tokens the MoE intermediate caches are sized for, None where they take every
    token that reaches the experts at once (see above)."""
    if marlin_moe(fmt, rocm):
        return None
    for until, chunk in FUSED_MOE_CHUNK_TOKENS_BY_RELEASE:
        if version < until:
            return chunk
    return None
