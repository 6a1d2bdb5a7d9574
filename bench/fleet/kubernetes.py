"""A plan as Kubernetes Jobs: one Job per matrix entry, vLLM and the bench in one pod.

Each Job's pod (`render_jobs`) holds:

- `vllm`, a native sidecar (an init container with `restartPolicy: Always`, Kubernetes 1.29+)
  running the entry's `vllm serve …` on 127.0.0.1:8000, with the entry's GPU count as its
  `nvidia.com/gpu` or `amd.com/gpu` limit and a startup probe on `/health` that allows the
  run's startup timeout: the bench starts only once vLLM answers, and the sidecar is stopped
  when the bench ends, so the Job completes;
- `bench`, which runs the entry's `bench run` against that server (`--endpoint`) and writes
  the result to the results volume (a PersistentVolumeClaim, `/results/<entry id>.json`).

A multi-node entry (vLLM over several hosts, `ray-address:`) is refused by name: a pod runs
on one node, and spanning nodes needs a LeaderWorkerSet or KubeRay, custom resources that
kubernetes-validate cannot check; `bench fleet --ray` runs it.

The pod lands on a node of the entry's GPU kind through a node selector, by default the label
`infermeter.dev/gpu=<catalog id>` (`kubectl label node NODE infermeter.dev/gpu=h100-sxm`).

vLLM runs in its own container, so the bench is told the sidecar's exact `vllm serve` command
(`bench run --server-command`): the result keeps it and takes its serving settings from it
(max_model_len, gpu_memory_utilization, max_num_seqs, parallel sizes, …), as a launched
run's would. No secret is written: a gated model's token is read from a Secret the cluster
already has (`hf_token_secret`), by name.
"""

from __future__ import annotations

import hashlib
import math
import re
import shlex
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench.errors import BenchConfigError
from bench.fleet import FleetError
from bench.fleet.matrix import Matrix, MatrixEntry
from bench.fleet.yaml_text import dump_all
from bench.plan import command_line, session_config
from bench.server import server_command

VLLM_PORT = 8000
RESULTS_MOUNT = "/results"
GPU_RESOURCES = {"nvidia": "nvidia.com/gpu", "amd": "amd.com/gpu"}
VLLM_IMAGES = {"nvidia": "vllm/vllm-openai:latest", "amd": "rocm/vllm:latest"}
PROBE_PERIOD_S = 10


@dataclass(frozen=True)
class JobsConfig:
    """Images, the results claim and the node label the Jobs use."""

    namespace: str | None = None
    vllm_image: str | None = None  # None: per vendor, VLLM_IMAGES
    bench_image: str = "python:3.11-slim"
    bench_install: str = "infermeter[bench]"  # "" when the bench image has infermeter
    results_claim: str = "infermeter-results"
    node_label: str = "infermeter.dev/gpu"
    hf_token_secret: str | None = None


def job_name(entry_id: str) -> str:
    """`infermeter-<entry id>` as a DNS-1123 label (63 characters at most)."""
    name = re.sub(r"[^a-z0-9-]+", "-", f"infermeter-{entry_id}".lower()).strip("-")
    if len(name) <= 63:
        return name
    digest = hashlib.sha256(entry_id.encode()).hexdigest()[:8]
    return f"{name[:54].rstrip('-')}-{digest}"


def _bench_command(entry: MatrixEntry) -> list[str]:
    """The entry's `bench run` against the pod's vLLM, writing to the results volume."""
    launch_only = {
        "max_model_len": None,
        "gpu_memory_utilization": None,
        "quantization": None,
        "kv_cache_dtype": None,
        "max_num_seqs": None,
        "load_format": None,
        "vllm_args": (),
        "vllm_executable": None,
        "port": None,
        "ray_address": None,
    }
    options = entry.options.model_copy(
        update={
            **launch_only,
            "endpoint": f"http://127.0.0.1:{VLLM_PORT}",
            "output": Path(RESULTS_MOUNT) / f"{entry.id}.json",
            "server_command": shlex.join(_vllm_command(entry)),
        }
    )
    command = command_line(options)
    try:
        session_config(options, command)
    except BenchConfigError as error:  # pragma: no cover - the matrix checked the options
        raise FleetError(f"{entry.id}: {error.one_line()}") from None
    return shlex.split(command)


def _vllm_command(entry: MatrixEntry) -> list[str]:
    server = session_config(entry.options, entry.command).server
    if server is None:  # the matrix refuses endpoint runs
        raise FleetError(f"{entry.id}: a Job launches vLLM; the run gives an endpoint")
    return server_command(replace(server, host="127.0.0.1"), "vllm", VLLM_PORT)


def _job(entry: MatrixEntry, config: JobsConfig) -> dict[str, Any]:
    if entry.multinode:
        raise FleetError(
            f"{entry.id}: serves one model over several hosts (ray-address:), and a Job's pod "
            "runs on one node; it needs a LeaderWorkerSet or a KubeRay cluster, which this "
            "render does not write: run it with bench fleet --ray on a Ray cluster"
        )
    if entry.vendor not in GPU_RESOURCES:
        raise FleetError(f"{entry.id}: no Kubernetes GPU resource is known for {entry.vendor}")
    name = job_name(entry.id)
    labels = {"app.kubernetes.io/name": "infermeter", "infermeter.dev/entry": name}
    session = session_config(entry.options, entry.command)
    startup_s = session.server.startup_timeout_s if session.server else 1800.0
    gpus = {GPU_RESOURCES[entry.vendor]: entry.gpu_count}
    vllm: dict[str, Any] = {
        "name": "vllm",
        "image": config.vllm_image or VLLM_IMAGES[entry.vendor],
        "restartPolicy": "Always",
        "command": _vllm_command(entry),
        "ports": [{"name": "http", "containerPort": VLLM_PORT}],
        "resources": {"limits": gpus},
        "startupProbe": {
            "httpGet": {"path": "/health", "port": VLLM_PORT},
            "periodSeconds": PROBE_PERIOD_S,
            "failureThreshold": max(1, math.ceil(startup_s / PROBE_PERIOD_S)),
        },
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
    }
    if config.hf_token_secret:
        vllm["env"] = [
            {
                "name": "HF_TOKEN",
                "valueFrom": {"secretKeyRef": {"name": config.hf_token_secret, "key": "token"}},
            }
        ]
    bench_words = _bench_command(entry)
    script = shlex.join(["exec", *bench_words])
    if config.bench_install:
        script = f"pip install --quiet {shlex.quote(config.bench_install)} && {script}"
    bench = {
        "name": "bench",
        "image": config.bench_image,
        "command": ["sh", "-c", script],
        "volumeMounts": [{"name": "results", "mountPath": RESULTS_MOUNT}],
    }
    metadata: dict[str, Any] = {"name": name, "labels": labels}
    if config.namespace:
        metadata["namespace"] = config.namespace
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
                    "volumes": [
                        {"name": "dshm", "emptyDir": {"medium": "Memory"}},
                        {
                            "name": "results",
                            "persistentVolumeClaim": {"claimName": config.results_claim},
                        },
                    ],
                },
            },
        },
    }


def job_documents(matrix: Matrix, config: JobsConfig) -> list[dict[str, Any]]:
    """One Job object per matrix entry, in matrix order."""
    return [_job(entry, config) for entry in matrix.entries]


def render_jobs(matrix: Matrix, config: JobsConfig) -> str:
    """The Jobs as one multi-document YAML text (deterministic), ready for `kubectl apply -f`."""
    header = (
        f"# Rendered by `infermeter bench plan render --kubernetes {matrix.plan}`: one Job per\n"
        "# matrix entry. Needs Kubernetes 1.29+ (native sidecars), the GPU device plugin, nodes\n"
        f"# labelled {config.node_label}=<gpu catalog id>, and the PersistentVolumeClaim\n"
        f"# {config.results_claim} for the results.\n"
    )
    return header + dump_all(job_documents(matrix, config))
