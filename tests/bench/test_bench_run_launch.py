"""`infermeter bench run --model …` launching the STAND-IN vllm: result file, failures, Ctrl-C."""

from __future__ import annotations

import gzip
import json
import re
import signal
from pathlib import Path

import jsonschema
import pytest
from bench_helpers import SMALL, STANDIN_MODEL, process_alive
from click.testing import CliRunner, Result
from fake_openai_server import FakeOpenAIServer
from local_ports import busy_port
from test_bench_run_signals import _start_run, _wait_for_second_point

from infermeter.bench.cli.main import main
from infermeter.registry.models import Result as RegistryResult
from infermeter.registry.schemas import load_schema


def _launch(standin: Path, output: Path, *args: str) -> Result:
    return CliRunner().invoke(
        main,
        [
            "bench", "run", "--model", STANDIN_MODEL, "--vllm-executable", str(standin),
            "--load-format", "dummy", "--max-model-len", "4096", "--gpu", "h100-sxm",
            "--output", str(output), *args,
        ],
    )  # fmt: skip


def _standin_pid(log: Path) -> int:
    match = re.search(r"Started server process \[(\d+)\]", log.read_text())
    assert match, log.read_text()
    return int(match.group(1))


def test_bench_run_launch_writes_a_valid_result_and_stops_vllm(
    tmp_path: Path, standin_vllm: Path
) -> None:
    output = tmp_path / "out" / "result.json"
    run = _launch(standin_vllm, output, "--concurrency", "1,4", *SMALL, "--raw-records", "--json")
    assert run.exit_code == 0, run.output
    summary = json.loads(run.stdout)
    assert [p["concurrency"] for p in summary["points"]] == [1, 4]
    assert set(summary["points"][0]) >= {"completed", "failed", "ttft_ms", "e2e_ms"}

    text = output.read_text()
    result = RegistryResult.model_validate_json(text)
    schema = load_schema("result.schema.json")
    jsonschema.validate(json.loads(text), schema)
    assert result.identity.gpu.id == "h100-sxm"
    assert result.identity.model.id == "llama-3.2-1b-instruct"
    assert result.identity.engine.version == "0.9.1"
    assert result.identity.serving.max_model_len == 4096
    assert result.startup is not None
    assert result.startup.kv_cache_tokens == 434_992
    assert result.startup.weights_gib == 14.9889
    source = result.source
    assert source.kind == "measured"
    assert source.complete
    assert source.tool.name == "infermeter"
    assert source.command.startswith("infermeter bench run --model " + STANDIN_MODEL)
    assert source.server_command is not None
    assert "--load-format dummy" in source.server_command
    for point in result.points:
        assert point.requests.completed == 6
        telemetry = point.telemetry
        assert telemetry is not None
        assert telemetry.gpu is None  # no GPU here: absent, not an error
        engine = telemetry.engine
        assert engine is not None
        # The stand-in preempts every request once and hits the prefix cache for a quarter
        # of each prompt: the counters differenced per point (6 measured + 2 warm-up).
        assert engine.preemptions == 8
        assert engine.prefix_cache_hit_rate == 0.25
        assert point.queue_ms is not None
        assert point.queue_ms.mean == 2.0
        assert "preemptions" in [v.code for v in point.validity]

    log = tmp_path / "out" / "result.vllm.log"
    assert "GPU KV cache size: 434,992 tokens" in log.read_text()
    assert not process_alive(_standin_pid(log))
    with gzip.open(tmp_path / "out" / "result.requests.jsonl.gz", "rt") as raw:
        lines = [json.loads(line) for line in raw]
    records = [line for line in lines if line["kind"] == "request"]
    assert len(records) == 16
    assert {r["point"] for r in records} == {1, 2}
    seconds = [line for line in lines if line["kind"] == "second"]
    assert sum(s["sent"] for s in seconds) == 16
    assert sum(s["completed"] + s["failed"] for s in seconds) == 16
    assert "no GPU telemetry" in run.stderr


def test_bench_run_launch_prints_the_buyers_cost_table(tmp_path: Path, standin_vllm: Path) -> None:
    run = _launch(
        standin_vllm,
        tmp_path / "r.json",
        "--concurrency",
        "2",
        *SMALL,
        "--price-per-hour",
        "2.5",
        "--utilization",
        "0.5",
    )
    assert run.exit_code == 0, run.output
    assert "$/1M accepted" in run.stdout
    assert "E2E p95/p99 ms" in run.stdout
    row = next(line for line in run.stdout.splitlines() if line.strip().startswith("c=2  2.50"))
    assert "5.00" in row  # effective: $2.50 / 0.5 utilization
    assert "price: $2.5 per GPU-hour (given with --price-per-hour)" in run.stdout


def test_bench_run_launch_startup_oom_exits_1_with_cause_and_log_tail(
    tmp_path: Path, standin_vllm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STANDIN_VLLM_MODE", "kv_too_small")
    output = tmp_path / "result.json"
    run = _launch(standin_vllm, output, "--concurrency", "1", *SMALL)
    assert run.exit_code == 1
    first = next(line for line in run.stderr.splitlines() if line.startswith("Error:"))
    assert first.startswith("Error: --model: vLLM exited with code 1 while starting")
    assert "vLLM estimates the maximum model length at 64,624 tokens" in first
    assert "last lines of the vLLM log:" in run.stderr
    assert "| ValueError: To serve at least one request" in run.stderr
    assert "Traceback (most recent call last)" not in run.stderr.replace("| Traceback", "")
    assert not output.exists()


def test_bench_run_launch_crash_mid_run_keeps_finished_points(
    tmp_path: Path, standin_vllm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first point sends 8 requests; the stand-in dies when the 11th arrives.
    monkeypatch.setenv("STANDIN_VLLM_MODE", "crash")
    monkeypatch.setenv("STANDIN_VLLM_CRASH_AFTER", "10")
    output = tmp_path / "result.json"
    run = _launch(standin_vllm, output, "--concurrency", "1,4,8", *SMALL)
    assert run.exit_code == 1
    assert "the run is incomplete: vLLM exited with code 1 during the run" in run.stderr
    result = RegistryResult.model_validate_json(output.read_text())
    assert [p.load.concurrency for p in result.points] == [1]
    assert result.source.complete is False


def test_bench_run_launch_port_in_use_exits_1(tmp_path: Path, standin_vllm: Path) -> None:
    with busy_port() as port:
        run = _launch(standin_vllm, tmp_path / "r.json", "--port", str(port), *SMALL)
    assert run.exit_code == 1
    assert f"Error: --model: cannot start vLLM: port {port} is already in use" in run.stderr
    assert not (tmp_path / "r.vllm.log").exists()  # refused before launching


def test_bench_run_launch_names_vllm_executable_once_when_it_cannot_run(tmp_path: Path) -> None:
    # It said "Error: --model: --vllm-executable: … is not an executable file".
    not_executable = tmp_path / "vllm"
    not_executable.write_text("not a program")
    run = _launch(not_executable, tmp_path / "r.json", *SMALL)
    assert run.exit_code == 1, run.output
    assert run.stderr.splitlines()[-1] == (
        f"Error: --vllm-executable: {not_executable} is not an executable file"
    )


def test_bench_run_launch_without_a_known_gpu_exits_2_before_starting_vllm(
    tmp_path: Path, standin_vllm: Path
) -> None:
    if Path("/dev/nvidia0").exists():
        pytest.skip("this host has an NVIDIA GPU")
    run = CliRunner().invoke(
        main,
        [
            "bench", "run", "--model", STANDIN_MODEL, "--vllm-executable", str(standin_vllm),
            "--output", str(tmp_path / "r.json"), *SMALL,
        ],
    )  # fmt: skip
    assert run.exit_code == 2
    assert "Error: --gpu: no NVIDIA GPU was detected" in run.stderr
    assert not (tmp_path / "r.vllm.log").exists()


@pytest.mark.parametrize(
    ("option", "text", "message"),
    [
        ("--trace", "\n", "t.jsonl: no requests in the trace"),
        ("--dataset", '{"not": "sharegpt"}\n', "t.jsonl:1: expected an object with a `conv"),
    ],
)
def test_bench_run_launch_refuses_a_bad_workload_file_before_starting_vllm(
    tmp_path: Path, standin_vllm: Path, option: str, text: str, message: str
) -> None:
    # It was read once vLLM was up: minutes of loading a model on a GPU, then this line.
    bad = tmp_path / "t.jsonl"
    bad.write_text(text)
    extra = ["--concurrency", "1", *SMALL[:4]] if option == "--dataset" else []
    run = _launch(standin_vllm, tmp_path / "r.json", option, str(bad), *extra)
    assert run.exit_code == 1, run.output
    assert run.stderr.startswith(f"Error: {option}: ")
    assert message in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert not (tmp_path / "r.vllm.log").exists()


def test_bench_run_launch_unknown_model_id_exits_2(tmp_path: Path, standin_vllm: Path) -> None:
    run = _launch(standin_vllm, tmp_path / "r.json", "--model-id", "llama-9", *SMALL)
    assert run.exit_code == 2
    assert "--model-id" in run.stderr


def test_bench_run_endpoint_rejects_launch_only_options(fake_server: FakeOpenAIServer) -> None:
    run = CliRunner().invoke(
        main, ["bench", "run", "--endpoint", fake_server.url, "--max-model-len", "4096"]
    )
    assert run.exit_code == 2
    assert "--max-model-len: only applies when bench run launches vLLM" in run.stderr


def test_bench_run_endpoint_output_needs_to_know_the_engine(
    fake_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_server.config.model = STANDIN_MODEL
    output = tmp_path / "r.json"
    run = CliRunner().invoke(
        main,
        ["bench", "run", "--endpoint", fake_server.url, "--gpu", "h100-sxm",
         "--model-id", "llama-3.2-1b-instruct", "--output", str(output), *SMALL],
    )  # fmt: skip
    assert run.exit_code == 1
    assert "does not say which engine it is" in run.stderr
    assert not output.exists()


def test_bench_run_launch_ctrl_c_stops_vllm_and_keeps_finished_points(
    tmp_path: Path, standin_vllm: Path
) -> None:
    """Ctrl-C inside the second point (the run as `test_bench_run_signals` starts it, waiting
    on the stand-in's own count of requests, not on a sleep)."""
    output = tmp_path / "result.json"
    process = _start_run(tmp_path, standin_vllm)
    _wait_for_second_point(process)
    process.send_signal(signal.SIGINT)
    _, rest = process.communicate(timeout=120)  # guards against a hang; 12 s seen under load
    assert process.returncode == 1, rest
    assert "the run is incomplete: interrupted" in rest
    result = RegistryResult.model_validate_json(output.read_text())
    # the second point is kept with the requests that finished before the Ctrl-C, marked so
    assert [p.load.concurrency for p in result.points] == [1, 2]
    assert [[v.code for v in p.validity if v.code == "interrupted"] for p in result.points] == [
        [],
        ["interrupted"],
    ]
    assert result.source.complete is False
    assert not process_alive(_standin_pid(tmp_path / "result.vllm.log"))
