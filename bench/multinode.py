"""vLLM across hosts: the Ray cluster it runs on, and how its GPUs split over the nodes.

`bench run --ray-address ADDRESS` launches `vllm serve … --distributed-executor-backend ray`
with `RAY_ADDRESS` set, so vLLM's ranks (tensor × pipeline parallel) are placed on an existing
Ray cluster's nodes. Before vLLM starts, `cluster_node_gpus` reads the GPUs of each live node
from the cluster, and `split_over_nodes` says how the ranks spread: nodes are filled whole,
as vLLM's placement does, so N GPUs on nodes of G take ceil(N / G) nodes with N / nodes each.
A cluster with too few GPUs is refused before any weights are loaded. The result records the
node count and GPUs per node; its GPU count stays tensor × pipeline, so $/hour follows.
"""

from __future__ import annotations

import contextlib
import logging
import math
import socket
import sys
from dataclasses import dataclass
from typing import Any

from bench.errors import BenchConfigError, EndpointError


@dataclass(frozen=True)
class NodeSplit:
    """How many hosts serve, and how many GPUs each contributes."""

    nodes: int
    gpus_per_node: int


def _reachable(address: str, timeout_s: float = 5.0) -> str | None:
    """Why HOST:PORT takes no TCP connection (None when it does, or is not HOST:PORT)."""
    host, colon, port = address.rpartition(":")
    if not colon or not port.isdigit():
        return None  # `auto`, `ray://…`: left to Ray
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s):
            return None
    except OSError as error:
        return error.strerror or str(error)


def connect_ray(address: str, option: str) -> Any:
    """The `ray` module, connected to the cluster at `address` as a driver (quietly).

    A HOST:PORT that takes no connection fails at once (Ray itself retries for minutes)."""
    try:
        import ray
    except ImportError:
        raise BenchConfigError(
            "needs ray; install it with pip install 'infermeter[fleet]'", option
        ) from None
    reason = _reachable(address)
    if reason is not None:
        raise EndpointError(f"cannot connect to the Ray cluster at {address}: {reason}", option)
    try:
        ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
    except Exception as error:  # ray raises ConnectionError, RuntimeError, ValueError, …
        message = " ".join(str(error).split())[:300]
        raise EndpointError(
            f"cannot connect to the Ray cluster at {address}: {message}", option
        ) from None
    return ray


def cluster_node_gpus(address: str) -> list[int]:
    """The GPU count of each live node of the Ray cluster at `address` that has GPUs."""
    with contextlib.redirect_stdout(sys.stderr):  # Ray prints cluster events to stdout
        ray = connect_ray(address, "--ray-address")
        try:
            nodes = ray.nodes()
        finally:
            ray.shutdown()
    counts = [int(node.get("Resources", {}).get("GPU", 0)) for node in nodes if node.get("Alive")]
    return sorted((count for count in counts if count > 0), reverse=True)


def split_over_nodes(gpus: int, node_gpus: list[int], address: str) -> NodeSplit:
    """How `gpus` ranks spread over nodes with `node_gpus` GPUs; BenchConfigError if they don't."""
    if not node_gpus:
        raise BenchConfigError(
            f"the Ray cluster at {address} has no live node with GPUs", "--ray-address"
        )
    total = sum(node_gpus)
    if gpus > total:
        shape = " + ".join(str(count) for count in node_gpus)
        raise BenchConfigError(
            f"tensor × pipeline parallel needs {gpus} GPUs, but the Ray cluster at {address} "
            f"has {total} ({shape} on {len(node_gpus)} nodes)",
            "--pipeline-parallel-size",
        )
    per_node = min(node_gpus)
    nodes = math.ceil(gpus / per_node)
    if gpus % nodes:
        raise BenchConfigError(
            f"{gpus} GPUs do not split evenly over {nodes} nodes of {per_node}; choose tensor × "
            "pipeline parallel sizes that do",
            "--pipeline-parallel-size",
        )
    return NodeSplit(nodes, gpus // nodes)
