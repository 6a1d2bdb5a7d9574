"""`infermeter bench plan …` and `infermeter bench fleet`: one plan over many GPU hosts."""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

import click

from infermeter.bench.cli.oneline import OneLineCommand
from infermeter.bench.cli.parsed_options import from_options
from infermeter.bench.errors import BenchConfigError, BenchError

if TYPE_CHECKING:
    from infermeter.bench.fleet.matrix import Matrix


class _UsageError(click.ClickException):
    exit_code = 2


def _matrix(plan: Path):  # type: ignore[no-untyped-def]
    from infermeter.bench.fleet.matrix import load_matrix
    from infermeter.bench.plan.file import PlanError

    try:
        return load_matrix(plan)
    except PlanError as error:
        raise click.ClickException("\n".join(error.problems)) from None


def _write(text: str, output: Path | None) -> None:
    from infermeter.registry.store import write_output

    if output is None:
        click.echo(text, nl=False)
        return
    try:
        write_output(output, text)
    except OSError as error:
        raise click.ClickException(f"{output}: cannot write: {error.strerror or error}") from None
    click.echo(f"wrote {output}", err=True)


@click.group(name="plan")
def plan_group() -> None:
    """Expand a plan into its matrix (run × GPU kind) and render it for a fleet engine.

    \b
    Example:
      infermeter bench plan matrix bench/plans/fleet.yaml
    """


@plan_group.command(name="matrix", cls=OneLineCommand)
@click.argument("plan", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--canary", is_flag=True, help="Only the first entry of each GPU kind.")
@click.option("--compact", is_flag=True, help="One line of JSON (for $GITHUB_OUTPUT).")
def matrix_command(plan: Path, canary: bool, compact: bool) -> None:
    """Print the plan's matrix as JSON: one entry per run × GPU kind, with its `bench run`.

    The plan is checked first (exit 1 naming each problem). The JSON is GitHub Actions'
    matrix shape, {"include": [...]}; each entry has its id, GPU kind (gpu, gpu_count,
    vendor), the Ray resource and runner label it needs, its result file and the exact
    command. The same plan always prints the same JSON.

    \b
    Example:
      infermeter bench plan matrix bench/plans/fleet.yaml --canary
    """
    matrix = _matrix(plan)
    if canary:
        matrix = matrix.canary()
    document = matrix.as_json()
    if compact:
        click.echo(json.dumps(document, separators=(",", ":")))
    else:
        click.echo(json.dumps(document, indent=2))


@plan_group.command(name="render", cls=OneLineCommand)
@click.argument("plan", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--github-actions", "github", is_flag=True, help="A workflow for self-hosted runners."
)
@click.option("--kubernetes", is_flag=True, help="One Kubernetes Job per matrix entry.")
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="File to write (default: standard output), e.g. .github/workflows/fleet.yml.",
)
@click.option("--namespace", help="Kubernetes: the Jobs' namespace (default: kubectl's).")
@click.option("--vllm-image", help="Kubernetes: vLLM's image (default: per vendor).")
@click.option("--results-claim", default="infermeter-results", show_default=True,
              help="Kubernetes: PersistentVolumeClaim the results are written to.")  # fmt: skip
@click.option("--hf-token-secret", metavar="NAME",
              help="Kubernetes: Secret whose `token` key is the Hugging Face token.")  # fmt: skip
@click.option("--api-key-secret", metavar="NAME", default="infermeter-api-key", show_default=True,
              help="Kubernetes: Secret whose `token` key is the plan's api-key (given to vLLM "
              "and the bench, never written into the Jobs).")  # fmt: skip
@click.option("--gpus-per-node", "gpus_per_node", multiple=True, metavar="[GPU=]N",
              help="Kubernetes: GPUs one node of a kind has (h100-sxm=8; N: every other kind), "
              "for the multi-node entries; repeatable.")  # fmt: skip
def render_command(
    plan: Path,
    github: bool,
    kubernetes: bool,
    output: Path | None,
    namespace: str | None,
    vllm_image: str | None,
    results_claim: str,
    hf_token_secret: str | None,
    api_key_secret: str,
    gpus_per_node: tuple[str, ...],
) -> None:
    """Render the plan for GitHub Actions (a workflow) or Kubernetes (Jobs).

    --github-actions writes a workflow_dispatch workflow: a job prints the matrix, a canary
    (one entry per GPU kind) runs first, then one job per entry on `runs-on: [self-hosted,
    <gpu id>]` runs its `bench run` and uploads the result, and a last job validates every
    result and opens one pull request with `registry submit`. PLAN is its path in the
    repository. --kubernetes writes one Job per entry: vLLM and the bench in one pod, the GPU
    count as nvidia.com/gpu or amd.com/gpu, a node selector per GPU kind, results to a volume;
    a multi-node entry (ray-address:) becomes a LeaderWorkerSet (the LWS controller must be
    installed) of one pod per node, --gpus-per-node GPUs each, vLLM over their Ray cluster.

    \b
    Examples:
      infermeter bench plan render bench/plans/fleet.yaml --github-actions \\
          --output .github/workflows/fleet.yml
      infermeter bench plan render bench/plans/fleet.yaml --kubernetes | kubectl apply -f -
      infermeter bench plan render bench/plans/multinode.yaml --kubernetes \\
          --gpus-per-node h100-sxm=8 | kubectl apply -f -
    """
    if github == kubernetes:
        raise _UsageError("give one of --github-actions and --kubernetes")
    matrix = _matrix(plan)  # the plan must be valid whichever engine runs it
    from infermeter.bench.fleet.matrix import inline_secrets

    if problems := inline_secrets(matrix):
        raise click.ClickException("\n".join(problems))
    has_key = any(entry.options.api_key for entry in matrix.entries)
    try:
        if github:
            text = _github_workflow(matrix, plan, has_key)
        else:
            text = _kubernetes_jobs(matrix, gpus_per_node)
    except BenchConfigError as error:
        raise _UsageError(error.one_line()) from None
    except BenchError as error:
        raise click.ClickException(error.one_line()) from None
    _write(text, output)


def _kubernetes_jobs(matrix: Matrix, gpus_per_node: tuple[str, ...]) -> str:
    """The plan's Kubernetes Jobs (a LeaderWorkerSet for a multi-node entry), configured by the
    command's options of the same names (--namespace, --vllm-image, …)."""
    from infermeter.bench.fleet.kubernetes import render_jobs
    from infermeter.bench.fleet.lws import parse_gpus_per_node
    from infermeter.bench.fleet.pods import JobsConfig

    per_kind, default = parse_gpus_per_node(gpus_per_node)
    config = from_options(JobsConfig, gpus_per_node=per_kind, gpus_per_node_default=default)
    return render_jobs(matrix, config)


def _github_workflow(matrix: Matrix, plan: Path, has_key: bool) -> str:
    """The plan's GitHub Actions workflow, for a plan whose entries one runner each can run."""
    from infermeter.bench.fleet.github_actions import (
        WorkflowConfig,
        check_one_runner,
        render_workflow,
    )

    check_one_runner(matrix)
    return render_workflow(WorkflowConfig(plan=PurePosixPath(plan.as_posix()), api_key=has_key))


@click.command(name="fleet", cls=OneLineCommand)
@click.argument("plan", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--ray",
    "address",
    required=True,
    envvar="RAY_ADDRESS",
    metavar="ADDRESS",
    help="The Ray cluster: HOST:PORT of its head, or auto (default: $RAY_ADDRESS).",
)
@click.option(
    "--results-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("fleet-results"),
    show_default=True,
    help="Folder the results are collected into, one <entry id>.json each.",
)
@click.option(
    "--retries",
    type=click.IntRange(min=0),
    default=1,
    show_default=True,
    help="How often a run whose node was lost is submitted again.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON summary on stdout.")
def fleet_command(plan: Path, address: str, results_dir: Path, retries: int, as_json: bool) -> None:
    """Run a plan's matrix on a Ray cluster, one task per entry, and collect every result.

    Each entry becomes a Ray task that needs the custom resource of its GPU kind, e.g.
    {"gpu_h100-sxm": 1}, and as many GPUs: start each GPU node with `ray start --address
    HEAD:6379 --resources '{"gpu_h100-sxm": 8}'`; Ray gives each run GPUs of its own
    (CUDA_VISIBLE_DEVICES). As each run ends its result comes back to this
    machine, is validated and reported; a run whose node is lost is tried once more
    elsewhere (--retries) or reported; a run no node can take is reported. A run that gives
    `ray-address:` (vLLM over several hosts) holds whole nodes of its kind in a placement
    group while its task runs there, on this cluster. Ctrl-C or SIGTERM stops every run as
    it stops `bench run`, keeping what each measured. Exit 0 when every entry was
    collected, complete and valid, and the set validates together; else 1.

    \b
    Example:
      infermeter bench fleet bench/plans/fleet.yaml --ray 10.0.0.1:6379
      infermeter registry submit fleet-results/*.json
    """
    from infermeter.bench.fleet.ray_runner import FleetConfig, run_fleet

    matrix = _matrix(plan)
    config = FleetConfig(address=address, results_dir=results_dir, retries=retries)
    try:
        summary = run_fleet(matrix, config, notify=lambda line: click.echo(line, err=True))
    except BenchError as error:
        raise click.ClickException(error.one_line()) from None
    if as_json:
        click.echo(json.dumps(summary.as_json(), indent=2))
    for problem in summary.set_problems:
        click.echo(f"set: {problem}", err=True)
    counts = ", ".join(f"{count} {status}" for status, count in sorted(summary.counts().items()))
    click.echo(f"{len(summary.outcomes)} entries: {counts}; results in {results_dir}", err=True)
    if not summary.ok:
        raise click.ClickException("not every entry was collected complete and valid")
