"""A multi-node entry on the fleet's Ray cluster: whole nodes of its GPU kind, held for its run.

An entry whose run gives `ray-address:` serves one model over several hosts (vLLM's Ray
executor, tensor × pipeline parallel across nodes). `bench fleet` runs it as one task on its
own cluster:

1. `node_split` spreads its GPUs over the live nodes that advertise its kind (`gpu_<id>`),
   by their GPU counts, as `bench run --ray-address` does (`bench.launch.multinode`): nodes filled
   whole, ceil(N / G) of them;
2. `hold_nodes` makes a placement group of one bundle per node, each all of that node's
   `gpu_<id>`, strategy STRICT_SPREAD (every bundle on another node): only nodes of the kind
   can hold a bundle, and while the group lives no other fleet entry runs on them;
3. the task runs in bundle 0 (`scheduling`, capturing child tasks), so on one of those nodes,
   and its `bench run` launches `vllm serve … --distributed-executor-backend ray` against the
   same cluster (`with_cluster_address`);
4. the group is removed when the task ends, however it ends (`release`).

vLLM itself cannot be handed the group: its Ray executor uses the placement group of the
process it runs in, and a `vllm serve` that `bench run` launches is a new Ray driver, which
never has one (see `bench.launch.multinode`). It makes its own group of `{"GPU": 1}` bundles, the
first on its own node (one of the held ones); the group holds no `GPU`, so those nodes' GPUs
are free for it, but Ray may also pack ranks onto free GPUs of another kind's node. So
`bench run` checks, once vLLM is up and before measuring, that every rank landed on a node of
the kind (`bench.launch.multinode.check_placement`): a rank elsewhere stops the run.
"""

from __future__ import annotations

import contextlib
from typing import Any

from infermeter.bench.errors import BenchConfigError
from infermeter.bench.fleet.matrix import MatrixEntry
from infermeter.bench.launch.multinode import NodeSplit, split_over_nodes
from infermeter.bench.session.builder import command_line


def kind_nodes(ray: Any, entry: MatrixEntry, dead: set[str]) -> list[dict[str, Any]]:
    """The live nodes (not known lost) that advertise the entry's GPU kind and have GPUs."""
    return [
        node
        for node in ray.nodes()
        if node.get("Alive")
        and node.get("NodeID") not in dead
        and node.get("Resources", {}).get(entry.resource, 0) > 0
        and node.get("Resources", {}).get("GPU", 0) > 0
    ]


def node_split(nodes: list[dict[str, Any]], entry: MatrixEntry) -> NodeSplit:
    """How the entry's GPUs spread over `nodes`; BenchConfigError when they cannot hold it."""
    counts = sorted((int(node["Resources"]["GPU"]) for node in nodes), reverse=True)
    return split_over_nodes(entry.gpu_count, counts, f"its {entry.gpu} nodes")


def placeable(ray: Any, entry: MatrixEntry, dead: set[str]) -> bool:
    """Whether the live nodes of the kind can hold the entry."""
    try:
        node_split(kind_nodes(ray, entry, dead), entry)
    except BenchConfigError:
        return False
    return True


def hold_nodes(ray: Any, entry: MatrixEntry, dead: set[str]) -> tuple[Any, NodeSplit]:
    """A placement group holding whole nodes of the kind for the entry, and its split;
    BenchConfigError when the live nodes cannot hold it."""
    from ray.util.placement_group import placement_group

    nodes = kind_nodes(ray, entry, dead)
    split = node_split(nodes, entry)
    amount = min(node["Resources"][entry.resource] for node in nodes)
    bundles = [{entry.resource: amount} for _ in range(split.nodes)]
    group = placement_group(bundles, strategy="STRICT_SPREAD", name=f"infermeter-{entry.id}")
    return group, split


def scheduling(group: Any) -> Any:
    """The task's strategy: bundle 0 of the group, its child tasks in the group too."""
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    return PlacementGroupSchedulingStrategy(
        placement_group=group,
        placement_group_bundle_index=0,
        placement_group_capture_child_tasks=True,
    )


def bundle_amount(group: Any, entry: MatrixEntry) -> float:
    """What the task asks of its bundle: all of it (the node's whole share of the kind)."""
    amount: float = group.bundle_specs[0][entry.resource]
    return amount


def group_nodes(ray: Any, group: Any) -> list[dict[str, Any]]:
    """Each node that holds a bundle of the group (Ray's placement group table) and what it
    advertises, in bundle order; empty when the group is gone."""
    table = ray.util.placement_group_table(group)
    resources = {node["NodeID"]: node.get("Resources", {}) for node in ray.nodes()}
    found: list[dict[str, Any]] = []
    for _, node_id in sorted(table.get("bundles_to_node_id", {}).items()):
        if node_id and node_id not in {item["node_id"] for item in found}:
            found.append({"node_id": node_id, "resources": dict(resources.get(node_id, {}))})
    return found


def release(ray: Any, group: Any) -> None:
    """Remove the group (its nodes free for other entries); quietly if it is gone already."""
    with contextlib.suppress(Exception):
        ray.util.remove_placement_group(group)


def with_cluster_address(entry: MatrixEntry, address: str) -> tuple[Any, str]:
    """The entry's options and command with vLLM on the cluster at `address` (the task's
    own), whatever address the plan named."""
    options = entry.options.model_copy(update={"ray_address": address})
    return options, command_line(options)
