"""`bench run --endpoint URL --server-command 'vllm serve …'`: the result keeps how the server
was started and takes its serving settings from that command (a Kubernetes Job's bench runs
against its vLLM sidecar this way). Against the STAND-IN vLLM's HTTP side, in-process."""

from __future__ import annotations

from pathlib import Path

from bench_helpers import STANDIN_MODEL
from click.testing import CliRunner
from click.testing import Result as CliResult

from infermeter.bench.cli.main import main
from infermeter.registry.models import Result

SERVED_WITH = (
    f"vllm serve {STANDIN_MODEL} --host 127.0.0.1 --port 8000 --max-model-len 4096 "
    "--gpu-memory-utilization 0.85 --max-num-seqs 64 --kv-cache-dtype fp8 "
    "--enable-prefix-caching --api-key sk-not-for-the-file"
)


def _run_served_with(
    tmp_path: Path, endpoint: str, server_command: str, *more: str
) -> tuple[Path, CliResult]:
    """A short `bench run` against the endpoint, said to be served by server_command: the
    result's file and the run."""
    output = tmp_path / "result.json"
    run = CliRunner().invoke(
        main,
        [
            "bench", "run", "--endpoint", endpoint, "--gpu", "h100-sxm",
            "--model-id", "llama-3.2-1b-instruct", "--concurrency", "1", "--num-requests", "2",
            "--warmup", "0", "--input-len", "16", "--output-len", "8",
            "--server-command", server_command, *more, "--output", str(output),
        ],
    )  # fmt: skip
    return output, run


def test_bench_run_server_command_gives_the_serving_settings(tmp_path: Path, endpoint: str) -> None:
    output, run = _run_served_with(tmp_path, endpoint, SERVED_WITH)
    assert run.exit_code == 0, run.output
    result = Result.model_validate_json(output.read_text())
    assert result.source.kind == "measured"
    serving = result.identity.serving
    assert serving.gpu_memory_utilization == 0.85
    assert serving.max_num_seqs == 64
    assert serving.max_model_len == 4096
    assert serving.enable_prefix_caching is True
    assert result.identity.model.kv_cache_dtype == "fp8"
    assert result.source.server_command is not None
    assert "--max-model-len 4096" in result.source.server_command
    assert "sk-not-for-the-file" not in output.read_text()  # redacted like any command


def test_bench_run_server_command_with_a_kv_cache_dtype_the_plan_lacks_says_so(
    tmp_path: Path, endpoint: str
) -> None:
    # Bug: vLLM's fp8_inc (and any name the memory plan lacks) left the result without a KV
    # cache dtype, unsaid.
    served_with = SERVED_WITH.replace("--kv-cache-dtype fp8", "--kv-cache-dtype fp8_inc")
    output, run = _run_served_with(tmp_path, endpoint, served_with)
    assert run.exit_code == 0, run.output
    assert (
        "note: --kv-cache-dtype fp8_inc is no KV cache dtype the memory plan knows (auto, fp8, "
        in run.output
    )
    assert "the result leaves kv_cache_dtype unstated" in run.output
    assert Result.model_validate_json(output.read_text()).identity.model.kv_cache_dtype is None


def test_bench_run_server_command_without_an_endpoint_exits_2(tmp_path: Path) -> None:
    run = CliRunner().invoke(
        main, ["bench", "run", "--model", STANDIN_MODEL, "--server-command", SERVED_WITH]
    )
    assert run.exit_code == 2, run.output
    assert "--server-command: only applies with --endpoint" in run.stderr


OVER_RAY = (
    f"vllm serve {STANDIN_MODEL} --host 127.0.0.1 --port 8000 --tensor-parallel-size 2 "
    "--pipeline-parallel-size 2 --distributed-executor-backend ray"
)


def _run_nodes(tmp_path: Path, endpoint: str, nodes: str) -> tuple[Path, CliResult]:
    return _run_served_with(tmp_path, endpoint, OVER_RAY, "--nodes", nodes)


def test_bench_run_nodes_records_the_hosts_of_a_server_over_ray(
    tmp_path: Path, endpoint: str
) -> None:
    """As a LeaderWorkerSet's bench runs: the result says 2 nodes × 2 GPUs, as `--ray-address`
    would, and validates (nodes × GPUs per node is the GPU count)."""
    from infermeter.registry.validate import validate_paths

    output, run = _run_nodes(tmp_path, endpoint, "2")
    assert run.exit_code == 0, run.output
    result = Result.model_validate_json(output.read_text())
    gpu = result.identity.gpu
    assert (gpu.count, gpu.nodes, gpu.gpus_per_node) == (4, 2, 2)
    assert result.source.host.gpu_count == 2  # one host's share
    assert "--nodes 2" in result.source.command
    report = validate_paths([output])
    assert report.ok, report.summary()


def test_bench_run_nodes_that_do_not_divide_the_gpus_exit_2(tmp_path: Path, endpoint: str) -> None:
    output, run = _run_nodes(tmp_path, endpoint, "3")
    assert run.exit_code == 2, run.output
    assert "--nodes: 4 GPUs (tensor × pipeline parallel) do not split evenly over 3" in run.stderr
    assert not output.exists()


def test_bench_run_nodes_without_an_endpoint_exits_2() -> None:
    run = CliRunner().invoke(main, ["bench", "run", "--model", STANDIN_MODEL, "--nodes", "2"])
    assert run.exit_code == 2, run.output
    assert "--nodes: only applies with --endpoint" in run.stderr
