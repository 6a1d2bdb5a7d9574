"""Async streaming client for OpenAI-compatible `/v1/completions` and `/v1/chat/completions`.

Every request streams (`stream: true`) and asks for token counts (`stream_options:
{include_usage: true}`). The receive path is the hot path and does as little as possible: it
keeps each socket read with its arrival time (the kernel's receive time on Linux, see
`bench.client.transport`) and follows the HTTP framing. Parsing the server-sent events (SSE) happens
after the response has ended (`bench.client.stream.parse_stream`), so a stream's JSON never delays
the timestamp of another stream's bytes. Events that arrive in one read share its timestamp: they
did arrive together.

`http://` endpoints use `bench.client.transport` (raw sockets on the event loop); `https://` ones
use aiohttp (the `bench` extra), whose reads are stamped in Python as they return. `run_event_loop`
runs a coroutine on uvloop when it is installed, which roughly halves the client's cost per read.

A failed request is an outcome, not an exception: `RequestRecord.error` holds its `ErrorKind`.

Its parts: `request_record` (`PromptRequest`, `RequestRecord`, how a parsed stream fills a
record) and `extra_body` (`--extra-body`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from infermeter.bench.client import transport
from infermeter.bench.client.request_record import (
    PromptRequest,
    RequestRecord,
    TokenCounter,
    record_from_parsed,
)
from infermeter.bench.client.stream import (
    ERROR_BODY_CHARS,
    Api,
    ErrorKind,
    StreamParser,
    is_out_of_memory,
    parse_stream,
)
from infermeter.bench.errors import BenchConfigError, EndpointError
from infermeter.calculators.json_text import json_loads

if TYPE_CHECKING:
    import aiohttp

__all__ = [
    "StreamingClient",
    "auth_headers",
    "list_models",
    "normalize_base_url",
    "run_event_loop",
]

T = TypeVar("T")


def run_event_loop(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)`, on uvloop's event loop when uvloop is installed; a signal passed on
    to this thread is raised from the loop (`bench.session.interrupts.event_loop`)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(_stoppable(main))
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(_stoppable(main))


async def _stoppable(main: Coroutine[Any, Any, T]) -> T:
    from infermeter.bench.session.interrupts import event_loop

    with event_loop(asyncio.get_running_loop()):
        return await main


def _aiohttp() -> Any:
    """The aiohttp module, imported on first use (it lives in the `bench` extra)."""
    try:
        import aiohttp
    except ImportError:
        raise BenchConfigError(
            "the benchmark client needs aiohttp: pip install 'infermeter[bench]'"
        ) from None
    return aiohttp


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
        api_key: str | None = None,
    ) -> None:
        self.base_url = normalize_base_url(base_url)
        self.model = model
        self.api: Api = api
        self.timeout_s = timeout_s
        self.ignore_eos = ignore_eos
        self.continuous_usage_stats = continuous_usage_stats
        self.count_tokens = count_tokens
        self.extra_body = dict(extra_body or {})
        self.api_key = api_key
        path = "/v1/chat/completions" if api == "chat" else "/v1/completions"
        self.url = self.base_url + path
        parts = urlsplit(self.url)
        self._raw = parts.scheme == "http"  # https goes through aiohttp (TLS)
        self._host = parts.hostname or "127.0.0.1"
        self._cut_ns: int | None = None  # in-flight requests end by then (`cut_in_flight`)
        self._limits: set[asyncio.Timeout] = set()
        self._port = transport.url_port(parts)
        host_header = parts.netloc.rsplit("@", 1)[-1]
        self._request_head = (
            f"POST {parts.path or '/'} HTTP/1.1\r\nHost: {host_header}\r\n"
            "Content-Type: application/json\r\nAccept: text/event-stream\r\n"
            f"{_authorization_line(api_key)}Content-Length: "
        ).encode()
        self._headers = {"Content-Type": "application/json", **auth_headers(api_key)}
        self._pool: transport.ConnectionPool | None = None
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> StreamingClient:
        if self._raw:
            self._pool = transport.ConnectionPool(self._host, self._port)
            return self
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
        if self._pool is not None:
            self._pool.close()
            self._pool = None
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
        if request.messages is not None:
            if self.api == "chat":
                body["messages"] = [
                    {"role": role, "content": content} for role, content in request.messages
                ]
            else:  # the chat as one transcript, so a completions server sees the same history
                body["prompt"] = "\n\n".join(f"{role}: {text}" for role, text in request.messages)
        elif self.api == "chat":
            body["messages"] = [{"role": "user", "content": request.prompt}]
        else:
            body["prompt"] = request.prompt
        if self.ignore_eos:
            body["ignore_eos"] = True
        body.update(self.extra_body)
        return json.dumps(body).encode()

    def _new_record(self, request: PromptRequest, intended_send_ns: int | None) -> RequestRecord:
        return RequestRecord(
            index=request.index,
            send_ns=0,
            end_ns=0,
            intended_send_ns=intended_send_ns,
            input_tokens=request.input_tokens,
            requested_output_tokens=request.max_tokens,
            expected_output_tokens=request.expected_output_tokens,
            session=request.session,
            turn=request.turn,
        )

    def cut_in_flight(self, deadline_ns: int | None) -> None:
        """End every request still in flight at `deadline_ns` (the monotonic clock), and every
        one sent from now on: a point whose `--duration` is over gives its requests in flight
        a bounded time to finish (`bench.run.load`); one still streaming then is a timeout. None
        lifts the cut (the next point)."""
        self._cut_ns = deadline_ns
        for limit in self._limits:
            self._bound(limit)

    def _bound(self, limit: asyncio.Timeout) -> None:
        if self._cut_ns is None:
            return
        cut = self._cut_ns / 1e9  # the loop's clock is time.monotonic
        when = limit.when()
        if when is None or cut < when:
            limit.reschedule(cut)

    @contextlib.asynccontextmanager
    async def _time_limit(self) -> AsyncIterator[None]:
        """The per-request timeout, shortened to the point's cut (`cut_in_flight`)."""
        async with asyncio.timeout(self.timeout_s) as limit:
            self._limits.add(limit)
            self._bound(limit)
            try:
                yield
            finally:
                self._limits.discard(limit)

    def _timeout_detail(self) -> str:
        if self._cut_ns is not None and time.monotonic_ns() >= self._cut_ns:
            return "still streaming when the point's time was up (--duration, then as long again)"
        return f"no complete response within {self.timeout_s:g} s"

    async def send(
        self, request: PromptRequest, intended_send_ns: int | None = None
    ) -> RequestRecord:
        """Send one request, stream its response, and return its record (never raises for
        a failed request: the failure is in `record.error`)."""
        if not self._raw:
            return await self._send_aiohttp(request, intended_send_ns)
        pool = self._pool
        if pool is None:
            raise RuntimeError("StreamingClient.send called outside `async with`")
        body = self.encode_body(request)
        data = self._request_head + b"%d\r\n\r\n" % len(body) + body
        record = self._new_record(request, intended_send_ns)
        parser = StreamParser(self.api)
        exchange = transport.Exchange(asyncio.get_running_loop().create_future(), parser.feed)
        record.send_ns = exchange.send_ns = time.monotonic_ns()
        try:
            async with self._time_limit():
                await pool.request(data, exchange)
        except TimeoutError:
            record.fail(ErrorKind.TIMEOUT, self._timeout_detail())
        except transport.ConnectFailed as error:
            record.fail(ErrorKind.CONNECTION, str(error))
        except transport.ConnectionLost as error:
            record.fail(ErrorKind.DISCONNECT, str(error))
        except transport.ProtocolError as error:
            record.fail(ErrorKind.MALFORMED_STREAM, f"HTTP: {error}")
        record.end_ns = time.monotonic_ns()
        record.send_ns = exchange.send_ns  # taken again just before the bytes left
        status = exchange.status
        if status is not None and status != 200:
            text = b"".join(data for _, data in exchange.body).decode("utf-8", "replace")
            self._set_http_error(record, status, text)
        else:
            keep = request.messages is not None
            record_from_parsed(record, parser.finish(), self.count_tokens, keep)
        return record

    @staticmethod
    def _set_http_error(record: RequestRecord, status: int, text: str) -> None:
        record.http_status = status
        record.fail(
            ErrorKind.OUT_OF_MEMORY if is_out_of_memory(text) else ErrorKind.HTTP_STATUS,
            f"HTTP {status}: {text[:ERROR_BODY_CHARS]}",
        )

    async def _send_aiohttp(
        self, request: PromptRequest, intended_send_ns: int | None
    ) -> RequestRecord:
        aiohttp = _aiohttp()
        session = self._session
        if session is None:
            raise RuntimeError("StreamingClient.send called outside `async with`")
        body = self.encode_body(request)
        reads: list[tuple[int, bytes]] = []
        clock = time.monotonic_ns
        record = self._new_record(request, intended_send_ns)
        record.send_ns = clock()
        try:
            async with (
                self._time_limit(),
                session.post(self.url, data=body, headers=self._headers) as response,
            ):
                if response.status != 200:
                    raw = await _read_up_to(response.content, transport.ERROR_BODY_BYTES)
                    self._set_http_error(record, response.status, raw.decode("utf-8", "replace"))
                else:
                    append = reads.append
                    # One clock read and one append per socket read.
                    async for data in response.content.iter_any():
                        append((clock(), data))
        except TimeoutError:
            record.fail(ErrorKind.TIMEOUT, self._timeout_detail())
        except aiohttp.ClientConnectorError as error:
            record.fail(ErrorKind.CONNECTION, str(error))
        except (aiohttp.ClientPayloadError, aiohttp.ServerDisconnectedError) as error:
            record.fail(ErrorKind.DISCONNECT, str(error) or type(error).__name__)
        except (aiohttp.ClientError, OSError) as error:
            record.fail(ErrorKind.DISCONNECT, f"{type(error).__name__}: {error}")
        record.end_ns = clock()
        if record.http_status is None:
            parsed = parse_stream(reads, self.api)
            record_from_parsed(record, parsed, self.count_tokens, request.messages is not None)
        return record


def normalize_base_url(url: str) -> str:
    """`http://h:8000/v1/` → `http://h:8000`: the server root that API paths are appended to."""
    base = url.strip().rstrip("/")
    expected = f"expected an http:// or https:// URL with a host, got {url!r}"
    try:
        parts = urlsplit(base)
        _ = parts.port  # read, so that a port that is no number or out of range is refused
    except ValueError as error:  # that, or an unclosed [IPv6 address
        raise BenchConfigError(f"{expected} ({error})", "--endpoint") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BenchConfigError(expected, "--endpoint")
    if base.endswith("/v1"):
        base = base[: -len("/v1")]
    return base


def refuse_unanswered(url: str, unanswered: str | None) -> None:
    """EndpointError when the server at `url` answers nothing: `unanswered` says why
    (`bench.launch.served.answer_problem`)."""
    if unanswered is not None:
        raise EndpointError(f"cannot reach {url}: {unanswered}", "--endpoint")


def auth_headers(api_key: str | None) -> dict[str, str]:
    """`Authorization: Bearer KEY` for a server started with an API key (none without one)."""
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def _authorization_line(api_key: str | None) -> str:
    if api_key and any(character in api_key for character in "\r\n"):
        raise BenchConfigError("the API key holds a line break", "--api-key")
    return f"Authorization: Bearer {api_key}\r\n" if api_key else ""


# The most of a model list read: a gateway listing hundreds of models answers about 1 MB.
MODEL_LIST_BYTES = 16 * 1024 * 1024


async def _read_up_to(content: aiohttp.StreamReader, limit: int) -> bytes:
    """An aiohttp response's body, read until its end or past `limit` bytes, whichever comes
    first (`limit` + 1 bytes then: a server may answer without end)."""
    body = bytearray()
    while len(body) <= limit and (piece := await content.read(limit + 1 - len(body))):
        body += piece
    return bytes(body)


async def list_models(
    base_url: str, timeout_s: float = 10.0, api_key: str | None = None
) -> list[str]:
    """The model ids that `GET /v1/models` lists. Raises `EndpointError` when the server
    cannot be reached, `ValueError` when its answer is not a model list."""
    aiohttp = _aiohttp()
    url = normalize_base_url(base_url) + "/v1/models"
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout_s)) as session,
            session.get(url, headers=auth_headers(api_key)) as response,
        ):
            if response.status != 200:
                raise ValueError(f"GET {url} answered HTTP {response.status}")
            body = await _read_up_to(response.content, MODEL_LIST_BYTES)
    except TimeoutError:
        detail = f"no answer to GET /v1/models within {timeout_s:g} s"
        raise EndpointError(f"cannot reach {base_url}: {detail}", "--endpoint") from None
    except (aiohttp.ClientError, OSError) as error:
        detail = str(error) or type(error).__name__
        raise EndpointError(f"cannot reach {base_url}: {detail}", "--endpoint") from None
    if len(body) > MODEL_LIST_BYTES:
        raise ValueError(f"GET {url} answered more than {MODEL_LIST_BYTES:,} bytes")
    try:
        payload = json_loads(body)
    except ValueError:
        raise ValueError(f"GET {url} did not return JSON") from None
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        raise ValueError(f"GET {url} did not return a model list")
    return [str(entry["id"]) for entry in data if isinstance(entry, dict) and "id" in entry]
