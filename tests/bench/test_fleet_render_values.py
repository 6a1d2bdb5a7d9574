"""A value of a plan never turns into syntax of what `bench plan render` writes: a plan's path
shown in the header stays a comment, a path holding `${{` is refused for GitHub Actions, and a
value that reaches a container's command is not expanded by the kubelet (`$(NAME)`).

The kubelet cannot run here: `kubelet_expand` is a stand-in, checked against the rules the
Kubernetes API states for a container's `command` (kubernetes-validate's copy of the schema).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from click.testing import CliRunner, Result
from render_checks import bench_run_params

from infermeter.bench.cli.main import main

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
# What the pods' environments hold: Secrets' values (HF_TOKEN, the server's key) and LWS's.
ENVIRONMENT = {
    "HF_TOKEN": "hf_SECRET",
    "VLLM_API_KEY": "KEY_SECRET",
    "OPENAI_API_KEY": "KEY_SECRET",
    "LWS_LEADER_ADDRESS": "10.0.0.7",
}
_REFERENCE = re.compile(r"\$(\$|\(([^)]*)\))")


def kubelet_expand(text: str, environment: dict[str, str]) -> str:
    """Stand-in for the kubelet's expansion of a command word: `$(NAME)` becomes NAME's
    value when the environment has it (else stays), `$$` becomes `$`, any other `$` stays."""

    def replaced(match: re.Match[str]) -> str:
        if match.group(1) == "$":
            return "$"
        return environment.get(match.group(2), match.group(0))

    return _REFERENCE.sub(replaced, text)


def test_kubelet_stand_in_follows_the_kubernetes_api() -> None:
    schema = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    container = schema / "v1.30.0-local-strict" / "container-v1.json"
    described = json.loads(container.read_text())["properties"]["command"]["description"]
    for rule in ("Variable references $(VAR_NAME) are expanded using the container's environment",
                 "If a variable cannot be resolved, the reference in the input string will be "
                 "unchanged", "Double $$ are reduced to a single $",
                 '"$$(VAR_NAME)" will produce the string literal "$(VAR_NAME)"'):  # fmt: skip
        assert rule in described
    environment = {"VAR_NAME": "v", "A": "a"}
    assert kubelet_expand("$(VAR_NAME)", environment) == "v"
    assert kubelet_expand("$$(VAR_NAME)", environment) == "$(VAR_NAME)"
    assert kubelet_expand("$(UNSET) $x $ $(A)b", environment) == "$(UNSET) $x $ ab"
    assert kubelet_expand("$$$(A)$$$$", environment) == "$a$$"


def _render(*args: str) -> Result:
    return CliRunner().invoke(main, ["bench", "plan", "render", *args])


def _plan(
    folder: Path, run: dict[str, Any], name: str = "plan.yaml", *, multinode: bool = True
) -> Path:
    plan = folder / name
    runs = [{"name": "chat", "model": MODEL, "gpus": ["l40s"], **run}]
    if multinode:
        runs.append({"name": "r1", "model": MODEL, "tensor-parallel-size": 8,
                     "pipeline-parallel-size": 2, "ray-address": "auto", "gpus": ["h100-sxm"],
                     **run})  # fmt: skip
    plan.write_text(yaml.safe_dump({"runs": runs}))
    return plan


def _commands(documents: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """Each container's name and command as the kubelet hands it to the container."""
    pods = []
    for document in documents:
        spec = document["spec"]
        if document["kind"] == "Job":
            pods.append(spec["template"]["spec"])
        else:
            group = spec["leaderWorkerTemplate"]
            pods += [group["leaderTemplate"]["spec"], group["workerTemplate"]["spec"]]
    return [
        (container["name"], [kubelet_expand(word, ENVIRONMENT) for word in container["command"]])
        for pod in pods
        for container in (*pod.get("initContainers", ()), *pod["containers"])
    ]


def _served(command: list[str]) -> list[str]:
    """The `vllm serve …` words of a vLLM container's command (alone, or the leader's last)."""
    if command[:2] != ["sh", "-c"]:
        return command
    return shlex.split(command[2].rsplit(" && ", 1)[1])[1:]


@pytest.mark.parametrize(
    "model", ["org/x$(HF_TOKEN)", "$(VLLM_API_KEY)", "a$$(HF_TOKEN)b", "$$", "x$(NO_SUCH)"]
)
def test_render_kubernetes_keeps_a_dollar_in_a_command_literal(tmp_path: Path, model: str) -> None:
    run = _render(str(_plan(tmp_path, {"model": model})), "--kubernetes", "--gpus-per-node", "8",
                  "--hf-token-secret", "hf-token")  # fmt: skip
    assert run.exit_code == 0, run.output
    commands = _commands(list(yaml.safe_load_all(run.stdout)))
    assert [name for name, _ in commands] == ["vllm", "bench", "vllm", "bench", "ray-worker"]
    for name, command in commands:
        assert "SECRET" not in " ".join(command), name
        if name == "vllm":
            assert _served(command)[:3] == ["vllm", "serve", model]
        elif name == "bench":
            options = bench_run_params(command[2])
            assert options["model"] == model
            assert shlex.split(options["server_command"])[:3] == ["vllm", "serve", model]
    # The one reference the render means: each worker joins its leader.
    assert "--address=10.0.0.7:6379" in commands[-1][1][2]


PATHS = {
    "newline": "a\nmalicious: 1\n#.yaml",
    "carriage return": "a\rmalicious: 1.yaml",
    "next line": "a\x85malicious: 1.yaml",
    "line separator": "a\u2028malicious: 1.yaml",
    "paragraph separator": "a\u2029malicious: 1.yaml",
    "escape": "a\x1bx.yaml",  # not a whole ANSI sequence, which click.echo strips
    "delete": "a\x7f.yaml",
}


def _replaced(value: Any, old: str, new: str) -> Any:
    if isinstance(value, dict):
        return {key: _replaced(item, old, new) for key, item in value.items()}
    if isinstance(value, list):
        return [_replaced(item, old, new) for item in value]
    return value.replace(old, new) if isinstance(value, str) else value


@pytest.mark.parametrize("engine", ["--github-actions", "--kubernetes"])
@pytest.mark.parametrize("name", PATHS.values(), ids=PATHS.keys())
def test_render_shows_the_plans_path_in_comments_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str, name: str
) -> None:
    monkeypatch.chdir(tmp_path)
    kubernetes = engine == "--kubernetes"
    options = [engine, *(["--gpus-per-node", "8"] if kubernetes else [])]
    _plan(tmp_path, {}, name, multinode=kubernetes)
    _plan(tmp_path, {}, multinode=kubernetes)
    run = _render(name, *options)
    plain = _render("plan.yaml", *options)
    assert run.exit_code == plain.exit_code == 0, run.output
    documents = list(yaml.safe_load_all(run.stdout))
    assert documents == _replaced(list(yaml.safe_load_all(plain.stdout)), "plan.yaml", name)
    first_key = "apiVersion:" if kubernetes else "name:"
    header = run.stdout.split(f"\n{first_key}")[0]
    assert all(line.startswith("# ") for line in header.splitlines())


def test_render_github_actions_refuses_a_plan_path_holding_an_expression(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    name = "p${{ secrets.INFERMETER_API_KEY }}.yaml"
    _plan(tmp_path, {}, name, multinode=False)
    run = _render(name, "--github-actions")
    assert run.exit_code == 1
    assert run.stdout == ""
    assert run.stderr.splitlines() == [
        f"Error: PLAN: {name}: holds ${{{{, which GitHub Actions reads as the start of an "
        "expression wherever the workflow names the plan; rename the plan"
    ]


def test_render_github_actions_matrix_step_reads_a_plan_named_like_an_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _plan(tmp_path, {}, "--help", multinode=False)
    run = _render("--github-actions", "--", "--help")
    assert run.exit_code == 0, run.output
    step = yaml.safe_load(run.stdout)["jobs"]["matrix"]["steps"][-1]
    outputs = tmp_path / "github-output"
    environment = {**os.environ, **step["env"], "GITHUB_OUTPUT": str(outputs)}
    environment["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{environment['PATH']}"
    # As the runner runs a step: `bash -e {0}`, the script in a file.
    script = tmp_path / "step.sh"
    script.write_text(step["run"])
    subprocess.run(["bash", "-e", str(script)], env=environment, check=True, capture_output=True)
    lines = outputs.read_text().splitlines()
    assert [line.split("=", 1)[0] for line in lines] == ["matrix", "canary"]
    for line in lines:
        (entry,) = json.loads(line.split("=", 1)[1])["include"]
        assert entry["id"] == "chat--l40s-x1"
