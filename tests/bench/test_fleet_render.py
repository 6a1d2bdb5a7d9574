"""`bench plan render`: the workflow passes actionlint, the Jobs pass kubernetes-validate."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from click.testing import CliRunner, Result
from render_checks import (
    KUBERNETES_VERSION,
    actionlint,
    bench_run_options,
    bench_run_params,
    bench_run_words,
)

from infermeter.bench.cli.main import main
from infermeter.bench.fleet.kubernetes import job_name
from infermeter.bench.fleet.matrix import load_matrix

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]

FLEET_EXAMPLE = REPOSITORY_ROOT / "bench" / "plans" / "fleet.yaml"
MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def _render(*args: str) -> Result:
    return CliRunner().invoke(main, ["bench", "plan", "render", *args])


def _mixed_plan(tmp_path: Path) -> Path:
    plan = tmp_path / "bench" / "plans" / "fleet.yaml"
    plan.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "defaults": {"model": MODEL, "max-model-len": 8192, "startup-timeout": 600},
        "runs": [
            {"name": "chat", "concurrency": [1, 8], "gpus": ["h100-sxm", "mi300x:2"]},
            {"name": "long", "profile": "rag", "gpus": ["h200-sxm:4"],
             "vllm-arg": ["--enable-prefix-caching"]},
        ],
    }  # fmt: skip
    plan.write_text(yaml.safe_dump(data, sort_keys=False))
    return plan


def _workflow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, Any]]:
    plan = _mixed_plan(tmp_path)
    monkeypatch.chdir(tmp_path)
    output = tmp_path / ".github" / "workflows" / "fleet.yml"
    run = _render("bench/plans/fleet.yaml", "--github-actions", "--output", str(output))
    assert run.exit_code == 0, run.output
    assert plan.exists()
    return output, yaml.safe_load(output.read_text())


def test_render_github_actions_passesactionlint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output, _ = _workflow(tmp_path, monkeypatch)
    checked = actionlint(output)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_render_actionlint_catches_a_broken_workflow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output, workflow = _workflow(tmp_path, monkeypatch)
    workflow["jobs"]["sweep"]["strategy"]["matrix"] = "${{ fromJSON(needs.nothing.outputs.m) }}"
    output.write_text(yaml.safe_dump(workflow))
    checked = actionlint(output)
    assert checked.returncode == 1
    assert "needs.nothing" in checked.stdout or "nothing" in checked.stdout


def test_render_github_actions_shape(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, workflow = _workflow(tmp_path, monkeypatch)
    triggers = workflow["on"]  # quoted in the file, so YAML 1.1 readers do not take it as true
    assert list(triggers) == ["workflow_dispatch"]  # never pull_request: forks reach nothing
    assert workflow["permissions"] == {"contents": "read"}
    jobs = workflow["jobs"]
    assert list(jobs) == ["matrix", "canary", "sweep", "merge"]
    writers = [name for name, job in jobs.items() if "permissions" in job]
    assert writers == ["merge"]
    assert "secrets." not in json.dumps(workflow)
    matrix_script = jobs["matrix"]["steps"][-1]["run"]
    assert 'infermeter bench plan matrix -- "$PLAN"' in matrix_script
    assert jobs["matrix"]["steps"][-1]["env"] == {"PLAN": "bench/plans/fleet.yaml"}
    for name, source in (("canary", "canary"), ("sweep", "matrix")):
        job = jobs[name]
        assert job["runs-on"] == ["self-hosted", "${{ matrix.runner_label }}"]
        assert job["strategy"]["matrix"] == f"${{{{ fromJSON(needs.matrix.outputs.{source}) }}}}"
        bench = next(step for step in job["steps"] if step.get("name") == "bench run")
        assert bench["env"] == {"BENCH_COMMAND": "${{ matrix.command }}"}
        assert "echo" not in bench["run"]  # the command, secrets and all, is not echoed
        assert "${{" not in bench["run"]  # the command reaches the shell as data only
        upload = next(step for step in job["steps"] if step.get("name") == "Upload the result")
        assert upload["with"]["path"] == "${{ matrix.output }}"
        # An incomplete run's points too, of a run cancelled or past its timeout.
        assert upload["if"] == "${{ always() }}"
    assert jobs["sweep"]["needs"] == ["matrix", "canary"]
    assert "needs.canary.result == 'success'" in jobs["sweep"]["if"]
    merge_steps = jobs["merge"]["steps"]
    download = next(s for s in merge_steps if "download-artifact" in s.get("uses", ""))
    assert download["with"]["pattern"] == "result-*"
    scripts = "\n".join(step.get("run", "") for step in merge_steps)
    assert 'infermeter registry validate "$RUNNER_TEMP/fleet-results"' in scripts
    assert 'infermeter registry submit "$RUNNER_TEMP"/fleet-results/*.json' in scripts


def test_render_refuses_an_absolute_plan_path_for_github(tmp_path: Path) -> None:
    plan = _mixed_plan(tmp_path)
    run = _render(str(plan.resolve()), "--github-actions")
    assert run.exit_code == 1
    assert "give the plan's path inside the repository" in run.stderr


def test_render_needs_exactly_one_engine(tmp_path: Path) -> None:
    plan = str(_mixed_plan(tmp_path))
    assert _render(plan).exit_code == 2
    both = _render(plan, "--github-actions", "--kubernetes")
    assert both.exit_code == 2
    assert "give one of --github-actions and --kubernetes" in both.stderr


def test_render_refuses_an_invalid_plan(tmp_path: Path) -> None:
    plan = tmp_path / "p.yaml"
    plan.write_text(yaml.safe_dump({"runs": [{"model": MODEL, "gpus": ["nope"]}]}))
    run = _render(str(plan), "--kubernetes")
    assert run.exit_code == 1
    assert run.stderr.startswith(f"Error: {plan}: runs[0].gpus[0]: unknown GPU id 'nope'")
    assert run.stdout == ""


def _jobs(tmp_path: Path, *args: str) -> list[dict[str, Any]]:
    run = _render(str(_mixed_plan(tmp_path)), "--kubernetes", *args)
    assert run.exit_code == 0, run.output
    return list(yaml.safe_load_all(run.stdout))


def test_render_kubernetes_jobs_pass_kubernetes_validate(tmp_path: Path) -> None:
    jobs = _jobs(tmp_path, "--hf-token-secret", "hf", "--namespace", "bench")
    assert len(jobs) == 3
    for job in jobs:
        assert kubernetes_validate.validate(job, KUBERNETES_VERSION, strict=True) == "1.30"


def test_render_kubernetes_validate_catches_a_broken_job(tmp_path: Path) -> None:
    (job, *_) = _jobs(tmp_path)
    job["spec"]["template"]["spec"]["containers"][0]["volumeMounts"][0]["mountPath"] = 3
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, KUBERNETES_VERSION, strict=True)


def test_render_kubernetes_pod_runs_vllm_and_the_bench(tmp_path: Path) -> None:
    matrix = load_matrix(_mixed_plan(tmp_path))
    jobs = _jobs(tmp_path)
    for entry, job in zip(matrix.entries, jobs, strict=True):
        assert job["metadata"]["name"] == job_name(entry.id)
        pod = job["spec"]["template"]["spec"]
        assert pod["nodeSelector"] == {"infermeter.dev/gpu": entry.gpu}
        (vllm,) = pod["initContainers"]
        assert vllm["restartPolicy"] == "Always"  # a native sidecar: the Job ends with the bench
        resource = "amd.com/gpu" if entry.vendor == "amd" else "nvidia.com/gpu"
        assert vllm["resources"]["limits"] == {resource: entry.gpu_count}
        assert vllm["startupProbe"]["httpGet"] == {"path": "/health", "port": 8000}
        assert vllm["startupProbe"]["failureThreshold"] * 10 == 600  # the run's startup timeout
        command = vllm["command"]
        assert command[:3] == ["vllm", "serve", MODEL]
        assert command[command.index("--max-model-len") + 1] == "8192"
        if entry.gpu_count > 1:
            assert command[command.index("--tensor-parallel-size") + 1] == str(entry.gpu_count)
        (bench,) = pod["containers"]
        script = bench["command"][2]
        # the bench is the script's last command, exec'd: its exit ends the Job
        assert shlex.split(script.split(" && ", 1)[1]) == ["exec", *bench_run_words(script)]
        options = bench_run_params(script)
        assert options["endpoint"] == "http://127.0.0.1:8000"
        assert options["gpu_id"] == entry.gpu
        assert str(options["output"]) == f"/results/{entry.id}.json"
        assert (options["tensor_parallel_size"] or 1) == entry.gpu_count
        assert shlex.split(options["server_command"]) == command  # what the result records
        assert bench["volumeMounts"] == [{"name": "results", "mountPath": "/results"}]
    long_command = jobs[2]["spec"]["template"]["spec"]["initContainers"][0]["command"]
    assert "--enable-prefix-caching" in long_command
    assert "secret" not in yaml.safe_dump(jobs).lower()


@pytest.mark.parametrize(
    ("option", "value", "kind"),
    [
        ("--namespace", "Bench_NS", "DNS-1123 label"),
        ("--namespace", "a.b", "DNS-1123 label"),
        ("--namespace", "n" * 64, "DNS-1123 label"),
        ("--hf-token-secret", "hf token", "DNS-1123 subdomain"),
        ("--hf-token-secret", "-hf", "DNS-1123 subdomain"),
        ("--results-claim", "", "DNS-1123 subdomain"),
        ("--results-claim", "Results", "DNS-1123 subdomain"),
    ],
)
def test_render_kubernetes_refuses_a_name_the_api_server_refuses(
    tmp_path: Path, option: str, value: str, kind: str
) -> None:
    # kubernetes-validate (a schema check) passes such a Job; `kubectl apply` refuses it.
    run = _render(str(_mixed_plan(tmp_path)), "--kubernetes", option, value)
    assert run.exit_code == 2, run.output
    assert run.stdout == ""
    (line,) = run.stderr.splitlines()
    expected = f"Error: {option}: {value!r} is not a Kubernetes name: expected a {kind} ("
    assert line.startswith(expected)


def test_render_kubernetes_takes_names_at_their_limits_and_reports_every_bad_one(
    tmp_path: Path,
) -> None:
    plan = str(_mixed_plan(tmp_path))
    longest = ["--namespace", "n" * 63, "--hf-token-secret", "a." + "s" * 251,
               "--results-claim", "r" * 253]  # fmt: skip
    run = _render(plan, "--kubernetes", *longest)
    assert run.exit_code == 0, run.output
    (job, *_) = yaml.safe_load_all(run.stdout)
    assert job["metadata"]["namespace"] == "n" * 63
    both = _render(plan, "--kubernetes", "--namespace", "A", "--vllm-image", "")
    assert both.exit_code == 2
    assert both.stderr.splitlines() == [
        "Error: --namespace: 'A' is not a Kubernetes name: expected a DNS-1123 label (lowercase "
        "letters, digits and '-', starting and ending with a letter or digit, 63 characters at "
        "most); --vllm-image: '' is not an image reference"
    ]


def test_render_kubernetes_token_comes_from_a_named_secret(tmp_path: Path) -> None:
    (job, *_) = _jobs(tmp_path, "--hf-token-secret", "hf-token")
    (vllm,) = job["spec"]["template"]["spec"]["initContainers"]
    assert vllm["env"] == [
        {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "token"}}}
    ]


def test_render_job_names_are_dns_labels() -> None:
    long_name = job_name("a-very-long-run-name-that-goes-on-and-on-and-on--h100-sxm-x8")
    assert len(long_name) <= 63
    assert long_name != job_name("a-very-long-run-name-that-goes-on-and-on-and-on--h200-sxm-x8")
    assert job_name("Chat_Run--l40s-x1") == "infermeter-chat-run--l40s-x1"


def test_render_writes_atomically_and_is_deterministic(tmp_path: Path) -> None:
    plan = str(_mixed_plan(tmp_path))
    output = tmp_path / "jobs.yaml"
    assert _render(plan, "--kubernetes", "--output", str(output)).exit_code == 0
    first = output.read_text()
    assert _render(plan, "--kubernetes").stdout == first
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".jobs")] == []


def test_render_fleet_example_for_both_engines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPOSITORY_ROOT)
    output = tmp_path / "fleet.yml"
    run = _render("bench/plans/fleet.yaml", "--github-actions", "--output", str(output))
    assert run.exit_code == 0, run.output
    assert actionlint(output).returncode == 0
    jobs = list(yaml.safe_load_all(_render("bench/plans/fleet.yaml", "--kubernetes").stdout))
    assert len(jobs) == len(load_matrix(FLEET_EXAMPLE).entries)
    for job in jobs:
        kubernetes_validate.validate(job, KUBERNETES_VERSION, strict=True)


def test_render_kubernetes_result_gets_the_sidecars_serving_settings(tmp_path: Path) -> None:
    from infermeter.bench.result.deployment_plan import plan_deployment
    from infermeter.bench.session.builder import session_config

    (job, *_) = _jobs(tmp_path)
    script = job["spec"]["template"]["spec"]["containers"][0]["command"][2]
    options = bench_run_options(script)
    command = shlex.join(bench_run_words(script))
    notes: list[str] = []
    deployment = plan_deployment(session_config(options, command), None, notes.append)
    # The plan's max-model-len reaches the result through the vllm serve command alone: the
    # bench's own options no longer carry it (it runs against an endpoint).
    assert options.max_model_len is None
    assert deployment.serving.max_model_len == 8192
    assert deployment.model.id == "llama-3.1-8b-instruct"


def test_render_multinode_entry_refused_by_actions_rendered_for_kubernetes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    plan = tmp_path / "p.yaml"
    runs = [
        {"name": "chat", "gpus": ["l40s"]},
        {"name": "r1", "tensor-parallel-size": 8, "pipeline-parallel-size": 2,
         "ray-address": "auto", "gpus": ["h100-sxm"]},
    ]  # fmt: skip
    plan.write_text(yaml.safe_dump({"defaults": {"model": MODEL}, "runs": runs}))
    github = _render("p.yaml", "--github-actions")
    assert github.exit_code == 1, github.output
    assert github.stdout == ""
    assert github.stderr.splitlines() == [
        "Error: r1--h100-sxm-x16: serves one model over several hosts (ray-address:), and a "
        "GitHub Actions job runs on one runner (jobs cannot span runners): run it with bench "
        "fleet --ray on a Ray cluster, or on Kubernetes (render --kubernetes)"
    ]
    kubernetes = _render(str(plan), "--kubernetes", "--gpus-per-node", "h100-sxm=8")
    assert kubernetes.exit_code == 0, kubernetes.output
    kinds = [document["kind"] for document in yaml.safe_load_all(kubernetes.stdout)]
    assert kinds == ["Job", "LeaderWorkerSet"]  # tests/bench/test_fleet_lws.py checks the set
