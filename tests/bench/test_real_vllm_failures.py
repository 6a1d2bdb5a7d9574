"""Real failed starts of the REAL vLLM on the CPU, each diagnosed by `bench run` in one line that
names the cause and the fix. vLLM prints the root cause far above its last line ("Engine core
initialization failed. See root cause above"), so the whole log is searched. Recorded copies of
these logs are in tests/data/vllm_cpu_startup_failures.yaml (the fast unit tests read them).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from real_vllm import (
    BROKEN_VLLM,
    VLLM_CPU,
    TinyModel,
    child_env,
    new_marker,
    no_process_left,
    require_vllm_cpu,
)
from test_real_vllm_launch import launch_command

pytestmark = [pytest.mark.real_vllm, pytest.mark.slow]

# id: (extra `bench run` options, environment, the executable, texts the diagnosis must hold)
CASES = {
    "max-model-len-above-derived": (
        ["--max-model-len", "1024"], {}, VLLM_CPU,
        ["--max-model-len 1,024 is longer than the model allows", "lower --max-model-len"],
    ),
    "kv-space-above-free-memory": (
        [], {"VLLM_CPU_KVCACHE_SPACE": "1000"}, VLLM_CPU,
        ["the KV cache asked for 1000 GiB of host memory", "lower VLLM_CPU_KVCACHE_SPACE"],
    ),
    # 64 KiB: vLLM finds no room for one block (VLLM_CPU_KVCACHE_SPACE would set the size over
    # the option); 192 KiB, three blocks' worth, was refused the same way
    "kv-cache-too-small": (
        ["--vllm-arg", "--kv-cache-memory-bytes 65536"], {"VLLM_CPU_KVCACHE_SPACE": None},
        VLLM_CPU,
        ["no room for one block", "raise VLLM_CPU_KVCACHE_SPACE", "--kv-cache-memory-bytes"],
    ),
    "console-script-package-not-found": (
        [], {}, BROKEN_VLLM, ["PackageNotFoundError", "vllm-cpu", "--vllm-executable"],
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_real_vllm_startup_failure_is_diagnosed_in_one_line(
    tiny_model: TinyModel, tmp_path: Path, case: str
) -> None:
    require_vllm_cpu()
    extra, env, executable, wanted = CASES[case]
    marker = new_marker()
    command = launch_command(tiny_model, tmp_path / "result.json", *extra)
    command[command.index("--vllm-executable") + 1] = str(executable)
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=600, env=child_env(marker, env),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1, done.stderr[-3000:]
    missing = [text for text in wanted if text not in errors[0]]
    assert missing == [], errors[0]
    assert "Traceback" not in done.stderr.split("last lines of the vLLM log:")[0]
    assert no_process_left(marker, wait_s=60) == []
