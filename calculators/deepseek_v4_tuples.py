"""What one DeepSeek-V4 request needs from the KV cache in vLLM 0.22.0-0.28.0, which size it by
"layer tuples" (`v1/core/kv_cache_utils.py`, the same in the 0.22.0 to 0.28.0 sdists; 0.29.0
replaced it with the packed groups of `calculators.deepseek_v4`).

`_get_kv_cache_groups_uniform_groups`: the full-attention caches (compressed latents and indexer
keys) form one group; the windowed caches form one group per (block size, window), each split
into `ceil(layers per page size / tuples)` groups, where `tuples` is `_approximate_gcd` of every
group's most common page-size count, at least the full group's; a windowed page is padded up to
the nearest full-group page size. `_max_memory_usage_bytes_from_groups`: every group reserves
the largest group's count of layer tuples, each its pages for one request times the sum of the
full group's page sizes. vLLM refuses to start when that exceeds the KV memory, and estimates
the longest length that fits with the same sum (`estimate_max_model_len`).
"""

import math
from collections import Counter
from collections.abc import Sequence

from infermeter.calculators.cache_specs import CacheSpec, approximate_gcd, largest_fitting

PACKED_SINCE = (0, 29)  # the first release that packs the groups instead
NOTE = (
    "DeepSeek-V4 before vLLM 0.29: what a request needs (vLLM's refusal and its longest length "
    "that fits) follows 0.22-0.28's layer tuples; the pool and its token count are planned with "
    "0.29's packed groups, which those releases lay out differently"
)


def _tuples(specs: Sequence[CacheSpec]) -> int:
    """`UniformTypeKVCacheSpecs.get_num_layer_tuples`: the most common page size's count."""
    return Counter(spec.page_bytes for spec in specs).most_common(1)[0][1]


def tuple_groups(specs: Sequence[CacheSpec]) -> tuple[int, list[list[CacheSpec]]]:
    """The bytes of one layer tuple (the full group's page sizes) and the groups, each windowed
    spec with its page padded to the nearest full-group page size."""
    full = [spec for spec in specs if not spec.window]
    windowed: dict[tuple[int, int], list[CacheSpec]] = {}
    for spec in specs:
        if spec.window:
            windowed.setdefault(spec.bucket, []).append(spec)
    pages = sorted({spec.page_bytes for spec in full})
    counts = [_tuples(full)] + [_tuples(bucket) for bucket in windowed.values()]
    tuples = approximate_gcd(counts, counts[0])
    groups = [full]
    for bucket in windowed.values():
        by_page: dict[int, list[CacheSpec]] = {}
        for spec in bucket:
            padded = min((page for page in pages if page >= spec.page_bytes), default=max(pages))
            by_page.setdefault(padded, []).append(
                CacheSpec(spec.kind, spec.block_size, padded, spec.window)
            )
        pattern = list(zip(*by_page.values(), strict=True))
        parts = math.ceil(len(pattern) / tuples)
        groups += [[s for layers in pattern[part::parts] for s in layers] for part in range(parts)]
    return sum(pages), groups


def request_bytes(specs: Sequence[CacheSpec], max_len: int, in_flight_tokens: int) -> int:
    """The KV memory one request of `max_len` tokens needs
    (`_max_memory_usage_bytes_from_groups`)."""
    tuple_bytes, groups = tuple_groups(specs)
    tuples = max(_tuples(group) for group in groups)
    return sum(
        tuples * max(spec.request_pages(max_len, in_flight_tokens) for spec in group) * tuple_bytes
        for group in groups
    )


def largest_length(
    specs: Sequence[CacheSpec], available: int, limit: int, in_flight_tokens: int
) -> int:
    """The longest request whose need fits in `available` bytes, at most `limit`."""
    return largest_fitting(
        lambda length: request_bytes(specs, length, in_flight_tokens), available, limit
    )
