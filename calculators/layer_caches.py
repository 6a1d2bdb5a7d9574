"""The families whose KV caches vLLM builds from per-layer specs that one size per token cannot
express (`calculators.cache_specs`): DeepSeek-V4 (packed groups), MiniMax-M3 (its indexer's keys
beside some layers' K/V), Inkling (short-convolution states beside each layer's attention).
`layer_caches` gives their groups for the vLLM plan and the memory report; None for the rest,
which `calculators.kv_cache` describes."""

from dataclasses import dataclass

import infermeter.calculators.beam as beam
import infermeter.calculators.deepseek_v4 as deepseek_v4
import infermeter.calculators.domyn_edge as domyn_edge
import infermeter.calculators.dory as dory
import infermeter.calculators.glm5_next as glm5_next
import infermeter.calculators.inkling as inkling
import infermeter.calculators.lfm2 as lfm2
import infermeter.calculators.lfm3 as lfm3
import infermeter.calculators.minimax_m3 as minimax_m3
import infermeter.calculators.mistral_large4 as mistral_large4
import infermeter.calculators.zaya as zaya
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


def release_note(arch: ModelArch, version: tuple[int, int]) -> list[str]:
    """A note when `version` predates the first vLLM release the family's recipe names
    (`min_vllm_version` in vLLM 0.34.0's recipes/models: MiniMax-M3 0.24.0, Inkling 0.26.0, Beam
    0.33.0, Mistral Large 4 0.34.0) or, without a recipe, the first whose registry.py lists it
    (LFM2 0.10.2 and LFM2-MoE 0.11.1, keyed by minor release; LFM3 0.34.0, Dory and DomynEdge
    0.33.0, ZAYA1 0.34.0; GLM-5-Next 0.30.0, whose recipe's 0.29.0 does not register it): the
    plan then applies that release's memory terms to a model it does not serve."""
    recipe, registry = "its recipe's min_vllm_version", "the first release that registers it"
    first = {
        "MiniMax-M3": (minimax_m3.FIRST_RELEASE, recipe) if arch.minimax_m3 is not None else None,
        "Inkling": (inkling.FIRST_RELEASE, recipe) if arch.inkling is not None else None,
        "Beam": (beam.FIRST_RELEASE, recipe) if arch.model_type == "beam" else None,
        "LFM3": (lfm3.FIRST_RELEASE, registry) if arch.model_type == "lfm3" else None,
        "LFM2": (lfm2.FIRST_RELEASES["lfm2"], registry) if arch.model_type == "lfm2" else None,
        "LFM2-MoE": (lfm2.FIRST_RELEASES["lfm2_moe"], registry)
        if arch.model_type == "lfm2_moe"
        else None,
        "Mistral Large 4": (mistral_large4.FIRST_RELEASE, recipe)
        if arch.mistral_large4 is not None
        else None,
        "Dory": (dory.FIRST_RELEASE, registry) if arch.model_type == dory.DORY_TYPE else None,
        "DomynEdge": (domyn_edge.FIRST_RELEASE, registry) if arch.domyn_edge is not None else None,
        "ZAYA1": (zaya.FIRST_RELEASE, registry) if arch.zaya is not None else None,
        "GLM-5-Next": (glm5_next.FIRST_RELEASE, registry)
        if arch.model_type == glm5_next.GLM5_NEXT_TYPE
        else None,
    }
    notes = []
    for name, found in first.items():
        if found is not None and version < found[0]:
            (major, minor), source = found
            notes.append(
                f"{name} is served from vLLM {major}.{minor} ({source}); "
                f"this plan applies {version[0]}.{version[1]}'s memory terms to it"
            )
    return notes


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
