"""Async streaming client for OpenAI-compatible `/v1/completions` and `/v1/chat/completions`.

Every request streams (`stream: true`) and asks for token counts (`stream_options:
{include_usage: true}`). The receive loop is the hot path and does as little as possible: it
stamps each read from the socket with `time.monotonic_ns()` and keeps the raw bytes. Parsing the
server-sent events (SSE) happens after the response has ended (`parse_stream`), so a stream's
JSON never delays the timestamp of another stream's bytes. Events that arrive in one read share
its timestamp: they did arrive together. The transport (aiohttp today) is confined to
`StreamingClient.send`; `parse_stream` only needs `(timestamp, bytes)` pairs, so a later
transport (raw asyncio streams, kernel receive timestamps) can reuse it unchanged.

A failed request is an outcome, not an exception: `RequestRecord.error` holds its `ErrorKind`.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal

from bench.errors import BenchConfigError, EndpointError

if TYPE_CHECKING:
    import aiohttp

Api = Literal["completions", "chat"]
TokenCounter = Callable[[str], int]

_ERROR_BODY_CHARS = 300


def _aiohttp() -> Any:
    """The aiohttp module, imported on first use (it lives in the `bench` extra)."""
    try:
        import aiohttp
    except ImportError:
        raise BenchConfigError(
            "the benchmark client needs aiohttp: pip install 'infermeter[bench]'"
        ) from None
    return aiohttp


class ErrorKind(StrEnum):
    """Why a request failed; each kind is counted separately per load point."""

    TIMEOUT = "timeout"  # the per-request timeout passed (e.g. the server stalled)
    HTTP_STATUS = "http_status"  # the server answered with a non-200 status (kept in the record)
    DISCONNECT = "disconnect"  # the connection closed, or the stream ended, before completion
    MALFORMED_STREAM = "malformed_stream"  # an event that is not valid SSE/JSON of the API
    SERVER_ERROR = "server_error"  # the server reported an error inside the stream
    OUT_OF_MEMORY = "out_of_memory"  # an error whose text says the server ran out of memory
    CONNECTION = "connection"  # the server could not be reached at all
    EMPTY_OUTPUT = "empty_output"  # the stream completed without a single output token


@dataclass(frozen=True)
class PromptRequest:
    """One request to send: the prompt text and how many output tokens to ask for."""

    index: int
    prompt: str
    max_tokens: int
    input_tokens: int
    input_tokens_exact: bool = False
    expected_output_tokens: int | None = None


@dataclass(slots=True)
class RequestRecord:
    """What happened to one request, with monotonic nanosecond timestamps.

    `token_times_ns[i]` is the arrival time of the i-th chunk that carried output text, and
    `chunk_chars[i]` the length of that text; `chunk_tokens[i]`, when the server reported a
    running token count in every chunk (vLLM's `continuous_usage_stats`), is that chunk's
    number of tokens. `output_tokens` is the server's `usage.completion_tokens` (None when the
    server reported no usage); `client_output_tokens` is the client's own count (see
    `client_count_exact`).
    """

    index: int
    send_ns: int
    end_ns: int
    intended_send_ns: int | None = None
    warmup: bool = False
    token_times_ns: list[int] = field(default_factory=list)
    chunk_chars: list[int] = field(default_factory=list)
    chunk_tokens: list[int] | None = None
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    client_output_tokens: int = 0
    client_count_exact: bool = False
    input_tokens: int = 0
    requested_output_tokens: int = 0
    expected_output_tokens: int | None = None
    error: ErrorKind | None = None
    error_detail: str = ""
    http_status: int | None = None

    @property
    def ok(self) -> bool:
        """True when the request completed and produced output."""
        return self.error is None


@dataclass(slots=True)
class ParsedStream:
    """The outcome of parsing one response's SSE bytes."""

    token_times_ns: list[int] = field(default_factory=list)
    chunk_chars: list[int] = field(default_factory=list)
    chunk_tokens: list[int] | None = None
    text_parts: list[str] = field(default_factory=list)
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    done: bool = False
    finished: bool = False
    error: ErrorKind | None = None
    error_detail: str = ""


def _is_out_of_memory(text: str) -> bool:
    lowered = text.lower()
    return "out of memory" in lowered or "outofmemory" in lowered


def _error_kind_from_payload(message: str) -> ErrorKind:
    return ErrorKind.OUT_OF_MEMORY if _is_out_of_memory(message) else ErrorKind.SERVER_ERROR


def parse_stream(reads: list[tuple[int, bytes]], api: Api) -> ParsedStream:
    """Parse the SSE bytes of one streamed response, each read stamped with its arrival time.

    An event takes the timestamp of the read that completed its line. Chunks whose text is
    empty (vLLM's first chat chunk carries only the role) do not count as tokens. With a running
    usage count in every chunk, each text chunk's token count is the increase since the previous
    text chunk. A payload that is not JSON, or an `error` object, ends parsing with the kind set.
    """
    parser = _SseParser(api)
    pending = b""
    for arrived_ns, data in reads:
        if b"\n" not in data:
            pending += data
            continue
        lines = (pending + data).split(b"\n")
        pending = lines.pop()
        for line in lines:
            if not parser.feed(arrived_ns, line):
                return parser.parsed
    if pending.strip() and reads and not parser.feed(reads[-1][0], pending):
        return parser.parsed
    return parser.finish()


class _SseParser:
    """Line-by-line state of `parse_stream`."""

    def __init__(self, api: Api) -> None:
        self.chat = api == "chat"
        self.parsed = ParsedStream()
        self.running_tokens: list[int] = []
        self.last_usage_total = 0
        self.usage_in_every_chunk = True

    def fail(self, kind: ErrorKind, detail: str) -> bool:
        self.parsed.error, self.parsed.error_detail = kind, detail
        return False

    def feed(self, arrived_ns: int, line: bytes) -> bool:
        """Take one line; False when the stream turned out to be failed."""
        if not line.startswith(b"data:"):
            return True  # blank separators, comments (": ping"), `event:` fields
        payload = line[5:].strip()
        parsed = self.parsed
        if payload == b"[DONE]":
            parsed.done = True
            return True
        try:
            event = json.loads(payload)
        except ValueError:
            return self.fail(ErrorKind.MALFORMED_STREAM, f"not JSON: {payload[:80]!r}")
        if not isinstance(event, dict):
            return self.fail(ErrorKind.MALFORMED_STREAM, f"not an object: {payload[:80]!r}")
        error = event.get("error")
        if error is not None:
            message = str(error.get("message", "") if isinstance(error, dict) else error)
            return self.fail(_error_kind_from_payload(message), message[:_ERROR_BODY_CHARS])
        text = ""
        choices = event.get("choices")
        if choices:
            choice = choices[0]
            if self.chat:
                delta = choice.get("delta") or {}
                text = (
                    delta.get("content")
                    or delta.get("reasoning_content")
                    or delta.get("reasoning")
                    or ""
                )
            else:
                text = choice.get("text") or ""
            if choice.get("finish_reason"):
                parsed.finished = True
        usage = event.get("usage")
        if usage:
            completion = usage.get("completion_tokens")
            if isinstance(completion, int):
                parsed.output_tokens = completion
                if text:
                    self.running_tokens.append(completion - self.last_usage_total)
                self.last_usage_total = completion
            prompt = usage.get("prompt_tokens")
            if isinstance(prompt, int):
                parsed.prompt_tokens = prompt
        elif text:
            self.usage_in_every_chunk = False
        if text:
            parsed.token_times_ns.append(arrived_ns)
            parsed.chunk_chars.append(len(text))
            parsed.text_parts.append(text)
        return True

    def finish(self) -> ParsedStream:
        parsed = self.parsed
        if (
            self.usage_in_every_chunk
            and self.running_tokens
            and len(self.running_tokens) == len(parsed.token_times_ns)
        ):
            parsed.chunk_tokens = self.running_tokens
        return parsed


def _record_from_parsed(
    record: RequestRecord, parsed: ParsedStream, count_tokens: TokenCounter | None
) -> None:
    record.token_times_ns = parsed.token_times_ns
    record.chunk_chars = parsed.chunk_chars
    record.chunk_tokens = parsed.chunk_tokens
    record.prompt_tokens = parsed.prompt_tokens
    record.output_tokens = parsed.output_tokens
    if count_tokens is not None:
        record.client_output_tokens = count_tokens("".join(parsed.text_parts))
        record.client_count_exact = True
    else:
        record.client_output_tokens = len(parsed.token_times_ns)
    if record.error is not None:
        return
    if parsed.error is not None:
        record.error, record.error_detail = parsed.error, parsed.error_detail
    elif not (parsed.done or parsed.finished):
        record.error = ErrorKind.DISCONNECT
        record.error_detail = "the stream ended without [DONE] or a finish_reason"
    elif not parsed.token_times_ns:
        record.error = ErrorKind.EMPTY_OUTPUT
        record.error_detail = "the stream carried no output text"


class StreamingClient:
    """Sends streaming requests to one OpenAI-compatible server; use as an async context manager.

    `base_url` is the server root (`http://host:port`; a trailing `/v1` is accepted).
    `ignore_eos` asks vLLM-style servers to generate exactly `max_tokens` tokens;
    `continuous_usage_stats` asks for a running token count in every chunk (vLLM), which makes
    the per-token timing of multi-token chunks exact. `count_tokens`, when given, is the client's
    own token counter for the received text (a tokenizer), used to check the server's usage.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api: Api = "completions",
        timeout_s: float = 600.0,
        ignore_eos: bool = True,
        continuous_usage_stats: bool = False,
        count_tokens: TokenCounter | None = None,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        self.base_url = normalize_base_url(base_url)
        self.model = model
        self.api: Api = api
        self.timeout_s = timeout_s
        self.ignore_eos = ignore_eos
        self.continuous_usage_stats = continuous_usage_stats
        self.count_tokens = count_tokens
        self.extra_body = dict(extra_body or {})
        path = "/v1/chat/completions" if api == "chat" else "/v1/completions"
        self.url = self.base_url + path
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> StreamingClient:
        aiohttp = _aiohttp()
        # No pool limit: the load generator, not the connector, decides how many are in flight.
        connector = aiohttp.TCPConnector(limit=0, limit_per_host=0, force_close=False)
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(total=None),
            auto_decompress=False,
        )
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def encode_body(self, request: PromptRequest) -> bytes:
        """The JSON body for one request."""
        stream_options: dict[str, bool] = {"include_usage": True}
        if self.continuous_usage_stats:
            stream_options["continuous_usage_stats"] = True
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "stream": True,
            "stream_options": stream_options,
            "temperature": 0.0,
        }
        if self.api == "chat":
            body["messages"] = [{"role": "user", "content": request.prompt}]
        else:
            body["prompt"] = request.prompt
        if self.ignore_eos:
            body["ignore_eos"] = True
        body.update(self.extra_body)
        return json.dumps(body).encode()

    async def send(
        self, request: PromptRequest, intended_send_ns: int | None = None
    ) -> RequestRecord:
        """Send one request, stream its response, and return its record (never raises for
        a failed request: the failure is in `record.error`)."""
        aiohttp = _aiohttp()
        session = self._session
        if session is None:
            raise RuntimeError("StreamingClient.send called outside `async with`")
        body = self.encode_body(request)
        reads: list[tuple[int, bytes]] = []
        clock = time.monotonic_ns
        record = RequestRecord(
            index=request.index,
            send_ns=0,
            end_ns=0,
            intended_send_ns=intended_send_ns,
            input_tokens=request.input_tokens,
            requested_output_tokens=request.max_tokens,
            expected_output_tokens=request.expected_output_tokens,
        )
        record.send_ns = clock()
        try:
            async with (
                asyncio.timeout(self.timeout_s),
                session.post(
                    self.url, data=body, headers={"Content-Type": "application/json"}
                ) as response,
            ):
                if response.status != 200:
                    raw = await response.read()
                    text = raw.decode("utf-8", "replace")
                    record.http_status = response.status
                    record.error = (
                        ErrorKind.OUT_OF_MEMORY
                        if _is_out_of_memory(text)
                        else ErrorKind.HTTP_STATUS
                    )
                    record.error_detail = f"HTTP {response.status}: {text[:_ERROR_BODY_CHARS]}"
                else:
                    append = reads.append
                    # The hot path: one clock read and one append per socket read.
                    async for data in response.content.iter_any():
                        append((clock(), data))
        except TimeoutError:
            record.error = ErrorKind.TIMEOUT
            record.error_detail = f"no complete response within {self.timeout_s:g} s"
        except aiohttp.ClientConnectorError as error:
            record.error = ErrorKind.CONNECTION
            record.error_detail = str(error)
        except (aiohttp.ClientPayloadError, aiohttp.ServerDisconnectedError) as error:
            record.error = ErrorKind.DISCONNECT
            record.error_detail = str(error) or type(error).__name__
        except (aiohttp.ClientError, OSError) as error:
            record.error = ErrorKind.DISCONNECT
            record.error_detail = f"{type(error).__name__}: {error}"
        record.end_ns = clock()
        if record.http_status is None:
            _record_from_parsed(record, parse_stream(reads, self.api), self.count_tokens)
        return record


def normalize_base_url(url: str) -> str:
    """`http://h:8000/v1/` → `http://h:8000`: the server root that API paths are appended to."""
    base = url.strip().rstrip("/")
    if base.endswith("/v1"):
        base = base[: -len("/v1")]
    return base


async def list_models(base_url: str, timeout_s: float = 10.0) -> list[str]:
    """The model ids that `GET /v1/models` lists. Raises `EndpointError` when the server
    cannot be reached, `ValueError` when its answer is not a model list."""
    aiohttp = _aiohttp()
    url = normalize_base_url(base_url) + "/v1/models"
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout_s)) as session,
            session.get(url) as response,
        ):
            if response.status != 200:
                raise ValueError(f"GET {url} answered HTTP {response.status}")
            payload = await response.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, OSError) as error:
        detail = str(error) or type(error).__name__
        raise EndpointError(f"cannot reach {base_url}: {detail}", "--endpoint") from None
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        raise ValueError(f"GET {url} did not return a model list")
    return [str(entry["id"]) for entry in data if isinstance(entry, dict) and "id" in entry]
