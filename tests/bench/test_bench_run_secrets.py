"""`bench run` with an API key: sent to the server, never stored in the result or printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_helpers import SMALLER, STANDIN_MODEL
from click.testing import CliRunner
from fake_openai_server import FakeOpenAIServer

from infermeter.bench.cli.main import main
from infermeter.registry.models import Result as RegistryResult

SECRET = "s3cr3t-key-value"


def test_bench_run_standin_api_key_in_vllm_arg_is_used_and_redacted(
    tmp_path: Path, standin_vllm: Path
) -> None:
    output = tmp_path / "result.json"
    run = CliRunner().invoke(
        main,
        ["bench", "run", "--model", STANDIN_MODEL, "--vllm-executable", str(standin_vllm),
         "--gpu", "h100-sxm", "--output", str(output), "--concurrency", "1",
         "--vllm-arg", f"--api-key {SECRET}", "--raw-records", *SMALLER],
    )  # fmt: skip
    # The stand-in answers 401 without the key: every request succeeding shows it was sent.
    assert run.exit_code == 0, run.output
    assert SECRET not in run.output
    text = output.read_text()
    assert SECRET not in text
    result = RegistryResult.model_validate_json(text)
    assert result.points[0].requests.completed == 4
    assert "--api-key REDACTED" in result.source.command
    assert result.source.server_command is not None
    assert "--api-key REDACTED" in result.source.server_command
    written = sorted(path.name for path in tmp_path.glob("result.*"))
    assert "result.vllm.log" in written, written
    for name in written:  # the raw records and vLLM's own log, which logs its arguments
        assert SECRET.encode() not in (tmp_path / name).read_bytes(), name
    assert "'api_key': 'REDACTED'" in (tmp_path / "result.vllm.log").read_text()


@pytest.mark.parametrize("how", ["option", "environment"])
def test_bench_run_endpoint_api_key_is_sent_as_bearer(
    fake_server: FakeOpenAIServer, how: str
) -> None:
    fake_server.config.api_key = SECRET
    args = ["bench", "run", "--endpoint", fake_server.url, "--concurrency", "1", "--json",
            "--quiet", *SMALLER]  # fmt: skip
    if how == "option":
        run = CliRunner().invoke(main, [*args, "--api-key", SECRET])
    else:
        run = CliRunner().invoke(main, args, env={"OPENAI_API_KEY": SECRET})
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout)["points"][0]["completed"] == 4
    assert SECRET not in run.output


def test_bench_run_endpoint_without_the_key_fails_in_one_line(
    fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fake_server.config.api_key = SECRET
    run = CliRunner().invoke(
        main, ["bench", "run", "--endpoint", fake_server.url, "--model", "fake/model",
               "--concurrency", "1", "--quiet", *SMALLER],
    )  # fmt: skip
    assert run.exit_code == 1, run.output
    assert "every request failed (http_status 4)" in run.stderr
    assert [line for line in run.stderr.splitlines() if line.startswith("Error")] == [
        "Error: the run is incomplete: every request failed (http_status 4)"
    ]


def test_bench_run_endpoint_with_credentials_in_its_url(fake_server: FakeOpenAIServer) -> None:
    # HTTP sends one Authorization: aiohttp refused the URL's user:password@ beside the key as
    # 'Cannot combine AUTHORIZATION header with … credentials encoded in URL; pass --model'.
    url = fake_server.url.replace("http://", f"http://user:{SECRET}@")
    args = ["bench", "run", "--endpoint", url, "--concurrency", "1", "--json", "--quiet", *SMALLER]
    given = CliRunner().invoke(main, [*args, "--api-key", "other-key"])
    assert given.exit_code == 2, given.output
    assert given.stderr.splitlines()[-1] == (
        "Error: --api-key: the --endpoint URL carries its own credentials (user:password@); "
        "give one or the other"
    )
    # $OPENAI_API_KEY is a default: the URL's own credentials go instead.
    run = CliRunner().invoke(main, args, env={"OPENAI_API_KEY": "other-key"})
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout)["points"][0]["completed"] == 4
    assert SECRET not in run.output
    assert SECRET not in given.output
