"""A figure no result can hold is refused naming the file it came from and, where one figure
alone is wrong, the file's own key: `infermeter bench import` said `imported result:
points[0].duration_s: Input should be greater than 0` for a vLLM file's `duration: 0`, naming
neither the file nor the key the user can find in it."""

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from synthetic_run import IMPORTER_FILES

from infermeter.bench.cli.main import main

FLAGS = [
    "--gpu", "h100-sxm", "--gpu-count", "1", "--model-id", "llama-3.1-8b-instruct",
    "--engine-version", "0.9.1", "--command", "x", "--submitter", "example-contributor",
    "--timezone", "UTC", "--input-len", "1024", "--output-len", "128", "--tool-version", "1.0",
]  # fmt: skip
REJECTED = "registry validate would reject the result, so it is not written: "


def _set(data: Any, path: tuple[Any, ...], value: float) -> None:
    for key in path[:-1]:
        data = data[key]
    data[path[-1]] = value


VLLM = "vllm-serve-concurrency16.json"
CASES = [
    (VLLM, ("duration",), 0, "duration: expected a number > 0, got 0"),
    (VLLM, ("duration",), -5, "duration: expected a number >= 0"),
    (VLLM, ("mean_ttft_ms",), -5, "mean_ttft_ms: expected a number >= 0"),
    (VLLM, ("max_concurrency",), 0,
     "max_concurrency: expected a whole number >= 1, got 0"),
    (VLLM, ("p99_itl_ms",), 0,
     REJECTED + "points[0].itl_ms: p95 (30.13277) is above p99 (0.0)"),
    ("aiperf-concurrency32.json", ("benchmark_duration", "avg"), 0,
     "benchmark_duration: expected a number > 0, got 0"),
    ("aiperf-concurrency32.json", ("inter_token_latency", "p90"), 0,
     REJECTED + "points[0].tpot_ms: p50 (11.5427) is above p90 (0.0)"),
    ("guidellm-concurrent16.json", ("benchmarks", 0, "duration"), 0,
     "duration: expected a number > 0, got 0"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "path", "value", "message"), CASES)
def test_a_figure_no_result_holds_is_refused_naming_the_file(
    tmp_path: Path, name: str, path: tuple[Any, ...], value: float, message: str
) -> None:
    data = json.loads((IMPORTER_FILES / name).read_text())
    _set(data, path, value)
    given = tmp_path / name
    given.write_text(json.dumps(data))
    out = tmp_path / "out"
    outcome = CliRunner().invoke(
        main, ["bench", "import", str(given), *FLAGS, "--output", str(out)]
    )
    assert outcome.exit_code == 1, outcome.output
    (line,) = outcome.output.splitlines()
    assert line.startswith(f"Error: {given}"), line
    assert message in line
    assert not out.exists()
