"""The STAND-IN vLLM (standin_vllm.py) checked against the REAL vLLM on the CPU, so it cannot
drift from what the bench reads: the startup line that states the KV cache size and the maximum
concurrency (one line), the `/metrics` series the bench reads with the `_created` gauges beside
them, `vllm:cache_config_info` (block size 128 on the CPU build, 16 in the GPU stand-in), and
chunks without text (the real server streams a random model's partial characters so; the
stand-in does with STANDIN_VLLM_EMPTY_TEXT_EVERY).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from real_vllm import RealVllm, get
from standin_launcher import STANDIN_VLLM

from infermeter.bench.launch.server import free_port
from infermeter.bench.launch.vllm_log import parse_startup_log
from infermeter.bench.telemetry.engine_metrics import (
    CACHE_CONFIG,
    KV_USAGE,
    PREEMPTIONS,
    PREFIX_HITS,
    PREFIX_QUERIES,
    QUEUE_COUNT,
    QUEUE_SUM,
    RUNNING,
    WAITING,
    cache_config_figures,
    parse_prometheus,
    series_labels,
)

pytestmark = [pytest.mark.real_vllm, pytest.mark.slow]

KV_LINE = re.compile(
    r"(GPU|CPU) KV cache size: [0-9,]+ tokens, Maximum concurrency for [0-9,]+ tokens per "
    r"request: [0-9.]+x"
)
READ_BY_THE_BENCH = [names[0] for names in (KV_USAGE, PREEMPTIONS, PREFIX_QUERIES, PREFIX_HITS)]
READ_BY_THE_BENCH += [*QUEUE_SUM, *QUEUE_COUNT, *RUNNING, *WAITING]
COUNTERS = ("vllm:num_preemptions", "vllm:prefix_cache_queries", "vllm:prefix_cache_hits")


class Standin:
    def __init__(self, url: str, log_path: Path) -> None:
        self.url, self.log_path = url, log_path


@pytest.fixture
def standin(tmp_path: Path) -> Iterator[Standin]:
    """The stand-in on a free port, every fourth token streamed without text."""
    port = free_port()
    log_path = tmp_path / "standin.log"
    command = [sys.executable, str(STANDIN_VLLM), "serve", "standin/model", "--host",
               "127.0.0.1", "--port", str(port), "--max-model-len", "4096"]  # fmt: skip
    env = {"STANDIN_VLLM_EMPTY_TEXT_EVERY": "4", "PATH": "/usr/bin:/bin"}
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                get(url + "/health")
                break
            except (urllib.error.URLError, OSError):
                assert process.poll() is None, log_path.read_text()
                assert time.monotonic() < deadline, log_path.read_text()
                time.sleep(0.2)
        yield Standin(url, log_path)
    finally:
        process.terminate()
        process.wait(30)


def stream_texts(url: str, model: str, max_tokens: int) -> list[str]:
    """The text of every chunk of one streamed completion but the usage-only last one."""
    body = {"model": model, "prompt": "The quick brown fox", "max_tokens": max_tokens,
            "stream": True, "ignore_eos": True, "seed": 0}  # fmt: skip
    request = urllib.request.Request(
        url + "/v1/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    texts = []
    with urllib.request.urlopen(request, timeout=120) as response:
        for raw in response:
            line = raw.decode().strip()
            if line.startswith("data: {"):
                choices = json.loads(line[6:])["choices"]
                texts += [choice["text"] for choice in choices]
    return texts


def test_standin_states_the_kv_cache_as_real_vllm_does(
    real_vllm: RealVllm, standin: Standin
) -> None:
    for log in (real_vllm.log_path.read_text(), standin.log_path.read_text()):
        assert KV_LINE.search(log), log[-2000:]
        figures = parse_startup_log(log)
        assert figures.kv_cache_tokens is not None
        assert figures.max_concurrency is not None
    assert "CPU KV cache size" in real_vllm.log_path.read_text()


def test_standin_metrics_are_real_vllms(real_vllm: RealVllm, standin: Standin) -> None:
    real, fake = real_vllm.metrics(), get(standin.url + "/metrics").decode()
    for text in (real, fake):
        values = parse_prometheus(text)
        assert [name for name in READ_BY_THE_BENCH if name not in values] == []
        for counter in COUNTERS:  # prometheus_client's creation time beside each counter
            assert f"{counter}_created" in values
            assert values[f"{counter}_created"] > 1.7e9
        labels = series_labels(text, CACHE_CONFIG)
        assert labels is not None
        wanted = {"kv_cache_size_tokens", "kv_cache_memory_bytes", "kv_cache_max_concurrency"}
        assert wanted | {"block_size", "num_gpu_blocks", "gpu_memory_utilization"} <= set(labels)
    real_plan, fake_plan = cache_config_figures(real), cache_config_figures(fake)
    assert real_plan is not None
    assert fake_plan is not None
    assert real_plan.block_size == 128  # vLLM's CPU build
    assert fake_plan.block_size == 16  # a GPU's default, which the stand-in plays
    assert real_plan.available_kv_cache_gib == 1.0  # VLLM_CPU_KVCACHE_SPACE=1


def test_standin_streams_chunks_without_text_as_real_vllm_does(
    real_vllm: RealVllm, standin: Standin
) -> None:
    real = stream_texts(real_vllm.url, real_vllm.served_model, 64)
    fake = stream_texts(standin.url, "standin/model", 16)
    assert "" in real[:-1], real  # a random model's lone bytes and special tokens
    assert fake.count("") == 4
