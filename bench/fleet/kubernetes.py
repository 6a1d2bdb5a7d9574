"""A plan for Kubernetes: one Job per matrix entry, or a LeaderWorkerSet for a multi-node one.

Each Job's pod (`render_jobs`) holds vLLM and the bench (`bench.fleet.pods`):

- `vllm`, a native sidecar running the entry's `vllm serve …` on 127.0.0.1:8000 with the
  entry's GPU count as its `nvidia.com/gpu` or `amd.com/gpu` limit; it is stopped when the
  bench ends, so the Job completes;
- `bench`, which runs the entry's `bench run` against that server (`--endpoint`) and writes
  the result to the results volume (a PersistentVolumeClaim, `/results/<entry id>.json`).

A multi-node entry (vLLM over several hosts, `ray-address:`) cannot be a Job, whose pod runs
on one node: it is rendered as a LeaderWorkerSet (`bench.fleet.lws`), which needs the LWS
controller on the cluster and the GPUs one node of its kind has (`gpus_per_node`).

The pods land on nodes of the entry's GPU kind through a node selector, by default the label
`infermeter.dev/gpu=<catalog id>` (`kubectl label node NODE infermeter.dev/gpu=h100-sxm`).

vLLM runs in its own container, so the bench is told the sidecar's exact `vllm serve` command
(`bench run --server-command`): the result keeps it and takes its serving settings from it
(max_model_len, gpu_memory_utilization, max_num_seqs, parallel sizes, …), as a launched
run's would. No secret is written: a gated model's token is read from a Secret the cluster
already has (`hf_token_secret`), by name.
"""

from __future__ import annotations

import shlex
from typing import Any

from infermeter.bench.fleet import lws
from infermeter.bench.fleet.matrix import Matrix, MatrixEntry
from infermeter.bench.fleet.pods import (
    JobsConfig,
    api_key_env,
    bench_command,
    bench_container,
    object_metadata,
    object_name,
    vllm_command,
    vllm_container,
    volumes,
)
from infermeter.bench.fleet.yaml_text import comment, dump_all

__all__ = ["job_documents", "job_name", "render_jobs"]

job_name = object_name  # a Job's name, and a LeaderWorkerSet's


def _job(entry: MatrixEntry, config: JobsConfig) -> dict[str, Any]:
    command = vllm_command(entry)
    vllm = vllm_container(entry, config, command, entry.gpu_count)
    bench = bench_container(
        config, bench_command(entry, command), env=api_key_env(entry, config, "OPENAI_API_KEY")
    )
    metadata, labels = object_metadata(job_name(entry.id), config)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata,
        "spec": {
            "backoffLimit": 0,
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "restartPolicy": "Never",
                    "nodeSelector": {config.node_label: entry.gpu},
                    "initContainers": [vllm],
                    "containers": [bench],
                    "volumes": volumes(config),
                },
            },
        },
    }


def job_documents(matrix: Matrix, config: JobsConfig) -> list[dict[str, Any]]:
    """One object per matrix entry, in matrix order: a Job, or a LeaderWorkerSet for a
    multi-node entry; raises FleetError naming the first entry that cannot be rendered."""
    lws.check_gpus_per_node(matrix, config)
    return [
        lws.leader_worker_set(entry, config) if entry.multinode else _job(entry, config)
        for entry in matrix.entries
    ]


def render_jobs(matrix: Matrix, config: JobsConfig) -> str:
    """The objects as one multi-document YAML text (deterministic), for `kubectl apply -f`."""
    plan = shlex.quote(str(matrix.plan))
    header = (
        f"Rendered by `infermeter bench plan render --kubernetes {plan}`: one Job per\n"
        "matrix entry. Needs Kubernetes 1.29+ (native sidecars), the GPU device plugin, nodes\n"
        f"labelled {config.node_label}=<gpu catalog id>, and the PersistentVolumeClaim\n"
        f"{config.results_claim} for the results.\n"
    )
    if any(entry.multinode for entry in matrix.entries):
        header += lws.HEADER
    return comment(header) + dump_all(job_documents(matrix, config))
