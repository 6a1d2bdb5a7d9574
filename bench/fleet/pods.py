"""The pieces of a rendered Kubernetes pod that runs a matrix entry: vLLM, the bench, volumes.

A Job (`bench.fleet.kubernetes`) and a LeaderWorkerSet's leader (`bench.fleet.lws`) build
their pods from the same parts:

- `vllm_container`: a native sidecar (an init container with `restartPolicy: Always`,
  Kubernetes 1.29+) running vLLM on 127.0.0.1:8000, with its GPUs as its `nvidia.com/gpu` or
  `amd.com/gpu` limit and a startup probe on `/health` that allows the run's startup timeout,
  so the bench starts only once vLLM answers;
- `bench_container`: the entry's `bench run` against that server (`bench_command`:
  `--endpoint`, `--server-command` with the sidecar's exact `vllm serve`, so the result keeps
  it and takes its serving settings from it), writing the result to the results volume
  (`/results/<entry id>.json` on a PersistentVolumeClaim);
- `token_env`: a gated model's token from a Secret the cluster already has, by name, and
  `api_key_env`: a plan's `api-key:` the same way (both vLLM and the bench get it); no secret
  is ever written into a rendered file;
- `literal_command`: every command as written, `$` doubled, so that the kubelet's `$(NAME)`
  expansion leaves the plan's values as they are.
"""

from __future__ import annotations

import hashlib
import math
import re
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from infermeter.bench.errors import BenchConfigError
from infermeter.bench.fleet import FleetError
from infermeter.bench.fleet.matrix import MatrixEntry
from infermeter.bench.launch.server import server_command
from infermeter.bench.session.builder import command_line, session_config

VLLM_PORT = 8000
RESULTS_MOUNT = "/results"
GPU_RESOURCES = {"nvidia": "nvidia.com/gpu", "amd": "amd.com/gpu"}
VLLM_IMAGES = {"nvidia": "vllm/vllm-openai:latest", "amd": "rocm/vllm:latest"}
PROBE_PERIOD_S = 10
# Kubernetes' own name formats (k8s.io/apimachinery validation): a namespace is a DNS-1123
# label, a Secret's and a PersistentVolumeClaim's name a DNS-1123 subdomain. The API server
# refuses any other, and kubernetes-validate (a schema check) does not catch it.
_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS_LABEL = re.compile(_DNS_LABEL)
DNS_SUBDOMAIN = re.compile(rf"{_DNS_LABEL}(\.{_DNS_LABEL})*")
LABEL_MAX_LENGTH = 63
SUBDOMAIN_MAX_LENGTH = 253

# What only a launched vLLM takes: the bench runs against the sidecar's (`--endpoint`).
_LAUNCH_ONLY: dict[str, Any] = {
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


@dataclass(frozen=True)
class JobsConfig:
    """Images, the results claim, the node label and node sizes the rendered objects use."""

    namespace: str | None = None
    vllm_image: str | None = None  # None: per vendor, VLLM_IMAGES
    bench_image: str = "python:3.11-slim"
    bench_install: str = "infermeter[bench]"  # "" when the bench image has infermeter
    results_claim: str = "infermeter-results"
    node_label: str = "infermeter.dev/gpu"
    hf_token_secret: str | None = None
    api_key_secret: str = "infermeter-api-key"  # its `token` key: a plan's api-key
    # GPUs one node of a kind has (catalog id → count), for multi-node entries; and for
    # every kind not named there.
    gpus_per_node: dict[str, int] = field(default_factory=dict)
    gpus_per_node_default: int | None = None

    def __post_init__(self) -> None:
        """Refuse, all at once, a name the API server would refuse (BenchConfigError, naming
        the `bench plan render` option)."""
        problems = [
            problem
            for option, value, label in (
                ("--namespace", self.namespace, True),
                ("--hf-token-secret", self.hf_token_secret, False),
                ("--api-key-secret", self.api_key_secret, False),
                ("--results-claim", self.results_claim, False),
            )
            if (problem := _name_problem(option, value, label))
        ]
        if self.vllm_image is not None and (not self.vllm_image or _has_space(self.vllm_image)):
            problems.append(f"--vllm-image: {self.vllm_image!r} is not an image reference")
        if len(problems) == 1:
            option, _, message = problems[0].partition(": ")
            raise BenchConfigError(message, option=option)
        if problems:
            raise BenchConfigError("; ".join(problems))


def _has_space(text: str) -> bool:
    return any(character.isspace() for character in text)


def _name_problem(option: str, value: str | None, label: bool) -> str | None:
    """Why `value` is not a Kubernetes name (a DNS-1123 label with `label`, else a
    subdomain), or None when it is one (or not given)."""
    if value is None:
        return None
    pattern = DNS_LABEL if label else DNS_SUBDOMAIN
    limit = LABEL_MAX_LENGTH if label else SUBDOMAIN_MAX_LENGTH
    if pattern.fullmatch(value) and len(value) <= limit:
        return None
    kind = "DNS-1123 label" if label else "DNS-1123 subdomain"
    allowed = "lowercase letters, digits and '-'"
    if not label:
        allowed = "lowercase letters, digits, '-' and '.'"
    return (
        f"{option}: {value!r} is not a Kubernetes name: expected a {kind} ({allowed}, "
        f"starting and ending with a letter or digit, {limit} characters at most)"
    )


def object_name(entry_id: str, max_length: int = 63) -> str:
    """`infermeter-<entry id>` as a DNS-1123 label of `max_length` characters at most (a
    longer one ends in a digest of the id, so names stay unique)."""
    name = re.sub(r"[^a-z0-9-]+", "-", f"infermeter-{entry_id}".lower()).strip("-")
    if len(name) <= max_length:
        return name
    digest = hashlib.sha256(entry_id.encode()).hexdigest()[:8]
    return f"{name[: max_length - 9].rstrip('-')}-{digest}"


def object_metadata(name: str, config: JobsConfig) -> tuple[dict[str, Any], dict[str, str]]:
    """An object's metadata (name, namespace, labels), and its pods' labels."""
    labels = {"app.kubernetes.io/name": "infermeter", "infermeter.dev/entry": name}
    metadata: dict[str, Any] = {"name": name, "labels": labels}
    if config.namespace:
        metadata["namespace"] = config.namespace
    return metadata, labels


def vllm_command(entry: MatrixEntry) -> list[str]:
    """The entry's `vllm serve …` on 127.0.0.1:8000 (with `ray-address:`, the Ray backend)."""
    server = session_config(entry.options, entry.command).server
    if server is None:  # the matrix refuses endpoint runs
        raise FleetError(f"{entry.id}: a pod launches vLLM; the run gives an endpoint")
    return server_command(replace(server, host="127.0.0.1"), "vllm", VLLM_PORT)


def bench_command(
    entry: MatrixEntry, server_words: list[str], nodes: int | None = None
) -> list[str]:
    """The entry's `bench run` against the pod's vLLM, started as `server_words`, writing to
    the results volume; `nodes`: the hosts that vLLM spans (`bench run --nodes`)."""
    options = entry.options.model_copy(
        update={
            **_LAUNCH_ONLY,
            "endpoint": f"http://127.0.0.1:{VLLM_PORT}",
            "output": Path(RESULTS_MOUNT) / f"{entry.id}.json",
            "server_command": shlex.join(server_words),
            "nodes": nodes,
        }
    )
    command = command_line(options)
    try:
        session_config(options, command)
    except BenchConfigError as error:  # pragma: no cover - the matrix checked the options
        raise FleetError(f"{entry.id}: {error.one_line()}") from None
    return shlex.split(command)


def gpu_limits(entry: MatrixEntry, count: int) -> dict[str, int]:
    """`{"nvidia.com/gpu": count}` (or `amd.com/gpu`) for a container of the entry's kind."""
    if entry.vendor not in GPU_RESOURCES:
        raise FleetError(f"{entry.id}: no Kubernetes GPU resource is known for {entry.vendor}")
    return {GPU_RESOURCES[entry.vendor]: count}


def token_env(config: JobsConfig) -> list[dict[str, Any]]:
    """HF_TOKEN from the named Secret's `token` key; none without a Secret."""
    if not config.hf_token_secret:
        return []
    secret = {"secretKeyRef": {"name": config.hf_token_secret, "key": "token"}}
    return [{"name": "HF_TOKEN", "valueFrom": secret}]


def api_key_env(entry: MatrixEntry, config: JobsConfig, variable: str) -> list[dict[str, Any]]:
    """`variable` from the Secret `config.api_key_secret`'s `token` key when the entry's run
    gives the server's key (`api-key:`); none otherwise. vLLM reads VLLM_API_KEY, the bench
    OPENAI_API_KEY: both get the key, and neither sees it in a rendered file."""
    if not entry.options.api_key:
        return []
    secret = {"secretKeyRef": {"name": config.api_key_secret, "key": "token"}}
    return [{"name": variable, "valueFrom": secret}]


def literal_command(words: list[str]) -> list[str]:
    """`words` as a container's `command`, each `$` doubled: the kubelet expands `$(NAME)` in
    a command from the container's environment (a Secret's value among it) and reads `$$` as
    `$`, so a value holding `$(HF_TOKEN)` (a model id, a vLLM argument) would otherwise run
    with the token in its place, and the bench would record it in the server's command."""
    return [word.replace("$", "$$") for word in words]


def vllm_container(
    entry: MatrixEntry, config: JobsConfig, command: list[str], gpus: int
) -> dict[str, Any]:
    """vLLM as a native sidecar running `command` on `gpus` GPUs, probed on /health."""
    session = session_config(entry.options, entry.command)
    startup_s = session.server.startup_timeout_s if session.server else 1800.0
    vllm: dict[str, Any] = {
        "name": "vllm",
        "image": config.vllm_image or VLLM_IMAGES[entry.vendor],
        "restartPolicy": "Always",
        "command": literal_command(command),
        "ports": [{"name": "http", "containerPort": VLLM_PORT}],
        "resources": {"limits": gpu_limits(entry, gpus)},
        "startupProbe": {
            "httpGet": {"path": "/health", "port": VLLM_PORT},
            "periodSeconds": PROBE_PERIOD_S,
            "failureThreshold": max(1, math.ceil(startup_s / PROBE_PERIOD_S)),
        },
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
    }
    if env := token_env(config) + api_key_env(entry, config, "VLLM_API_KEY"):
        vllm["env"] = env
    return vllm


def bench_container(
    config: JobsConfig,
    bench_words: list[str],
    then: str | None = None,
    env: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The bench running `bench_words` (after installing infermeter, unless the image has
    it) with `env`; its exit ends the container, or, with `then`, the shell line `then` runs
    after it."""
    script = shlex.join(bench_words if then else ["exec", *bench_words])
    if config.bench_install:
        script = f"pip install --quiet {shlex.quote(config.bench_install)} && {script}"
    if then:
        script = f"{script}; {then}"
    container: dict[str, Any] = {
        "name": "bench",
        "image": config.bench_image,
        "command": literal_command(["sh", "-c", script]),
        "volumeMounts": [{"name": "results", "mountPath": RESULTS_MOUNT}],
    }
    if env:
        container["env"] = env
    return container


def volumes(config: JobsConfig, results: bool = True) -> list[dict[str, Any]]:
    """vLLM's shared memory (`dshm`) and, with `results`, the results claim."""
    found: list[dict[str, Any]] = [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]
    if results:
        claim = {"claimName": config.results_claim}
        found.append({"name": "results", "persistentVolumeClaim": claim})
    return found
