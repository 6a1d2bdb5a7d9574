"""One set of planted secrets (`fuzz_helpers.PLANTED`) through every surface: none shows.

The surfaces: `bench run`'s result, raw records, stdout, stderr and a launched vLLM's log
(an `--endpoint` with user:password, `--extra-body` with a camelCase key, a JSON Authorization
pair and a hyphenated key, `--vllm-arg` with the key and a token); `bench run --plan`'s error
line; `bench plan matrix`; both renders (refused while the plan holds a secret; a plan's
`api-key:` referenced from a Secret, never inlined); a harvested InferenceX source whose
`html_url` carries user:password; `registry validate` refusing a result that stores them. A
real HTTP server on 127.0.0.1 (tests/bench's fake) and the STAND-IN vLLM.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from fuzz_helpers import PLANTED, check_cli, check_gate_accepts, check_no_secret

from tests.bench.standin_launcher import standin_launcher

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from bench_helpers import SMALLER, STANDIN_MODEL
from fake_openai_server import FakeOpenAIServer, FakeServerConfig

from infermeter.registry.models import Result
from infermeter.registry.store import content_id, dumps_result

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
SUITE = "secrets"
CAMEL, BEARER, HYPHEN = (PLANTED[k] for k in ("camelCase key", "JSON Authorization pair",
                                               "hyphenated key"))  # fmt: skip
USERPASS, HF, API_KEY = PLANTED["URL userinfo"], PLANTED["Hugging Face token"], PLANTED["api key"]
PROXY = PLANTED["Proxy-Authorization"]
EXTRA_BODY = {
    "apiKey": CAMEL,
    "headers": {"Authorization": f"Bearer {BEARER}", "Proxy-Authorization": f"Basic {PROXY}"},
    "x-api-key": HYPHEN,
}
FACTS = ["--engine", "vllm", "--engine-version", "0.9.1", "--model-id", "llama-3.1-8b-instruct",
         "--gpu", "h100-sxm"]  # fmt: skip


@pytest.fixture
def server() -> FakeOpenAIServer:
    # 10 ms a token: a decode speed an H100 can serve, so the result passes the gate.
    with FakeOpenAIServer(FakeServerConfig(itl_s=0.01)) as running:
        yield running


def _endpoint(server: FakeOpenAIServer) -> str:
    return server.url.replace("http://", f"http://alice:{USERPASS}@")


def test_fuzz_secrets_bench_run_result_records_stdout_stderr(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    output = tmp_path / "r.json"
    run = check_cli(
        ["bench", "run", "--endpoint", _endpoint(server), "--concurrency", "1", *SMALLER, *FACTS,
         "--extra-body", json.dumps(EXTRA_BODY), "--raw-records",
         "--output", str(output), "--json"],
        SUITE, limit_s=120,
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    check_no_secret(SUITE, "bench run's stdout", run.stdout)
    check_no_secret(SUITE, "bench run's stderr", run.stderr)
    written = sorted(tmp_path.glob("r.*"))
    assert [path.name for path in written] == ["r.json", "r.requests.jsonl.gz"]
    check_no_secret(SUITE, "the result", output.read_bytes())
    check_no_secret(SUITE, "the raw records", gzip.decompress(written[1].read_bytes()))
    command = Result.model_validate_json(output.read_text()).source.command
    assert '"apiKey": "REDACTED"' in command
    assert "http://REDACTED@127.0.0.1" in command
    check_gate_accepts(SUITE, [output])


def test_fuzz_secrets_launched_vllm_log_result_and_records(tmp_path: Path) -> None:
    # A launched vLLM (the STAND-IN) given the key and a token in --vllm-arg: it logs its
    # arguments; the log kept beside the result, the result and the raw records carry none.
    launcher = standin_launcher(tmp_path / "bin")
    output = tmp_path / "r.json"
    run = check_cli(
        ["bench", "run", "--model", STANDIN_MODEL, "--vllm-executable",
         str(launcher), "--gpu", "h100-sxm", "--concurrency", "1", *SMALLER,
         "--vllm-arg", f"--api-key {API_KEY}", "--vllm-arg", f"--hf-token {HF}",
         "--extra-body", json.dumps(EXTRA_BODY), "--raw-records", "--output", str(output)],
        SUITE, limit_s=180,
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    check_no_secret(SUITE, "bench run's stdout", run.stdout)
    check_no_secret(SUITE, "bench run's stderr", run.stderr)
    log = tmp_path / "r.vllm.log"
    assert "'api_key': 'REDACTED'" in log.read_text()  # the stand-in logs its arguments
    check_no_secret(SUITE, "vLLM's log", log.read_bytes())
    check_no_secret(SUITE, "the result", output.read_bytes())
    records = tmp_path / "r.requests.jsonl.gz"
    check_no_secret(SUITE, "the raw records", gzip.decompress(records.read_bytes()))
    check_gate_accepts(SUITE, [output])


def _plan(tmp_path: Path, **run: object) -> Path:
    plan = Path("plan.yaml")
    base = {"name": "chat", "model": "meta-llama/Llama-3.1-8B-Instruct", "gpus": ["h100-sxm"],
            "concurrency": [1], "num-requests": 4}  # fmt: skip
    plan.write_text(yaml.safe_dump({"runs": [{**base, **run}]}), encoding="utf-8")
    return plan


def test_fuzz_secrets_bench_run_plan_error_line(tmp_path: Path, server: FakeOpenAIServer) -> None:
    plan = tmp_path / "plan.yaml"
    run = {"endpoint": _endpoint(server), "concurrency": [1], "num-request": 4,
           "extra-body": EXTRA_BODY}  # fmt: skip
    plan.write_text(yaml.safe_dump({"runs": [run]}), encoding="utf-8")
    result = check_cli(["bench", "run", "--plan", str(plan)], SUITE)
    assert result.exit_code == 1
    assert "num-request: unknown key" in result.stderr
    check_no_secret(SUITE, "bench run --plan's error", result.output)


def test_fuzz_secrets_plan_matrix_and_renders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a workflow's plan is a path in the repository
    plan = _plan(tmp_path, **{"vllm-arg": [f"--hf-token {HF}"], "extra-body": EXTRA_BODY,
                              "api-key": API_KEY})  # fmt: skip
    matrix = check_cli(["bench", "plan", "matrix", str(plan)], SUITE)
    assert matrix.exit_code == 0, matrix.output
    check_no_secret(SUITE, "bench plan matrix", matrix.output)
    for engine in ("--kubernetes", "--github-actions"):
        rendered = tmp_path / f"render{engine}.yaml"
        render = check_cli(
            ["bench", "plan", "render", str(plan), engine, "--output", str(rendered)], SUITE
        )
        assert render.exit_code == 1, render.output
        assert "a rendered file never holds a secret" in render.stderr
        # the message names what it found in words the redaction of every output leaves whole
        assert "carries the value of `--hf-token` (an API key" in render.stderr
        assert "give the server's key as the plan's api-key (read from a" in render.stderr
        assert not rendered.exists()
        check_no_secret(SUITE, f"render {engine}", render.output)


def test_fuzz_secrets_plan_api_key_reaches_both_containers_by_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a workflow's plan is a path in the repository
    plan = _plan(tmp_path, **{"api-key": API_KEY})
    for engine in ("--kubernetes", "--github-actions"):
        rendered = tmp_path / f"render{engine}.yaml"
        render = check_cli(
            ["bench", "plan", "render", str(plan), engine, "--output", str(rendered)], SUITE
        )
        assert render.exit_code == 0, render.output
        check_no_secret(SUITE, f"render {engine}", rendered.read_text() + render.output)
    job = yaml.safe_load((tmp_path / "render--kubernetes.yaml").read_text())
    pod = job["spec"]["template"]["spec"]
    reference = {"secretKeyRef": {"name": "infermeter-api-key", "key": "token"}}
    vllm, bench = pod["initContainers"][0], pod["containers"][0]
    assert {"name": "VLLM_API_KEY", "valueFrom": reference} in vllm["env"]
    assert bench["env"] == [{"name": "OPENAI_API_KEY", "valueFrom": reference}]
    workflow = yaml.safe_load((tmp_path / "render--github-actions.yaml").read_text())
    step = next(s for s in workflow["jobs"]["sweep"]["steps"] if s.get("name") == "bench run")
    assert step["env"]["OPENAI_API_KEY"] == "${{ secrets.INFERMETER_API_KEY }}"
    assert "echo" not in step["run"]


def test_fuzz_secrets_harvested_source_url(tmp_path: Path) -> None:
    dump = tmp_path / "dump"
    shutil.copytree(REPOSITORY_ROOT / "tests/data/harvest/inferencex-dump", dump)
    runs = json.loads((dump / "workflow_runs.json").read_text())
    for run in runs:
        run["html_url"] = run["html_url"].replace("https://", f"https://bot:{USERPASS}@")
    (dump / "workflow_runs.json").write_text(json.dumps(runs))
    root = tmp_path / "checkout"
    shutil.copytree(REPOSITORY_ROOT / "registry/catalogs", root / "registry/catalogs")
    (root / "registry/results").mkdir()
    harvest = check_cli(
        ["registry", "harvest", "inferencex", "--from", str(dump), "--registry", str(root),
         "--retrieved", "2026-12-01"], SUITE, report=True,
    )  # fmt: skip
    assert harvest.exit_code == 0, harvest.output
    check_no_secret(SUITE, "registry harvest's output", harvest.output)
    written = sorted((root / "registry/results").rglob("*.json"))
    assert len(written) == 2, harvest.output
    for path in written:
        check_no_secret(SUITE, f"harvested {path.name}", path.read_bytes())
    check_gate_accepts(SUITE, written)


def test_fuzz_secrets_registry_validate_refuses_stored_secrets(tmp_path: Path) -> None:
    data = json.loads((REPOSITORY_ROOT / "tests/examples/valid/results/measured-two-points.json")
                      .read_text())  # fmt: skip
    data["source"]["command"] += (
        f" --endpoint http://alice:{USERPASS}@h:8000 --extra-body '{json.dumps(EXTRA_BODY)}'"
    )
    result = Result.model_validate(data)
    path = tmp_path / "secret.json"
    path.write_text(dumps_result(result.model_copy(update={"id": content_id(result)})))
    validate = check_cli(["registry", "validate", str(path)], SUITE, report=True)
    assert validate.exit_code == 1
    assert "replace it with REDACTED" in validate.output
    check_no_secret(SUITE, "registry validate's report", validate.output)


def test_fuzz_secrets_a_source_url_with_userinfo_fails_the_schema_too(tmp_path: Path) -> None:
    data = json.loads((REPOSITORY_ROOT / "tests/examples/valid/results/reported-offline.json")
                      .read_text())  # fmt: skip
    data["source"]["url"] = f"https://bot:{USERPASS}@github.com/o/r"
    path = tmp_path / "url.json"
    path.write_text(json.dumps(data))
    validate = check_cli(["registry", "validate", str(path)], SUITE, report=True)
    assert validate.exit_code == 1
    assert "source.url: " in validate.output
    check_no_secret(SUITE, "registry validate's report", validate.output)
    data["source"]["url"] = "https://medium.com/@someone/a-post"  # an '@' in the path is fine
    path.write_text(json.dumps(data))
    again = check_cli(["registry", "validate", str(path)], SUITE, report=True)
    assert "source.url" not in again.output, again.output
