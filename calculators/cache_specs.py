"""vLLM's KV cache specs, one per cache of each layer, and how `v1/core/kv_cache_utils.py`
groups them into the blocks of one shared pool. The models whose caches differ from layer to
layer in page size, block size or window (DeepSeek-V4, MiniMax-M3, Inkling) are planned here;
the others through `calculators.kv_blocks`.

Three ways of grouping, as vLLM chooses them (`get_kv_cache_groups`):
- one kind of cache, one block size (`UniformTypeKVCacheSpecs`, e.g. every layer full attention
  with pages of different sizes): one group whose block holds a page of every layer
  (`uniform_type_group`);
- a block-outermost layout (DeepSeek-V4's sparse MLA backends): `_get_packed_kv_cache_groups`
  (`packed_groups`): layers of one spec type and block size form a bucket; a bucket with as
  many layers of each page size ("balanced") is split into groups of `repeats` pattern repeats
  (`_approximate_gcd` over the balanced buckets' largest counts, at least the largest count of
  a balanced bucket that mixes page sizes), any other stays whole; a block of the pool holds the
  widest group's pages;
- otherwise `unify_kv_cache_spec_page_size` and `_get_kv_cache_groups_uniform_page_size`
  (`uniform_page_groups`): every page grows to the largest (a smaller page that divides it
  holds proportionally more tokens, any other is padded), layers of one spec form a kind, the
  kind with fewest layers sets the group size (the largest when it has under 1.5x as many),
  each kind splits into groups of that many layers (the last padded), and a block holds one
  page of each layer of a group.
A request takes, in each group, the most pages any of its layers needs.
"""

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class CacheSpec:
    """One cache of one layer: its kind, tokens per block, page bytes and window (0: full)."""

    kind: str
    block_size: int
    page_bytes: int
    window: int = 0

    @property
    def bucket(self) -> tuple[int, int]:
        """Specs that `UniformTypeKVCacheSpecs.is_uniform_type` puts together: the same block
        size, and full attention or the same window."""
        return self.block_size, self.window

    def request_pages(self, max_len: int, in_flight_tokens: int) -> int:
        """Pages one request of `max_len` tokens holds (`max_memory_usage_bytes` / page)."""
        if not self.window:
            return math.ceil(max_len / self.block_size)
        span = min(self.window - 1 + in_flight_tokens, max_len)
        return math.ceil(span / self.block_size) + 1


@dataclass(frozen=True)
class CacheGroup:
    """A KV cache group: the specs of its layers."""

    specs: tuple[CacheSpec, ...]

    @property
    def page_bytes(self) -> int:
        return sum(spec.page_bytes for spec in self.specs)

    def request_pages(self, max_len: int, in_flight_tokens: int) -> int:
        return max(spec.request_pages(max_len, in_flight_tokens) for spec in self.specs)


def approximate_gcd(values: Sequence[int], lower_bound: int) -> int:
    """vLLM's `_approximate_gcd`: the size in [lower_bound, max] with the least round-up
    padding, the larger on a tie."""
    best, best_pad = lower_bound, None
    for size in range(lower_bound, max(values) + 1):
        pad = sum((size - value % size) % size for value in values)
        if best_pad is None or pad <= best_pad:
            best, best_pad = size, pad
    return best


def packed_groups(specs: Sequence[CacheSpec]) -> list[CacheGroup]:
    """`_get_packed_kv_cache_groups` for the specs of every layer, in layer order."""
    buckets: dict[tuple[int, int], list[CacheSpec]] = {}
    for spec in specs:
        buckets.setdefault(spec.bucket, []).append(spec)
    counted = [(bucket, Counter(spec.page_bytes for spec in bucket)) for bucket in buckets.values()]
    # Counts of each page size in a balanced bucket (one layer of each per pattern repeat).
    balanced = [pages for _, pages in counted if len(set(pages.values())) == 1]
    floor = max((max(pages.values()) for pages in balanced if len(pages) > 1), default=0)
    repeats = approximate_gcd([max(pages.values()) for pages in balanced], floor) if floor else 0
    groups = []
    for bucket, pages in counted:
        if not repeats or len(set(pages.values())) != 1:
            groups.append(CacheGroup(tuple(bucket)))
            continue
        parts = math.ceil(max(pages.values()) / repeats)
        by_page = [[spec for spec in bucket if spec.page_bytes == page] for page in pages]
        pattern = list(zip(*by_page, strict=True))
        for part in range(parts):
            groups.append(CacheGroup(tuple(s for repeat in pattern[part::parts] for s in repeat)))
    return groups


def bytes_per_block(groups: Sequence[CacheGroup]) -> int:
    """A block of the shared pool: the widest group's pages."""
    return max(group.page_bytes for group in groups)


def request_blocks(groups: Sequence[CacheGroup], max_len: int, in_flight_tokens: int) -> int:
    """Blocks one request of `max_len` tokens takes from the pool, summed over the groups."""
    return sum(group.request_pages(max_len, in_flight_tokens) for group in groups)


def growing_bytes_per_token(groups: Sequence[CacheGroup]) -> float:
    """Bytes a request's caches grow by per token once past every window: the compressed
    latents and indexer keys (full-attention specs), page bytes over tokens per page."""
    return sum(
        spec.page_bytes / spec.block_size for g in groups for spec in g.specs if not spec.window
    )


def largest_length(groups: Sequence[CacheGroup], available: int, limit: int, in_flight: int) -> int:
    """The longest request whose blocks fit in `available` bytes, at most `limit`."""
    block = bytes_per_block(groups)
    return largest_fitting(lambda length: request_blocks(groups, length, in_flight) * block,
                           available, limit)  # fmt: skip


def largest_fitting(needed: Callable[[int], int], available: int, limit: int) -> int:
    """The longest length, at most `limit`, whose `needed` bytes fit in `available`
    (estimate_max_model_len's binary search)."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if needed(middle) <= available:
            low = middle
        else:
            high = middle - 1
    return low


def uniform_type_group(specs: Sequence[CacheSpec]) -> list[CacheGroup]:
    """`_get_kv_cache_groups_uniform_type`: one group of every layer's cache."""
    return [CacheGroup(tuple(specs))]


def _unified(spec: CacheSpec, page: int) -> CacheSpec:
    """`unify_kv_cache_spec_page_size`: a page that divides the largest holds that many times the
    tokens; any other is padded to it."""
    if page % spec.page_bytes == 0:
        return replace(spec, block_size=spec.block_size * page // spec.page_bytes, page_bytes=page)
    return replace(spec, page_bytes=page)


def uniform_page_groups(specs: Sequence[CacheSpec]) -> list[CacheGroup]:
    """`_get_kv_cache_groups_uniform_page_size` for the specs of every layer, in layer order; a
    group short of the group size is padded with copies of its last layer (vLLM's padding
    layers take their pages too)."""
    page = max(spec.page_bytes for spec in specs)
    kinds: dict[CacheSpec, list[CacheSpec]] = {}
    for spec in specs:
        unified = _unified(spec, page)
        kinds.setdefault(unified, []).append(unified)
    counts = [len(layers) for layers in kinds.values()]
    size = max(counts) if max(counts) < min(counts) * 1.5 else min(counts)
    groups = []
    for layers in kinds.values():
        parts = math.ceil(len(layers) / size)
        for part in range(parts):
            members = layers[part::parts]
            groups.append(CacheGroup(tuple(members + members[-1:] * (size - len(members)))))
    return groups
