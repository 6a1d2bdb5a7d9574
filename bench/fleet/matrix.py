"""A plan expanded into its matrix: one entry per run × GPU kind, each with its `bench run`.

`load_matrix(path)` reads the plan (`bench.plan.load_plan`, which checks every run), then
checks where each run goes and raises `PlanError` with every problem at once
(`FILE: runs[1].gpus[0]: message`):

- each GPU kind is a GPU catalog id; a run lists `gpus:` or, failing that, its `gpu:` is the
  one kind; a run that lists `gpus:` leaves `gpu:` out (each entry sets it);
- the count is the GPUs one server needs: without a count it is the run's tensor × pipeline
  parallel size; with a count and no `tensor-parallel-size`, the entry serves with
  tensor-parallel-size = count / pipeline-parallel-size; with both, they must agree;
- a fleet entry launches vLLM on its node, so `endpoint:` is refused; a run that gives
  `ray-address:` serves one model over several hosts (vLLM's Ray executor, tensor × pipeline
  parallel across nodes): a *multi-node* entry, which `bench fleet --ray` runs on its own
  cluster, whatever address the plan gives (`bench.fleet.ray_groups`), Kubernetes as a
  LeaderWorkerSet with a Ray cluster of its own (`bench.fleet.lws`), and GitHub Actions
  refuses by name;
- each entry writes its own result: the run's `output` with the GPU kind inserted before the
  suffix (`results/chat.json` → `results/chat.h100-sxm-x1.json`; without an output,
  `results/<name>.<gpu>-x<count>.json`), and entries' ids and outputs are unique; an output
  is one line of printable characters (a workflow's upload reads each line as a path).

The matrix is deterministic: entries in plan order, then GPU-kind order, and the same plan
always gives the same JSON. `as_json` is GitHub Actions' `strategy.matrix` shape,
`{"include": [...]}`, so one printout serves every engine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from infermeter.bench.errors import BenchConfigError
from infermeter.bench.launch.parallel_fit import parallel_sizes
from infermeter.bench.plan.file import PlanError, PlanRun, load_plan
from infermeter.bench.plan.options import RunOptions
from infermeter.bench.plan.placement import GpuRequest
from infermeter.bench.run.attributes import attributes
from infermeter.bench.session.builder import command_line, session_config

RESULTS_FOLDER = PurePosixPath("results")
GITHUB_API_KEY_SECRET = "INFERMETER_API_KEY"
"""The repository secret a rendered workflow reads a plan's `api-key:` from."""


@dataclass(frozen=True)
class MatrixEntry:
    """One run on one GPU kind: what a single host (or Ray task, CI job, Job) runs."""

    id: str
    run: str
    gpu: str
    gpu_count: int
    vendor: str
    output: str
    command: str
    options: RunOptions
    multinode: bool = False  # vLLM over several hosts of a Ray cluster (`ray-address:`)

    @property
    def log(self) -> str:
        """vLLM's log, which `bench run` writes beside the result."""
        output = PurePosixPath(self.output)
        return str(output.with_name(output.stem + ".vllm.log"))

    @property
    def resource(self) -> str:
        """The Ray custom resource a node that has this GPU kind advertises, per GPU."""
        return resource_name(self.gpu)

    def as_json(self) -> dict[str, Any]:
        """The entry as the matrix JSON lists it (no nested values: CI matrices are flat)."""
        return {
            **attributes(self, "id", "run", "gpu", "gpu_count", "vendor", "resource"),
            "runner_label": self.gpu,
            **attributes(self, "output", "log", "command", "multinode"),
        }


@dataclass(frozen=True)
class Matrix:
    """Every entry of a plan, in order."""

    plan: Path
    entries: tuple[MatrixEntry, ...]

    def canary(self) -> Matrix:
        """The first entry of each GPU kind: one short check per kind before the sweep."""
        first: dict[tuple[str, int], MatrixEntry] = {}
        for entry in self.entries:
            first.setdefault((entry.gpu, entry.gpu_count), entry)
        return Matrix(self.plan, tuple(first.values()))

    def as_json(self) -> dict[str, Any]:
        """`{"include": [entry, …]}`: GitHub Actions' matrix shape, also read by the others."""
        return {"include": [entry.as_json() for entry in self.entries]}


def resource_name(gpu_id: str) -> str:
    """`gpu_<catalog id>`: the custom resource of one GPU of that kind on a Ray node."""
    return f"gpu_{gpu_id}"


def _slug(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-") or "run"


def _output(run: PlanRun, gpu: str, count: int) -> str:
    given = run.options.output
    kind = f"{gpu}-x{count}"
    if given is None:
        return str(RESULTS_FOLDER / f"{_slug(run.label)}.{kind}.json")
    suffix = given.suffix or ".json"
    return str(given.with_name(f"{given.stem}.{kind}{suffix}"))


_WILDCARDS = frozenset("*?[]")


def _kinds(run: PlanRun, where: str, problems: list[str]) -> tuple[GpuRequest, ...]:
    given = run.options.output
    if given is not None and not str(given).isprintable():
        # A workflow uploads the entry's result by its path, and upload-artifact reads each
        # line of a path as another path (of any file the runner can read).
        problems.append(
            f"{where}.output: {str(given)!r} holds a line break or control character; a fleet "
            "entry's result file is named on one line"
        )
        return ()
    if given is not None and (_WILDCARDS & set(str(given)) or str(given).startswith(("!", "#"))):
        # ... and as a pattern: `run[1].json` matches run1.json only, so nothing is uploaded.
        problems.append(
            f"{where}.output: {str(given)!r} holds a wildcard (* ? [ ]) or starts with ! or #; "
            "a workflow uploads a fleet entry's result by its path, which upload-artifact reads "
            "as a pattern"
        )
        return ()
    if run.options.endpoint is not None:
        problems.append(
            f"{where}.endpoint: a fleet entry launches vLLM on its own node; give model: "
            "instead of endpoint:"
        )
        return ()
    if run.gpus and run.options.gpu_id is not None:
        problems.append(f"{where}.gpu: give the GPU kinds in gpus: only (each entry sets gpu)")
        return ()
    if run.gpus:
        return run.gpus
    if run.options.gpu_id is not None:
        return (GpuRequest(run.options.gpu_id),)
    problems.append(f"{where}.gpus: missing; list the GPU kinds the run needs, e.g. [h100-sxm]")
    return ()


def _entry(
    run: PlanRun, request: GpuRequest, vendor: str, where: str, problems: list[str]
) -> MatrixEntry | None:
    tensor, pipeline = parallel_sizes(run.options)
    count = request.count
    if count is None:
        count = (tensor or 1) * pipeline
    elif tensor is None:
        if count % pipeline:
            problems.append(f"{where}: {count} GPUs do not split into {pipeline} pipeline stages")
            return None
        tensor = count // pipeline if count > 1 else None
    elif tensor * pipeline != count:
        problems.append(
            f"{where}: {count} GPUs, but the run serves on tensor × pipeline parallel = "
            f"{tensor} × {pipeline}; drop the count or change tensor-parallel-size"
        )
        return None
    output = _output(run, request.gpu_id, count)
    options = run.options.model_copy(
        update={"gpu_id": request.gpu_id, "tensor_parallel_size": tensor, "output": Path(output)}
    )
    try:
        session_config(options, command_line(options))
    except BenchConfigError as error:
        problems.append(f"{where}: {error.one_line()}")
        return None
    return MatrixEntry(
        id=f"{_slug(run.label)}--{request.gpu_id}-x{count}",
        run=run.label,
        gpu=request.gpu_id,
        gpu_count=count,
        vendor=vendor,
        output=output,
        command=command_line(options),
        options=options,
        multinode=options.ray_address is not None,
    )


def expand(plan: Path, runs: list[PlanRun]) -> Matrix:
    """The matrix of checked runs; raises PlanError naming every misplaced run."""
    from infermeter.registry.lookup import UnknownIdError, resolve_gpu

    problems: list[str] = []
    entries: list[MatrixEntry] = []
    ids: dict[str, str] = {}
    outputs: dict[str, str] = {}
    for index, run in enumerate(runs):
        where = f"runs[{index}]"
        for number, request in enumerate(_kinds(run, where, problems)):
            at = f"{where}.gpus[{number}]" if run.gpus else f"{where}.gpu"
            try:
                vendor = resolve_gpu(request.gpu_id).vendor
            except UnknownIdError as error:
                problems.append(f"{at}: {error}")
                continue
            entry = _entry(run, request, vendor, at, problems)
            if entry is None:
                continue
            if (other := ids.setdefault(entry.id, at)) != at:
                problems.append(f"{at}: entry {entry.id} is also {other}'s; give the runs names")
                continue
            if (other := outputs.setdefault(entry.output, at)) != at:
                problems.append(f"{at}: result file {entry.output} is also {other}'s")
                continue
            entries.append(entry)
    if problems:
        raise PlanError([f"{plan}: {problem}" for problem in problems])
    return Matrix(plan, tuple(entries))


def inline_secrets(matrix: Matrix) -> list[str]:
    """What secret each entry's command would put into a rendered file, as
    `PLAN: run: message` (the secret named, never shown); empty when none. The server's key is
    no such secret: `api-key:` stays out of commands, and a render references it (a Kubernetes
    Secret, a GitHub secret)."""
    from infermeter.registry.secrets import find_secret

    problems = []
    for entry in matrix.entries:
        secret = find_secret(entry.command)
        if secret is not None:
            problems.append(
                f"{matrix.plan}: {entry.run}: its command carries {secret}; a rendered file "
                "never holds a secret, so give the server's key as the plan's api-key (read from a "
                "Kubernetes Secret, --api-key-secret, or the GitHub secret "
                f"{GITHUB_API_KEY_SECRET}) and a gated model's token with --hf-token-secret"
            )
    return problems


def load_matrix(path: Path) -> Matrix:
    """The matrix of the plan file at `path`; raises PlanError with every problem."""
    return expand(path, load_plan(path, shared_outputs=True))
