"""The package as a contributor installs it: a wheel built from this tree, in a fresh virtual
environment, run from folders that are not the checkout.

The wheel and its venv are the session's `installed` (tests/wheel_install.py), built once for
every test that runs the installed CLI (tests/bench/test_fleet_installed_wheel.py too). One test
checks that our code is imported from the venv's site-packages. The endpoint is the STAND-IN
vLLM's HTTP side (tests/bench/standin_vllm.py) on 127.0.0.1; the registry a `git clone` of this
repository; the contributor's fork for `registry submit` a bare clone of it (no network, no
`gh` on PATH).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import click
import jsonschema
import pytest
import yaml
from wheel_install import Installed

from infermeter.registry.models import Result
from infermeter.registry.schemas import load_schema

REPOSITORY = Path(__file__).resolve().parents[1]
CORRECTIONS = Path("registry") / "corrections.yaml"
sys.path.insert(0, str(REPOSITORY / "tests" / "bench"))

from bench_helpers import standin_server  # noqa: E402
from synthetic_run import SYNTHETIC_VLLM_FILE  # noqa: E402

pytestmark = pytest.mark.slow
OUR_PACKAGES = ("bench", "calculators", "registry")


@pytest.fixture
def endpoint() -> Iterator[str]:
    with standin_server() as server:  # at a GPU's pace: the registry checks the physics
        yield server.url


def test_wheel_holds_our_packages_their_data_and_nothing_else(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as archive:
        names = set(archive.namelist())
    top = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert top == {"infermeter"}
    for package in OUR_PACKAGES:  # every module of the checkout, none forgotten
        for module in (REPOSITORY / package).rglob("*.py"):
            assert f"infermeter/{module.relative_to(REPOSITORY).as_posix()}" in names
    for data in (
        "registry/catalogs/gpus.yaml",
        "registry/catalogs/models.yaml",
        "registry/catalogs/prices.yaml",
        "registry/catalogs/prices-skypilot.yaml",
        "registry/json_schemas/result.schema.json",
        "bench/assets/charts.js",
        "bench/assets/uplot/uPlot.iife.min.js",
        "bench/assets/uplot/uPlot.min.css",
        "bench/assets/uplot/LICENSE",
    ):
        assert f"infermeter/{data}" in names  # fmt: skip
    assert not [name for name in names if name.startswith("infermeter/registry/results/")]


def test_wheel_installs_exactly_one_top_level_package_infermeter(installed: Installed) -> None:
    # PyPI has distributions named `bench` and `registry`: installed beside one, a top-level
    # package of ours would overwrite its files. What the venv got is what its RECORD lists.
    (dist_info,) = installed.site_packages.glob("infermeter-*.dist-info")
    paths = [line.rsplit(",", 2)[0] for line in (dist_info / "RECORD").read_text().splitlines()]
    tops = {path.split("/")[0] for path in paths if not path.startswith(("../", dist_info.name))}
    assert tops == {"infermeter"}
    assert (dist_info / "top_level.txt").read_text().split() == ["infermeter"]
    assert sorted(p.name for p in (installed.site_packages / "infermeter").iterdir()) == [
        "bench", "calculators", "registry"
    ]  # fmt: skip
    help_text = installed.run("--help")
    assert help_text.returncode == 0, help_text.stderr
    assert help_text.stdout.startswith("Usage: infermeter [OPTIONS] COMMAND")


def test_installed_code_comes_from_the_venv(installed: Installed) -> None:
    probe = subprocess.run(
        [str(installed.venv / "bin" / "python"), "-c",
         "import json, importlib.util; from infermeter import bench, calculators, registry;"
         "print(json.dumps([bench.__file__, calculators.__file__, registry.__file__,"
         " importlib.util.find_spec('benchmarks') is None]))"],
        cwd=installed.empty, capture_output=True, text=True, check=True,
    )  # fmt: skip
    *files, no_benchmarks = json.loads(probe.stdout)
    for file in files:
        assert Path(file).is_relative_to(installed.site_packages), file
    assert no_benchmarks


def test_installed_calc_vram(installed: Installed) -> None:
    run = installed.run("calc", "vram", "--model", "llama-3.1-8b-instruct", "--gpu", "h100-sxm",
                        "--json")  # fmt: skip
    assert run.returncode == 0, run.stderr
    plan = json.loads(run.stdout)
    assert plan["fits"] is True


def test_installed_bench_report_inlines_its_packaged_charts(installed: Installed) -> None:
    result = REPOSITORY / "tests" / "examples" / "valid" / "results" / "measured-two-points.json"
    run = installed.run("bench", "report", str(result), "--html", "report.html")
    assert run.returncode == 0, run.stderr
    page = (installed.empty / "report.html").read_text()
    assert "https://github.com/leeoniya/uPlot (v1.6.32)" in page
    assert "function drawCharts" in page
    assert "<script src" not in page


def test_installed_bench_run_writes_a_valid_result(installed: Installed, endpoint: str) -> None:
    run = installed.run(
        "bench", "run", "--endpoint", endpoint, "--gpu", "h100-sxm",
        "--model-id", "llama-3.2-1b-instruct", "--concurrency", "1", "--num-requests", "4",
        "--warmup", "1", "--input-len", "16", "--output-len", "8", "--output", "result.json",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    text = (installed.empty / "result.json").read_text()
    jsonschema.validate(json.loads(text), load_schema("result.schema.json"))
    result = Result.model_validate_json(text)
    assert result.points[0].requests.completed == 4
    assert result.source.kind == "measured"
    assert result.source.tool.commit is None  # not run from a checkout
    checked = installed.run("registry", "validate", "result.json")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.strip().endswith("1 file checked, all valid")


def test_installed_bench_run_terminated_in_its_first_point_keeps_it(installed: Installed) -> None:
    with standin_server() as server:
        process = subprocess.Popen(
            [str(installed.venv / "bin" / "infermeter"), "bench", "run", "--endpoint",
             server.url, "--gpu", "h100-sxm", "--model-id", "llama-3.2-1b-instruct",
             "--concurrency", "2", "--duration", "60", "--num-requests", "100000",
             "--warmup", "1", "--input-len", "16", "--output-len", "8",
             "--output", "result.json"],
            cwd=installed.empty, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "INFERMETER"))},
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while server.stats.requests < 8:  # one warm-up, at most two in flight: 5 completed
            assert process.poll() is None, process.stderr
            assert time.monotonic() < deadline
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
    output = installed.empty / "result.json"
    assert process.returncode == 1, stderr
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1] == (
        "Error: the run is incomplete: terminated (SIGTERM); the measured points are in result.json"
    )
    result = Result.model_validate_json(output.read_text())
    (point,) = result.points
    assert [verdict.code for verdict in point.validity if verdict.code == "interrupted"] == [
        "interrupted"
    ]
    assert point.requests.completed >= 5
    assert result.source.complete is False  # written only after the registry's own checks
    output.unlink()


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (REPOSITORY / ".git").exists():
        pytest.skip("not run from a git checkout")
    target = tmp_path_factory.mktemp("clone") / "infermeter"
    subprocess.run(
        ["git", "clone", "--quiet", str(REPOSITORY), str(target)], check=True, timeout=120
    )
    _trim_results(target)
    return target


def _trim_results(clone: Path) -> None:
    """Keep one result per GPU × model folder and every result a correction names, committed:
    the installed package is shown finding and judging a registry checkout, on ~70 files rather
    than the ~1,000 that `registry validate` in `make test` judges already."""
    named = set(re.findall(r"\b[0-9a-f]{12}\b", (clone / CORRECTIONS).read_text()))
    results = clone / "registry" / "results"
    for folder in sorted({path.parent for path in results.rglob("*.json")}):
        for path in sorted(folder.glob("*.json"))[1:]:
            if path.stem.rsplit("-", 1)[-1] not in named:
                path.unlink()
    _git(clone, "add", "-A")
    _git(clone, "-c", "user.name=CI", "-c", "user.email=ci@example.com", "commit", "-qm", "trim")


def test_installed_registry_validate_on_a_clone(installed: Installed, clone: Path) -> None:
    results = len(list((clone / "registry" / "results").rglob("*.json")))
    assert results > 0
    expected = f"{results} files checked, all valid"
    inside = installed.run("registry", "validate", cwd=clone / "registry" / "results")
    assert inside.returncode == 0, inside.stdout + inside.stderr
    assert inside.stdout.strip().endswith(expected)
    named = installed.run("registry", "validate", "--registry", str(clone))
    assert named.returncode == 0, named.stdout + named.stderr
    assert named.stdout.strip().endswith(expected)
    from_env = installed.run("registry", "index", "--out", "index", "--json",
                             INFERMETER_REGISTRY=str(clone))  # fmt: skip
    assert from_env.returncode == 0, from_env.stderr
    assert json.loads(from_env.stdout)["results"] == results
    assert (installed.empty / "index" / "index.json").is_file()


def test_installed_registry_validate_without_a_registry_says_how_to_name_one(
    installed: Installed,
) -> None:
    run = installed.run("registry", "validate")
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    assert "--registry" in run.stderr
    assert "INFERMETER_REGISTRY" in run.stderr
    assert not (installed.site_packages / "infermeter" / "registry" / "results").exists()


def test_pr_workflow_judges_a_tampered_pull_request_with_the_base_code(
    installed: Installed, clone: Path, tmp_path: Path
) -> None:
    # The validation step of .github/workflows/registry.yml, run as the workflow runs it: the
    # base branch's code installed (here: this tree's wheel), the pull request's tree as data.
    from infermeter.registry.store import dumps_result, read_result, result_path

    workflow = yaml.safe_load((REPOSITORY / ".github/workflows/registry.yml").read_text())
    steps = workflow["jobs"]["validate"]["steps"]
    pr_path = next(s["with"]["path"] for s in steps if "/merge" in str(s.get("with", {})))
    step = next(s for s in steps if "registry validate" in str(s.get("run", "")))

    pull = tmp_path / pr_path
    subprocess.run(["git", "clone", "--quiet", str(clone), str(pull)], check=True)
    base_sha = _git(pull, "rev-parse", "HEAD")
    # The pull request disables the physics check and adds a result that breaks physics.
    physics = pull / "registry" / "checks" / "physics.py"
    physics.write_text(
        physics.read_text() + "\n\ndef physics_findings(*args, **kwargs):\n    return []\n"
    )
    bad = read_result(
        REPOSITORY / "tests/examples/invalid/results/throughput-above-compute-roofline.json"
    )
    target = pull / result_path(bad).as_posix()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(dumps_result(bad))
    _git(pull, "add", "-A")
    _git(pull, "-c", "user.name=PR", "-c", "user.email=pr@example.com", "commit", "-qm", "tamper")

    own_judge = subprocess.run(  # the pull request's own code would let it through
        [sys.executable, "-c", "from infermeter.bench.cli.main import main; main()", "registry",
         "validate", "--registry", ".", "--base", base_sha],
        cwd=pull, capture_output=True, text=True, check=False,
        # the import name over the clone's own folders (the links mypy reads too)
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        | {"PYTHONPATH": str(pull / ".typecheck")},
    )  # fmt: skip
    assert own_judge.returncode == 0, own_judge.stdout + own_judge.stderr

    environment = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    environment["PATH"] = f"{installed.venv / 'bin'}{os.pathsep}{environment['PATH']}"
    environment.update(dict.fromkeys(step.get("env", {}), base_sha))  # BASE_SHA
    judged = subprocess.run(
        ["bash", "-c", step["run"]], cwd=tmp_path, env=environment,
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert judged.returncode == 1, judged.stdout + judged.stderr
    assert "points[0].throughput.output_tokens_per_s" in judged.stdout
    assert "compute bound" in judged.stdout


def _git(cwd: Path, *arguments: str) -> str:
    done = subprocess.run(["git", *arguments], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_installed_bench_import_then_registry_submit_to_a_fork(
    installed: Installed, clone: Path, tmp_path: Path
) -> None:
    imported = installed.run(
        "bench", "import", str(SYNTHETIC_VLLM_FILE), "--gpu", "h100-sxm", "--gpu-count", "1",
        "--model-id", "llama-3.1-8b-instruct", "--engine-version", "0.9.1",
        "--command", "vllm bench serve --max-concurrency 16", "--submitter", "octocat",
        "--timezone", "UTC", "--input-len", "1024", "--output-len", "128",
        "--output", str(tmp_path / "imported.json"),
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    text = (tmp_path / "imported.json").read_text()
    result = Result.model_validate_json(text)
    assert result.points[0].load.concurrency == 16
    fork = tmp_path / "fork.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(clone), str(fork)], check=True)
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "clone", "--quiet", str(fork), str(checkout)], check=True)
    for key, value in (("user.name", "Contributor"), ("user.email", "c@example.com")):
        _git(checkout, "config", key, value)
    git_only = tmp_path / "bin"  # no `gh`: the pull request's commands are printed
    git_only.mkdir()
    (git_only / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    submitted = installed.run(
        "registry", "submit", str(tmp_path / "imported.json"),
        "--registry-checkout", str(checkout), "--json", PATH=str(git_only),
    )  # fmt: skip
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    report = json.loads(submitted.stdout)
    assert report["pushed"] is True
    assert report["pull_request_url"] is None
    assert _git(fork, "show", f"{report['branch']}:{report['path']}") + "\n" == text


def test_installed_registry_schemas_writes_into_the_checkout_never_the_package(
    installed: Installed, clone: Path
) -> None:
    package_schemas = installed.site_packages / "infermeter" / "registry" / "json_schemas"
    before = {path.name: path.read_bytes() for path in package_schemas.iterdir()}
    stale = clone / "schemas" / "result.schema.json"
    committed = stale.read_bytes()
    stale.write_text("{}\n")
    try:
        written = installed.run("registry", "schemas", cwd=clone / "registry")
        assert written.returncode == 0, written.stderr
        assert written.stdout.strip() == f"updated {stale}"
        assert stale.read_bytes() == committed
    finally:
        stale.write_bytes(committed)
    for where in (installed.empty, installed.site_packages):
        refused = installed.run("registry", "schemas", cwd=where)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert refused.stderr.startswith("Error: Invalid value for --registry: no registry")
        assert refused.stderr.count("\n") == 1
    assert {path.name: path.read_bytes() for path in package_schemas.iterdir()} == before


def _command_paths(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [prefix]
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            found.extend(_command_paths(command, (*prefix, name)))
        else:
            found.append((*prefix, name))
    return found


def test_installed_every_console_command_runs_from_an_empty_folder(installed: Installed) -> None:
    """Every command of the installed console script answers --help from a folder that is not a
    checkout (each imports what it needs from the wheel), and --version is pyproject's."""
    from infermeter.bench.cli.main import main

    for path in _command_paths(main):
        done = installed.run(*path, "--help")
        assert done.returncode == 0, f"infermeter {' '.join(path)} --help: {done.stderr}"
        assert "Example" in done.stdout, f"infermeter {' '.join(path)} --help"
    version = installed.run("--version")
    pyproject = tomllib.loads((REPOSITORY / "pyproject.toml").read_text(encoding="utf-8"))
    assert version.stdout.split()[-1] == pyproject["project"]["version"], version.stdout
