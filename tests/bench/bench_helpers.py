"""Helpers of the bench tests: drive the real client against the stand-in server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from standin_vllm import StandinVllm

from infermeter.bench.client.client import StreamingClient
from infermeter.bench.client.request_record import PromptRequest, RequestRecord
from infermeter.bench.run.load import PointPlan, PointRun, run_point

STANDIN_MODEL = "meta-llama/Llama-3.2-1B-Instruct"
"""The model the bench tests' stand-ins serve (the stand-in vLLM, in this process or launched as
`vllm`, and the other engines' stand-ins): the catalog's llama-3.2-1b-instruct, so a run's result
names a catalog model and the registry's checks apply to it."""

SMALL = ["--num-requests", "6", "--warmup", "2", "--input-len", "16", "--output-len", "8"]
"""`bench run`'s load options for a short point: 6 requests of 16 → 8 tokens after 2 warm-up."""
SMALLER = ["--num-requests", "4", "--warmup", "1", "--input-len", "16", "--output-len", "8"]
"""A shorter point: 4 requests of 16 → 8 tokens after 1 warm-up."""
SMALLEST = ["--num-requests", "4", "--warmup", "1", "--input-len", "8", "--output-len", "4"]
"""The shortest point: 4 requests of 8 → 4 tokens after 1 warm-up."""
SHORT_PLAN_DEFAULTS = {
    "model": STANDIN_MODEL, "load-format": "dummy", "max-model-len": 4096, "concurrency": [1],
    "num-requests": 2, "warmup": 0, "input-len": 16, "output-len": 8, "startup-timeout": 120,
}  # fmt: skip
"""A plan's `defaults` for one short run of the stand-in vLLM: one point of 2 requests of
16 → 8 tokens, no warm-up (a test adds to a copy: `{**SHORT_PLAN_DEFAULTS, "gpu": …}`)."""

GPU_PACE_ITL_S = 0.03
"""A stand-in's time between tokens where what a run measures must pass the registry's physics
check: a 1B model's pace on an H100 even when the host stalls (tokens a stall bunches together
would read as faster decoding than the GPU's memory bandwidth allows)."""

PACE_8B_ITL_S = 0.006
"""The fake server's time between tokens for a run of the catalog's 8B model on an H100 or an
H200 that the registry's physics check must keep: slower than either decodes it (the H100 at
4.5 ms a token at best). A busy host does not bring tokens faster than that on average: the
fake server paces a reply from its first token's write, so a late first token's followers
still come one `itl_s` apart."""

DOCUMENTED_POINT_KEYS = frozenset(
    {
        "concurrency",
        "request_rate",
        "completed",
        "failed",
        "output_token_throughput",
        "accepted_output_token_throughput",
        "ttft_ms",
        "itl_ms",
        "tpot_ms",
        "e2e_ms",
    }
)
"""Keys every `--json` point carries (the contract the CLI reference documents)."""


def assert_documented_point(point: Mapping[str, Any]) -> None:
    """A `--json` point has the documented keys, each latency its distribution's statistics."""
    assert set(point) >= DOCUMENTED_POINT_KEYS, point
    for metric in ("ttft_ms", "itl_ms", "tpot_ms", "e2e_ms"):
        assert set(point[metric]) >= {"mean", "p50", "p90", "p95", "p99", "max"}


@contextlib.contextmanager
def standin_server(itl_s: float | None = GPU_PACE_ITL_S) -> Iterator[StandinVllm]:
    """The stand-in vLLM's server (`/version`, `/metrics`, streaming) running in this process,
    serving STANDIN_MODEL, 64 sequences at once, `itl_s` between tokens (None: its own pace)."""
    with StandinVllm(STANDIN_MODEL, port=0, max_num_seqs=64, crash_after=None) as server:
        if itl_s is not None:
            server.config.itl_s = itl_s
        yield server


def send_all(
    url: str,
    requests: list[PromptRequest],
    *,
    api: str = "completions",
    timeout_s: float = 10.0,
    **client_options: object,
) -> list[RequestRecord]:
    """Send the requests concurrently with one client and return their records."""

    async def main() -> list[RequestRecord]:
        async with StreamingClient(
            url,
            "fake/model",
            api="chat" if api == "chat" else "completions",
            timeout_s=timeout_s,
            **client_options,  # type: ignore[arg-type]
        ) as client:
            return list(await asyncio.gather(*(client.send(r) for r in requests)))

    return asyncio.run(main())


def prompt_requests(count: int, max_tokens: int = 10, first_index: int = 0) -> list[PromptRequest]:
    """`count` small requests asking for `max_tokens` tokens each."""
    return [
        PromptRequest(
            index=first_index + i,
            prompt=f"request {first_index + i} says hello",
            max_tokens=max_tokens,
            input_tokens=4,
            expected_output_tokens=max_tokens,
        )
        for i in range(count)
    ]


def run_point_at(url: str, plan: PointPlan) -> PointRun:
    """One load point of `plan` against the server at `url`: small requests of 8 tokens."""

    def build(index: int) -> PromptRequest:
        return prompt_requests(1, 8, first_index=index)[0]

    async def main() -> PointRun:
        async with StreamingClient(url, "fake/model", timeout_s=10) as client:
            return await run_point(client.send, build, plan)

    return asyncio.run(main())


def stop_group(process: subprocess.Popen[Any], waits_s: tuple[float, float, float]) -> None:
    """Ctrl-C, then SIGTERM, then SIGKILL to the process's whole group, each given its wait
    (seconds) to end the process; no more once it has ended."""
    for sig, wait_s in zip((signal.SIGINT, signal.SIGTERM, signal.SIGKILL), waits_s, strict=True):
        if process.poll() is not None:
            return
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(wait_s)
        except subprocess.TimeoutExpired:
            continue


def process_alive(pid: int) -> bool:
    """Whether a process with this id still runs: a zombie (dead, its parent has not reaped it
    yet; an orphan waits for init, ~2 s here) holds nothing and does not count."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: whether the id exists at all
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state != "Z"


@contextlib.contextmanager
def server_process(**config: object) -> Iterator[str]:
    """The stand-in server (`fake_openai_server.FakeServerConfig(**config)`) in a process of
    its own; yields its root URL."""
    script = Path(__file__).with_name("fake_openai_server.py")
    process = subprocess.Popen(
        [sys.executable, str(script), json.dumps(config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        yield f"http://127.0.0.1:{port}"
    finally:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.close()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()
