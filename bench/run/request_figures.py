"""The figures of one request record: its output tokens (per text chunk, by the rule in
`bench.run.metrics`), TTFT, E2E, TPOT and its inter-token gaps, whether it met the SLO, and
whether its token counts can be trusted (usage against the stream, the length asked for).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from infermeter.bench.client.request_record import RequestRecord
from infermeter.calculators.units import MS_PER_S, NS_PER_S

if TYPE_CHECKING:
    from infermeter.registry.models import Slo


def output_token_count(record: RequestRecord) -> int:
    """The request's output tokens: the server's usage, else the client's count."""
    return record.output_tokens if record.output_tokens is not None else record.client_output_tokens


def chunk_token_counts(record: RequestRecord) -> list[int]:
    """Tokens carried by each text chunk, by the rule in the module docstring."""
    chunks = len(record.token_times_ns)
    if record.chunk_tokens is not None and len(record.chunk_tokens) == chunks:
        return list(record.chunk_tokens)
    total = record.output_tokens
    if total is None or total <= chunks or chunks == 0:
        return [1] * chunks
    return _split_proportionally(total, record.chunk_chars)


def _split_proportionally(total: int, weights: Sequence[int]) -> list[int]:
    """`total` as integers in proportion to `weights`, each at least 1 (total >= len)."""
    if sum(weights) <= 0:
        weights = [1] * len(weights)
    weight_sum = sum(weights)
    shares = [total * weight / weight_sum for weight in weights]
    counts = [max(1, math.floor(share)) for share in shares]
    missing = total - sum(counts)
    # Largest remainders first gain a token; the largest counts give one back if over.
    by_remainder = sorted(range(len(counts)), key=lambda i: (counts[i] - shares[i], i))
    for index in by_remainder[: max(missing, 0)]:
        counts[index] += 1
    while missing < 0:
        reducible = [i for i in range(len(counts)) if counts[i] > 1]
        largest = max(reducible, key=lambda i: (counts[i] - shares[i], counts[i]))
        counts[largest] -= 1
        missing += 1
    return counts


def token_gaps_s(record: RequestRecord) -> list[float]:
    """One inter-token latency sample (seconds) per output token after the first."""
    times = record.token_times_ns
    if not times:
        return []
    counts = chunk_token_counts(record)
    gaps = [0.0] * max(counts[0] - 1, 0)
    previous_ns = times[0]
    for arrived_ns, tokens in zip(times[1:], counts[1:], strict=True):
        if tokens <= 0:
            continue  # no token in this chunk: its gap goes to the next chunk's tokens
        gap = (arrived_ns - previous_ns) / NS_PER_S / tokens
        gaps.extend([gap] * tokens)
        previous_ns = arrived_ns
    return gaps


def tokens_in_one_chunk(record: RequestRecord) -> bool:
    """True when the request's output tokens, two or more, all arrived at once: in one text
    chunk, or in several the client read together (one arrival time, as a bursting server or a
    buffering proxy delivers them). Its E2E is its TTFT, and its TPOT and ITL of 0 time nothing
    (as AIPerf gives no inter-chunk latency below two chunks, and vLLM's bench serve times no
    gap)."""
    times = record.token_times_ns
    return bool(times) and times[0] == times[-1] and output_token_count(record) > 1


def ttft_s(record: RequestRecord) -> float:
    """Send → first output text, in seconds (the record must have output)."""
    return (record.token_times_ns[0] - record.send_ns) / NS_PER_S


def e2e_s(record: RequestRecord) -> float:
    """Send → last output text, in seconds (the record must have output)."""
    return (record.token_times_ns[-1] - record.send_ns) / NS_PER_S


def tpot_s(record: RequestRecord) -> float | None:
    """(E2E − TTFT) / (output tokens − 1), in seconds; None for fewer than two tokens."""
    tokens = output_token_count(record)
    if tokens < 2:
        return None
    return (record.token_times_ns[-1] - record.token_times_ns[0]) / NS_PER_S / (tokens - 1)


def meets_slo(record: RequestRecord, slo: Slo) -> bool:
    """True when the request succeeded and met every declared limit."""
    if not record.ok:
        return False
    if slo.ttft_ms is not None and ttft_s(record) * MS_PER_S > slo.ttft_ms:
        return False
    if slo.e2e_ms is not None and e2e_s(record) * MS_PER_S > slo.e2e_ms:
        return False
    tpot = tpot_s(record)
    return not (slo.tpot_ms is not None and tpot is not None and tpot * MS_PER_S > slo.tpot_ms)


def usage_disagrees(record: RequestRecord) -> bool:
    """True when the client's token count contradicts the server's usage."""
    if record.output_tokens is None:
        return False
    if record.client_count_exact:
        return record.client_output_tokens != record.output_tokens
    return record.client_output_tokens > record.output_tokens


# vLLM streams one token per chunk unless it decodes several per step (speculative decoding);
# a usage above this many tokens per received text chunk is not what was streamed.
USAGE_TOKENS_PER_CHUNK_TOLERANCE = 1.5


def usage_above_stream(record: RequestRecord) -> bool:
    """True when the server's usage claims more tokens than the stream plausibly carried:
    above `USAGE_TOKENS_PER_CHUNK_TOLERANCE` per text chunk, with no per-chunk counts."""
    if record.output_tokens is None or record.chunk_tokens is not None:
        return False
    chunks = len(record.token_times_ns)
    return record.output_tokens > USAGE_TOKENS_PER_CHUNK_TOLERANCE * max(chunks, 1)


def length_not_honoured(record: RequestRecord) -> bool:
    """True when the request's output length provably differs from the one asked for."""
    expected = record.expected_output_tokens
    if expected is None:
        return False
    if record.output_tokens is not None:
        return record.output_tokens != expected
    if record.client_count_exact:
        return record.client_output_tokens != expected
    return record.client_output_tokens > expected  # chunks are a lower bound on tokens
