"""A stand-in OpenAI-compatible server for the bench tests (it is not vLLM and not a model).

It runs in-process, in its own thread and event loop, on 127.0.0.1 with a free port, and
serves `/v1/completions` and `/v1/chat/completions` (streaming, vLLM's chunk format),
`/v1/models`, `/health` and a small Prometheus `/metrics`. Timings are controlled: the first
chunk is due `ttft_s` after the request arrived, and chunk c `c·k·itl_s` after the first chunk
was written, where k is `tokens_per_chunk` (so each token takes `itl_s`, and a chunk carries k
tokens). Anchored at the first chunk's write, a first chunk that a busy host wrote late is
followed at the pace still, as an engine decodes one token a step however late its first was
(due from the arrival, its followers were all overdue and came at once). Deadlines are absolute
from there, so sleep overshoot does not accumulate: a later chunk written late is followed by
its overdue ones back to back.

Faults (`fault`, applied to every `fault_every`-th request by arrival, after
`fault_after_chunks` chunks where that makes sense): `http_500`, `http_503`, `oom` (HTTP 500
whose body says CUDA out of memory), `disconnect` (connection closed mid-stream), `malformed`
(an event that is not JSON), `stall` (stops writing until the client gives up), `stream_error`
(an error object inside the stream, as vLLM sends), `huge_event` (one 4 MiB SSE line),
`deep_event` (an event nested 100,000 arrays deep: deeper than Python's JSON parser goes).

A prefix cache (`prefix_block_words` > 0), modelled on vLLM's: a prompt (its words, the chat's
messages flattened in order) is cut into blocks of that many words; the leading blocks already
seen (in earlier prompts, or in a prompt plus the reply generated for it) are hits. TTFT is then
`ttft_s + ttft_s_per_new_word·(words not hit) + ttft_s_per_cached_word·(words hit)`, and
`/metrics` counts `vllm:prefix_cache_queries_total` (prompt words) and
`vllm:prefix_cache_hits_total` (words hit), as vLLM counts tokens. `version` (when set) is what
`/version` answers, as vLLM's does.

A batch limit (`max_running`, like vLLM's `--max-num-seqs`): at most that many requests are
served at once, the others wait in arrival order, so a closed loop's throughput stops growing
at concurrency `max_running`.

Load-dependent latency, a hockey stick like a real server's: the first chunk comes
`ttft_s + ttft_s_per_rate·λ + ttft_s_per_rate_past_knee·max(0, λ − knee_rate)` after arrival,
where λ is the arrival rate the server saw: its arrivals in the last `rate_window_s` seconds,
per second (a count, so that a client that a busy test machine holds back and that then catches
up with its schedule, in a burst, does not move it; the median of the gaps did). So a test
knows the true highest rate that meets a TTFT bound (`knee_rate_for_ttft`).
"""

from __future__ import annotations

import asyncio
import bisect
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

# Events that are JSON objects in a shape no OpenAI server sends: each a fault of its own.
ODD_EVENTS = {
    "choices_not_list": b'data: {"choices": {"text": " tok"}}\n\n',
    "choice_not_object": b'data: {"choices": [" tok"]}\n\n',
    "text_not_string": b'data: {"choices": [{"index": 0, "text": 5}]}\n\n',
    "usage_not_object": b'data: {"choices": [], "usage": [1]}\n\n',
}
FAULTS = (
    "http_500", "http_503", "oom", "disconnect", "malformed", "stall", "stream_error",
    "huge_event", "deep_event", *ODD_EVENTS,
)  # fmt: skip
# The vLLM metrics the stand-ins serve on /metrics (this server, and the stand-in vLLM beside it):
# each one's type and vLLM's own help text, as vLLM's /metrics writes them above its samples.
VLLM_METRICS = {
    "vllm:num_requests_running": ("gauge", "Number of requests in model execution batches."),
    "vllm:num_requests_waiting": ("gauge", "Number of requests waiting to be processed."),
    "vllm:request_success_total": ("counter", "Count of successfully processed requests."),
    "vllm:kv_cache_usage_perc": ("gauge", "KV-cache usage. 1 means 100 percent usage."),
    "vllm:num_preemptions_total": (
        "counter", "Cumulative number of preemption from the engine."
    ),
    "vllm:prefix_cache_queries_total": ("counter", "Prefix cache queries, in terms of tokens."),
    "vllm:prefix_cache_hits_total": ("counter", "Prefix cache hits, in terms of tokens."),
    "vllm:request_queue_time_seconds": (
        "histogram", "Histogram of time spent in WAITING phase."
    ),
    "vllm:cache_config_info": ("gauge", "Information of the LLMEngine CacheConfig"),
}  # fmt: skip


def metric_header(name: str) -> list[str]:
    """The `# HELP` and `# TYPE` lines vLLM writes above metric `name`'s samples."""
    kind, words = VLLM_METRICS[name]
    return [f"# HELP {name} {words}", f"# TYPE {name} {kind}"]


@dataclass
class FakeServerConfig:
    """Behaviour of the fake server; may be changed between requests."""

    model: str = "fake/model"
    ttft_s: float = 0.0
    itl_s: float = 0.0
    tokens_per_chunk: int = 1
    # every text chunk held back and written in one piece after the last, as a bursting front end
    # or a buffering proxy delivers them: the client reads them together, in one read
    one_write: bool = False
    report_usage: bool = True
    usage_offset: int = 0  # added to the reported completion_tokens (a lying server)
    output_tokens: int | None = None  # overrides max_tokens (a server that ignores it)
    token_text: str = " tok"
    # every N-th token's chunk carries no text, as real vLLM streams a token whose text it holds
    # back (a lone byte of a multi-byte character, a special token); 0: never
    empty_text_every: int = 0
    fault: str | None = None
    fault_every: int = 1
    fault_after_chunks: int = 2
    stall_s: float = 30.0
    api_key: str | None = None  # like `vllm serve --api-key`: /v1/* wants `Bearer <key>`
    max_running: int | None = None
    prefix_block_words: int = 0
    ttft_s_per_new_word: float = 0.0
    ttft_s_per_cached_word: float = 0.0
    version: str | None = None
    ttft_s_per_rate: float = 0.0  # extra TTFT per request/s of recent arrivals
    ttft_s_per_rate_past_knee: float = 0.0  # and per request/s above `knee_rate`
    knee_rate: float = 0.0
    rate_window_s: float = 0.5


def ttft_s_at_rate(config: FakeServerConfig, rate: float) -> float:
    """The TTFT the server serves (before any prefix-cache term) when it sees `rate` req/s."""
    return (
        config.ttft_s
        + config.ttft_s_per_rate * rate
        + config.ttft_s_per_rate_past_knee * max(0.0, rate - config.knee_rate)
    )


def knee_rate_for_ttft(config: FakeServerConfig, ttft_bound_s: float) -> float:
    """The highest arrival rate whose TTFT stays within `ttft_bound_s` under `config`'s model."""
    at_knee = config.ttft_s + config.ttft_s_per_rate * config.knee_rate
    if ttft_bound_s <= at_knee:
        return (ttft_bound_s - config.ttft_s) / config.ttft_s_per_rate
    steepness = config.ttft_s_per_rate + config.ttft_s_per_rate_past_knee
    return config.knee_rate + (ttft_bound_s - at_knee) / steepness


@dataclass
class ServerStats:
    """What the server saw (read after the requests are done)."""

    requests: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    bodies: list[dict[str, Any]] = field(default_factory=list)
    arrival_times: list[float] = field(default_factory=list)
    # Request ordinal (its place in `bodies`) → time.monotonic() just before the last bytes of
    # its response ("data: [DONE]") were written: no client can have read the whole reply sooner.
    # (Taken after the handler returned, it lagged the client on a busy host: a 20 ms delay after
    # a reply read as 16 ms, CI of f741c1c1.)
    end_times: dict[int, float] = field(default_factory=dict)
    # Per prompt: time.monotonic_ns() just before each chunk of output text was written, the
    # truth a client's timestamps are checked against (same clock, same process).
    token_writes_ns: dict[str, list[int]] = field(default_factory=dict)
    # For every chunk written on the schedule, how long after its due time (the first chunk's
    # from the arrival, the others' from the first chunk's write) it was written: how late this
    # process's threads got to run then (0 when on time; load makes it grow).
    write_lateness_ns: list[int] = field(default_factory=list)
    prefix_queries: int = 0
    prefix_hits: int = 0
    cached_blocks: set[tuple[str, ...]] = field(default_factory=set)


class FakeOpenAIServer:
    """Start with `with FakeOpenAIServer(config) as server:`; `server.url` is its root URL."""

    def __init__(self, config: FakeServerConfig | None = None, port: int = 0) -> None:
        self.config = config or FakeServerConfig()
        self.stats = ServerStats()
        self.port = 0
        self._bind_port = port  # 0: any free port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stopped = threading.Event()
        self._batch: asyncio.Semaphore | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> FakeOpenAIServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._serve, name="fake-openai-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fake server did not start")

    def stop(self) -> None:
        """Close the server and wait for its thread; calling it again does nothing."""
        if self._thread is None or not self._thread.is_alive():
            return
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._stopped.set)
        self._thread.join(10)

    def reset_stats(self) -> None:
        self.stats = ServerStats()

    def _serve(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        app = web.Application()
        self.add_routes(app)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self._bind_port, backlog=1024)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        self._ready.set()
        while not self._stopped.is_set():
            await asyncio.sleep(0.02)
        await self._runner.cleanup()

    def add_routes(self, app: web.Application) -> None:
        """The server's routes (a subclass may add more)."""
        app.router.add_post("/v1/completions", self._completions)
        app.router.add_post("/v1/chat/completions", self._completions)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/health", self._health)
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/version", self._version)

    async def _version(self, request: web.Request) -> web.Response:
        if self.config.version is None:
            raise web.HTTPNotFound()
        return web.json_response({"version": self.config.version})

    def _refused(self, request: web.Request) -> web.Response | None:
        """vLLM's answer to a request without the server's API key, else None."""
        key = self.config.api_key
        if key is None or request.headers.get("Authorization") == f"Bearer {key}":
            return None
        return web.json_response({"error": "Unauthorized"}, status=401)

    async def _models(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        return web.json_response(
            {"object": "list", "data": [{"id": self.config.model, "object": "model"}]}
        )

    async def _health(self, request: web.Request) -> web.Response:
        return web.Response(text="")

    async def _metrics(self, request: web.Request) -> web.Response:
        model = self.config.model
        lines = [
            *metric_header("vllm:num_requests_running"),
            f'vllm:num_requests_running{{model_name="{model}"}} {self.stats.in_flight}',
            *metric_header("vllm:num_requests_waiting"),
            f'vllm:num_requests_waiting{{model_name="{model}"}} 0',
            *metric_header("vllm:request_success_total"),
            f'vllm:request_success_total{{model_name="{model}"}} {self.stats.requests}',
        ]
        if self.config.prefix_block_words:
            lines += [
                *metric_header("vllm:prefix_cache_queries_total"),
                f'vllm:prefix_cache_queries_total{{model_name="{model}"}} '
                f"{self.stats.prefix_queries}",
                *metric_header("vllm:prefix_cache_hits_total"),
                f'vllm:prefix_cache_hits_total{{model_name="{model}"}} {self.stats.prefix_hits}',
            ]
        return web.Response(text="\n".join(lines) + "\n", content_type="text/plain")

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        if (refused := self._refused(request)) is not None:
            return refused
        arrived = time.monotonic()
        body = await request.json()
        stats = self.stats
        ordinal = stats.requests
        stats.requests += 1
        stats.bodies.append(body)
        stats.arrival_times.append(arrived)
        stats.in_flight += 1
        stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
        try:
            if self.config.max_running is None:
                return await self._respond(request, body, arrived, ordinal)
            if self._batch is None:
                self._batch = asyncio.Semaphore(self.config.max_running)
            async with self._batch:
                return await self._respond(request, body, time.monotonic(), ordinal)
        finally:
            stats.in_flight -= 1
            stats.end_times.setdefault(ordinal, time.monotonic())

    async def _respond(
        self, request: web.Request, body: dict[str, Any], arrived: float, ordinal: int
    ) -> web.StreamResponse:
        cfg = self.config
        words = _prompt_word_list(body)
        hit = self._prefix_hit(words)
        rate = self._recent_rate() if cfg.ttft_s_per_rate or cfg.ttft_s_per_rate_past_knee else 0
        ttft_s = (
            ttft_s_at_rate(cfg, rate)
            + cfg.ttft_s_per_new_word * (len(words) - hit)
            + cfg.ttft_s_per_cached_word * hit
        )
        fault = cfg.fault if cfg.fault and ordinal % cfg.fault_every == 0 else None
        if fault in ("http_500", "http_503", "oom"):
            status = 503 if fault == "http_503" else 500
            message = (
                "CUDA out of memory. Tried to allocate 2.00 GiB"
                if fault == "oom"
                else "the engine is not available"
            )
            return web.json_response(
                {
                    "object": "error",
                    "message": message,
                    "type": "InternalServerError",
                    "code": status,
                },
                status=status,
            )
        chat = request.path.endswith("/chat/completions")
        options = body.get("stream_options") or {}
        include_usage = bool(options.get("include_usage")) and cfg.report_usage
        continuous = bool(options.get("continuous_usage_stats")) and cfg.report_usage
        prompt_tokens = _prompt_words(body)
        # vLLM takes the newer `max_completion_tokens` too (AIPerf and GuideLLM send it)
        asked = body.get("max_tokens", body.get("max_completion_tokens"))
        total = cfg.output_tokens if cfg.output_tokens is not None else int(asked)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        kind = "chat.completion.chunk" if chat else "text_completion"

        def event(text: str | None, finish: str | None, usage: dict[str, int] | None) -> bytes:
            if text is None:
                choices: list[dict[str, Any]] = []
            elif chat:
                choices = [{"index": 0, "delta": {"content": text}, "finish_reason": finish}]
            else:
                choices = [{"index": 0, "text": text, "logprobs": None, "finish_reason": finish}]
            chunk = {
                "id": f"cmpl-{ordinal}",
                "object": kind,
                "created": 0,
                "model": cfg.model,
                "choices": choices,
            }
            if usage is not None or continuous:
                chunk["usage"] = usage
            return b"data: " + json.dumps(chunk).encode() + b"\n\n"

        def usage_at(done: int) -> dict[str, int]:
            completion = done + cfg.usage_offset
            return {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion,
                "total_tokens": prompt_tokens + completion,
            }

        if chat:  # vLLM's first chat chunk carries only the role
            role = {
                "id": f"cmpl-{ordinal}",
                "object": kind,
                "created": 0,
                "model": cfg.model,
                "choices": [
                    {
                        "index": 0,
                        "delta": {"role": "assistant", "content": ""},
                        "finish_reason": None,
                    }
                ],
            }
            await response.write(b"data: " + json.dumps(role).encode() + b"\n\n")
        loop = asyncio.get_running_loop()
        writes_ns = self.stats.token_writes_ns.setdefault(str(body.get("prompt", "")), [])
        emitted = 0
        chunk_index = 0
        held: list[bytes] = []
        first_written = 0.0  # when the first chunk was written: the later ones' schedule
        while emitted < total:
            tokens = min(cfg.tokens_per_chunk, total - emitted)
            # the first from the arrival, the others from the first's write (the docstring's why)
            deadline = first_written + emitted * cfg.itl_s if chunk_index else arrived + ttft_s
            delay = deadline - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            if fault is not None and chunk_index == cfg.fault_after_chunks:
                if fault == "disconnect":
                    assert request.transport is not None
                    request.transport.close()
                    return response
                if fault == "malformed":
                    await response.write(b'data: {"choices": [{"text": "tok\n\n')
                elif fault in ODD_EVENTS:
                    await response.write(ODD_EVENTS[fault])
                elif fault == "deep_event":
                    await response.write(b"data: " + b"[" * 100_000 + b"]" * 100_000 + b"\n\n")
                elif fault == "stream_error":
                    error = {
                        "error": {
                            "object": "error",
                            "message": "engine step failed",
                            "type": "InternalServerError",
                            "code": 500,
                        }
                    }
                    await response.write(b"data: " + json.dumps(error).encode() + b"\n\n")
                    await response.write(b"data: [DONE]\n\n")
                    return response
                elif fault == "stall":
                    await self._stall(request)
                    return response
                elif fault == "huge_event":  # one 4 MiB SSE line, written in 64 KiB pieces
                    await response.write(b'data: {"choices": [{"text": "')
                    for _ in range(64):
                        await response.write(b"x" * 65536)
                    await response.write(b'"}]}\n\n')
            emitted += tokens
            finish = "length" if emitted >= total else None
            usage = usage_at(emitted) if continuous else None
            empty = cfg.empty_text_every and chunk_index % cfg.empty_text_every == 0
            chunk = event("" if empty else cfg.token_text * tokens, finish, usage)
            written_ns = time.monotonic_ns()
            if not chunk_index:
                first_written = written_ns / 1e9
            writes_ns.append(written_ns)
            self.stats.write_lateness_ns.append(max(0, written_ns - round(deadline * 1e9)))
            if cfg.one_write:
                held.append(chunk)
            else:
                await response.write(chunk)
            chunk_index += 1
        if held:
            await response.write(b"".join(held))
        self._cache_blocks(words + (cfg.token_text * emitted).split())
        if include_usage:
            await response.write(event(None, None, usage_at(emitted)))
        self.stats.end_times[ordinal] = time.monotonic()
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    def _prefix_hit(self, words: list[str]) -> int:
        """Words of the prompt's leading blocks already cached (and count the query)."""
        size = self.config.prefix_block_words
        if not size:
            return 0
        hit = 0
        while hit + size <= len(words) and tuple(words[: hit + size]) in self.stats.cached_blocks:
            hit += size
        self.stats.prefix_queries += len(words)
        self.stats.prefix_hits += hit
        self._cache_blocks(words)
        return hit

    def _cache_blocks(self, words: list[str]) -> None:
        size = self.config.prefix_block_words
        if size:
            for end in range(size, len(words) + 1, size):
                self.stats.cached_blocks.add(tuple(words[:end]))

    def _recent_rate(self) -> float:
        """Arrivals per second over the last `rate_window_s` seconds (see the docstring)."""
        window_s = self.config.rate_window_s
        times = self.stats.arrival_times
        since = times[-1] - window_s if times else 0.0
        recent = len(times) - bisect.bisect_right(times, since)
        return recent / window_s

    async def _stall(self, request: web.Request) -> None:
        deadline = time.monotonic() + self.config.stall_s
        while time.monotonic() < deadline:
            transport = request.transport
            if transport is None or transport.is_closing():
                return
            await asyncio.sleep(0.02)


def _prompt_word_list(body: dict[str, Any]) -> list[str]:
    if "messages" in body:
        return [word for m in body["messages"] for word in str(m.get("content", "")).split()]
    return str(body.get("prompt", "")).split()


def _prompt_words(body: dict[str, Any]) -> int:
    if "messages" in body:
        return sum(len(str(m.get("content", "")).split()) for m in body["messages"])
    return len(str(body.get("prompt", "")).split())


def main() -> None:
    """`python fake_openai_server.py '{"ttft_s": 0.02}'`: serve in this process (its own GIL,
    so a client's timing is not disturbed by the server's), print the port, stop when stdin
    closes."""
    import sys

    server = FakeOpenAIServer(
        FakeServerConfig(**json.loads(sys.argv[1] if len(sys.argv) > 1 else "{}"))
    )
    server.start()
    print(server.port, flush=True)
    sys.stdin.read()
    server.stop()


if __name__ == "__main__":
    main()
