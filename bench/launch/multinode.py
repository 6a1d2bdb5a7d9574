"""vLLM across hosts: the Ray cluster it runs on, and how its GPUs split over the nodes.

`bench run --ray-address ADDRESS` launches `vllm serve … --distributed-executor-backend ray`
with `RAY_ADDRESS` set, so vLLM's ranks (tensor × pipeline parallel) are placed on an existing
Ray cluster's nodes. Before vLLM starts, `cluster_node_gpus` reads the GPUs of each live node
from the cluster, and `split_over_nodes` says how the ranks spread: nodes are filled whole,
as vLLM's placement does, so N GPUs on nodes of G take ceil(N / G) nodes with N / nodes each.
A cluster with too few GPUs is refused before any weights are loaded. The result records the
node count and GPUs per node; its GPU count stays tensor × pipeline, so $/hour follows.

On a cluster of several GPU kinds, each node advertises its kind as a custom resource
(`gpu_<catalog id>`, see `bench.fleet`): then only the nodes of the run's `--gpu` count.
`vllm serve` cannot be told which nodes to use: its Ray executor
(`initialize_ray_cluster`, vllm/v1/executor/ray_utils.py) takes the placement group of the
process it runs in (`ray.util.get_current_placement_group()`) or else makes its own,
`{"GPU": 1}` × tensor × pipeline, packed, the first bundle on its own node; and a process
that `bench run` launches is a new Ray driver, which never belongs to a placement group
(Ray's docstring of `get_current_placement_group`). So once vLLM is up, `check_placement`
reads from Ray which nodes hold the group vLLM made (`placement_group_table`) and stops the
run before anything is measured when a rank sits on a node of another kind.
"""

from __future__ import annotations

import contextlib
import logging
import math
import socket
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from infermeter.bench.errors import BenchConfigError, EndpointError


@dataclass(frozen=True)
class NodeSplit:
    """How many hosts serve, and how many GPUs each contributes."""

    nodes: int
    gpus_per_node: int


@dataclass(frozen=True)
class Placement:
    """Where vLLM's ranks are: the Ray nodes of its placement group, and how many on each."""

    node_ids: tuple[str, ...]
    split: NodeSplit | None  # None when the nodes hold different numbers of ranks


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


def kind_resource(gpu_id: str) -> str:
    """`gpu_<catalog id>`: the custom resource a Ray node advertises per GPU of that kind."""
    return f"gpu_{gpu_id}"


@contextlib.contextmanager
def _cluster(address: str) -> Iterator[Any]:
    """`ray`, connected to the cluster: as this process's own driver for the block, or, in a
    Ray task (a `bench fleet` entry), through the task's own connection, left open."""
    with contextlib.redirect_stdout(sys.stderr):  # Ray prints cluster events to stdout
        ray = sys.modules.get("ray")  # a Ray worker has imported it
        if ray is not None and ray.is_initialized():
            yield ray
            return
        ray = connect_ray(address, "--ray-address")
        try:
            yield ray
        finally:
            ray.shutdown()


def _kind_nodes(nodes: list[dict[str, Any]], gpu_id: str | None) -> list[dict[str, Any]]:
    """The live nodes vLLM's ranks may use: those of `gpu_id` when any node advertises a kind."""
    live = [node for node in nodes if node.get("Alive")]
    if gpu_id is None:
        return live
    resource = kind_resource(gpu_id)
    kinds = any(key.startswith("gpu_") for node in live for key in node.get("Resources", {}))
    return [node for node in live if resource in node.get("Resources", {})] if kinds else live


def cluster_node_gpus(address: str, gpu_id: str | None = None) -> list[int]:
    """The GPU count of each live node of the Ray cluster at `address` that has GPUs; on a
    cluster whose nodes advertise their GPU kind, of the nodes of `gpu_id` only."""
    with _cluster(address) as ray:
        nodes = _kind_nodes(ray.nodes(), gpu_id)
    counts = [int(node.get("Resources", {}).get("GPU", 0)) for node in nodes]
    return sorted((count for count in counts if count > 0), reverse=True)


def placement_group_ids(address: str) -> set[str]:
    """The ids of the placement groups the cluster has now (before vLLM makes its own)."""
    with _cluster(address) as ray:
        return set(ray.util.placement_group_table())


def _vllms_group(table: dict[str, dict[str, Any]], before: set[str]) -> dict[str, Any] | None:
    """The group vLLM's Ray executor made: new since it started, created, a GPU in every
    bundle; None unless exactly one fits."""
    found = [
        group
        for group_id, group in table.items()
        if group_id not in before
        and group.get("state") == "CREATED"
        and group.get("bundles")
        and all(bundle.get("GPU") for bundle in group["bundles"].values())
    ]
    return found[0] if len(found) == 1 else None


def check_placement(
    address: str, gpu_id: str | None, before: set[str], held: tuple[str, ...] = ()
) -> Placement | None:
    """How vLLM's ranks were placed, read from the cluster (see `placement_split`)."""
    with _cluster(address) as ray:
        table = ray.util.placement_group_table()
        nodes = ray.nodes()
    return placement_split(table, nodes, gpu_id, before, held)


def placement_split(
    table: dict[str, dict[str, Any]], nodes: list[dict[str, Any]], gpu_id: str | None,
    before: set[str], held: tuple[str, ...] = (),
) -> Placement | None:  # fmt: skip
    """How vLLM's ranks were placed, from Ray's placement group table and nodes (None: its
    group cannot be told apart from others); EndpointError when a rank is on a node that
    does not advertise `gpu_id`'s resource on a cluster of several kinds, or, with `held`
    (the nodes a `bench fleet` entry holds), on any other node."""
    group = _vllms_group(table, before)
    if group is None:
        return None
    per_node: dict[str, int] = {}
    for node_id in group["bundles_to_node_id"].values():
        per_node[node_id] = per_node.get(node_id, 0) + 1
    allowed = {node["NodeID"] for node in _kind_nodes(nodes, gpu_id)}
    strays = sorted(node_id for node_id in per_node if node_id not in allowed)
    outside = sorted(node_id for node_id in per_node if held and node_id not in held)
    if outside and not strays:
        raise EndpointError(
            f"vLLM's Ray executor placed ranks on {len(outside)} node(s) outside the "
            f"{len(held)} held for it ({', '.join(outside)}): vllm serve takes free GPUs on any "
            "node, and those may be another run's",
            "--ray-address",
        )
    if strays:
        raise EndpointError(
            f"vLLM's Ray executor placed ranks on {len(strays)} node(s) without "
            f"{kind_resource(gpu_id or '')} ({', '.join(strays)}): vllm serve takes free GPUs "
            "on any node and cannot be confined to one kind; give this kind a Ray cluster of "
            "its own",
            "--ray-address",
        )
    counts = set(per_node.values())
    split = NodeSplit(len(per_node), counts.pop()) if len(counts) == 1 else None
    return Placement(tuple(sorted(per_node)), split)


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


def declared_split(gpus: int, nodes: int) -> NodeSplit:
    """The split a running server's hosts were given (`bench run --endpoint --nodes`): `gpus`
    over `nodes` hosts, the same number on each; BenchConfigError when they do not divide."""
    if gpus % nodes:
        raise BenchConfigError(
            f"{gpus} GPUs (tensor × pipeline parallel) do not split evenly over {nodes} nodes",
            "--nodes",
        )
    return NodeSplit(nodes, gpus // nodes)
