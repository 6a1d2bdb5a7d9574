"""vLLM's KV cache blocks: how layers group into pages, the block size of hybrid models, the
blocks one request takes and the longest request that fits (`kv_cache_utils`)."""

import math
from dataclasses import dataclass

from infermeter.calculators.kv_cache import KVCacheShape


@dataclass(frozen=True)
class KVGroups:
    """vLLM's KV cache groups: layers of one attention kind, `size` layers per group."""

    full: int
    sliding: int
    size: int
    state: int = 0  # groups of Mamba / Gated DeltaNet layers
    state_pages: int = 1  # pages a request takes in each state group (`state_pages`)


def _group_size(counts: list[int]) -> int:
    """vLLM's `_get_kv_cache_groups_uniform_page_size`: the smallest kind sets the group size,
    unless the largest has fewer than 1.5x as many layers (then the largest, with padding)."""
    smallest, largest = min(counts), max(counts)
    return largest if largest < smallest * 1.5 else smallest


def kv_groups(kv: KVCacheShape, pp: int) -> KVGroups:
    full = math.ceil(kv.full_layers / pp)
    sliding = math.ceil(kv.sliding_layers / pp)
    state = math.ceil(kv.state_layers / pp)
    counts = [count for count in (full, sliding, state) if count]
    if len(counts) > 1:
        size = _group_size(counts)
        return KVGroups(
            math.ceil(full / size), math.ceil(sliding / size), size, math.ceil(state / size)
        )
    return KVGroups(
        1 if full else 0, 1 if sliding else 0, full + sliding + state, 1 if state else 0
    )


def hybrid_block_size(kv: KVCacheShape, block_size: int) -> int:
    """The attention block size vLLM picks for a model with state layers: the smallest multiple
    of `block_size` whose page (all KV of one layer) holds one sequence's state of one layer
    (`HybridAttentionMambaModelConfig.verify_and_update_config`)."""
    if not kv.state_layers or not kv.bytes_per_token_per_layer:
        return block_size
    per_block = block_size * kv.bytes_per_token_per_layer
    return block_size * max(1, math.ceil(kv.state_bytes_per_sequence_per_layer / per_block))


def in_flight_tokens(
    batched_tokens: int, version: tuple[int, int], pp: int, v2_runner: bool = False
) -> int:
    """Tokens scheduled but not yet settled, for which a sliding-window layer keeps blocks
    beyond its window (`SlidingWindowSpec.max_memory_usage_bytes`). Before 0.26 vLLM reserves
    `max_num_batched_tokens`; from 0.26 `VllmConfig.max_in_flight_tokens`, that many per
    concurrent batch (`max_concurrent_batches`): two on one pipeline stage with async scheduling,
    which `VllmConfig.__post_init__` turns on by default for generation models on the default
    executors; under pipeline parallelism one per stage with the V1 model runner and stages + 1
    with the V2 runner (`v2_runner`: `calculators.model_runner`, always from 0.34.0, whose
    vllm/config/vllm.py no longer asks). On one stage the runner makes no difference."""
    if version < (0, 26):
        return batched_tokens
    if v2_runner:
        return batched_tokens * (pp + 1)
    return batched_tokens * (2 if pp == 1 else pp)


def request_blocks(
    groups: KVGroups,
    kv: KVCacheShape,
    max_len: int,
    batched_tokens: int,
    block: int,
    full_block: int | None = None,
) -> int:
    """Blocks one request of `max_len` tokens takes across all groups; `full_block`: the tokens
    of a full-attention block where it differs from `block` (`page_blocks`)."""
    blocks = groups.full * math.ceil(max_len / (full_block or block))
    blocks += groups.state * groups.state_pages
    if groups.sliding and kv.sliding_window is not None:
        span = min(kv.sliding_window - 1 + batched_tokens, max_len)
        blocks += groups.sliding * (math.ceil(span / block) + 1)
    return blocks


def block_bytes(groups: KVGroups, page: int, kv: KVCacheShape, full_block: int, pp: int) -> int:
    """Bytes of one block id across a group's layers: `groups.size` pages, and the caches
    beyond one a full layer (`KVCacheShape.extra_bytes_per_token`, spread over the `pp`
    pipeline stages) for the `full_block` tokens of a full-attention block."""
    return groups.size * page + full_block * math.ceil(kv.extra_bytes_per_token / pp)


def _fits_length(
    available: int,
    groups: KVGroups,
    unit: int,
    kv: KVCacheShape,
    length: int,
    batched: int,
    block: int,
    full_block: int | None,
) -> bool:
    needed = request_blocks(groups, kv, length, batched, block, full_block) * unit
    return needed <= available


def largest_length(
    available: int,
    groups: KVGroups,
    unit: int,
    kv: KVCacheShape,
    limit: int,
    batched: int,
    block: int,
    full_block: int | None = None,
) -> int:
    """Binary search, as vLLM's estimate_max_model_len does, for the longest request that fits;
    `unit`: the bytes of one block id (`block_bytes`)."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if _fits_length(available, groups, unit, kv, middle, batched, block, full_block):
            low = middle
        else:
            high = middle - 1
    return low


def state_pages(kv: KVCacheShape, version: tuple[int, int]) -> int:
    """State pages one request holds in each state layer. From 0.27 vLLM turns prefix caching on
    for hybrid models (config/model.py `is_prefix_caching_supported`: "hybrid" -> True; before:
    False), and from 0.28 `MambaModelConfig` (model_executor/models/config.py) then sets
    `mamba_cache_mode` "align", in which `MambaSpec.max_memory_usage_bytes` is two pages (the
    running state and the last block-aligned one; no speculative decoding). 0.27 chose "all"
    for the Mamba-based hybrids instead (a state per block of the request), which is not
    modelled: planned as "align". Attention-free models keep prefix caching off: one page."""
    hybrid = kv.state_layers and kv.full_layers + kv.sliding_layers
    return 2 if hybrid and version >= (0, 27) else 1


def page_blocks(kv: KVCacheShape, block: int) -> tuple[int, int]:
    """(tokens per block of the sliding/other layers, of the full-attention layers). Where the
    full-attention layers store a different number of bytes per token (Gemma 4), vLLM's
    `unify_kv_cache_spec_page_size` gives every layer the larger page and the kind with fewer
    bytes per token proportionally more tokens per block."""
    if not kv.full_layer_bytes_per_token:
        return block, block
    widest = max(kv.bytes_per_token_per_layer, kv.full_layer_bytes_per_token)
    return (
        block * widest // kv.bytes_per_token_per_layer,
        block * widest // kv.full_layer_bytes_per_token,
    )
