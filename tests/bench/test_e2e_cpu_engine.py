"""`infermeter bench run --endpoint` end to end against a real inference engine on the CPU.

The engine is `transformers serve` (transformers' OpenAI-compatible server; extra `e2e`), run as
a real process on 127.0.0.1, serving a tiny randomly initialised Llama that the test builds
itself (`tiny_model.py`). Nothing is downloaded: the Hugging Face libraries run offline. The
bench CLI runs as its console script, as a contributor would run it.

`transformers serve` rejects vLLM's `ignore_eos` (HTTP 422, an unknown field), so the run uses
`--no-ignore-eos`; the tiny model's generation config suppresses end-of-sequence instead, which
makes the server honour `max_tokens` exactly. It ignores `stream_options` but sends `usage` in
its last chunk anyway, and it ends a stream with a `finish_reason`, without `[DONE]`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from bench_helpers import assert_documented_point, stop_group
from tiny_model import build_tiny_model

from infermeter.bench.launch.server import free_port
from infermeter.bench.launch.watchdog import group_alive

pytestmark = pytest.mark.slow

OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
}
STARTUP_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 15.0

NUM_REQUESTS = 6
INPUT_TOKENS = 16
OUTPUT_TOKENS = 8
CONCURRENCIES = (1, 2)


@dataclass
class EngineServer:
    """A running `transformers serve`: its URL, the model id it answers to, its process."""

    url: str
    model: str
    model_dir: Path
    process: subprocess.Popen[bytes]
    log_path: Path

    def log_tail(self, lines: int = 40) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def _console_script(name: str) -> str:
    """A console script installed beside this Python (the venv's bin folder)."""
    path = Path(sys.executable).parent / name
    if not path.exists():
        pytest.fail(f"{path} is missing: pip install -e '.[bench,e2e]' installs it")
    return str(path)


def _wait_until_healthy(server: EngineServer) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            pytest.fail(
                f"transformers serve exited with {server.process.returncode} while starting:\n"
                + server.log_tail()
            )
        try:
            with urllib.request.urlopen(server.url + "/health", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    pytest.fail(
        f"transformers serve not healthy after {STARTUP_TIMEOUT_S:g} s:\n" + server.log_tail()
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Ctrl-C, then SIGTERM, then SIGKILL, to the server's whole process group."""
    stop_group(process, (STOP_TIMEOUT_S,) * 3)
    process.wait(timeout=STOP_TIMEOUT_S)


@pytest.fixture
def transformers_serve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[EngineServer]:
    """`transformers serve` on a free port, pinned to a tiny random model built in `tmp_path`."""
    for name, value in OFFLINE_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # nothing from the user's cache
    model_dir = build_tiny_model(tmp_path / "tiny-llama")
    port = free_port()
    log_path = tmp_path / "transformers-serve.log"
    command = [
        _console_script("transformers"),
        "serve",
        str(model_dir),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--device",
        "cpu",
        "--dtype",
        "float32",
        "--log-level",
        "info",
    ]
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stopped as a whole, checked empty
        )
    server = EngineServer(
        url=f"http://127.0.0.1:{port}",
        model=str(model_dir),
        model_dir=model_dir,
        process=process,
        log_path=log_path,
    )
    try:
        _wait_until_healthy(server)
        yield server
    finally:
        _stop(process)
    assert not group_alive(process.pid), "transformers serve left a process behind"


def test_bench_run_against_transformers_serve_on_cpu(transformers_serve: EngineServer) -> None:
    server = transformers_serve
    command = [
        _console_script("infermeter"),
        "bench",
        "run",
        "--endpoint",
        server.url,
        "--model",
        server.model,
        "--api",
        "completions",
        "--tokenizer",
        str(server.model_dir),  # exact prompt lengths, and the client's own token count
        "--concurrency",
        ",".join(str(c) for c in CONCURRENCIES),
        "--num-requests",
        str(NUM_REQUESTS),
        "--input-len",
        str(INPUT_TOKENS),
        "--output-len",
        str(OUTPUT_TOKENS),
        "--no-ignore-eos",
        "--timeout",
        "60",
        "--json",
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, f"{run.stderr}\n--- server log ---\n{server.log_tail()}"
    summary = json.loads(run.stdout)

    assert summary["model"] == server.model
    assert summary["api"] == "completions"
    assert summary["incomplete"] is False
    assert [point["concurrency"] for point in summary["points"]] == list(CONCURRENCIES)
    for point in summary["points"]:
        assert_documented_point(point)

        where = f"c={point['concurrency']}: {point}"
        assert point["request_rate"] is None
        assert point["completed"] == NUM_REQUESTS, where
        assert point["failed"] == 0, where
        assert point["failures_by_kind"] == {}, where
        # Token counts are the server's usage: max_tokens honoured, prompts exactly as long as
        # asked (the client built them with the model's own tokenizer).
        assert point["usage_missing_requests"] == 0, where
        assert point["output_tokens"] == NUM_REQUESTS * OUTPUT_TOKENS, where
        assert point["input_tokens"] == NUM_REQUESTS * INPUT_TOKENS, where
        # The client re-encodes the text it received: it agrees with the server's usage.
        assert point["usage_mismatch_requests"] == 0, where
        codes = {verdict["code"] for verdict in point["verdicts"]}
        assert codes <= {"too_few_requests", "tokens_in_one_chunk"}, where
        # On a loaded host the server sends tokens in bursts: a request whose tokens the client
        # read at once times no gap (TPOT 0), and the verdict says so (a stress run, c=1).
        at_once = "tokens_in_one_chunk" in codes

        ttft, itl, tpot, e2e = (point[m] for m in ("ttft_ms", "itl_ms", "tpot_ms", "e2e_ms"))
        assert ttft["n"] == e2e["n"] == tpot["n"] == NUM_REQUESTS, where
        assert itl["n"] == NUM_REQUESTS * (OUTPUT_TOKENS - 1), where  # one per token after the 1st
        for distribution in (ttft, itl, tpot, e2e):
            stats = [distribution[key] for key in ("p50", "p90", "p95", "p99", "max")]
            assert stats == sorted(stats), where
            # ITL may be 0: tokens the server wrote together arrive in one read; TPOT only for
            # requests whose every token arrived at once, which the verdict counts.
            may_be_zero = distribution is itl or (distribution is tpot and at_once)
            assert stats[0] >= 0 if may_be_zero else stats[0] > 0, where
            assert distribution["mean"] > 0 or (may_be_zero and at_once), where
        assert ttft["max"] <= e2e["max"], where
        assert ttft["mean"] < e2e["mean"], where
        assert tpot["max"] < e2e["max"], where
        # A token every TPOT after the first: E2E ≈ TTFT + (N − 1) × TPOT, request by request.
        expected_e2e_mean = ttft["mean"] + (OUTPUT_TOKENS - 1) * tpot["mean"]
        assert e2e["mean"] == pytest.approx(expected_e2e_mean, rel=1e-6), where
        assert itl["mean"] == pytest.approx(tpot["mean"], rel=1e-6), where

        assert point["output_token_throughput"] > 0, where
        assert point["accepted_output_token_throughput"] == point["output_token_throughput"]
        assert point["output_token_throughput"] == pytest.approx(
            point["output_tokens"] / point["duration_s"]
        )

    # Every request, warm-ups included (one per concurrency slot), reached the engine.
    served = server.log_path.read_text(errors="replace").count(
        '"POST /v1/completions HTTP/1.1" 200'
    )
    assert served == len(CONCURRENCIES) * NUM_REQUESTS + sum(CONCURRENCIES)
