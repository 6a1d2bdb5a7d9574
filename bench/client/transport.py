"""A minimal HTTP/1.1 client for streamed responses, each socket read timed by the kernel.

Why not aiohttp for `http://` endpoints: per read it costs several times more than the few
microseconds a token may take at a million tokens a minute, and a timestamp taken in Python after
the read depends on how busy the client is: tokens of many streams that arrive together are
stamped one after another as the client gets round to them (+2.4 ms at 64 streams, +4.5 ms at
256 for a bare uvloop client). Here each connection is a non-blocking socket watched with the
event loop's `add_reader`, each read is one `recvmsg`, and on Linux the socket has
SO_TIMESTAMPNS set, so every read carries the time the kernel received the last packet it
returns, whatever the client was doing then. Those times are on CLOCK_REALTIME; they move to the
monotonic clock by an offset sampled at each request's send. Where the kernel gives none, a read
is stamped with `time.monotonic_ns()` as it returns.

The response framing (status line, headers, then a chunked, Content-Length or close-delimited
body) is followed as the reads arrive, so a response's end is seen at once and its connection
goes back to the pool; the body is kept as `(arrival_ns, bytes)` pairs for `bench.client.stream`.

Exceptions (per request; `bench.client.client` turns them into an `ErrorKind`)::

    TransportError          base
    ├── ConnectFailed       the server could not be reached
    ├── ConnectionLost      the connection closed or failed before the response was complete
    └── ProtocolError       the bytes are not an HTTP/1.1 response
"""

from __future__ import annotations

import asyncio
import platform
import socket
import struct
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import SplitResult

READ_SIZE = 65536
_HEAD_LIMIT = 65536
ERROR_BODY_BYTES = 65536  # the most of an answer other than 200 kept (its start says why)
# SO_TIMESTAMPNS (= SCM_TIMESTAMPNS) in Linux's asm-generic socket.h; Python does not name it.
# Architectures with their own numbering (alpha, mips, parisc, sparc) get user-space times.
_SO_TIMESTAMPNS = 35
_GENERIC_SOCKET_MACHINES = {"x86_64", "amd64", "aarch64", "arm64", "riscv64", "ppc64le"}
_TIMESPEC = struct.Struct("@ll")
_ANCILLARY_SIZE = socket.CMSG_SPACE(_TIMESPEC.size) if hasattr(socket, "CMSG_SPACE") else 0

KERNEL_TIMESTAMPS = sys.platform == "linux" and platform.machine().lower() in (
    _GENERIC_SOCKET_MACHINES
)

_HEAD, _CHUNKED, _LENGTH, _CLOSE, _TRAILER, _DONE = range(6)


def url_port(parts: SplitResult) -> int:
    """The port a URL reaches: the one it names, else its scheme's (443 for https, 80 otherwise).
    Raises ValueError where the URL names a port that is not a number from 0 to 65535."""
    return parts.port or (443 if parts.scheme == "https" else 80)


class TransportError(Exception):
    """Base class of the transport's per-request failures."""


class ConnectFailed(TransportError):
    """The server could not be reached (name resolution or connection refused)."""


class ConnectionLost(TransportError):
    """The connection closed or failed before the response was complete."""


class ProtocolError(TransportError):
    """The server's bytes are not a valid HTTP/1.1 response."""


@dataclass(slots=True, eq=False)
class Exchange:
    """One request and its response: status, headers and the body as timed reads."""

    done: asyncio.Future[None]
    # Takes each body read of a 200 response as it arrives (e.g. `StreamParser.feed`); other
    # bodies, and every body when it is None, are kept in `body`.
    on_body: Callable[[int, bytes], None] | None = None
    status: int | None = None
    headers: dict[bytes, bytes] = field(default_factory=dict)
    body: list[tuple[int, bytes]] = field(default_factory=list)
    clock_offset_ns: int = 0  # CLOCK_REALTIME − CLOCK_MONOTONIC when the request left
    send_ns: int = 0
    keep_alive: bool = True
    mode: int = _HEAD
    head: bytes = b""
    left: int = 0  # body bytes left: of the current chunk, or of a Content-Length body
    skip: int = 0  # bytes of the CRLF after a chunk's data still to skip
    partial: bytes = b""  # an incomplete chunk-size line, or the trailer so far
    kept: int = 0  # body bytes of an answer other than 200 kept so far

    @property
    def said_enough(self) -> bool:
        """An answer other than 200 whose first `ERROR_BODY_BYTES` have come: what went wrong
        is said; the rest (a proxy's page may keep coming) is neither waited for nor kept."""
        return self.kept >= ERROR_BODY_BYTES

    def feed(self, arrived_ns: int, data: bytes) -> bool:
        """Take one read; True when it completed the response."""
        if self.mode == _HEAD:
            rest = self._feed_head(data)
            if rest is None:
                return False
            if self.mode == _DONE:
                return True
            if not rest:
                return False
            data = rest
        mode = self.mode
        if mode == _CHUNKED:
            return self._feed_chunked(arrived_ns, data)
        if mode == _LENGTH:
            if len(data) >= self.left:
                if len(data) > self.left:
                    self.keep_alive = False  # bytes beyond the response: do not reuse
                    data = data[: self.left]
                self.mode = _DONE
                self._emit(arrived_ns, data)
                return True
            self.left -= len(data)
            self._emit(arrived_ns, data)
            return False
        if mode == _TRAILER:
            return self._feed_trailer(data)
        self._emit(arrived_ns, data)  # close-delimited
        return False

    def _feed_head(self, data: bytes) -> bytes | None:
        head = self.head + data if self.head else data
        end = head.find(b"\r\n\r\n")
        if end < 0:
            if len(head) > _HEAD_LIMIT:
                raise ProtocolError("response headers longer than 64 KiB")
            self.head = head
            return None
        self.head = b""
        lines = head[:end].split(b"\r\n")
        parts = lines[0].split(None, 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
            raise ProtocolError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
        status = int(parts[1])
        rest = head[end + 4 :]
        if 100 <= status < 200:  # informational (100 Continue): the real answer follows
            return self._feed_head(rest) if rest else None
        headers = self.headers
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip()
        self.status = status
        connection = headers.get(b"connection", b"").lower()
        self.keep_alive = (
            b"close" not in connection if parts[0] != b"HTTP/1.0" else b"keep-alive" in connection
        )
        if status in (204, 304):
            self.mode = _DONE
        elif b"chunked" in headers.get(b"transfer-encoding", b"").lower():
            self.mode = _CHUNKED
        elif b"content-length" in headers:
            try:
                self.left = int(headers[b"content-length"])
            except ValueError:
                raise ProtocolError("Content-Length is not a number") from None
            self.mode = _LENGTH if self.left > 0 else _DONE
        else:
            self.mode = _CLOSE
            self.keep_alive = False
        return rest

    def _feed_chunked(self, arrived_ns: int, data: bytes) -> bool:
        # Per chunk this is the client's second-largest cost after the SSE parse: locals only.
        if self.partial:
            data, self.partial = self.partial + data, b""
        pieces: list[bytes] = []
        append = pieces.append
        find = data.find
        size = len(data)
        left = self.left
        pos = min(self.skip, size)  # the CRLF after the previous read's last chunk
        self.skip -= pos
        while pos < size:
            if left:
                end = pos + left
                if end >= size:
                    left = end - size
                    append(data[pos:] if pos else data)
                    if not left:
                        self.skip = 2  # this read ended exactly with the chunk's data
                    break
                append(data[pos:end])
                left = 0
                pos = end + 2
                if pos > size:
                    self.skip = pos - size
                    break
                continue
            line_end = find(b"\r\n", pos)
            if line_end < 0:
                self.partial = data[pos:]
                if len(self.partial) > 1024:
                    raise ProtocolError("a chunk-size line longer than 1 KiB")
                break
            try:
                left = int(data[pos:line_end], 16)
            except ValueError:
                left = _chunk_size(data[pos:line_end])
            pos = line_end + 2
            if left <= 0:
                if left < 0:
                    raise ProtocolError(f"bad chunk size {data[pos - 2 - 20 : pos - 2]!r}")
                self.left = 0
                self.mode = _TRAILER
                self._append(arrived_ns, pieces)
                return self._feed_trailer(data[pos:])
        self.left = left
        self._append(arrived_ns, pieces)
        return False

    def _append(self, arrived_ns: int, pieces: list[bytes]) -> None:
        if len(pieces) == 1:
            self._emit(arrived_ns, pieces[0])
        elif pieces:
            self._emit(arrived_ns, b"".join(pieces))

    def _emit(self, arrived_ns: int, data: bytes) -> None:
        if self.on_body is not None and self.status == 200:
            self.on_body(arrived_ns, data)
        else:
            if self.status != 200:
                data = data[: ERROR_BODY_BYTES - self.kept]
                self.kept += len(data)
            self.body.append((arrived_ns, data))

    def _feed_trailer(self, data: bytes) -> bool:
        trailer = self.partial + data
        if trailer.startswith(b"\r\n"):
            end = 2
        else:
            end = trailer.find(b"\r\n\r\n")
            if end < 0:
                self.partial = trailer
                return False
            end += 4
        if len(trailer) > end:
            self.keep_alive = False
        self.partial = b""
        self.mode = _DONE
        return True


def _chunk_size(line: bytes) -> int:
    """The size of a chunk-size line that has extensions (`1a;name=value`)."""
    try:
        return int(line.split(b";", 1)[0], 16)
    except ValueError:
        raise ProtocolError(f"bad chunk size {line[:20]!r}") from None


class _Connection:
    """One socket, idle in the pool or carrying one exchange."""

    __slots__ = ("exchange", "fd", "loop", "pool", "sock")

    def __init__(self, pool: ConnectionPool, sock: socket.socket) -> None:
        self.pool = pool
        self.sock = sock
        self.fd = sock.fileno()
        self.loop = asyncio.get_running_loop()
        self.exchange: Exchange | None = None
        self.loop.add_reader(self.fd, self.on_readable)

    def on_readable(self) -> None:
        """The hot path: one read, its arrival time, and the framing."""
        try:
            data, ancillary, _flags, _address = self.sock.recvmsg(READ_SIZE, _ANCILLARY_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as error:
            self.lose(f"{type(error).__name__}: {error}")
            return
        exchange = self.exchange
        if exchange is None:  # idle: the server closed it (or sent bytes no one asked for)
            self.close()
            return
        if ancillary:
            seconds, nanoseconds = _TIMESPEC.unpack_from(ancillary[0][2])
            arrived_ns = seconds * 1_000_000_000 + nanoseconds - exchange.clock_offset_ns
            if arrived_ns < exchange.send_ns:  # the wall clock was stepped: use our own
                arrived_ns = time.monotonic_ns()
        else:
            arrived_ns = time.monotonic_ns()
        if not data:
            if exchange.mode == _CLOSE:
                self.finish(exchange)
            else:
                self.lose("the server closed the connection before the response was complete")
            return
        try:
            complete = exchange.feed(arrived_ns, data)
        except ProtocolError as error:
            self.exchange = None
            self.close()
            if not exchange.done.done():
                exchange.done.set_exception(error)
            return
        if complete or exchange.said_enough:
            self.finish(exchange)  # cut short, it is not _DONE: its connection closes

    def finish(self, exchange: Exchange) -> None:
        self.exchange = None
        if exchange.keep_alive and exchange.mode == _DONE:
            self.pool.idle.append(self)
        else:
            self.close()
        if not exchange.done.done():
            exchange.done.set_result(None)

    def lose(self, detail: str) -> None:
        exchange = self.exchange
        self.exchange = None
        self.close()
        if exchange is not None and not exchange.done.done():
            exchange.done.set_exception(ConnectionLost(detail))

    def close(self) -> None:
        if self.fd < 0:
            return
        self.loop.remove_reader(self.fd)
        self.sock.close()
        self.fd = -1
        self.pool.connections.discard(self)
        if self in self.pool.idle:
            self.pool.idle.remove(self)


class ConnectionPool:
    """Keep-alive connections to one `host:port`, opened as needed, without a limit: the load
    generator, not the pool, decides how many requests are in flight."""

    def __init__(self, host: str, port: int, *, kernel_timestamps: bool = KERNEL_TIMESTAMPS):
        self.host = host
        self.port = port
        self.kernel_timestamps = kernel_timestamps
        self.idle: list[_Connection] = []
        self.connections: set[_Connection] = set()
        self._addresses: list[tuple[int, tuple[object, ...]]] | None = None

    async def request(self, data: bytes, exchange: Exchange) -> None:
        """Send one request (all its bytes) and wait until `exchange` holds the complete
        response. A kept-alive connection that the server had closed is retried once on a new
        one; cancelling the wait drops the connection."""
        for attempt in (0, 1):
            reused = bool(self.idle)
            connection = self.idle.pop() if reused else await self._connect()
            if reused:  # else the time to connect is part of the wait, as a user sees it
                exchange.send_ns = time.monotonic_ns()
            exchange.clock_offset_ns = time.time_ns() - time.monotonic_ns()
            connection.exchange = exchange
            try:
                try:
                    sent = connection.sock.send(data)
                except BlockingIOError:
                    sent = 0
                if sent < len(data):
                    await connection.loop.sock_sendall(connection.sock, data[sent:])
                await exchange.done
                return
            except OSError as error:
                lost = ConnectionLost(f"{type(error).__name__}: {error}")
            except ConnectionLost as error:
                lost = error
            except BaseException:
                connection.exchange = None
                connection.close()
                raise
            connection.exchange = None
            connection.close()
            nothing_received = exchange.status is None and not exchange.head
            if not (reused and attempt == 0 and nothing_received):
                raise lost
            exchange.done = connection.loop.create_future()

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        if self._addresses is None:
            try:
                infos = await loop.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)
            except OSError as error:
                raise ConnectFailed(f"cannot resolve {self.host}: {error}") from None
            self._addresses = [(info[0], info[4]) for info in infos]
        last_error: OSError | None = None
        for family, address in self._addresses:
            sock = socket.socket(family, socket.SOCK_STREAM)
            try:
                sock.setblocking(False)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                if self.kernel_timestamps:
                    sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
                await loop.sock_connect(sock, address)
            except OSError as error:
                sock.close()
                last_error = error
                continue
            except BaseException:
                sock.close()
                raise
            connection = _Connection(self, sock)
            self.connections.add(connection)
            return connection
        raise ConnectFailed(f"cannot connect to {self.host}:{self.port}: {last_error}")

    def close(self) -> None:
        """Close every connection (idle or not)."""
        for connection in list(self.connections):
            connection.close()
        self.idle.clear()
