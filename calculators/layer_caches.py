"""The families whose KV caches vLLM builds from per-layer specs that one size per token cannot
express (`calculators.cache_specs`): DeepSeek-V4 (packed groups), MiniMax-M3 (its indexer's keys
beside some layers' K/V), Inkling (short-convolution states beside each layer's attention).
`layer_caches` gives their groups for the vLLM plan and the memory report; None for the rest,
which `calculators.kv_cache` describes."""

from dataclasses import dataclass

import infermeter.calculators.deepseek_v4 as deepseek_v4
import infermeter.calculators.domyn_edge as domyn_edge
import infermeter.calculators.inkling as inkling
import infermeter.calculators.minimax_m3 as minimax_m3
from infermeter.calculators.cache_specs import CacheGroup, CacheSpec, packed_groups
from infermeter.calculators.kv_cache import kv_dtype_bytes
from infermeter.calculators.model_arch import ModelArch


@dataclass(frozen=True)
class LayerCaches:
    """A model's KV cache groups on one rank, the tokens of its full-attention blocks, the layers
    whose caches grow with the context and the bytes of a K/V element."""

    groups: list[CacheGroup]
    block_size: int
    growing_layers: int
    element_bytes: int
    # DeepSeek-V4's packed groups (vLLM 0.29+), whose requests earlier releases sized by layer
    # tuples (calculators.deepseek_v4_tuples) from every layer's `specs`.
    packed: bool = False
    specs: tuple[CacheSpec, ...] = ()


def plan_note(arch: ModelArch) -> str | None:
    """What the plan says of the caches of `arch`, None for a model without layer caches."""
    if arch.deepseek_v4 is not None:
        return deepseek_v4.PLAN_NOTE
    if arch.minimax_m3 is not None:
        return minimax_m3.PLAN_NOTE
    if arch.domyn_edge is not None:
        return domyn_edge.PLAN_NOTE
    return inkling.PLAN_NOTE if arch.inkling is not None else None


def layer_caches(
    arch: ModelArch, kv_cache_dtype: str | None, tp: int, block_size: int, dtype_bytes: int
) -> LayerCaches | None:
    """The groups of `arch` on one of `tp` ranks; `block_size` the tokens of an attention block
    vLLM was given, `dtype_bytes` the model's (for --kv-cache-dtype auto)."""
    if arch.deepseek_v4 is not None:
        config = arch.deepseek_v4
        element = deepseek_v4.kv_bytes(kv_cache_dtype)
        specs = deepseek_v4.model_specs(config, element)
        compressed = sum(1 for ratio in deepseek_v4.compress_ratios(config) if ratio > 1)
        groups = packed_groups(specs)
        return LayerCaches(groups, deepseek_v4.FULL_BLOCK, compressed, element, True, tuple(specs))
    element = kv_dtype_bytes(kv_cache_dtype, dtype_bytes)
    if arch.domyn_edge is not None:
        groups = domyn_edge.model_groups(arch.domyn_edge, element, tp, block_size)
        growing = sum(1 for window in arch.domyn_edge["windows"] if not window)
        return LayerCaches(groups, block_size, growing, element)
    if arch.minimax_m3 is not None:
        groups = minimax_m3.model_groups(arch.minimax_m3, element, tp)
        return LayerCaches(groups, minimax_m3.BLOCK, arch.num_layers, element)
    if arch.inkling is not None:
        groups = inkling.model_groups(arch.inkling, element, tp, block_size)
        blocks = [spec.block_size for g in groups for spec in g.specs if spec.kind == "full"]
        full = max(blocks, default=block_size)
        return LayerCaches(groups, full, arch.num_full_layers, element)
    return None
