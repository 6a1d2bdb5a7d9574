"""The stand-in OpenAI server's own behaviour, where the tests that use it rely on it."""

from __future__ import annotations

import itertools
import time
from typing import Any

from aiohttp import web
from bench_helpers import prompt_requests, send_all
from fake_openai_server import FakeOpenAIServer, FakeServerConfig


class _HeldOnce(FakeOpenAIServer):
    """The stand-in on a host that keeps its thread off the CPU for `held_s` once, just after
    the first request arrived: its first token is written late, as a busy host writes it."""

    def __init__(self, config: FakeServerConfig, held_s: float) -> None:
        super().__init__(config)
        self.held_s = held_s

    async def _respond(
        self, request: web.Request, body: dict[str, Any], arrived: float, ordinal: int
    ) -> web.StreamResponse:
        if ordinal == 0:
            time.sleep(self.held_s)  # blocks the server's event loop, as a stall does
        return await super()._respond(request, body, arrived, ordinal)


def test_fake_server_tokens_after_a_late_first_token_keep_their_pace() -> None:
    """After a first token written 190 ms late, the next tokens still come `itl_s` apart, as an
    engine still decodes one token a step. (The bug: they were due at arrival + ttft + k·itl,
    long past by then, and came at once, so a short run measured a TPOT faster than the GPU
    could decode and the registry's physics check refused the result.) Each token is due
    `itl_s` after the previous one's due time from the first token's write on, so the first
    gap and the span of the writes have exact floors, whatever the load."""
    itl_s, tokens = 0.02, 6
    with _HeldOnce(FakeServerConfig(ttft_s=0.01, itl_s=itl_s), held_s=0.2) as server:
        requests = prompt_requests(1, tokens)
        (record,) = send_all(server.url, requests)
    assert record.output_tokens == tokens
    assert server.stats.write_lateness_ns[0] >= 0.15e9, "the first token was not late"
    writes_ns = server.stats.token_writes_ns[requests[0].prompt]
    gaps_s = [(later - earlier) / 1e9 for earlier, later in itertools.pairwise(writes_ns)]
    tick_s = 1e-6  # asyncio fires a timer up to its clock's resolution early (1 ns)
    assert gaps_s[0] >= itl_s - tick_s, gaps_s
    assert (writes_ns[-1] - writes_ns[0]) / 1e9 >= (tokens - 1) * itl_s - tick_s, gaps_s
