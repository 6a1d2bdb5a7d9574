"""vLLM across nodes: how tensor × pipeline parallel ranks split over a Ray cluster's nodes,
the `vllm serve` command and environment, and the options that go with it."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_helpers import STANDIN_MODEL
from click.testing import CliRunner

from infermeter.bench.cli.main import main
from infermeter.bench.errors import BenchConfigError
from infermeter.bench.launch.multinode import NodeSplit, split_over_nodes
from infermeter.bench.launch.server import ServerConfig, server_command
from infermeter.bench.plan.options import RunOptions
from infermeter.bench.session.builder import session_config

ADDRESS = "10.0.0.1:6379"


@pytest.mark.parametrize(
    ("gpus", "node_gpus", "split"),
    [
        (4, [2, 2], NodeSplit(2, 2)),
        (2, [8], NodeSplit(1, 2)),
        (16, [8, 8], NodeSplit(2, 8)),
        (12, [8, 8], NodeSplit(2, 6)),
        (8, [8, 8, 8], NodeSplit(1, 8)),
        (24, [8, 8, 8], NodeSplit(3, 8)),
        (6, [4, 4, 4], NodeSplit(2, 3)),
    ],
)
def test_split_fills_whole_nodes(gpus: int, node_gpus: list[int], split: NodeSplit) -> None:
    assert split_over_nodes(gpus, node_gpus, ADDRESS) == split
    assert split.nodes * split.gpus_per_node == gpus


@pytest.mark.parametrize(
    ("gpus", "node_gpus", "message"),
    [
        (8, [2, 2], "needs 8 GPUs, but the Ray cluster at 10.0.0.1:6379 has 4 (2 + 2 on 2 nodes)"),
        (9, [8, 8], "9 GPUs do not split evenly over 2 nodes of 8"),
        (1, [], "the Ray cluster at 10.0.0.1:6379 has no live node with GPUs"),
    ],
)
def test_split_refuses_what_the_cluster_cannot_hold(
    gpus: int, node_gpus: list[int], message: str
) -> None:
    with pytest.raises(BenchConfigError) as caught:
        split_over_nodes(gpus, node_gpus, ADDRESS)
    assert message in str(caught.value)
    assert caught.value.exit_code == 2


def test_server_command_over_ray_names_the_backend_and_both_sizes() -> None:
    config = ServerConfig(
        model="m",
        log_path=Path("l.log"),
        tensor_parallel_size=8,
        pipeline_parallel_size=2,
        ray_address=ADDRESS,
    )
    command = server_command(config, "vllm", 8000)
    assert command[command.index("--tensor-parallel-size") + 1] == "8"
    assert command[command.index("--pipeline-parallel-size") + 1] == "2"
    assert command[command.index("--distributed-executor-backend") + 1] == "ray"
    one_host = server_command(ServerConfig(model="m", log_path=Path("l.log")), "vllm", 8000)
    assert "--distributed-executor-backend" not in one_host


def test_run_options_carry_the_ray_address_to_the_server() -> None:
    options = RunOptions.model_validate(
        {"model": "m", "pipeline-parallel-size": 2, "ray-address": ADDRESS}
    )
    session = session_config(options, "infermeter bench run")
    assert session.server is not None
    assert session.server.ray_address == ADDRESS
    assert session.server.pipeline_parallel_size == 2


def test_pipeline_size_given_twice_is_refused() -> None:
    options = RunOptions.model_validate(
        {"model": "m", "pipeline-parallel-size": 2, "vllm-arg": ["--pipeline-parallel-size 2"]}
    )
    with pytest.raises(BenchConfigError) as caught:
        session_config(options, "infermeter bench run")
    assert caught.value.option == "--pipeline-parallel-size"


def test_ray_address_with_an_endpoint_exits_2() -> None:
    run = CliRunner().invoke(
        main, ["bench", "run", "--endpoint", "http://127.0.0.1:9", "--ray-address", ADDRESS]
    )
    assert run.exit_code == 2
    assert "--ray-address: only applies when bench run launches vLLM" in run.stderr


def test_unreachable_ray_cluster_exits_1_naming_it(tmp_path: Path, standin_vllm: Path) -> None:
    run = CliRunner().invoke(
        main,
        [
            "bench", "run", "--model", STANDIN_MODEL,
            "--vllm-executable", str(standin_vllm), "--gpu", "h100-sxm",
            "--tensor-parallel-size", "2", "--ray-address", "127.0.0.1:1",
            "--output", str(tmp_path / "r.json"),
        ],
    )  # fmt: skip
    assert run.exit_code == 1, run.output
    assert run.stderr.startswith(
        "Error: --ray-address: cannot connect to the Ray cluster at 127.0.0.1:1: Connection refused"
    )
    assert not (tmp_path / "r.vllm.log").exists()
