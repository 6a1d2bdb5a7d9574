"""`bench run` with GPU telemetry from the STAND-IN NVML (tests/bench/standin_pynvml.py),
against the in-process STAND-IN vLLM server or the stand-in `vllm` executable."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from bench_helpers import SMALLEST, STANDIN_MODEL, standin_server
from click.testing import CliRunner, Result
from standin_pynvml import StandinGpu, install
from standin_vllm import StandinVllm

from infermeter.bench.cli.main import main
from infermeter.registry.models import Result as RegistryResult
from infermeter.registry.validate import validate_paths


@pytest.fixture
def standin() -> Iterator[StandinVllm]:
    """The stand-in vLLM's server (`/version`, `/metrics`, streaming) in this process."""
    with standin_server() as server:  # at a GPU's pace: the registry checks the physics
        yield server


def _two_gpus_one_serving(monkeypatch: pytest.MonkeyPatch) -> list[StandinGpu]:
    idle, serving = StandinGpu(), StandinGpu(utilization_pct=95, processes=[4242])
    idle.set_power(70.0)
    serving.set_power(480.0)
    install(monkeypatch, [idle, serving])
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    return [idle, serving]


def _run(*args: str) -> Result:
    return CliRunner().invoke(main, ["bench", "run", "--quiet", *args])


def _measure(tmp_path: Path, *args: str) -> tuple[RegistryResult, Path]:
    """`bench run` with args, which must succeed: the result it wrote and its file."""
    output = tmp_path / "result.json"
    run = _run(*args, "--output", str(output))
    assert run.exit_code == 0, run.output
    return RegistryResult.model_validate_json(output.read_text()), output


def _measure_gpu_1(
    tmp_path: Path, standin: StandinVllm, concurrency: str
) -> tuple[RegistryResult, Path]:
    """`bench run` against the stand-in server, with telemetry of GPU 1 only."""
    return _measure(
        tmp_path, "--endpoint", standin.url, "--model", STANDIN_MODEL, "--gpu-indices", "1",
        "--concurrency", concurrency, *SMALLEST,
    )  # fmt: skip


def test_bench_run_endpoint_standin_nvml_records_only_the_gpus_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, standin: StandinVllm
) -> None:
    _two_gpus_one_serving(monkeypatch)
    result, _ = _measure_gpu_1(tmp_path, standin, "1,2")
    assert result.source.kind == "measured"
    assert result.source.host.telemetry_gpu_indices == [1]
    assert result.source.host.gpu_count == 2
    for point in result.points:
        assert point.telemetry is not None
        assert point.telemetry.gpu is not None
        # GPU 1 alone draws 480 W; both together would be 550 W.
        assert point.telemetry.gpu.power_w_mean == pytest.approx(480.0, rel=0.05)


def test_bench_run_endpoint_standin_nvml_short_points_pass_the_registrys_energy_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, standin: StandinVllm
) -> None:
    _two_gpus_one_serving(monkeypatch)
    # Points of a few tens of milliseconds: shorter than one 100 ms sampling interval on a quiet
    # machine (a CI machine under a load of 8 stretched one to 0.502 s: the bound leaves room).
    result, output = _measure_gpu_1(tmp_path, standin, "1,4")
    for point in result.points:
        assert point.duration_s is not None
        assert point.duration_s < 1.0
        gpu = point.telemetry.gpu if point.telemetry else None
        assert gpu is not None
        assert gpu.energy_j is not None
        assert gpu.energy_j == pytest.approx(480.0 * point.duration_s, rel=0.05)
    assert list(validate_paths([output]).problems) == []


def test_bench_run_endpoint_gpu_indices_is_refused_when_launching(tmp_path: Path) -> None:
    run = _run("--model", STANDIN_MODEL, "--gpu-indices", "1", "--output", str(tmp_path / "r.json"))
    assert run.exit_code == 2
    assert "--gpu-indices: only applies with --endpoint" in run.output


def test_bench_run_launch_standin_nvml_counts_data_parallel_gpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, standin_vllm: Path
) -> None:
    _two_gpus_one_serving(monkeypatch)
    result, _ = _measure(
        tmp_path, "--model", STANDIN_MODEL, "--vllm-executable", str(standin_vllm),
        "--load-format", "dummy", "--max-model-len", "4096", "--vllm-arg", "-dp 2",
        "--concurrency", "1", *SMALLEST,
    )  # fmt: skip
    assert result.identity.gpu.id == "h100-sxm"  # from the stand-in NVML's GPU name
    assert result.identity.gpu.count == 2
    assert result.identity.serving.data_parallel_size == 2
    assert result.points[0].concurrency_mean is not None
    assert 0 < result.points[0].concurrency_mean <= 1.0
    assert result.source.host.telemetry_gpu_indices == [0, 1]
    gpu = result.points[0].telemetry.gpu if result.points[0].telemetry else None
    assert gpu is not None
    assert gpu.power_w_mean == pytest.approx(550.0, rel=0.05)
