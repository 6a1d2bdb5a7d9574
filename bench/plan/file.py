"""A plan file (`bench run --plan FILE.yaml`): its runs read and checked all at once
(`load_plan`), every problem raised together as one `PlanError`. The format is described in
`bench.plan`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import (
    ValidationError,
)

from infermeter.bench.errors import BenchConfigError, BenchError
from infermeter.bench.plan.options import RunOptions, plain_message
from infermeter.bench.plan.placement import GpuRequest, parse_gpus
from infermeter.bench.run.point_plans import plan_points
from infermeter.bench.session.builder import command_line, session_config
from infermeter.bench.session.config import SessionConfig
from infermeter.calculators.suggest import unknown_name
from infermeter.registry.catalog import CatalogLoader
from infermeter.registry.input_files import InputFileError, read_input_text


class PlanError(BenchError):
    """A plan file cannot be read or holds invalid runs; `problems` lists each one."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


@dataclass(frozen=True)
class PlanRun:
    """One run of a plan: its label (`name`, else `runs[i]`), options and session."""

    label: str
    options: RunOptions
    session: SessionConfig
    gpus: tuple[GpuRequest, ...] = ()


def _where(location: tuple[int | str, ...]) -> str:
    text = ""
    for part in location:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text


def _keys(mapping: Mapping[Any, Any], where: str, problems: list[str]) -> dict[str, Any]:
    """The mapping with snake_case keys spelt as the options are (kebab-case)."""
    known = [field.alias or name for name, field in RunOptions.model_fields.items()]
    normalised: dict[str, Any] = {}
    for key, value in mapping.items():
        if not isinstance(key, str):
            problems.append(f"{where}: key {key!r} is not a name")
            continue
        spelt = key.replace("_", "-")
        if spelt in normalised:
            problems.append(f"{where}.{spelt}: given twice")
        elif spelt not in known:
            problems.append(f"{where}.{key}: {unknown_name('key', spelt, known)}")
        else:
            normalised[spelt] = value
    return normalised


def _options(data: dict[str, Any], where: str, problems: list[str]) -> RunOptions | None:
    try:
        return RunOptions.model_validate(data)
    except ValidationError as error:
        for detail in error.errors():
            location = (where, *detail["loc"])
            message = plain_message(detail)
            problems.append(f"{_where(location)}: {message}")
    return None


MAX_RUNS = 1_000
"""Runs of one plan (each its own vLLM launch: a plan of thousands is a mistake)."""
MAX_DEPTH = 16
"""Deepest nesting of a plan (runs, a run, extra-body's objects: about 6 in use)."""
MAX_VALUES = 100_000
"""Values of a plan with every YAML alias expanded (an alias bomb expands to billions)."""


def _bounded(path: Path, data: object) -> None:
    """Refuse a plan nested deeper than MAX_DEPTH, or holding more than MAX_VALUES values
    once each alias counts as the value it names (walked without recursion, stopping at the
    bound, so a bomb costs nothing)."""
    stack: list[tuple[object, int]] = [(data, 0)]
    values = 0
    while stack:
        value, depth = stack.pop()
        values += 1
        if values > MAX_VALUES:
            raise PlanError([f"{path}: more than {MAX_VALUES:,} values (aliases expanded)"])
        if isinstance(value, dict | list):
            if depth >= MAX_DEPTH:
                raise PlanError([f"{path}: nested deeper than {MAX_DEPTH} levels"])
            children = [*value.keys(), *value.values()] if isinstance(value, dict) else value
            stack.extend((child, depth + 1) for child in children)


def _read(path: Path) -> object:
    try:
        text = read_input_text(path, "plan")
    except InputFileError as error:
        raise PlanError([f"{path}: cannot read the plan: {error.reason}"]) from None
    try:
        # libyaml's loader where PyYAML has it (a 256 KiB plan parses in milliseconds), which
        # refuses a key given twice instead of keeping its last value.
        data = yaml.load(text, Loader=CatalogLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        at = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or "cannot be parsed"
        raise PlanError([f"{path}{at}: not valid YAML: {problem}"]) from None
    except RecursionError:
        raise PlanError([f"{path}: nested deeper than {MAX_DEPTH} levels"]) from None
    _bounded(path, data)
    return data


def load_plan(path: Path, *, shared_outputs: bool = False) -> list[PlanRun]:
    """The runs of the plan file at `path`, all checked; raises PlanError with every problem.

    `shared_outputs` lets runs name the same result file (a fleet gives each entry its own)."""
    data = _read(path)
    if not isinstance(data, dict):
        raise PlanError([f"{path}: expected a mapping with `runs:` (and optional `defaults:`)"])
    problems: list[str] = []  # each `where: message`; the file's path is added at the end
    for key in data:
        if key not in ("defaults", "runs"):
            problems.append(f"{key}: unknown key; a plan has `defaults:` and `runs:`")
    default_gpus, default_keys = _defaults(data, problems)
    planned: list[PlanRun] = []
    outputs: dict[Path, str] = {}
    for index, run in enumerate(_runs(data, problems)):
        where = f"runs[{index}]"
        planned_run = _plan_run(run, where, default_gpus, default_keys, problems)
        if planned_run is None:
            continue
        output = planned_run.session.output
        if output is not None and not shared_outputs:
            other = outputs.setdefault(output.resolve(), where)
            if other != where:
                problems.append(f"{where}.output: {output} is also {other}'s result file")
                continue
        planned.append(planned_run)
    if problems:
        raise PlanError([f"{path}: {problem}" for problem in problems])
    return planned


def _defaults(
    data: dict[Any, Any], problems: list[str]
) -> tuple[tuple[GpuRequest, ...], dict[str, Any]]:
    """The plan's `defaults:`: its GPUs, and the run options every run starts from."""
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        problems.append("defaults: expected a mapping of run options")
        defaults = {}
    defaults = dict(defaults)
    default_gpus: tuple[GpuRequest, ...] = ()
    if "gpus" in defaults:
        default_gpus = parse_gpus(defaults.pop("gpus"), "defaults.gpus", problems) or ()
    default_keys = _keys(defaults, "defaults", problems)
    if _options(default_keys, "defaults", problems) is None:
        default_keys = {}
    return default_gpus, default_keys


def _runs(data: dict[Any, Any], problems: list[str]) -> list[Any]:
    """The plan's `runs:`, a list of at least one and at most `MAX_RUNS` (else none)."""
    runs = data.get("runs")
    if not isinstance(runs, list) or not runs:
        problems.append("runs: expected a list of at least one run")
        return []
    if len(runs) > MAX_RUNS:
        problems.append(f"runs: {len(runs):,} runs; a plan has at most {MAX_RUNS:,}")
        return []
    return runs


def _plan_run(
    run: object,
    where: str,
    default_gpus: tuple[GpuRequest, ...],
    default_keys: dict[str, Any],
    problems: list[str],
) -> PlanRun | None:
    """One run of the plan, its options over the defaults, checked as `bench run` checks
    them; None, with its problems added, when it is not valid."""
    if not isinstance(run, dict):
        problems.append(f"{where}: expected a mapping of run options")
        return None
    own: list[str] = []
    run = dict(run)
    gpus = default_gpus
    if "gpus" in run:
        gpus = parse_gpus(run.pop("gpus"), f"{where}.gpus", own) or ()
    keys = _keys(run, where, own)
    if _options(keys, where, own) is None or own:
        problems += own
        return None
    options = RunOptions.model_validate({**default_keys, **keys})
    label = options.name or where
    try:
        session = session_config(options, command_line(options))
        plan_points(session.run)
    except BenchConfigError as error:
        key = (error.option or "").lstrip("-")
        at = f"{where}.{key}" if key else where
        problems.append(f"{at}: {' '.join(str(error).split())}")
        return None
    return PlanRun(label, options, session, gpus)
