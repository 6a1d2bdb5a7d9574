"""A plan as a GitHub Actions workflow on self-hosted GPU runners, labelled per GPU kind.

The workflow (`render_workflow`) has four jobs:

1. `matrix` (GitHub-hosted) checks the plan and prints its matrix (`bench plan matrix`), and
   passes it, and its canary, on as job outputs;
2. `canary`: the first entry of each GPU kind, on `runs-on: [self-hosted, <gpu id>]`, so a
   broken runner or setup fails in one short job before the sweep spends GPU hours (InferenceX
   runs a canary the same way); skipped when the dispatch says `canary: false`;
3. `sweep`: every entry, one job each on a runner with the GPU kind's label, running the
   entry's exact `bench run` and uploading its result (also an incomplete one, of a run that
   was cancelled or timed out) and vLLM's log as artifacts;
4. `merge` (GitHub-hosted) downloads every result, validates them together
   (`registry validate`) and opens one pull request holding all of them (`registry submit`).

A multi-node entry (vLLM over several hosts, `ray-address:`) is refused by name
(`check_one_runner`): a job runs on one runner, and a matrix job cannot span runners;
`bench fleet --ray` runs it, and so does Kubernetes (a LeaderWorkerSet, `bench.fleet.lws`).

Only `workflow_dispatch` starts it, so a fork's pull request can never run code on the
self-hosted runners nor reach a token: only someone with write access dispatches it. Every
job gets a read-only token except `merge`, which may push its branch and open the pull
request; no other secret is used, but for a plan that gives the server's key (`api-key:`),
which its jobs read from the repository secret INFERMETER_API_KEY. The plan's commands reach
the shell through an environment variable, never pasted into the script nor echoed; a plan
whose commands hold a secret is not rendered (`bench.fleet.matrix.inline_secrets`). The plan's
path is the one value written into the workflow itself, so one holding `${{` (which GitHub
would evaluate as an expression) is refused.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from infermeter.bench.fleet import FleetError
from infermeter.bench.fleet.matrix import GITHUB_API_KEY_SECRET, Matrix
from infermeter.bench.fleet.yaml_text import comment, dump

CHECKOUT = "actions/checkout@v6"
SETUP_PYTHON = "actions/setup-python@v6"
UPLOAD = "actions/upload-artifact@v7"
DOWNLOAD = "actions/download-artifact@v8"
EXPRESSION = "${{"
"""What starts a GitHub Actions expression in any value of a workflow."""


@dataclass(frozen=True)
class WorkflowConfig:
    """What the rendered workflow runs: the plan (a path in the repository) and installs."""

    plan: PurePosixPath
    python_version: str = "3.11"
    install: str = ".[bench,vllm]"
    timeout_minutes: int = 360
    api_key: bool = False
    """Whether the plan gives the server's key (`api-key:`): read from the repository secret
    `GITHUB_API_KEY_SECRET` into $OPENAI_API_KEY, never written into the workflow or plan."""


def _check(config: WorkflowConfig) -> None:
    plan = config.plan
    if plan.is_absolute() or ".." in plan.parts:
        raise FleetError(
            f"{plan}: give the plan's path inside the repository (e.g. bench/plans/fleet.yaml); "
            "the workflow reads it from its checkout",
            "PLAN",
        )
    if EXPRESSION in str(plan):
        # The path is written into the workflow (its env, concurrency group and name), where
        # GitHub would evaluate `${{ … }}`; YAML has no quoting that stops it.
        raise FleetError(
            f"{plan}: holds {EXPRESSION}, which GitHub Actions reads as the start of an "
            "expression wherever the workflow names the plan; rename the plan",
            "PLAN",
        )


def check_one_runner(matrix: Matrix) -> None:
    """Raise FleetError naming the first entry that would need several runners."""
    for entry in matrix.entries:
        if entry.multinode:
            raise FleetError(
                f"{entry.id}: serves one model over several hosts (ray-address:), and a GitHub "
                "Actions job runs on one runner (jobs cannot span runners): run it with "
                "bench fleet --ray on a Ray cluster, or on Kubernetes (render --kubernetes)"
            )


def _install(config: WorkflowConfig, editable: str) -> dict[str, Any]:
    return {
        "name": "Install infermeter",
        "env": {"INSTALL": editable},
        "run": (
            'python -m venv "$RUNNER_TEMP/venv"\n'
            '"$RUNNER_TEMP/venv/bin/python" -m pip install --quiet "$INSTALL"\n'
            'echo "$RUNNER_TEMP/venv/bin" >> "$GITHUB_PATH"\n'
        ),
    }


def _setup(config: WorkflowConfig, install: str, *, persist: bool = False) -> list[dict[str, Any]]:
    checkout: dict[str, Any] = {"uses": CHECKOUT}
    if not persist:
        checkout["with"] = {"persist-credentials": False}
    return [
        checkout,
        {"uses": SETUP_PYTHON, "with": {"python-version": config.python_version}},
        _install(config, install),
    ]


def _bench_env(config: WorkflowConfig) -> dict[str, str]:
    env = {"BENCH_COMMAND": "${{ matrix.command }}"}
    if config.api_key:
        env["OPENAI_API_KEY"] = f"${{{{ secrets.{GITHUB_API_KEY_SECRET} }}}}"
    return env


def _gpu_job(config: WorkflowConfig, matrix: str, kind: str) -> dict[str, Any]:
    """A job per matrix entry on a self-hosted runner labelled with its GPU kind."""
    return {
        "name": f"{kind} ${{{{ matrix.id }}}}",
        "runs-on": ["self-hosted", "${{ matrix.runner_label }}"],
        "timeout-minutes": config.timeout_minutes,
        "strategy": {"fail-fast": kind == "canary", "matrix": f"${{{{ fromJSON({matrix}) }}}}"},
        "steps": [
            *_setup(config, config.install),
            {
                "name": "bench run",
                "env": _bench_env(config),
                # Not echoed: the log shows bench run's own (redacted) lines instead.
                "run": 'eval "$BENCH_COMMAND"\n',
            },
            # always(): also when the run failed, timed out or was cancelled, for `bench run`
            # writes what it measured when it is stopped (the runner sends it SIGINT, then
            # SIGTERM); with !cancelled() a cancelled sweep's results would be lost.
            {
                "name": "Upload the result",
                "if": "${{ always() }}",
                "uses": UPLOAD,
                "with": {
                    "name": f"{'result' if kind == 'sweep' else 'canary'}-${{{{ matrix.id }}}}",
                    "path": "${{ matrix.output }}",
                    "if-no-files-found": "warn",
                },
            },
            {
                "name": "Upload the vLLM log",
                "if": "${{ always() }}",
                "uses": UPLOAD,
                "with": {
                    "name": f"{kind}-log-${{{{ matrix.id }}}}",
                    "path": "${{ matrix.log }}",
                    "if-no-files-found": "ignore",
                },
            },
        ],
    }


def render_workflow(config: WorkflowConfig) -> str:
    """The workflow's YAML text (deterministic); raises FleetError for a plan path it cannot use."""
    _check(config)
    plan = str(config.plan)
    matrix_job = _matrix_job(config, plan)
    canary = {
        "needs": "matrix",
        "if": "${{ inputs.canary }}",
        **_gpu_job(config, "needs.matrix.outputs.canary", "canary"),
    }
    sweep = {
        "needs": ["matrix", "canary"],
        "if": (
            "${{ !cancelled() && needs.matrix.result == 'success' && "
            "(needs.canary.result == 'success' || needs.canary.result == 'skipped') }}"
        ),
        **_gpu_job(config, "needs.matrix.outputs.matrix", "sweep"),
    }
    merge = _merge_job(config)
    workflow = {
        "name": f"infermeter fleet: {plan}",
        "on": {
            "workflow_dispatch": {
                "inputs": {
                    "canary": {
                        "description": "Run one entry per GPU kind first, and the sweep only "
                        "if they pass",
                        "type": "boolean",
                        "default": True,
                    }
                }
            }
        },
        "permissions": {"contents": "read"},
        "concurrency": {"group": f"infermeter-fleet-{plan}", "cancel-in-progress": False},
        "jobs": {"matrix": matrix_job, "canary": canary, "sweep": sweep, "merge": merge},
    }
    header = (
        f"Rendered by `infermeter bench plan render --github-actions {shlex.quote(plan)}`:\n"
        "re-render it when the plan changes. Runners: self-hosted, each labelled with its GPU's\n"
        "catalog id (e.g. h100-sxm) and holding as many GPUs as the plan's largest entry of that\n"
        "kind. Only workflow_dispatch starts it: fork pull requests never reach these runners or\n"
        "a token; only the merge job may write (push its branch, open the pull request).\n"
    )
    return comment(header) + dump(workflow)


def _matrix_job(config: WorkflowConfig, plan: str) -> dict[str, Any]:
    """The job that prints the plan's matrix, and its canary's (one entry per GPU kind)."""
    return {
        "name": "Plan matrix",
        "runs-on": "ubuntu-latest",
        "outputs": {
            "matrix": "${{ steps.matrix.outputs.matrix }}",
            "canary": "${{ steps.matrix.outputs.canary }}",
        },
        "steps": [
            *_setup(config, "."),
            {
                "id": "matrix",
                "name": "Print the matrix",
                "env": {"PLAN": plan},
                # `--` first: a plan's path may start with '-' (`--help` would be an option).
                "run": (
                    'infermeter bench plan matrix -- "$PLAN"\n'
                    'echo "matrix=$(infermeter bench plan matrix --compact -- "$PLAN")" '
                    '>> "$GITHUB_OUTPUT"\n'
                    'echo "canary=$(infermeter bench plan matrix --canary --compact -- "$PLAN")" '
                    '>> "$GITHUB_OUTPUT"\n'
                ),
            },
        ],
    }


def _merge_job(config: WorkflowConfig) -> dict[str, Any]:
    """The job that validates the sweep's results together and opens one pull request."""
    return {
        "name": "Merge into one pull request",
        "needs": "sweep",
        "if": "${{ !cancelled() && needs.sweep.result != 'skipped' }}",
        "runs-on": "ubuntu-latest",
        "permissions": {"contents": "write", "pull-requests": "write"},
        "steps": [
            *_setup(config, ".", persist=True),
            {
                "uses": DOWNLOAD,
                "with": {
                    "pattern": "result-*",
                    "merge-multiple": True,
                    "path": "${{ runner.temp }}/fleet-results",
                },
            },
            {
                "name": "Validate the results together",
                "run": 'infermeter registry validate "$RUNNER_TEMP/fleet-results"\n',
            },
            {
                "name": "Open one pull request",
                "env": {
                    "GH_TOKEN": "${{ github.token }}",
                    "BRANCH": "fleet/${{ github.run_id }}-${{ github.run_attempt }}",
                },
                "run": (
                    'git config user.name "github-actions[bot]"\n'
                    "git config user.email "
                    '"41898282+github-actions[bot]@users.noreply.github.com"\n'
                    'infermeter registry submit "$RUNNER_TEMP"/fleet-results/*.json '
                    '--branch "$BRANCH" --base "$GITHUB_REF_NAME"\n'
                ),
            },
        ],
    }
