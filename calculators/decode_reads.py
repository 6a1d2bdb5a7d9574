"""The weights one decode step reads: the parameters a token touches, by role, and their bytes
on one GPU (its tensor-parallel shard) as the checkpoint stores them."""

from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.param_count import ParamCounts, param_counts
from infermeter.calculators.quantization import WeightFormat, weight_bytes


def touched_params(counts: ParamCounts, arch: ModelArch) -> dict[str, float]:
    """Parameters by role that one decode token touches (reads and multiplies).

    Only the routed experts a token picks (under the key `experts`); not the vision tower; of an
    untied embedding table just one row (a lookup, no matmul), which is left out. A tied table is
    the lm_head and is read in full.
    """
    return {
        "lm_head": counts.lm_head,
        "attention": counts.attention,
        "dense_mlp": counts.dense_mlp,
        "experts": counts.experts_active,
        "shared_experts": counts.shared_experts,
        "router": counts.router,
        "small": counts.small,
        "embedding": counts.embedding if arch.tie_word_embeddings else 0,
    }


def bytes_per_touched_param(
    arch: ModelArch, fmt: WeightFormat, tensor_parallel_size: int = 1
) -> dict[str, float]:
    """Bytes per parameter of each role as one GPU stores it (quantized or not, padding
    included), averaged over the role's layers; 0 for a role the GPU holds none of."""
    counts = param_counts(arch, tensor_parallel_size)
    stored = weight_bytes(arch, fmt, tensor_parallel_size).by_role
    rates: dict[str, float] = {}
    for role in touched_params(counts, arch):
        held = getattr(counts, role)  # parameters of this role the GPU holds
        rates[role] = stored[role] / held if held else 0.0
    return rates


def decode_weight_bytes_per_step(
    arch: ModelArch, fmt: WeightFormat, tensor_parallel_size: int = 1
) -> int:
    """Bytes of weights one GPU reads for one decode step (the smallest possible: batch 1)."""
    counts = param_counts(arch, tensor_parallel_size)
    rates = bytes_per_touched_param(arch, fmt, tensor_parallel_size)
    return round(sum(rates[role] * params for role, params in touched_params(counts, arch).items()))
