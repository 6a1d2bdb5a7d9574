"""A multi-node matrix entry as a LeaderWorkerSet: vLLM over a Ray cluster of pods.

An entry whose run gives `ray-address:` serves one model over several hosts (vLLM's Ray
executor, tensor × pipeline parallel across nodes). On Kubernetes it runs as a
LeaderWorkerSet (`leaderworkerset.x-k8s.io/v1`, the LWS controller of kubernetes-sigs/lws,
which must be installed on the cluster), the pattern vLLM's own guide to multi-node serving
on Kubernetes uses: one group of `size` pods, each on its own node of the entry's GPU kind,
each holding the GPUs one node gives (`nvidia.com/gpu` or `amd.com/gpu`):

- the leader pod runs, in its vLLM sidecar, a Ray head (`ray start --head`), waits until every
  pod of the group has joined, then runs the entry's `vllm serve … --distributed-executor-backend
  ray --tensor-parallel-size T --pipeline-parallel-size P` on it; its `bench` container, as a
  Job's, runs the entry's `bench run` against it (`--endpoint`, `--server-command` with that
  exact `vllm serve`, and `--nodes`, so the result records the node count and GPUs per node as
  `bench run --ray-address` does) and writes the result to the results volume;
- each worker pod joins the head, `ray start --address=$(LWS_LEADER_ADDRESS):6379 --block`
  (LWS gives every pod its leader's address), retrying until the head answers.

The node split is the Ray path's (`bench.launch.multinode.split_over_nodes`): nodes filled whole, so
N GPUs on nodes of G take ceil(N / G) pods of N / pods GPUs each. A Kubernetes render cannot
ask the cluster how many GPUs a node has, so it is given (`JobsConfig.gpus_per_node`,
`--gpus-per-node`), per GPU kind; a multi-node entry whose kind has none is refused by name.

A LeaderWorkerSet serves, it does not end: its pods are restarted when a container exits. So
once the bench has run, its container stays up (sleeping) and the leader pod turns Ready when
the result file exists; then delete the LeaderWorkerSet to free its nodes.
"""

from __future__ import annotations

import math
import re
import shlex
from typing import Any

from infermeter.bench.errors import BenchConfigError
from infermeter.bench.fleet import FleetError
from infermeter.bench.fleet.matrix import Matrix, MatrixEntry
from infermeter.bench.fleet.pods import (
    RESULTS_MOUNT,
    VLLM_IMAGES,
    JobsConfig,
    api_key_env,
    bench_command,
    bench_container,
    gpu_limits,
    object_metadata,
    object_name,
    token_env,
    vllm_command,
    vllm_container,
    volumes,
)
from infermeter.bench.launch.multinode import NodeSplit, split_over_nodes

RAY_PORT = 6379
# A longer LeaderWorkerSet's worker pods are refused: their StatefulSet, `<name>-<group>`,
# labels them `controller-revision-hash: <that name>-<10-character hash>`, and a label value
# has 63 characters at most (LWS v0.9.0's troubleshooting guide,
# site/content/en/docs/troubleshooting/_index.md; kubernetes-sigs/lws#410).
NAME_MAX_LENGTH = 51
JOIN_RETRY_S = 5
HEADER = (
    "A multi-node entry is a LeaderWorkerSet (leaderworkerset.x-k8s.io/v1): install the LWS\n"
    "controller (kubernetes-sigs/lws) first. Its leader pod turns Ready once the result is\n"
    "written; then `kubectl delete leaderworkerset NAME` frees its nodes.\n"
)


def parse_gpus_per_node(values: tuple[str, ...]) -> tuple[dict[str, int], int | None]:
    """`--gpus-per-node` values, `GPU=N` for one kind or `N` for every other, as (per kind,
    default); BenchConfigError naming the value that is neither, or an unknown GPU id."""
    from infermeter.registry.lookup import UnknownIdError, resolve_gpu

    per_kind: dict[str, int] = {}
    default: int | None = None
    for value in values:
        gpu, equals, count = value.rpartition("=")
        if not re.fullmatch(r"[0-9]{1,9}", count) or int(count) < 1 or (equals and not gpu):
            shown = value if len(value) <= 60 else value[:60] + "…"
            raise BenchConfigError(
                f"{shown!r}: expected GPU=N (e.g. h100-sxm=8) or N, N a whole number ≥ 1",
                "--gpus-per-node",
            )
        if not equals:
            default = int(count)
            continue
        try:
            resolve_gpu(gpu)
        except UnknownIdError as error:
            raise BenchConfigError(f"{value!r}: {error}", "--gpus-per-node") from None
        per_kind[gpu] = int(count)
    return per_kind, default


def node_split(entry: MatrixEntry, config: JobsConfig) -> NodeSplit:
    """How the entry's GPUs spread over nodes of its kind (`split_over_nodes`, nodes filled
    whole); FleetError when no node size is given for the kind or the GPUs do not split."""
    per_node = config.gpus_per_node.get(entry.gpu, config.gpus_per_node_default)
    if per_node is None:
        raise FleetError(
            f"{entry.id}: serves one model over several hosts (ray-address:), and the render "
            f"cannot see how many GPUs one {entry.gpu} node has: give --gpus-per-node "
            f"{entry.gpu}=N"
        )
    nodes = [per_node] * math.ceil(entry.gpu_count / per_node)
    try:
        return split_over_nodes(entry.gpu_count, nodes, f"{entry.gpu} nodes of {per_node}")
    except BenchConfigError as error:
        raise FleetError(f"{entry.id}: {error}") from None


def check_gpus_per_node(matrix: Matrix, config: JobsConfig) -> None:
    """Raise FleetError naming the first multi-node entry whose GPUs cannot be placed."""
    for entry in matrix.entries:
        if entry.multinode:
            node_split(entry, config)


def _leader_script(serve: list[str], split: NodeSplit) -> str:
    """Start the Ray head, wait for every pod of the group, then run vLLM on the cluster."""
    alive = (
        'import sys, ray; ray.init(address="auto", logging_level="ERROR"); '
        f'sys.exit(0 if sum(node["Alive"] for node in ray.nodes()) >= {split.nodes} else 1)'
    )
    head = ["ray", "start", "--head", f"--port={RAY_PORT}", f"--num-gpus={split.gpus_per_node}"]
    waiting = shlex.quote(f"waiting for {split.nodes} Ray nodes")
    return (
        f"{shlex.join(head)} && "
        f"until python3 -c {shlex.quote(alive)}; do echo {waiting}; sleep {JOIN_RETRY_S}; done "
        f"&& {shlex.join(['exec', *serve])}"
    )


def _worker_script(split: NodeSplit) -> str:
    """Join the leader's Ray head (kubelet fills in $(LWS_LEADER_ADDRESS)), retrying."""
    join = (
        f"ray start --address=$(LWS_LEADER_ADDRESS):{RAY_PORT} "
        f"--num-gpus={split.gpus_per_node} --block"
    )
    return f"until {join}; do sleep {JOIN_RETRY_S}; done"


def lws_name(entry_id: str) -> str:
    """The entry's LeaderWorkerSet name: a Job's, `NAME_MAX_LENGTH` characters at most."""
    return object_name(entry_id, NAME_MAX_LENGTH)


def leader_worker_set(entry: MatrixEntry, config: JobsConfig) -> dict[str, Any]:
    """The entry's LeaderWorkerSet: one group of `nodes` pods (see the module docstring)."""
    split = node_split(entry, config)
    serve = vllm_command(entry)
    vllm = vllm_container(
        entry, config, ["sh", "-c", _leader_script(serve, split)], split.gpus_per_node
    )
    vllm["ports"].append({"name": "ray", "containerPort": RAY_PORT})
    result = f"{RESULTS_MOUNT}/{entry.id}.json"
    kept = shlex.quote(f"the pod stays up; delete the LeaderWorkerSet once {result} is written")
    bench = bench_container(
        config,
        bench_command(entry, serve, split.nodes),
        then=f'echo "bench run ended (exit $?)"; echo {kept}; exec sleep infinity',
        env=api_key_env(entry, config, "OPENAI_API_KEY"),
    )
    bench["readinessProbe"] = {"exec": {"command": ["test", "-s", result]}, "periodSeconds": 30}
    worker: dict[str, Any] = {
        "name": "ray-worker",
        "image": config.vllm_image or VLLM_IMAGES[entry.vendor],
        "command": ["sh", "-c", _worker_script(split)],
        "resources": {"limits": gpu_limits(entry, split.gpus_per_node)},
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
    }
    if env := token_env(config):
        worker["env"] = env  # each rank loads its own shard of the weights
    metadata, labels = object_metadata(lws_name(entry.id), config)
    selector = {config.node_label: entry.gpu}
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": metadata,
        "spec": {
            "replicas": 1,
            "startupPolicy": "LeaderCreated",
            "leaderWorkerTemplate": {
                "size": split.nodes,
                "restartPolicy": "RecreateGroupOnPodRestart",
                "leaderTemplate": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "nodeSelector": selector,
                        "initContainers": [vllm],
                        "containers": [bench],
                        "volumes": volumes(config),
                    },
                },
                "workerTemplate": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "nodeSelector": selector,
                        "containers": [worker],
                        "volumes": volumes(config, results=False),
                    },
                },
            },
        },
    }
