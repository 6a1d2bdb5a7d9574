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
"""

from infermeter.calculators.quantization import WeightFormat

FUSED_MOE_CHUNK_TOKENS_BY_RELEASE = (((0, 12), 32768), ((0, 18), 16384))
# The group-wise integer formats whose MoE layers run vLLM's Marlin kernels on CUDA.
MARLIN_MOE_METHODS = ("awq", "gptq", "int4")


def marlin_moe(fmt: WeightFormat, rocm: bool) -> bool:
    """Whether the routed experts run `fused_marlin_moe` (see above)."""
    return not rocm and fmt.method in MARLIN_MOE_METHODS and "experts" in fmt.quantized_roles


def moe_cache_token_cap(version: tuple[int, int], fmt: WeightFormat, rocm: bool) -> int | None:
    """The most tokens the MoE intermediate caches are sized for, None where they take every
    token that reaches the experts at once (see above)."""
    if marlin_moe(fmt, rocm):
        return None
    for until, chunk in FUSED_MOE_CHUNK_TOKENS_BY_RELEASE:
        if version < until:
            return chunk
    return None
