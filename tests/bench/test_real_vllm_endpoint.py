"""`infermeter bench run --endpoint` against the REAL vLLM on the CPU (the shared `real_vllm`).

The bench's token counts must equal the growth of vLLM's own counters over the run
(`vllm:prompt_tokens_total`, `vllm:generation_tokens_total`: no warm-up, so every request the
engine saw is measured). Its mean E2E lies within a few % of vLLM's `e2e_request_latency`
histogram mean on a quiet host (the client adds the HTTP and the stream to the engine's span); on
2 shared cores it reads more, so the test bounds it by the engine's from below and by the point's
window from above (see there). TTFT and ITL are never compared tightly: on 2 shared cores vLLM's
front end sends tokens in bursts, which the client rightly sees.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from real_vllm import RealVllm, child_env, infermeter, metric

pytestmark = [pytest.mark.real_vllm, pytest.mark.slow]

COUNTERS = (
    "vllm:prompt_tokens_total",
    "vllm:generation_tokens_total",
    "vllm:e2e_request_latency_seconds_sum",
    "vllm:e2e_request_latency_seconds_count",
)


def _counters(server: RealVllm) -> dict[str, float]:
    text = server.metrics()
    return {name: metric(text, name) for name in COUNTERS}


def run_against(server: RealVllm, tmp_path: Path, *extra: str) -> dict[str, Any]:
    """`bench run --endpoint` (2 points of 12 requests, no warm-up) as its console script;
    its --json output."""
    command = [
        infermeter(), "bench", "run", "--endpoint", server.url, "--quiet", "--json",
        "--concurrency", "1,3", "--num-requests", "12", "--warmup", "0",
        "--input-len", "24", "--output-len", "96",
        "--tokenizer", str(server.model.tokenizer), "--extra-body", server.model.extra_body,
        *extra,
    ]  # fmt: skip
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=300, env=child_env("endpoint"),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def test_real_vllm_endpoint_token_counts_equal_vllm_counters(
    real_vllm: RealVllm, tmp_path: Path
) -> None:
    before = _counters(real_vllm)
    started = time.monotonic()
    data = run_against(real_vllm, tmp_path)
    wall_s = time.monotonic() - started
    after = _counters(real_vllm)
    growth = {name: after[name] - before[name] for name in COUNTERS}
    points = data["points"]
    assert [point["completed"] for point in points] == [12, 12]
    assert sum(point["failed"] for point in points) == 0
    assert growth["vllm:e2e_request_latency_seconds_count"] == 24
    assert sum(point["input_tokens"] for point in points) == growth["vllm:prompt_tokens_total"]
    assert (
        sum(point["output_tokens"] for point in points) == (growth["vllm:generation_tokens_total"])
    )
    assert sum(point["output_tokens"] for point in points) == 24 * 96  # max_tokens honoured
    engine_mean_ms = (
        growth["vllm:e2e_request_latency_seconds_sum"]
        / growth["vllm:e2e_request_latency_seconds_count"]
        * 1000
    )
    client_mean_ms = sum(p["e2e_ms"]["mean"] * p["completed"] for p in points) / 24
    # The client's span holds the engine's (vLLM stamps arrival and finish in its front end), so it
    # never ends before it. On a quiet host the two agree within a few % (120.5 vs 118.8 ms
    # measured); on CI's 2 shared cores the front end's streaming and the client wait for a core
    # and the client rightly reads more (166 vs 110 ms, and 300 vs 164 ms in CI of f741c1c1), so
    # no ratio to the engine bounds it from above. What does: at concurrency 1 the 12 requests run
    # one after another inside the point's window, so their spans add up to no more than it, and
    # the windows fit in the time the run took by the test's own clock. A client that counts in
    # the wrong unit or starts its clocks before it sends breaks one or the other.
    assert engine_mean_ms * 0.98 <= client_mean_ms, (
        f"client E2E {client_mean_ms:.1f} ms, vLLM's {engine_mean_ms:.1f} ms"
    )
    one_at_a_time = points[0]
    assert one_at_a_time["concurrency"] == 1
    spans_s = one_at_a_time["e2e_ms"]["mean"] * one_at_a_time["completed"] / 1000
    assert spans_s <= one_at_a_time["duration_s"], (spans_s, one_at_a_time["duration_s"])
    assert sum(point["duration_s"] for point in points) <= wall_s


def test_real_vllm_endpoint_result_says_cpu_and_vllms_own_memory_plan(
    real_vllm: RealVllm, tmp_path: Path
) -> None:
    """With --output: the result says the engine ran on the CPU (--gpu cpu), names the folder
    the server serves (no catalog model: its entry is proposed), keeps --load-format from
    --server-command, and states vLLM's KV cache plan from `vllm:cache_config_info` (an endpoint
    run has no log)."""
    output = tmp_path / "result.json"
    server_command = f"vllm serve {real_vllm.served_model} --load-format dummy -O0"
    run_against(
        real_vllm, tmp_path, "--gpu", "cpu", "--output", str(output),
        "--server-command", server_command,
    )  # fmt: skip
    result = json.loads(output.read_text())  # written: it passed validation
    identity = result["identity"]
    assert identity["gpu"] == {"id": "cpu", "count": 1, "form_factor": "cpu"}
    assert identity["model"]["hf_repo"] == "local/tiny-llama"
    assert identity["serving"]["load_format"] == "dummy"
    assert identity["serving"]["other_options"] == "-O0"
    assert identity["engine"] == {"name": "vllm", "version": "0.32.0"}
    assert result["startup"] == {
        "kv_cache_tokens": 2_097_152,
        "kv_cache_gib": 1.0,
        "max_concurrency": 4096.0,
        "block_size": 128,
    }
    assert (tmp_path / "result.model-entry.yaml").is_file()
