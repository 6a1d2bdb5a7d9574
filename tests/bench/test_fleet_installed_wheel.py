"""The fleet commands as users run them: `infermeter` from the installed wheel (the session's
`installed`, tests/wheel_install.py), in a folder outside the checkout, with the plan written
there: `bench plan matrix`, `bench plan render` (the GitHub Actions workflow passes actionlint
and its own steps run from the wheel; the Kubernetes objects pass their schemas), `bench fleet`,
and what each says of bad input.

`bench fleet` is driven from the wheel against the session's REAL local Ray cluster
(`ray_fleet`, tests/bench/conftest.py), whose nodes run this environment's Python: the driver,
what the wheel runs, connects, submits, collects and validates; the node runs the entry's
`bench run`, which launches the STAND-IN vLLM (tests/bench/standin_vllm.py) and measures it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from bench_helpers import SHORT_PLAN_DEFAULTS
from ray_cluster import RayFleet
from render_checks import KUBERNETES_VERSION, actionlint, lws_validator
from wheel_install import Installed

from infermeter.registry.models import Result

pytestmark = pytest.mark.slow

CHAT = "meta-llama/Llama-3.1-8B-Instruct"
BIG = "meta-llama/Llama-3.1-405B-Instruct"
SINGLE_NODE_RUNS: list[dict[str, Any]] = [
    {"name": "chat", "concurrency": [1, 8], "gpus": ["h100-sxm", "mi300x:2"]},
    {"name": "long", "profile": "rag", "gpus": ["h200-sxm:4", "l40s"]},
]
MULTI_NODE_RUN = {
    "name": "r1", "model": BIG, "tensor-parallel-size": 8, "pipeline-parallel-size": 2,
    "ray-address": "auto", "gpus": ["h100-sxm"],
}  # fmt: skip
# The installed wheel's own `bench run` parses each command of the matrix (from stdin): an
# option it does not know, or a value it refuses, ends this in a click usage error.
PARSE_WITH_THE_WHEEL = """
import json, shlex, sys
import infermeter.bench
from infermeter.bench.cli.bench_run import run_command
parsed = []
for entry in json.load(sys.stdin)["include"]:
    words = shlex.split(entry["command"])
    assert words[:3] == ["infermeter", "bench", "run"], words
    parsed.append(dict(run_command.make_context("run", words[3:]).params))
print(json.dumps({"bench": infermeter.bench.__file__, "params": parsed}, default=str))
"""


def _write_plan(folder: Path, runs: list[dict[str, Any]]) -> str:
    defaults = {"model": CHAT, "max-model-len": 8192, "startup-timeout": 600}
    (folder / "PLAN.yaml").write_text(yaml.safe_dump({"defaults": defaults, "runs": runs}))
    return "PLAN.yaml"


def _one_line_error(run: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in run.stderr
    assert run.stdout == ""
    (line,) = run.stderr.strip().splitlines()
    return line


def test_installed_plan_matrix_is_deterministic_json_of_commands_the_wheel_parses(
    installed: Installed, tmp_path: Path
) -> None:
    plan = _write_plan(tmp_path, [*SINGLE_NODE_RUNS, MULTI_NODE_RUN])
    first, second = (installed.run("bench", "plan", "matrix", plan, cwd=tmp_path) for _ in "12")
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout  # byte for byte
    entries = json.loads(first.stdout)["include"]
    assert [entry["id"] for entry in entries] == [
        "chat--h100-sxm-x1", "chat--mi300x-x2", "long--h200-sxm-x4", "long--l40s-x1",
        "r1--h100-sxm-x16",
    ]  # fmt: skip
    parsed = subprocess.run(
        [str(installed.venv / "bin" / "python"), "-c", PARSE_WITH_THE_WHEEL],
        input=first.stdout, cwd=tmp_path, env=installed.environment(),
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert parsed.returncode == 0, parsed.stderr
    report = json.loads(parsed.stdout)
    assert Path(report["bench"]).is_relative_to(installed.site_packages)
    for entry, options in zip(entries, report["params"], strict=True):
        assert options["gpu_id"] == entry["gpu"]
        assert options["output"] == entry["output"]
        assert options["model"] == (BIG if entry["multinode"] else CHAT)
        assert (options["tensor_parallel_size"] or 1) * (
            options["pipeline_parallel_size"] or 1
        ) == entry["gpu_count"]
        assert options["ray_address"] == ("auto" if entry["multinode"] else None)
    assert [entry["multinode"] for entry in entries] == [False] * 4 + [True]


def _step(job: dict[str, Any], name: str) -> dict[str, Any]:
    step: dict[str, Any] = next(step for step in job["steps"] if step.get("name") == name)
    return step


def _run_step(
    installed: Installed, step: dict[str, Any], cwd: Path, path: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """One `run:` step of the workflow as a runner runs it (GitHub's bash options), with the
    venv its "Install infermeter" step made first on PATH; `env` gives what the runner would
    put in place of the step's `${{ … }}` values."""
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        cwd=cwd, env=installed.environment(PATH=path, **{**step.get("env", {}), **env}),
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def test_installed_render_github_actions_passes_actionlint_and_its_steps_run_standin_vllm(
    installed: Installed, tmp_path: Path, standin_vllm: Path
) -> None:
    """The rendered workflow passes actionlint, and its own scripts (not the test's idea of
    them) run as a runner runs them: its matrix step writes the matrices to $GITHUB_OUTPUT, a
    canary job's `bench run` step runs the entry's command (`vllm` on the runner's PATH: the
    stand-in), and the merge job validates what it wrote."""
    runs = [{"name": "chat", "gpus": ["h100-sxm", "l40s"]}, {"name": "long", "gpus": ["l40s"]}]
    plan = {"defaults": SHORT_PLAN_DEFAULTS, "runs": runs}
    (tmp_path / "PLAN.yaml").write_text(yaml.safe_dump(plan))
    rendered = installed.run(
        "bench", "plan", "render", "PLAN.yaml", "--github-actions", "--output", "wf.yml",
        cwd=tmp_path,
    )  # fmt: skip
    assert rendered.returncode == 0, rendered.stderr
    assert rendered.stderr.strip() == "wrote wf.yml"
    checked = actionlint(tmp_path / "wf.yml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    jobs = yaml.safe_load((tmp_path / "wf.yml").read_text())["jobs"]
    assert _step(jobs["matrix"], "Print the matrix")["env"] == {"PLAN": "PLAN.yaml"}
    # The venv's infermeter and the stand-in `vllm` first, as the runner's PATH would have them.
    first = [str(installed.venv / "bin"), str(standin_vllm.parent)]
    path = os.pathsep.join([*first, os.environ["PATH"]])
    outputs = tmp_path / "github-output"
    matrix = _run_step(installed, _step(jobs["matrix"], "Print the matrix"), tmp_path, path,
                       GITHUB_OUTPUT=str(outputs))  # fmt: skip
    assert matrix.returncode == 0, matrix.stderr
    written = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    assert json.loads(written["matrix"]) == json.loads(matrix.stdout)  # one line, the same
    ids = [entry["id"] for entry in json.loads(written["matrix"])["include"]]
    assert ids == ["chat--h100-sxm-x1", "chat--l40s-x1", "long--l40s-x1"]
    canary = json.loads(written["canary"])["include"]
    assert [entry["id"] for entry in canary] == ids[:2]  # the first entry of each GPU kind
    entry = canary[0]
    bench = _run_step(installed, _step(jobs["canary"], "bench run"), tmp_path, path,
                      BENCH_COMMAND=entry["command"], STANDIN_VLLM_ITL_S="0.01")  # fmt: skip
    assert bench.returncode == 0, bench.stderr[-3000:]
    assert "Traceback" not in bench.stderr
    uploaded = tmp_path / entry["output"]  # what the upload step's `path:` names
    result = Result.model_validate_json(uploaded.read_text())
    assert (result.identity.gpu.id, result.source.complete) == ("h100-sxm", True)
    runner_temp = tmp_path / "runner-temp"
    (runner_temp / "fleet-results").mkdir(parents=True)  # as download-artifact merges them
    (runner_temp / "fleet-results" / uploaded.name).write_bytes(uploaded.read_bytes())
    merge = _run_step(installed, _step(jobs["merge"], "Validate the results together"),
                      tmp_path, path, RUNNER_TEMP=str(runner_temp))  # fmt: skip
    assert merge.returncode == 0, merge.stdout + merge.stderr
    assert merge.stdout.strip().endswith("1 file checked, all valid")


def test_installed_plan_render_kubernetes_jobs_and_leaderworkerset_validate(
    installed: Installed, tmp_path: Path
) -> None:
    plan = _write_plan(tmp_path, [*SINGLE_NODE_RUNS, MULTI_NODE_RUN])
    run = installed.run(
        "bench", "plan", "render", plan, "--kubernetes", "--gpus-per-node", "h100-sxm=8",
        cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    documents = list(yaml.safe_load_all(run.stdout))
    assert [document["kind"] for document in documents] == ["Job"] * 4 + ["LeaderWorkerSet"]
    for job in documents[:4]:
        assert kubernetes_validate.validate(job, KUBERNETES_VERSION, strict=True) == "1.30"
    (group,) = documents[4:]
    assert [error.message for error in lws_validator().iter_errors(group)] == []
    assert group["spec"]["leaderWorkerTemplate"]["size"] == 2  # 16 GPUs, 8 a node


def test_installed_bench_fleet_on_a_real_ray_cluster_collects_a_valid_result_standin_vllm(
    installed: Installed, tmp_path: Path, ray_fleet: RayFleet, standin_vllm: Path
) -> None:
    defaults = {**SHORT_PLAN_DEFAULTS, "vllm-executable": str(standin_vllm)}
    runs = [{"name": "solo", "gpus": ["h100-sxm"]}]
    (tmp_path / "PLAN.yaml").write_text(yaml.safe_dump({"defaults": defaults, "runs": runs}))
    fleet = installed.run(
        "bench", "fleet", "PLAN.yaml", "--ray", ray_fleet.address, "--results-dir", "R",
        "--json", cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert fleet.returncode == 0, fleet.stderr
    assert "Traceback" not in fleet.stderr
    summary = json.loads(fleet.stdout)
    assert summary["counts"] == {"collected": 1}
    (entry,) = summary["entries"]
    assert (entry["id"], entry["status"]) == ("solo--h100-sxm-x1", "collected")
    assert entry["attempts"] == 1
    assert entry["gpu_ids"] == ["0"]  # the H100 head's one GPU, Ray's to give
    assert entry["result"] == "R/solo--h100-sxm-x1.json"
    assert fleet.stderr.strip().splitlines()[-1] == "1 entries: 1 collected; results in R"
    result = Result.model_validate_json((tmp_path / entry["result"]).read_text())
    assert (result.identity.gpu.id, result.identity.gpu.count) == ("h100-sxm", 1)
    assert [point.requests.completed for point in result.points] == [2]
    assert result.source.complete
    checked = installed.run("registry", "validate", "R", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.strip().endswith("1 file checked, all valid")


def test_installed_bench_fleet_unreachable_ray_exits_1_naming_it(
    installed: Installed, tmp_path: Path
) -> None:
    plan = _write_plan(tmp_path, SINGLE_NODE_RUNS)
    run = installed.run("bench", "fleet", plan, "--ray", "127.0.0.1:1", cwd=tmp_path)
    assert run.returncode == 1
    assert _one_line_error(run) == (
        "Error: --ray: cannot connect to the Ray cluster at 127.0.0.1:1: Connection refused"
    )
    assert not (tmp_path / "fleet-results").exists()


def test_installed_bench_fleet_unknown_gpu_id_exits_1_naming_file_and_field(
    installed: Installed, tmp_path: Path
) -> None:
    plan = _write_plan(tmp_path, [{"name": "chat", "gpus": ["h100-sxm", "h999"]}])
    run = installed.run("bench", "fleet", plan, "--ray", "127.0.0.1:1", cwd=tmp_path)
    assert run.returncode == 1
    assert _one_line_error(run).startswith(
        "Error: PLAN.yaml: runs[0].gpus[1]: unknown GPU id 'h999'; known: "
    )


def test_installed_render_kubernetes_multinode_without_gpus_per_node_exits_1_naming_it(
    installed: Installed, tmp_path: Path
) -> None:
    plan = _write_plan(tmp_path, [*SINGLE_NODE_RUNS, MULTI_NODE_RUN])
    run = installed.run("bench", "plan", "render", plan, "--kubernetes", cwd=tmp_path)
    assert run.returncode == 1
    line = _one_line_error(run)
    assert line.startswith("Error: r1--h100-sxm-x16: ")
    assert line.endswith("give --gpus-per-node h100-sxm=N")
