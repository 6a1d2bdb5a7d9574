"""Fixtures of the bench tests: the stand-in OpenAI server, the stand-in vLLM, a Ray cluster, and
the real vLLM on the CPU (`real_vllm.py`)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from bench_helpers import standin_server
from fake_openai_server import FakeOpenAIServer, FakeServerConfig
from ray_cluster import LocalRayCluster, RayFleet
from real_vllm import RealVllm, TinyModel, build_model, require_vllm_cpu
from standin_launcher import standin_launcher


@pytest.fixture
def fake_server() -> Iterator[FakeOpenAIServer]:
    """A fake server with instant responses; tests set `fake_server.config` fields."""
    # The server thread and the client share the GIL: switch often so neither waits 5 ms.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    with FakeOpenAIServer(FakeServerConfig()) as server:
        yield server
    sys.setswitchinterval(interval)


@pytest.fixture
def endpoint() -> Iterator[str]:
    """The URL of a stand-in vLLM in this process (bench_helpers.standin_server) at a GPU's
    pace, so the registry's physics check keeps what it measures."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    with standin_server() as server:
        yield server.url
    sys.setswitchinterval(interval)


@pytest.fixture
def standin_vllm(tmp_path: Path) -> Path:
    """An executable called `vllm` that runs the STAND-IN (tests/bench/standin_vllm.py)."""
    return standin_launcher(tmp_path / "standin-bin")


@pytest.fixture(scope="session")
def ray_fleet() -> Iterator[RayFleet]:
    """ONE real Ray cluster on 127.0.0.1 for every test that needs one (starting it costs
    most of their time). Every node claims GPUs, as a GPU host's `ray start` detects them,
    since a fleet task asks for Ray's `GPU` as well as its kind: the H100 head one, each L40S
    worker two (the multi-node tests serve over their 2 × 2) but one `gpu_l40s`, so that each
    takes one single-node run at a time and the kill test's doomed node surely runs one. A
    multi-node vLLM's own placement group (`{"GPU": 1}` × 4, packed: it takes free GPUs on any
    node) lands on the two 2-GPU L40S nodes, never on the head's one GPU: Ray's packing puts
    bundles on the nodes with the most free GPUs first (20 of 20 groups, measured)."""
    # The stand-in's tokens come 10 ms apart: a pace an L40S could serve a 1B model at (the
    # registry refuses faster decoding than the GPU's memory bandwidth allows).
    cluster = LocalRayCluster(env={"STANDIN_VLLM_ITL_S": "0.01"})
    try:
        h100 = cluster.start({"gpu_h100-sxm": 1}, gpus=1)
        # The doomed node's stand-in decodes 4× slower, so that its run is still under way
        # when the kill test's other entries have finished (on a quiet machine the runs are
        # otherwise so quick that the node's run could end before it is killed).
        l40s, doomed = cluster.add_workers(
            {"l40s": ({"gpu_l40s": 1}, 2), "doomed-l40s": ({"gpu_l40s": 1}, 2)},
            node_env={"doomed-l40s": {"STANDIN_VLLM_ITL_S": "0.04"}},
        )
        yield RayFleet(cluster, h100, l40s, doomed)
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> TinyModel:
    """The config-only tiny Llama (no weights: vLLM serves it with `--load-format dummy`)."""
    return build_model(tmp_path_factory.mktemp("tiny-model") / "tiny-llama")


@pytest.fixture(scope="session")
def real_vllm(
    tmp_path_factory: pytest.TempPathFactory, tiny_model: TinyModel
) -> Iterator[RealVllm]:
    """ONE real vLLM on the CPU (`vllm-cpu`, `.venv-vllm`) serving the tiny model, shared by
    every test that only sends it traffic: a start costs 25-95 s on 2 shared cores. Prefix
    caching is on (stated, not left to vLLM's default). Tests that read its counters take their
    growth over their own run; they run one at a time (under xdist all in one process: the
    real-vllm group of tests/conftest.py), so nothing else adds to it meanwhile."""
    require_vllm_cpu()
    folder = tmp_path_factory.mktemp("real-vllm")
    server = RealVllm(tiny_model, folder / "vllm.log", extra_args=("--enable-prefix-caching",))
    server.start()
    try:
        yield server
    finally:
        server.stop()
