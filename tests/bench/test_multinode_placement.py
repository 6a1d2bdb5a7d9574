"""Which Ray nodes vLLM's ranks may use on a cluster of several GPU kinds, and the check of
where its own placement group landed, on excerpts of Ray's own tables.

The node and placement-group records are the shapes `ray.nodes()` and
`ray.util.placement_group_table()` return (Ray 2.60, as read from the session's real local
cluster in tests/bench/test_fleet_ray.py), trimmed to the keys read."""

from __future__ import annotations

from typing import Any

import pytest

from infermeter.bench.errors import EndpointError
from infermeter.bench.launch.multinode import NodeSplit, Placement, _kind_nodes, placement_split

H100, L40S_A, L40S_B = "a" * 56, "b" * 56, "c" * 56


def _node(node_id: str, resources: dict[str, float], alive: bool = True) -> dict[str, Any]:
    return {"NodeID": node_id, "Alive": alive, "Resources": {"CPU": 1.0, **resources}}


NODES = [
    _node(H100, {"GPU": 2.0, "gpu_h100-sxm": 2.0, "node:127.0.0.1": 1.0}),
    _node(L40S_A, {"GPU": 2.0, "gpu_l40s": 2.0, "node:127.0.0.1": 1.0}),
    _node(L40S_B, {"GPU": 2.0, "gpu_l40s": 2.0, "node:127.0.0.1": 1.0}),
]


def _vllm_group(group_id: str, nodes: list[str], state: str = "CREATED") -> dict[str, Any]:
    """A group as vLLM's Ray executor makes it: a GPU per bundle, the first bound to its node."""
    bundles = {index: {"GPU": 1.0} for index in range(len(nodes))}
    bundles[0]["node:127.0.0.1"] = 0.001
    return {
        "placement_group_id": group_id,
        "name": "",
        "bundles": bundles,
        "bundles_to_node_id": dict(enumerate(nodes)),
        "strategy": "PACK",
        "state": state,
    }


def _fleet_group(group_id: str) -> dict[str, Any]:
    """The group `bench fleet` holds the L40S nodes with (no GPU: vLLM's own takes those)."""
    return {
        "placement_group_id": group_id,
        "name": "infermeter-big--l40s-x4",
        "bundles": {0: {"gpu_l40s": 2.0}, 1: {"gpu_l40s": 2.0}},
        "bundles_to_node_id": {0: L40S_A, 1: L40S_B},
        "strategy": "STRICT_SPREAD",
        "state": "CREATED",
    }


def test_only_the_nodes_of_the_runs_kind_count_on_a_cluster_of_kinds() -> None:
    assert [n["NodeID"] for n in _kind_nodes(NODES, "l40s")] == [L40S_A, L40S_B]
    assert [n["NodeID"] for n in _kind_nodes(NODES, "h100-sxm")] == [H100]
    assert _kind_nodes(NODES, "mi300x") == []
    # A cluster that advertises no kind: every live node, as before.
    plain = [_node(H100, {"GPU": 8.0}), _node(L40S_A, {"GPU": 8.0}, alive=False)]
    assert [n["NodeID"] for n in _kind_nodes(plain, "l40s")] == [H100]


def test_placement_on_the_kinds_nodes_is_read_as_its_split() -> None:
    table = {
        "old": _fleet_group("old"),
        "new": _vllm_group("new", [L40S_A, L40S_A, L40S_B, L40S_B]),
    }
    placed = placement_split(table, NODES, "l40s", before={"old"})
    assert placed == Placement((L40S_A, L40S_B), NodeSplit(2, 2))
    uneven = {"new": _vllm_group("new", [L40S_A, L40S_A, L40S_A, L40S_B])}
    assert placement_split(uneven, NODES, "l40s", set()) == Placement((L40S_A, L40S_B), None)


def test_a_rank_on_another_kinds_node_stops_the_run() -> None:
    table = {"new": _vllm_group("new", [L40S_A, L40S_A, H100, H100])}
    with pytest.raises(EndpointError) as caught:
        placement_split(table, NODES, "l40s", set())
    assert caught.value.one_line() == (
        f"--ray-address: vLLM's Ray executor placed ranks on 1 node(s) without gpu_l40s "
        f"({H100}): vllm serve takes free GPUs on any node and cannot be confined to one kind; "
        "give this kind a Ray cluster of its own"
    )


def test_a_rank_outside_the_nodes_held_for_it_stops_the_run() -> None:
    """A third L40S node, not held by the fleet entry (another run's vLLM may use its GPUs)."""
    table = {"new": _vllm_group("new", [L40S_A, L40S_A, L40S_B, L40S_B])}
    held = (L40S_A, "d" * 56)
    with pytest.raises(EndpointError) as caught:
        placement_split(table, NODES, "l40s", set(), held)
    assert caught.value.one_line() == (
        f"--ray-address: vLLM's Ray executor placed ranks on 1 node(s) outside the 2 held for "
        f"it ({L40S_B}): vllm serve takes free GPUs on any node, and those may be another run's"
    )
    placed = placement_split(table, NODES, "l40s", set(), (L40S_A, L40S_B))
    assert placed == Placement((L40S_A, L40S_B), NodeSplit(2, 2))


@pytest.mark.parametrize(
    "table",
    [
        {},  # vLLM made no group (yet)
        {"old": _vllm_group("old", [H100, H100])},  # there before vLLM started
        {"new": _vllm_group("new", [H100, H100], state="PENDING")},
        {"new": _fleet_group("new")},  # not vLLM's shape
        {"a": _vllm_group("a", [L40S_A]), "b": _vllm_group("b", [H100])},  # two: ambiguous
    ],
)
def test_no_single_new_vllm_group_is_not_checked(table: dict[str, dict[str, Any]]) -> None:
    assert placement_split(table, NODES, "l40s", before={"old"}) is None
