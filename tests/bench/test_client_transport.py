"""The raw HTTP/1.1 transport (framing, kernel receive times) and the SSE template fast path."""

from __future__ import annotations

import asyncio
import json
import selectors
import socket
import struct
import threading
import time
from typing import cast
from urllib.parse import urlsplit

import pytest
from bench_helpers import prompt_requests, send_all
from fake_openai_server import FakeOpenAIServer

from infermeter.bench.client import transport
from infermeter.bench.client.client import StreamingClient
from infermeter.bench.client.request_record import RequestRecord
from infermeter.bench.client.stream import Api, ErrorKind, StreamParser, parse_stream
from infermeter.bench.launch.server import free_port


def _events(texts: list[str], *, chat: bool = False, spaced: bool = False) -> bytes:
    separators = (", ", ": ") if spaced else (",", ":")
    out = b""
    for i, text in enumerate(texts):
        finish = "length" if i == len(texts) - 1 else None
        if chat:
            choice = {"index": 0, "delta": {"content": text}, "finish_reason": finish}
        else:
            choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}
        event = {"id": "cmpl-1", "object": "x", "choices": [choice], "usage": None}
        out += b"data: " + json.dumps(event, separators=separators).encode() + b"\n\n"
    usage = {"prompt_tokens": 3, "completion_tokens": len(texts)}
    out += b"data: " + json.dumps({"choices": [], "usage": usage}).encode() + b"\n\n"
    return out + b"data: [DONE]\n\n"


TEXTS = [" a", " b", 'q"uote', "back\\slash", "new\nline", "\u00e9t\u00e9", "tab\t", "", " z"]


@pytest.mark.parametrize("chat", [False, True], ids=["completions", "chat"])
@pytest.mark.parametrize("spaced", [False, True], ids=["compact", "spaced"])
def test_parse_stream_template_path_matches_full_parse(chat: bool, spaced: bool) -> None:
    body = _events(TEXTS * 3, chat=chat, spaced=spaced)
    parsed = parse_stream([(i, body[i : i + 7]) for i in range(0, len(body), 7)], _api(chat))
    expected = [t for t in TEXTS * 3 if t]
    assert parsed.error is None
    assert parsed.text_parts == expected
    assert parsed.chunk_chars == [len(t) for t in expected]
    assert parsed.finished
    assert parsed.done
    assert parsed.output_tokens == len(TEXTS) * 3


def test_parse_stream_template_does_not_hide_an_error_of_the_same_shape() -> None:
    body = _events([" a", " b"])[:-30] + b'data: {"choices": [{"text": "x"}]\n\n'
    assert parse_stream([(1, body)], "completions").error == ErrorKind.MALFORMED_STREAM


def test_stream_parser_stamps_each_event_with_its_read() -> None:
    parser = StreamParser("completions")
    for arrived_ns, text in enumerate([" a", " b", " c"], start=1):
        event = {"choices": [{"text": text, "finish_reason": None}]}
        parser.feed(arrived_ns * 100, b"data: " + json.dumps(event).encode() + b"\n\n")
    parser.feed(400, b"data: [DONE]\n\n")
    assert parser.finish().token_times_ns == [100, 200, 300]


def _api(chat: bool) -> Api:
    return "chat" if chat else "completions"


def _chunked(body: bytes, size: int) -> bytes:
    out = b""
    for i in range(0, len(body), size):
        piece = body[i : i + size]
        extension = b";ext=1" if i == 0 else b""  # chunk extensions are allowed and ignored
        out += b"%x%s\r\n%s\r\n" % (len(piece), extension, piece)
    return out + b"0\r\n\r\n"


@pytest.mark.parametrize("read_size", [1, 2, 3, 5, 64, 100_000])
@pytest.mark.parametrize("framing", ["chunked", "length", "close"])
def test_exchange_reassembles_body_across_any_read_boundaries(read_size: int, framing: str) -> None:
    body = _events([f" t{i}" for i in range(20)])
    head = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"
    if framing == "chunked":
        raw = head + b"Transfer-Encoding: chunked\r\n\r\n" + _chunked(body, 37)
    elif framing == "length":
        raw = head + b"Content-Length: %d\r\n\r\n" % len(body) + body
    else:
        raw = head + b"Connection: close\r\n\r\n" + body
    loop = asyncio.new_event_loop()
    exchange = transport.Exchange(loop.create_future())
    complete = False
    for i in range(0, len(raw), read_size):
        assert not complete
        complete = exchange.feed(i, raw[i : i + read_size])
    loop.close()
    assert exchange.status == 200
    assert complete is (framing != "close")
    assert b"".join(data for _, data in exchange.body) == body
    assert exchange.keep_alive is (framing != "close")


def test_exchange_refuses_a_bad_chunk_size() -> None:
    loop = asyncio.new_event_loop()
    exchange = transport.Exchange(loop.create_future())
    with pytest.raises(transport.ProtocolError, match="chunk size"):
        exchange.feed(0, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
    loop.close()


@pytest.mark.skipif(not transport.KERNEL_TIMESTAMPS, reason="kernel receive times: Linux only")
def test_kernel_receive_time_is_when_bytes_arrived_not_when_read() -> None:
    """The server writes a token, then the client's loop is blocked for 200 ms before it can
    read: the token's time must still be the write time, not the read time."""
    written_ns: list[int] = []
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            connection.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            for text in ("a", "b"):
                time.sleep(0.05)
                event = b'data: {"choices": [{"text": "%s", "finish_reason": null}]}\n\n' % (
                    text.encode()
                )
                written_ns.append(time.monotonic_ns())
                connection.sendall(b"%x\r\n%s\r\n" % (len(event), event))
            connection.sendall(b"e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n")
            time.sleep(0.3)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()

    async def main() -> list[int]:
        async with StreamingClient(f"http://127.0.0.1:{port}", "m", timeout_s=5) as client:
            task = asyncio.create_task(client.send(prompt_requests(1)[0]))
            await asyncio.sleep(0.02)
            time.sleep(0.2)  # the event loop is busy: nothing is read meanwhile
            record = await task
            assert record.error is None, record.error_detail
            return record.token_times_ns

    times = asyncio.run(main())
    thread.join(5)
    listener.close()
    assert len(times) == 2
    # Both tokens arrived while the loop was blocked; a read-time stamp would give them the
    # same time, 100+ ms after they were written. Each read carries its last packet's time, so
    # the pair read together share token b's time: a within 60 ms, b within 2 ms.
    assert abs(times[1] - written_ns[1]) < 2_000_000
    assert abs(times[0] - written_ns[0]) < 60_000_000


@pytest.mark.skipif(not transport.KERNEL_TIMESTAMPS, reason="needs SO_TIMESTAMPNS (Linux)")
def test_send_stamp_is_when_the_request_reached_the_server() -> None:
    """64 requests at once, twice on the same kept-alive connections: each record's send time
    is at most a little before the kernel's receive time of its request on the server side,
    never after it (TTFT starts when the request leaves, not when a burst was planned)."""
    arrivals_ns: dict[bytes, int] = {}
    listener = socket.create_server(("127.0.0.1", 0), backlog=256)
    listener.setsockopt(socket.SOL_SOCKET, 35, 1)  # SO_TIMESTAMPNS
    port = listener.getsockname()[1]
    event = b'data: {"choices": [{"text": "a", "finish_reason": "length"}]}\n\n'
    response = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"%x\r\n%s\r\n" % (len(event), event)
        + b"e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n"
    )
    stop = threading.Event()

    def serve() -> None:
        connections: list[socket.socket] = []
        with selectors.DefaultSelector() as selector:
            selector.register(listener, selectors.EVENT_READ)
            while not stop.is_set():
                for key, _ in selector.select(0.05):
                    sock = cast(socket.socket, key.fileobj)
                    if sock is listener:
                        connection, _ = listener.accept()
                        connection.setsockopt(socket.SOL_SOCKET, 35, 1)
                        connections.append(connection)
                        selector.register(connection, selectors.EVENT_READ)
                        continue
                    data, ancillary, _, _ = sock.recvmsg(65536, 64)
                    if not data:  # the client closed it: stop watching (closed below)
                        selector.unregister(sock)
                        continue
                    seconds, nanoseconds = struct.unpack_from("@ll", ancillary[0][2])
                    realtime_ns = seconds * 1_000_000_000 + nanoseconds
                    offset_ns = time.time_ns() - time.monotonic_ns()
                    prompt = json.loads(data.split(b"\r\n\r\n", 1)[1])["prompt"]
                    arrivals_ns[prompt.encode()] = realtime_ns - offset_ns
                    sock.sendall(response)
        for connection in connections:
            connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()

    async def main() -> list[RequestRecord]:
        async with StreamingClient(f"http://127.0.0.1:{port}", "m", timeout_s=5) as client:
            records = []
            for wave in range(2):
                requests = prompt_requests(64, first_index=64 * wave)
                records += await asyncio.gather(*(client.send(r) for r in requests))
            return records

    try:
        records = asyncio.run(main())
    finally:
        stop.set()
        thread.join(5)
        listener.close()
    assert [record.error_detail for record in records if record.error] == []
    lags_ns = [
        arrivals_ns[f"request {record.index} says hello".encode()] - record.send_ns
        for record in records
    ]
    assert min(lags_ns) > -100_000  # clocks: realtime → monotonic offsets sampled apart
    # The second wave reuses connections: its stamp is taken just before its own send. A
    # stamp taken before the burst would be late by the 63 sends before it (milliseconds).
    assert max(lags_ns[64:]) < 5_000_000


def test_client_retries_kept_alive_connection_the_server_closed(
    fake_server: FakeOpenAIServer,
) -> None:
    async def main() -> list[ErrorKind | None]:
        async with StreamingClient(fake_server.url, "fake/model", timeout_s=5) as client:
            first = await client.send(prompt_requests(1)[0])
            pool = client._pool
            assert pool is not None
            assert len(pool.idle) == 1
            # The server's side of the idle connection goes away without the client noticing.
            idle = pool.idle[0]
            asyncio.get_running_loop().remove_reader(idle.fd)
            idle.sock.shutdown(socket.SHUT_WR)
            await asyncio.sleep(0.05)
            second = await client.send(prompt_requests(1, first_index=1)[0])
            return [first.error, second.error]

    assert asyncio.run(main()) == [None, None]


def test_client_https_url_uses_aiohttp_and_classifies_refusal() -> None:
    port = free_port()
    records = send_all(f"https://127.0.0.1:{port}", prompt_requests(1), timeout_s=2)
    assert records[0].error == ErrorKind.CONNECTION


@pytest.mark.parametrize(
    ("url", "port"),
    [
        ("https://api.example.com/v1", 443),
        ("http://api.example.com/v1", 80),
        ("http://user:secret@10.0.0.5/v1", 80),
        ("https://api.example.com:8443/v1", 8443),
        ("http://127.0.0.1:8000", 8000),
    ],
)
def test_url_port_is_the_one_named_else_the_schemes_default(url: str, port: int) -> None:
    assert transport.url_port(urlsplit(url)) == port
