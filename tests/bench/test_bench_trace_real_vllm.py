"""`bench run --trace` against the REAL vLLM on the CPU (the shared `real_vllm`, prefix caching on).

The trace's requests share 128-token blocks (vLLM's block size on the CPU), so vLLM's prefix
cache serves part of their prompts: the hit rate the result states must be above zero, equal
to the growth of vLLM's own counters over the run, and at most the trace's theoretical maximum
(a cache cannot serve a block nobody sent before; vLLM also recomputes a prompt's last block).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from real_vllm import RealVllm, child_env, infermeter, metric

pytestmark = [pytest.mark.real_vllm, pytest.mark.slow]

HITS = "vllm:prefix_cache_hits_total"
QUERIES = "vllm:prefix_cache_queries_total"
BLOCKS = (
    [1, 2, 3], [1, 2, 4], [1, 2], [5, 6, 7], [1, 2, 3], [5, 6], [1, 8, 9], [5, 6, 7],
)  # fmt: skip


def _trace(path: Path) -> Path:
    lines = [{"infermeter_trace": 1, "block_size": 128, "name": "cpu-shared-blocks"}]
    for number, blocks in enumerate(BLOCKS):
        lines.append(
            {
                "timestamp": number * 150,
                "input_length": 128 * len(blocks) - (number % 3),
                "output_length": 4,
                "hash_ids": blocks,
            }
        )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_real_vllm_trace_hit_rate_is_vllms_own_and_within_the_trace_maximum(
    real_vllm: RealVllm, tmp_path: Path
) -> None:
    trace = _trace(tmp_path / "trace.jsonl")
    output = tmp_path / "result.json"
    before = real_vllm.metrics()
    done = subprocess.run(
        [
            infermeter(), "bench", "run", "--endpoint", real_vllm.url, "--quiet",
            "--trace", str(trace), "--tokenizer", str(real_vllm.model.tokenizer),
            "--extra-body", real_vllm.model.extra_body, "--gpu", "cpu", "--output", str(output),
        ],
        capture_output=True, text=True, timeout=300, env=child_env("trace"), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    after = real_vllm.metrics()
    hits = metric(after, HITS) - metric(before, HITS)
    queries = metric(after, QUERIES) - metric(before, QUERIES)
    result = json.loads(output.read_text())
    (point,) = result["points"]
    assert point["requests"]["completed"] == len(BLOCKS)
    measured = point["telemetry"]["engine"]["prefix_cache_hit_rate"]
    maximum = result["identity"]["workload"]["trace"]["prefix_reuse_max"]
    assert measured == pytest.approx(hits / queries, abs=1e-4)
    assert 0 < measured <= maximum, (measured, maximum)
    assert point["send_lag_ms"]["n"] == len(BLOCKS)
