"""A multi-node entry rendered for Kubernetes as a LeaderWorkerSet (`bench.fleet.lws`).

kubernetes-validate knows no custom resource, so the LeaderWorkerSet is checked twice over:
against the LWS CRD's own openAPIV3Schema (tests/bench/render_checks.py; tests/data/lws, an
excerpt of kubernetes-sigs/lws v0.9.0, unknown fields refused as the API server's strict field
validation refuses them), and each of its pod templates with kubernetes-validate as a core v1
PodTemplate.
"""

from __future__ import annotations

import copy
import shlex
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml
from click.testing import CliRunner
from render_checks import KUBERNETES_VERSION, bench_run_options, bench_run_params, lws_validator

from infermeter.bench.cli.main import main
from infermeter.bench.fleet import FleetError
from infermeter.bench.fleet.kubernetes import job_documents, job_name
from infermeter.bench.fleet.lws import NAME_MAX_LENGTH, lws_name, node_split
from infermeter.bench.fleet.matrix import load_matrix
from infermeter.bench.fleet.pods import JobsConfig

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
MODEL = "meta-llama/Llama-3.1-405B-Instruct"
EIGHT_PER_NODE = JobsConfig(gpus_per_node={"h100-sxm": 8, "mi300x": 8})


@pytest.fixture(scope="module")
def lws_schema() -> jsonschema.protocols.Validator:
    return lws_validator()


def _plan(tmp_path: Path) -> Path:
    plan = tmp_path / "multinode.yaml"
    runs = [
        {"name": "chat", "model": "meta-llama/Llama-3.1-8B-Instruct", "gpus": ["l40s"]},
        {"name": "r1", "tensor-parallel-size": 8, "pipeline-parallel-size": 2,
         "ray-address": "auto", "gpus": ["h100-sxm", "mi300x"], "concurrency": [1, 8]},
    ]  # fmt: skip
    defaults = {"model": MODEL, "max-model-len": 8192, "startup-timeout": 900}
    plan.write_text(yaml.safe_dump({"defaults": defaults, "runs": runs}, sort_keys=False))
    return plan


def _documents(tmp_path: Path, config: JobsConfig = EIGHT_PER_NODE) -> list[dict[str, Any]]:
    return job_documents(load_matrix(_plan(tmp_path)), config)


def _sets(tmp_path: Path, config: JobsConfig = EIGHT_PER_NODE) -> list[dict[str, Any]]:
    documents = _documents(tmp_path, config)
    assert [document["kind"] for document in documents] == [
        "Job",
        "LeaderWorkerSet",
        "LeaderWorkerSet",
    ]
    return documents[1:]


def _pod_template(template: dict[str, Any], name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": name},
            "template": template}  # fmt: skip


def test_lws_passes_the_crd_schema(tmp_path: Path, lws_schema: Any) -> None:
    for document in _sets(tmp_path):
        errors = [error.message for error in lws_schema.iter_errors(document)]
        assert errors == []


@pytest.mark.parametrize(
    ("path", "change"),
    [
        (["spec", "leaderWorkerTemplate"], ("rename", "size", "groupSize")),
        (["spec"], ("rename", "leaderWorkerTemplate", "leaderWorkerTemplates")),
        (["spec", "leaderWorkerTemplate"], ("set", "restartPolicy", "Sometimes")),
        (["spec", "leaderWorkerTemplate"], ("set", "size", "2")),
        (["spec"], ("set", "startupPolicy", "LeaderStarted")),
        (["spec", "leaderWorkerTemplate"], ("drop", "workerTemplate", None)),
    ],
)
def test_lws_crd_schema_refuses_a_broken_set(
    tmp_path: Path, lws_schema: Any, path: list[str], change: tuple[str, str, Any]
) -> None:
    (document, _) = _sets(tmp_path)
    broken = copy.deepcopy(document)
    node = broken
    for key in path:
        node = node[key]
    action, key, value = change
    if action == "rename":
        node[value] = node.pop(key)
    elif action == "set":
        node[key] = value
    else:
        del node[key]
    assert lws_schema.is_valid(document)
    assert not lws_schema.is_valid(broken)


def test_lws_pod_templates_pass_kubernetes_validate(tmp_path: Path) -> None:
    config = JobsConfig(gpus_per_node={"h100-sxm": 8, "mi300x": 8}, hf_token_secret="hf",
                        namespace="bench")  # fmt: skip
    for document in _sets(tmp_path, config):
        group = document["spec"]["leaderWorkerTemplate"]
        for role in ("leaderTemplate", "workerTemplate"):
            pod = _pod_template(group[role], f"{document['metadata']['name']}-{role.lower()}")
            assert kubernetes_validate.validate(pod, KUBERNETES_VERSION, strict=True) == "1.30"


def test_lws_pod_template_check_catches_a_broken_pod(tmp_path: Path) -> None:
    (document, _) = _sets(tmp_path)
    worker = copy.deepcopy(document["spec"]["leaderWorkerTemplate"]["workerTemplate"])
    worker["spec"]["containers"][0]["comand"] = worker["spec"]["containers"][0].pop("command")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(_pod_template(worker, "w"), KUBERNETES_VERSION, strict=True)


def test_lws_leader_serves_over_ray_and_the_workers_join(tmp_path: Path) -> None:
    matrix = load_matrix(_plan(tmp_path))
    for entry, document in zip(matrix.entries[1:], _sets(tmp_path), strict=True):
        assert document["metadata"]["name"] == lws_name(entry.id) == job_name(entry.id)
        group = document["spec"]["leaderWorkerTemplate"]
        assert document["spec"]["replicas"] == 1
        assert group["size"] == 2  # 16 GPUs on nodes of 8
        leader, worker = group["leaderTemplate"]["spec"], group["workerTemplate"]["spec"]
        resource = "amd.com/gpu" if entry.vendor == "amd" else "nvidia.com/gpu"
        assert leader["nodeSelector"] == worker["nodeSelector"] == {"infermeter.dev/gpu": entry.gpu}
        (vllm,) = leader["initContainers"]
        (ray_worker,) = worker["containers"]
        assert vllm["resources"]["limits"] == ray_worker["resources"]["limits"] == {resource: 8}
        assert vllm["startupProbe"]["failureThreshold"] * 10 == 900  # the run's startup timeout
        assert vllm["command"][:2] == ray_worker["command"][:2] == ["sh", "-c"]
        head, waiting, serve = vllm["command"][2].split(" && ")
        assert head == "ray start --head --port=6379 --num-gpus=8"
        assert waiting.startswith("until python3 -c ")
        assert ">= 2 else 1" in waiting  # every pod of the group has joined
        serve_words = shlex.split(serve)
        assert serve_words[:4] == ["exec", "vllm", "serve", MODEL]
        expected = {"--distributed-executor-backend": "ray", "--tensor-parallel-size": "8",
                    "--pipeline-parallel-size": "2", "--max-model-len": "8192"}  # fmt: skip
        for option, value in expected.items():
            assert serve_words[serve_words.index(option) + 1] == value
        assert ray_worker["command"][2] == (
            "until ray start --address=$(LWS_LEADER_ADDRESS):6379 --num-gpus=8 --block; "
            "do sleep 5; done"
        )
        (bench,) = leader["containers"]
        options = bench_run_params(bench["command"][2])
        assert options["endpoint"] == "http://127.0.0.1:8000"
        assert shlex.split(options["server_command"]) == serve_words[1:]  # the exact vllm serve
        assert options["nodes"] == 2
        assert (options["tensor_parallel_size"], options["pipeline_parallel_size"]) == (8, 2)
        assert options["ray_address"] is None  # the bench does not launch vLLM
        assert str(options["output"]) == f"/results/{entry.id}.json"
        assert bench["volumeMounts"] == [{"name": "results", "mountPath": "/results"}]
        assert bench["readinessProbe"]["exec"]["command"] == ["test", "-s", str(options["output"])]
        assert bench["command"][2].endswith("exec sleep infinity")  # an LWS restarts what ends
        assert [volume["name"] for volume in worker["volumes"]] == ["dshm"]


def test_lws_result_records_the_nodes_and_gpus_per_node(tmp_path: Path) -> None:
    from infermeter.bench.result.deployment_plan import plan_deployment
    from infermeter.bench.session.builder import session_config

    (document, _) = _sets(tmp_path)
    bench = document["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]
    options = bench_run_options(bench["command"][2])
    deployment = plan_deployment(session_config(options, "bench run"), None, lambda _: None)
    gpu = deployment.gpu
    assert (gpu.count, gpu.nodes, gpu.gpus_per_node) == (16, 2, 8)
    assert deployment.serving.max_model_len == 8192  # from the vllm serve command alone
    assert deployment.model.id == "llama-3.1-405b-instruct"


@pytest.mark.parametrize(
    ("pipeline", "per_node", "nodes", "gpus_per_node"),
    [(2, 8, 2, 8), (2, 4, 4, 4), (1, 8, 1, 8), (3, 16, 2, 12), (2, 32, 1, 16)],
)
def test_lws_fills_nodes_whole_as_the_ray_path_does(
    tmp_path: Path, pipeline: int, per_node: int, nodes: int, gpus_per_node: int
) -> None:
    plan = tmp_path / "p.yaml"
    run = {"model": MODEL, "tensor-parallel-size": 8, "pipeline-parallel-size": pipeline,
           "ray-address": "auto", "gpus": ["h100-sxm"]}  # fmt: skip
    plan.write_text(yaml.safe_dump({"runs": [run]}))
    (entry,) = load_matrix(plan).entries
    split = node_split(entry, JobsConfig(gpus_per_node_default=per_node))
    assert (split.nodes, split.gpus_per_node) == (nodes, gpus_per_node)
    (document,) = job_documents(load_matrix(plan), JobsConfig(gpus_per_node_default=per_node))
    assert document["spec"]["leaderWorkerTemplate"]["size"] == nodes


def test_lws_names_leave_room_for_the_worker_statefulsets_label() -> None:
    long_id = "a-very-long-run-name-that-goes-on-and-on--h100-sxm-x16"
    assert len(job_name(long_id)) > NAME_MAX_LENGTH  # a Job may have it whole
    name = lws_name(long_id)
    assert len(name) <= 51  # LWS's limit: <name>-<group>-<10-character hash> ≤ 63
    assert name != lws_name(long_id.replace("h100-sxm", "h200-sxm"))
    assert name.startswith("infermeter-a-very-long-run-name")


def test_lws_refuses_gpus_that_do_not_split(tmp_path: Path) -> None:
    with pytest.raises(FleetError, match=r"^r1--h100-sxm-x16: 16 GPUs do not split evenly over 3"):
        _documents(tmp_path, JobsConfig(gpus_per_node={"h100-sxm": 6, "mi300x": 8}))


def test_render_cli_needs_gpus_per_node_for_a_multinode_entry(tmp_path: Path) -> None:
    plan = str(_plan(tmp_path))
    render = ["bench", "plan", "render", plan, "--kubernetes"]
    missing = CliRunner().invoke(main, [*render, "--gpus-per-node", "h100-sxm=8"])
    assert missing.exit_code == 1
    assert missing.stdout == ""
    assert missing.stderr.splitlines() == [
        "Error: r1--mi300x-x16: serves one model over several hosts (ray-address:), and the "
        "render cannot see how many GPUs one mi300x node has: give --gpus-per-node mi300x=N"
    ]
    bad = CliRunner().invoke(main, [*render, "--gpus-per-node", "h100-sxm=eight"])
    assert bad.exit_code == 2
    assert "--gpus-per-node: 'h100-sxm=eight': expected GPU=N" in bad.stderr
    unknown = CliRunner().invoke(main, [*render, "--gpus-per-node", "h100=8"])
    assert unknown.exit_code == 2
    assert "unknown GPU id 'h100'" in unknown.stderr
    given = CliRunner().invoke(main, [*render, "--gpus-per-node", "h100-sxm=8",
                                      "--gpus-per-node", "4"])  # fmt: skip
    assert given.exit_code == 0, given.output
    assert "install the LWS" in given.stdout
    documents = list(yaml.safe_load_all(given.stdout))
    sizes = [doc["spec"]["leaderWorkerTemplate"]["size"] for doc in documents[1:]]
    assert documents[0]["kind"] == "Job"
    assert sizes == [2, 4]  # h100-sxm nodes of 8, every other kind's of 4


def test_lws_multinode_example_plan_renders_and_validates(lws_schema: Any) -> None:
    example = REPOSITORY_ROOT / "bench" / "plans" / "multinode.yaml"
    (document,) = job_documents(load_matrix(example), JobsConfig(gpus_per_node={"h100-sxm": 8}))
    assert lws_schema.is_valid(document)
    group = document["spec"]["leaderWorkerTemplate"]
    assert group["size"] == 2  # Llama 3.1 405B in BF16: 2 nodes × 8 H100s
    for role in ("leaderTemplate", "workerTemplate"):
        kubernetes_validate.validate(_pod_template(group[role], role.lower()), "1.30", strict=True)
