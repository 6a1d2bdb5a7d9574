"""How fast and how exact infermeter's streaming client is, against vLLM's `vllm bench serve`.

A fake OpenAI-compatible server (raw asyncio HTTP/1.1 written for this script, uvloop when
installed; not a model) runs in its own process pinned to CPU 0; each client runs in its own
process pinned to CPU 1. Requests: 128-token prompts, 256 output tokens, closed loop.

- burst: the server writes each whole response at once (one write: every chunk, the usage
  chunk, [DONE]); the figure is how many streamed tokens per second one client parses.
- drip: the server writes one token per write, round-robin over its streams, as fast as it
  can. Its ceiling is measured with a sink client that only counts bytes.
- workers: burst at 1,024 streams with 1 and 2 client processes (`bench.run.workers`) on the
  client CPU, and 2 allowed on both CPUs ("spread").
- timed: TTFT 50 ms, then one token every 10 ms; the server records each request's arrival
  (the kernel's receive time, SO_TIMESTAMPNS, on sockets it reads itself) and each token's
  write time (monotonic clock, shared by the processes), which are the truth the clients'
  TTFT and ITL are compared with (p50/p99 of each distribution).

vLLM's client runs from a separate virtual environment (`--vllm`, default
/tmp/vllm-venv/bin/vllm; `python3 -m venv /tmp/vllm-venv && /tmp/vllm-venv/bin/pip install
vllm`) with a tiny byte-level BPE tokenizer made here, offline.

    .venv/bin/python benchmarks/client_perf.py            # everything (~3 minutes)
    .venv/bin/python benchmarks/client_perf.py --skip-vllm --concurrency 256
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import multiprocessing as mp
import os
import resource
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from records import write_record

from infermeter.bench.client.client import StreamingClient, run_event_loop
from infermeter.bench.client.request_record import PromptRequest
from infermeter.bench.run.load import PointPlan, run_point
from infermeter.bench.run.workers import WorkerJob, run_point_in_workers
from infermeter.bench.workloads.profiles import get_profile
from infermeter.bench.workloads.prompts import RequestFactory, WorkloadSpec

SERVER_CPU, CLIENT_CPU = 0, 1
INPUT_TOKENS, OUTPUT_TOKENS = 128, 256
TTFT_S, ITL_S = 0.050, 0.010
MODEL = "bench/fake-model"
_SO_TIMESTAMPNS = 35  # Linux, asm-generic numbering (as in bench.client.transport)


# ---------------------------------------------------------------- the fake server


def _chunk(payload: bytes) -> bytes:
    """One HTTP/1.1 chunk carrying one SSE event."""
    event = b"data: " + payload + b"\n\n"
    return b"%x\r\n%s\r\n" % (len(event), event)


# A completion chunk as vLLM writes it (`model_dump_json(exclude_unset=True)`), formatted with
# (request ordinal, token text, finish reason) at write time.
_TOKEN_EVENT = (
    b'{"id":"cmpl-%032x","object":"text_completion","created":1767225600,"model":"'
    + MODEL.encode()
    + b'","choices":[{"index":0,"text":" w%d","logprobs":null,"finish_reason":%s,'
    b'"stop_reason":null,"prompt_token_ids":null,"token_ids":null}],"kv_transfer_params":null}'
)


def _token_event(ordinal: int, index: int, finish: bool) -> bytes:
    """One token's HTTP chunk."""
    return _chunk(_TOKEN_EVENT % (ordinal, index % 1000, b'"length"' if finish else b"null"))


def _tail(ordinal: int, prompt_tokens: int, tokens: int) -> bytes:
    usage = {
        "prompt_tokens": prompt_tokens,
        "total_tokens": prompt_tokens + tokens,
        "completion_tokens": tokens,
    }
    event = {
        "id": f"cmpl-{ordinal:032x}",
        "object": "text_completion",
        "created": 1767225600,
        "model": MODEL,
        "choices": [],
        "usage": usage,
    }
    return (
        _chunk(json.dumps(event, separators=(",", ":")).encode()) + _chunk(b"[DONE]") + b"0\r\n\r\n"
    )


_HEADERS = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
    b"transfer-encoding: chunked\r\n\r\n"
)


class _Frames:
    """The chunks of one response, each formatted when it is written."""

    def __init__(self, ordinal: int, tokens: int) -> None:
        self.ordinal, self.tokens = ordinal, tokens

    def __len__(self) -> int:
        return self.tokens

    def __getitem__(self, index: int) -> bytes:
        frame = _token_event(self.ordinal, index, index == self.tokens - 1)
        if index == self.tokens - 1:
            frame += _tail(self.ordinal, INPUT_TOKENS, self.tokens)
        return frame


class _Server:
    """State shared by the server's connections."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.ordinal = 0
        self.tokens_written = 0
        self.drip: list[list[Any]] = []  # [transport, frames, next index]
        self.drip_task: asyncio.Task[None] | None = None
        self.truth: list[dict[str, Any]] = []
        self.responses: dict[int, bytes] = {}

    def handle(self, transport: Any, path: bytes, body: bytes, arrived_ns: int) -> None:
        """Answer one request; `transport` is an asyncio transport or a `_TimedConnection`."""
        if path == b"/stats":
            stats = {
                "tokens": self.tokens_written,
                "cpu_s": time.process_time(),
                "wall_s": time.monotonic(),
            }
            _reply(transport, json.dumps(stats).encode())
            return
        if path == b"/truth":
            truth, self.truth = self.truth, []
            _reply(transport, json.dumps(truth).encode())
            return
        if not path.endswith(b"/completions"):  # /v1/models, /health, readiness probes
            _reply(transport, json.dumps({"data": [{"id": MODEL}]}).encode())
            return
        request = json.loads(body)
        tokens = int(request.get("max_tokens") or OUTPUT_TOKENS)
        prompt = str(request.get("prompt", ""))
        ordinal = self.ordinal
        self.ordinal += 1
        if self.mode == "burst":
            response = self.responses.get(tokens)
            if response is None:
                events = [_token_event(0, i, i == tokens - 1) for i in range(tokens)]
                response = _HEADERS + b"".join(events) + _tail(0, INPUT_TOKENS, tokens)
                self.responses[tokens] = response
            transport.write(response)
            self.tokens_written += tokens
            return
        frames = _Frames(ordinal, tokens)
        transport.write(_HEADERS)
        if self.mode == "drip":
            self.drip.append([transport, frames, 0])
            if self.drip_task is None or self.drip_task.done():
                self.drip_task = asyncio.get_running_loop().create_task(self._drip())
            return
        record: dict[str, Any] = {"key": prompt.split(" ", 1)[0], "arrived_ns": arrived_ns}
        writes: list[int] = []
        record["writes_ns"] = writes
        self.truth.append(record)
        loop = asyncio.get_running_loop()
        start = arrived_ns / 1e9  # the loop's clock is the monotonic one, in seconds

        def write(index: int) -> None:
            if transport.is_closing():
                return
            frame = frames[index]
            writes.append(time.monotonic_ns())
            transport.write(frame)
            self.tokens_written += 1
            if index + 1 < len(frames):
                loop.call_at(start + TTFT_S + (index + 1) * ITL_S, write, index + 1)

        loop.call_at(start + TTFT_S, write, 0)

    async def _drip(self) -> None:
        """One write per token per stream, round-robin, as fast as the server can."""
        while self.drip:
            still = []
            for stream in self.drip:
                transport, frames, index = stream
                if transport.is_closing():
                    continue
                transport.write(frames[index])
                stream[2] = index + 1
                if index + 1 < len(frames):
                    still.append(stream)
            self.tokens_written += len(self.drip)
            self.drip = still  # no stream joins during the loop above: it never awaits
            await asyncio.sleep(0)


def _reply(transport: Any, body: bytes) -> None:
    transport.write(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
        b"content-length: %d\r\n\r\n%s" % (len(body), body)
    )
    transport.close()


def _parse_requests(connection: Any, server: _Server, buffer: bytes, arrived_ns: int) -> bytes:
    """Hand every complete request in `buffer` to `server`; return what is left."""
    while True:
        end = buffer.find(b"\r\n\r\n")
        if end < 0:
            return buffer
        head = buffer[:end].lower()
        length = 0
        at = head.find(b"content-length:")
        if at >= 0:
            length = int(head[at + 15 :].split(b"\r\n", 1)[0])
        if len(buffer) < end + 4 + length:
            return buffer
        body = buffer[end + 4 : end + 4 + length]
        path = head.split(b" ", 2)[1]
        buffer = buffer[end + 4 + length :]
        server.handle(connection, path, body, arrived_ns)


class _ServerProtocol(asyncio.Protocol):
    """burst and drip: reads and writes through the event loop's transport."""

    def __init__(self, server: _Server) -> None:
        self.server = server
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        self.buffer = _parse_requests(self.transport, self.server, self.buffer + data, 0)


class _TimedConnection:
    """timed: one socket read with `recvmsg` and written with `send` by this code alone, so that
    a request's arrival is the kernel's receive time (SO_TIMESTAMPNS), whenever the server gets
    round to reading it, and a token's write time is taken just before its `send` (on loopback
    the kernel delivers the bytes to the client inside that call). An event-loop transport must
    not share the socket: it reads on its own and its reads carry no kernel time."""

    def __init__(self, server: _Server, sock: socket.socket) -> None:
        self.server, self.sock, self.fd = server, sock, sock.fileno()
        self.loop = asyncio.get_running_loop()
        self.buffer = self.pending = b""
        self.closing = False
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
        self.loop.add_reader(self.fd, self.on_readable)

    def on_readable(self) -> None:
        try:
            data, ancillary, _, _ = self.sock.recvmsg(65536, 64)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data, ancillary = b"", []
        if not data:
            self.abort()
            return
        if not ancillary:  # the truth needs the kernel's time; never guess it
            raise RuntimeError("the kernel gave no receive timestamp")
        seconds, nanoseconds = struct.unpack_from("@ll", ancillary[0][2])
        arrived_ns = seconds * 10**9 + nanoseconds - (time.time_ns() - time.monotonic_ns())
        self.buffer = _parse_requests(self, self.server, self.buffer + data, arrived_ns)

    def write(self, data: bytes) -> None:
        if self.fd < 0:
            return
        if not self.pending:
            try:
                sent = self.sock.send(data)
            except (BlockingIOError, InterruptedError):
                sent = 0
            except OSError:
                self.abort()
                return
            if sent == len(data):
                return
            data = data[sent:]
            self.loop.add_writer(self.fd, self._flush)
        self.pending += data

    def _flush(self) -> None:
        try:
            sent = self.sock.send(self.pending)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self.abort()
            return
        self.pending = self.pending[sent:]
        if not self.pending:
            self.loop.remove_writer(self.fd)
            if self.closing:
                self.abort()

    def is_closing(self) -> bool:
        return self.closing or self.fd < 0

    def close(self) -> None:
        self.closing = True
        if not self.pending:
            self.abort()

    def abort(self) -> None:
        if self.fd >= 0:
            self.loop.remove_reader(self.fd)
            if self.pending:
                self.loop.remove_writer(self.fd)
            self.sock.close()
            self.fd = -1


def _serve(mode: str, port_out: Any) -> None:
    _prepare_process(SERVER_CPU)
    # A collection between a token's timestamp and its write would move the truth; the
    # server's objects live for the whole run anyway.
    gc.disable()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        state = _Server(mode)
        if mode != "timed":
            server = await loop.create_server(
                lambda: _ServerProtocol(state), "127.0.0.1", 0, backlog=4096
            )
            port_out.send(server.sockets[0].getsockname()[1])
            await asyncio.Event().wait()
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(4096)
        listener.setblocking(False)
        listener.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)

        def accept() -> None:
            while True:
                try:
                    sock, _ = listener.accept()
                except (BlockingIOError, InterruptedError):
                    return
                _TimedConnection(state, sock)

        loop.add_reader(listener.fileno(), accept)
        port_out.send(listener.getsockname()[1])
        await asyncio.Event().wait()

    _run(main())


@contextlib.contextmanager
def fake_server(mode: str) -> Iterator[str]:
    """The fake server in its own process; yields its base URL."""
    receive, send = mp.Pipe(duplex=False)
    process = mp.get_context("fork").Process(target=_serve, args=(mode, send), daemon=True)
    process.start()
    port = receive.recv()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.join(5)


def _get(url: str) -> Any:
    with socket.create_connection(_address(url), timeout=30) as sock:
        path = "/" + url.split("/", 3)[3]
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(1 << 20):
            data += chunk
    return json.loads(data.split(b"\r\n\r\n", 1)[1])


def _address(url: str) -> tuple[str, int]:
    host, port = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    return host, int(port)


# ---------------------------------------------------------------- clients


def _run(main: Any) -> Any:
    return run_event_loop(main)


def _prepare_process(cpu: int) -> None:
    """Pin to `cpu`, allow many sockets, and outrank unrelated work on the CPU when allowed:
    what is measured is the client and the server, not their neighbours."""
    os.sched_setaffinity(0, {cpu})
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, 0, int(os.environ.get("CP_NICE", "-10")))


def _in_client_process(
    function: Callable[..., Any], *args: Any, cpus: set[int] | None = None
) -> Any:
    """Run `function(*args)` in a fresh process pinned to the client CPU (or to `cpus`);
    return its result."""
    receive, send = mp.Pipe(duplex=False)

    def target() -> None:
        _prepare_process(CLIENT_CPU)
        if cpus is not None:
            os.sched_setaffinity(0, cpus)
        send.send(function(*args))

    process = mp.get_context("fork").Process(target=target)
    process.start()
    result = receive.recv()
    process.join()
    return result


def _prompt(index: int) -> str:
    return f"{index} " + " ".join(f"w{i % 97}" for i in range(INPUT_TOKENS - 1))


class _Prompts(RequestFactory):
    """This script's requests, as a factory that worker processes can rebuild."""

    def __init__(self) -> None:
        super().__init__(WorkloadSpec(profile=get_profile("chat")))

    def build(self, index: int) -> PromptRequest:
        return PromptRequest(index, _prompt(index), OUTPUT_TOKENS, INPUT_TOKENS)


def infermeter_client(
    url: str, concurrency: int, requests: int, warmup: int, workers: int = 1
) -> dict[str, Any]:
    """Closed loop with infermeter's StreamingClient (in `workers` processes, which inherit
    this process's CPUs); tokens/s and per-request timings."""

    async def main() -> dict[str, Any]:
        plan = PointPlan(concurrency=concurrency, num_requests=requests, warmup_requests=warmup)
        if workers > 1:
            job = WorkerJob(url, MODEL, _Prompts(), timeout_s=120, workers=workers)
            run = await run_point_in_workers(job, plan)
        else:
            async with StreamingClient(url, MODEL, timeout_s=120) as client:
                run = await run_point(client.send, _Prompts().build, plan)
        records = run.records
        return {
            "tokens": sum(len(r.token_times_ns) for r in records),
            "failed": sum(1 for r in records if not r.ok),
            "errors": sorted({f"{r.error}: {r.error_detail}" for r in records if not r.ok})[:3],
            "wall_s": run.wall_s,
            "cpu_s": run.client_cpu_s,
            "requests": [
                (str(r.index), r.send_ns, r.token_times_ns)
                for r in records
                if r.ok and not r.warmup
            ],
        }

    return _run(main())  # type: ignore[no-any-return]


def sink_client(url: str, concurrency: int, requests: int) -> dict[str, Any]:
    """Reads and discards (the server's ceiling): each response ends with the last chunk."""
    host, port = _address(url)
    body = json.dumps({"model": MODEL, "prompt": _prompt(0), "max_tokens": OUTPUT_TOKENS})
    request = (
        f"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n{body}"
    ).encode()

    async def main() -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        state = {"left": requests, "done": 0}
        finished = loop.create_future()

        class Sink(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                self.transport = cast(asyncio.Transport, transport)
                self.next()

            def next(self) -> None:
                if state["left"] <= 0:
                    self.transport.close()
                    return
                state["left"] -= 1
                self.transport.write(request)

            def data_received(self, data: bytes) -> None:
                if data.endswith(b"\r\n0\r\n\r\n"):
                    state["done"] += 1
                    if state["done"] == requests and not finished.done():
                        finished.set_result(None)
                    self.next()

        start, cpu = time.monotonic(), time.process_time()
        for _ in range(concurrency):
            await loop.create_connection(Sink, host, port)
        await finished
        return {
            "tokens": requests * OUTPUT_TOKENS,
            "wall_s": time.monotonic() - start,
            "cpu_s": time.process_time() - cpu,
        }

    return _run(main())  # type: ignore[no-any-return]


def make_tokenizer(folder: Path) -> Path:
    """A byte-level BPE tokenizer (a few hundred tokens) that transformers loads offline."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["<|endoftext|>"])
    corpus = [
        " ".join(f"w{i % 997} token{i % 31} the a of" for i in range(j, j + 50)) for j in range(300)
    ]
    tokenizer.train_from_iterator(corpus, trainer)
    tokenizer.save(str(folder / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "eos_token": "<|endoftext|>",
        "bos_token": "<|endoftext|>",
        "model_max_length": 4096,
    }
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    (folder / "config.json").write_text(json.dumps({"model_type": "gpt2", "vocab_size": 600}))
    return folder


def vllm_client(
    vllm: str, tokenizer: Path, url: str, concurrency: int, requests: int, out: Path
) -> dict[str, Any]:
    """`vllm bench serve` pinned to the client CPU; its saved result JSON."""
    name = f"vllm-{concurrency}.json"
    command = [
        vllm, "bench", "serve", "--backend", "openai", "--base-url", url,
        "--endpoint", "/v1/completions", "--model", MODEL, "--tokenizer", str(tokenizer),
        "--dataset-name", "random", "--random-input-len", str(INPUT_TOKENS),
        "--random-output-len", str(OUTPUT_TOKENS), "--ignore-eos",
        "--max-concurrency", str(concurrency), "--num-prompts", str(requests),
        "--percentile-metrics", "ttft,itl", "--metric-percentiles", "50,99",
        "--save-result", "--save-detailed", "--result-dir", str(out),
        "--result-filename", name, "--disable-tqdm",
    ]  # fmt: skip
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", VLLM_NO_USAGE_STATS="1")

    completed = subprocess.run(
        command,
        env=env,
        preexec_fn=lambda: _prepare_process(CLIENT_CPU),
        capture_output=True,
        text=True,
        timeout=600,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"vllm bench serve failed:\n{completed.stderr[-3000:]}")
    return json.loads((out / name).read_text())  # type: ignore[no-any-return]


# ---------------------------------------------------------------- figures


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _truth(
    truth: list[dict[str, Any]],
) -> tuple[dict[str, dict[str, Any]], list[float], list[float]]:
    by_key = {t["key"]: t for t in truth if t["writes_ns"]}
    ttft = [(t["writes_ns"][0] - t["arrived_ns"]) / 1e6 for t in by_key.values()]
    itl = [
        (b - a) / 1e6
        for t in by_key.values()
        for a, b in zip(t["writes_ns"], t["writes_ns"][1:], strict=False)
    ]
    return by_key, ttft, itl


def accuracy_infermeter(result: dict[str, Any], truth: list[dict[str, Any]]) -> dict[str, Any]:
    """TTFT/ITL p50/p99 vs the server's truth, for the same requests, and paired errors."""
    by_key, _, _ = _truth(truth)
    ttft, itl, true_ttft, true_itl, ttft_error, itl_error = [], [], [], [], [], []
    for key, send_ns, times in result["requests"]:
        true = by_key[key]
        writes = true["writes_ns"]
        ttft.append((times[0] - send_ns) / 1e6)
        true_ttft.append((writes[0] - true["arrived_ns"]) / 1e6)
        ttft_error.append(ttft[-1] - true_ttft[-1])
        for i in range(1, min(len(times), len(writes))):
            itl.append((times[i] - times[i - 1]) / 1e6)
            true_itl.append((writes[i] - writes[i - 1]) / 1e6)
            itl_error.append(itl[-1] - true_itl[-1])
    return _compare(ttft, itl, true_ttft, true_itl) | {
        "paired_ttft_abs_error_p99_ms": percentile([abs(e) for e in ttft_error], 99),
        "paired_itl_abs_error_p99_ms": percentile([abs(e) for e in itl_error], 99),
    }


def accuracy_vllm(result: dict[str, Any], truth: list[dict[str, Any]]) -> dict[str, Any]:
    _, true_ttft, true_itl = _truth(truth)
    ttft = [v * 1e3 for v in result["ttfts"] if v]
    itl = [v * 1e3 for request in result["itls"] for v in request]
    return _compare(ttft, itl, true_ttft, true_itl)


def _compare(
    ttft: list[float], itl: list[float], true_ttft: list[float], true_itl: list[float]
) -> dict[str, Any]:
    figures: dict[str, Any] = {"requests": len(ttft)}
    for name, measured, true in (("ttft", ttft, true_ttft), ("itl", itl, true_itl)):
        for q in (50, 99):
            figures[f"{name}_p{q}_ms"] = percentile(measured, q)
            figures[f"true_{name}_p{q}_ms"] = percentile(true, q)
            figures[f"{name}_p{q}_error_ms"] = percentile(measured, q) - percentile(true, q)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--concurrency", default="256,1024", help="throughput points")
    parser.add_argument("--accuracy-concurrency", default="64,256")
    parser.add_argument(
        "--workers-concurrency", type=int, default=1024, help="worker points (0: none)"
    )
    parser.add_argument("--vllm", default="/tmp/vllm-venv/bin/vllm", help="vllm executable")
    parser.add_argument("--skip-vllm", action="store_true")
    parser.add_argument("--rounds", type=int, default=8, help="requests per stream, burst/drip")
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    parser.add_argument(
        "--record", action="store_true", help="write benchmarks/records/client_perf.json (site)"
    )
    args = parser.parse_args()
    load_at_start = os.getloadavg()[0]
    if len(os.sched_getaffinity(0)) < 2:
        sys.exit("needs two CPUs (one for the server, one for the client)")
    use_vllm = not args.skip_vllm and shutil.which(args.vllm) is not None
    if not args.skip_vllm and not use_vllm:
        print(f"! {args.vllm} not found: vLLM's client is skipped")
    work = Path(tempfile.mkdtemp(prefix="client-perf-"))
    tokenizer = make_tokenizer(work / "tokenizer") if use_vllm else work
    figures: dict[str, Any] = {"cpus": os.cpu_count(), "python": sys.version.split()[0]}
    levels = [int(c) for c in args.concurrency.split(",")]
    for mode in ("burst", "drip"):
        with fake_server(mode) as url:
            for concurrency in levels:
                requests = concurrency * args.rounds
                point: dict[str, Any] = {}
                if mode == "drip":
                    before = _get(url + "/stats")
                    sink = _in_client_process(sink_client, url, concurrency, requests)
                    after = _get(url + "/stats")
                    point["ceiling_tok_s"] = sink["tokens"] / sink["wall_s"]
                    point["server_cpu_share"] = (after["cpu_s"] - before["cpu_s"]) / (
                        after["wall_s"] - before["wall_s"]
                    )
                ours = _in_client_process(infermeter_client, url, concurrency, requests, 0)
                assert ours["failed"] == 0, ours["errors"]
                point["infermeter_tok_s"] = ours["tokens"] / ours["wall_s"]
                point["infermeter_cpu_share"] = ours["cpu_s"] / ours["wall_s"]
                if use_vllm:
                    theirs = vllm_client(args.vllm, tokenizer, url, concurrency, requests, work)
                    point["vllm_tok_s"] = theirs["output_throughput"]
                    point["vllm_failed"] = theirs["num_prompts"] - theirs["completed"]
                    point["ratio_to_vllm"] = point["infermeter_tok_s"] / point["vllm_tok_s"]
                if mode == "drip":
                    point["ratio_to_ceiling"] = point["infermeter_tok_s"] / point["ceiling_tok_s"]
                figures[f"{mode}_{concurrency}"] = point
                print(f"{mode:5} {concurrency:5} streams: " + _line(point), flush=True)
    if args.workers_concurrency:
        # burst at high concurrency: one client process is the bottleneck there. Workers
        # inherit the client's CPUs; "spread" lets them use the server's CPU too.
        concurrency = args.workers_concurrency
        requests = concurrency * args.rounds
        with fake_server("burst") as url:
            for label, workers, cpus in (
                ("1 worker", 1, None),
                ("2 workers", 2, None),
                ("2 workers, spread", 2, set(os.sched_getaffinity(0))),
            ):
                ours = _in_client_process(
                    infermeter_client, url, concurrency, requests, 0, workers, cpus=cpus
                )
                assert ours["failed"] == 0, ours["errors"]
                point = {
                    "infermeter_tok_s": ours["tokens"] / ours["wall_s"],
                    "client_cpu_s_per_mtok": ours["cpu_s"] / ours["tokens"] * 1e6,
                }
                figures[f"workers_{concurrency}_{label.replace(' ', '_').replace(',', '')}"] = point
                print(f"burst {concurrency:5} streams, {label:17}: " + _line(point), flush=True)
    with fake_server("timed") as url:
        for concurrency in [int(c) for c in args.accuracy_concurrency.split(",")]:
            requests = max(4 * concurrency, 256)
            _get(url + "/truth")
            ours = _in_client_process(
                infermeter_client, url, concurrency, requests + concurrency, concurrency
            )
            assert ours["failed"] == 0, ours["errors"]
            point = {"infermeter": accuracy_infermeter(ours, _get(url + "/truth"))}
            if use_vllm:
                theirs = vllm_client(args.vllm, tokenizer, url, concurrency, requests, work)
                point["vllm"] = accuracy_vllm(theirs, _get(url + "/truth"))
            figures[f"timed_{concurrency}"] = point
            for client, values in point.items():
                print(f"timed {concurrency:5} streams, {client:10}: " + _line(values), flush=True)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n")
    if args.record:
        print(f"recorded in {write_record('client_perf', figures, load_at_start)}")
    shutil.rmtree(work, ignore_errors=True)


def _line(values: dict[str, Any]) -> str:
    return ", ".join(
        f"{k}={v:,.0f}"
        if isinstance(v, float) and v > 100
        else f"{k}={v:.3g}"
        if isinstance(v, float)
        else f"{k}={v}"
        for k, v in values.items()
    )


if __name__ == "__main__":
    main()
