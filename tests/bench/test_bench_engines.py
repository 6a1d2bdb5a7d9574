"""Servers other than vLLM, as STAND-INS answering exactly as each engine does
(tests/bench/standin_engines.py): detection, and `bench run --endpoint --output` results that
keep the client's host apart from the server's facts and check the model served."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from bench_helpers import SMALLEST, STANDIN_MODEL
from click.testing import CliRunner, Result
from fake_openai_server import FakeOpenAIServer
from raw_http_server import RawHttpServer
from standin_engines import (
    StandinLlamaCpp,
    StandinSglang,
    StandinTgi,
    StandinTrtllm,
    StandinVllmCard,
)

from infermeter.bench.cli.main import main
from infermeter.bench.launch.engines import identify_server
from infermeter.bench.launch.served import endpoint_is_local
from infermeter.bench.launch.server import free_port
from infermeter.registry.models import Result as RegistryResult

GGUF = "/models/Llama-3.2-1B-Instruct-Q8_0.gguf"

STANDINS: dict[str, Callable[[], FakeOpenAIServer]] = {
    "vllm": lambda: StandinVllmCard(STANDIN_MODEL),
    "sglang": lambda: StandinSglang("llama-1b", STANDIN_MODEL),
    "tgi": lambda: StandinTgi(STANDIN_MODEL),
    "llama.cpp": lambda: StandinLlamaCpp("llama-1b", GGUF),
    "tensorrt-llm": lambda: StandinTrtllm(STANDIN_MODEL),
}
EXPECTED = {  # engine: (version, served model, weights, max_model_len)
    "vllm": ("0.11.0", STANDIN_MODEL, STANDIN_MODEL, 8192),
    "sglang": ("0.5.4", "llama-1b", STANDIN_MODEL, 32768),
    "tgi": ("3.3.6", STANDIN_MODEL, STANDIN_MODEL, 8192),
    "llama.cpp": ("b6200-5f1c2a3b", "llama-1b", GGUF, 4096),
    "tensorrt-llm": ("1.0.0", STANDIN_MODEL, None, None),
}


@pytest.mark.parametrize("engine", sorted(STANDINS))
def test_identify_server_standin_says_which_engine_it_is(engine: str) -> None:
    with STANDINS[engine]() as server:
        facts = identify_server(server.url)
    assert facts is not None
    assert facts.engine == engine
    version, served, weights, context = EXPECTED[engine]
    assert (facts.version, facts.served_model, facts.model_source, facts.max_model_len) == (
        version,
        served,
        weights,
        context,
    )
    assert "/v1/models" in facts.read_from


def test_identify_server_that_says_nothing_is_unknown(fake_server: FakeOpenAIServer) -> None:
    assert identify_server(fake_server.url) is None


@pytest.mark.parametrize(
    ("answer", "drip_s"),
    [(b"\x00\xff not HTTP\r\n\r\n", None),
     (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
      b"Transfer-Encoding: chunked\r\n\r\n1000000\r\n{", 0.05),
     (b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n{", 0.05)],
    ids=["not HTTP", "chunked body without end", "body that never comes"],
)  # fmt: skip
def test_identify_server_answer_of_no_use_is_unknown_within_its_time(
    answer: bytes, drip_s: float | None
) -> None:
    found: list[object] = []
    with RawHttpServer(answer, drip_s) as server:
        # Each route asked is given its time, in all: a server dripping a byte in time is not
        # waited on for ever.
        asking = threading.Thread(
            target=lambda: found.append(identify_server(server.url, timeout_s=0.3)), daemon=True
        )
        asking.start()
        asking.join(timeout=10)
    assert found == [None]


def _run(*args: str) -> Result:
    return CliRunner().invoke(main, ["bench", "run", "--quiet", "--gpu", "h100-sxm", *args])


@pytest.mark.parametrize("engine", ["sglang", "tgi", "tensorrt-llm"])
def test_bench_run_endpoint_standin_engine_writes_a_result_with_its_name(
    engine: str, tmp_path: Path
) -> None:
    output = tmp_path / "result.json"
    with STANDINS[engine]() as server:
        run = _run(
            "--endpoint", server.url, "--concurrency", "1", *SMALLEST, "--output", str(output)
        )
    assert run.exit_code == 0, run.output
    result = RegistryResult.model_validate_json(output.read_text())
    version = EXPECTED[engine][0]
    assert (result.identity.engine.name, result.identity.engine.version) == (engine, version)
    assert result.identity.model.id == "llama-3.2-1b-instruct"  # from the weights it serves
    source = result.source
    assert source.kind == "measured"
    assert source.server is not None
    assert source.server.engine == engine
    assert source.client is not None
    assert source.client.python_version
    assert source.host.vllm_version is None  # not vLLM
    assert source.host.torch_version is None  # this environment's torch is not the server's


def test_bench_run_endpoint_takes_max_model_len_from_the_server(tmp_path: Path) -> None:
    output = tmp_path / "result.json"
    with STANDINS["sglang"]() as server:
        run = _run(
            "--endpoint", server.url, "--concurrency", "1", *SMALLEST, "--output", str(output)
        )
    assert run.exit_code == 0, run.output
    result = RegistryResult.model_validate_json(output.read_text())
    assert result.identity.serving.max_model_len == 32768


def test_bench_run_endpoint_unknown_server_needs_engine_and_version(
    fake_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_server.config.itl_s = 0.03  # a pace a GPU can keep (the registry checks physics)
    output = tmp_path / "result.json"
    args = ["--endpoint", fake_server.url, "--model", "fake/model", "--model-id",
            "llama-3.2-1b-instruct", "--concurrency", "1", *SMALLEST,
            "--output", str(output)]  # fmt: skip
    refused = _run(*args)
    assert refused.exit_code == 1
    assert "does not say which engine it is" in refused.stderr
    assert "--engine NAME --engine-version V" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    named = _run(*args, "--engine", "mlc-llm", "--engine-version", "0.20.0")
    assert named.exit_code == 0, named.output
    result = RegistryResult.model_validate_json(output.read_text())
    assert (result.identity.engine.name, result.identity.engine.version) == ("mlc-llm", "0.20.0")


def test_bench_run_endpoint_refuses_a_model_id_the_server_does_not_serve(tmp_path: Path) -> None:
    with STANDINS["vllm"]() as server:
        run = _run(
            "--endpoint", server.url, "--model-id", "qwen3-8b", "--concurrency", "1", *SMALLEST,
            "--output", str(tmp_path / "result.json"),
        )  # fmt: skip
    assert run.exit_code == 2
    message = run.stderr.strip()
    assert len(message.splitlines()) == 1
    assert "Qwen/Qwen3-8B" in message
    assert f"serves {STANDIN_MODEL}" in message
    assert "--model-id llama-3.2-1b-instruct" in message
    assert not (tmp_path / "result.json").exists()


def test_bench_run_endpoint_records_a_variant_repository_with_a_note(tmp_path: Path) -> None:
    output = tmp_path / "result.json"
    variant = "neuralmagic/Llama-3.2-1B-Instruct-FP8"
    with StandinVllmCard(variant) as server:
        run = _run(
            "--endpoint", server.url, "--model-id", "llama-3.2-1b-instruct", "--concurrency",
            "1", *SMALLEST, "--output", str(output),
        )  # fmt: skip
    assert run.exit_code == 0, run.output
    assert f"serves {variant}, not the catalog's {STANDIN_MODEL}" in run.stderr
    result = RegistryResult.model_validate_json(output.read_text())
    assert result.identity.model.hf_repo == variant


def test_bench_run_endpoint_engine_is_refused_when_launching(tmp_path: Path) -> None:
    run = _run("--model", STANDIN_MODEL, "--engine", "sglang", "--engine-version", "1",
               "--output", str(tmp_path / "r.json"))  # fmt: skip
    assert run.exit_code == 2
    assert "--engine: only applies with --endpoint" in run.stderr


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:8000", True),
        ("http://localhost:8000", True),
        ("http://[::1]:8000", True),
        ("http://10.1.2.3:8000", False),
        ("https://inference.example.com", False),
    ],
)
def test_endpoint_is_local(url: str, local: bool) -> None:
    assert endpoint_is_local(url) is local


def test_bench_run_endpoint_nothing_listening_is_unreachable_not_an_unknown_engine(
    tmp_path: Path,
) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    run = _run("--endpoint", url, "--model-id", "llama-3.2-1b-instruct", "--concurrency", "1",
               *SMALLEST, "--output", str(tmp_path / "result.json"))  # fmt: skip
    assert run.exit_code == 1
    assert run.stderr.strip() == f"Error: --endpoint: cannot reach {url}: Connection refused"
    assert not (tmp_path / "result.json").exists()


@pytest.mark.parametrize(
    ("answer", "hold", "problem"),
    [(b"", True, "it took the connection but sent no answer within 5 s"),
     (b"\x00\xff not HTTP\r\n\r\n", False, "it answered, but not in HTTP")],
    ids=["silent", "not HTTP"],
)  # fmt: skip
def test_bench_run_endpoint_that_answers_nothing_is_refused_at_once(
    answer: bytes, hold: bool, problem: str, tmp_path: Path
) -> None:
    """A server that takes the connection and says nothing was asked about its engine route by
    route, 5 s each, then for its models for 30 s: refused after 66 s with --engine given, and
    after 35 s as 'does not say which engine it is' without; without --output, after the run's
    30 s wait for its models."""
    output = tmp_path / "result.json"
    written = ["--output", str(output)]
    with RawHttpServer(answer, hold=hold) as server:
        for extra in (written, [*written, "--engine", "vllm", "--engine-version", "0.9.1"], []):
            started = time.monotonic()
            run = _run("--endpoint", server.url, "--model-id", "llama-3.2-1b-instruct",
                       "--concurrency", "1", *SMALLEST, *extra)  # fmt: skip
            assert run.exit_code == 1
            assert run.stderr == f"Error: --endpoint: cannot reach {server.url}: {problem}\n"
            assert time.monotonic() - started < 30  # one 5 s wait, not 35 or 66 s
    assert not output.exists()
