"""The vLLM launcher against the STAND-IN `vllm` executable, and vLLM's log texts."""

from __future__ import annotations

import os
import shutil
import urllib.request
from pathlib import Path

import pytest
from bench_helpers import STANDIN_MODEL, process_alive
from local_ports import busy_port

from infermeter.bench.launch.server import (
    ServerConfig,
    ServerStartError,
    VllmServer,
    server_command,
)
from infermeter.bench.launch.vllm_log import diagnose_startup_failure, parse_startup_log


def _config(tmp_path: Path, executable: Path, **options: object) -> ServerConfig:
    return ServerConfig(
        model=STANDIN_MODEL,
        log_path=tmp_path / "vllm.log",
        executable=str(executable),
        startup_timeout_s=20,
        **options,  # type: ignore[arg-type]
    )


def test_server_start_parses_startup_figures_and_version(
    tmp_path: Path, standin_vllm: Path
) -> None:
    server = VllmServer(_config(tmp_path, standin_vllm, max_model_len=4096, load_format="dummy"))
    with server:
        assert server.version == "0.9.1"
        figures = server.startup
        assert figures.weights_gib == 14.9889
        assert figures.available_kv_cache_gib == 53.12
        assert figures.kv_cache_tokens == 434_992
        assert figures.max_concurrency == 106.2  # 434,992 / 4,096, as vLLM prints it
        assert figures.max_concurrency_tokens == 4096
        assert figures.cuda_graph_gib == 0.52
        assert figures.startup_s is not None
        assert 0 < figures.startup_s < 20
        with urllib.request.urlopen(server.url + "/v1/models") as response:
            assert STANDIN_MODEL.encode() in response.read()
        pid = server.pid
    assert pid is not None
    assert not process_alive(pid)
    assert "--load-format dummy" in " ".join(server.command)
    assert "Shutting down" in server.log_text()  # stopped by SIGINT, cleanly


def test_server_stop_escalates_to_sigterm_when_sigint_is_ignored(
    tmp_path: Path, standin_vllm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STANDIN_VLLM_IGNORE_SIGINT", "1")
    server = VllmServer(_config(tmp_path, standin_vllm, stop_grace_s=0.5))
    server.start()
    pid = server.pid
    server.stop()
    assert pid is not None
    assert not process_alive(pid)
    assert server.exit_code() == 0  # the SIGTERM handler ran
    assert "Shutting down" in server.log_text()


@pytest.mark.parametrize(
    ("mode", "cause"),
    [
        ("kv_too_small", "vLLM estimates the maximum model length at 64,624 tokens"),
        ("cuda_oom", "the GPU ran out of memory (CUDA out of memory)"),
        ("unsupported", "unsupported model: vLLM does not support the architecture"),
    ],
)
def test_server_start_failure_names_cause_and_keeps_log_tail(
    tmp_path: Path, standin_vllm: Path, monkeypatch: pytest.MonkeyPatch, mode: str, cause: str
) -> None:
    monkeypatch.setenv("STANDIN_VLLM_MODE", mode)
    server = VllmServer(_config(tmp_path, standin_vllm))
    with pytest.raises(ServerStartError) as caught:
        server.start()
    error = caught.value
    assert "vLLM exited with code 1 while starting" in str(error)
    assert error.cause is not None
    assert cause in error.cause
    assert any("Engine core initialization failed" in line for line in error.log_tail)
    assert server.exit_code() == 1


def test_server_start_on_a_port_in_use_says_so(tmp_path: Path, standin_vllm: Path) -> None:
    with busy_port() as port, pytest.raises(ServerStartError) as caught:
        VllmServer(_config(tmp_path, standin_vllm, port=port)).start()
    assert caught.value.cause == f"port {port} is already in use; pass a free --port"


def test_server_start_without_vllm_on_path_says_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    config = ServerConfig(model="m/m", log_path=tmp_path / "log")
    with pytest.raises(ServerStartError, match=r"infermeter\[vllm\]"):
        VllmServer(config).start()


def test_server_start_finds_vllm_on_path(
    tmp_path: Path, standin_vllm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{standin_vllm.parent}{os.pathsep}{os.environ['PATH']}")
    with VllmServer(ServerConfig(model="m/m", log_path=tmp_path / "log")) as server:
        assert server.command[0] == shutil.which("vllm")
        assert server.version == "0.9.1"


def test_server_start_runs_a_vllm_executable_named_relative_to_the_folder(
    tmp_path: Path, standin_vllm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--vllm-executable ./vllm` is the file in this folder, not a `vllm` looked up on PATH
    (none is there): found trying the installed wheel as a user."""
    monkeypatch.chdir(standin_vllm.parent)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    config = ServerConfig(model="m/m", log_path=tmp_path / "log", executable="./vllm")
    with VllmServer(config) as server:
        assert server.command[0] == "./vllm"  # as given, in the recorded command too
        assert server.version == "0.9.1"
    named = ServerConfig(model="m/m", log_path=tmp_path / "log2", executable="vllm")
    with VllmServer(named) as server:  # a bare name given is still the file here
        assert server.command[0] == f".{os.sep}vllm"


def test_server_command_passes_options_and_splits_extra_args(tmp_path: Path) -> None:
    config = ServerConfig(
        model="org/model",
        log_path=tmp_path / "log",
        tensor_parallel_size=2,
        gpu_memory_utilization=0.85,
        quantization="fp8",
        kv_cache_dtype="fp8",
        max_num_seqs=64,
        extra_args=("--enforce-eager", "--max-num-batched-tokens 8192"),
    )
    assert server_command(config, "vllm", 8100) == [
        "vllm", "serve", "org/model", "--host", "127.0.0.1", "--port", "8100",
        "--tensor-parallel-size", "2", "--gpu-memory-utilization", "0.85",
        "--quantization", "fp8", "--kv-cache-dtype", "fp8", "--max-num-seqs", "64",
        "--enforce-eager", "--max-num-batched-tokens", "8192",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("log", "expected"),
    [
        (  # 0.8.5–0.11.0
            "Model loading took 14.9889 GiB and 3.51 seconds\n"
            "GPU KV cache size: 468,032 tokens\n"
            "Maximum concurrency for 8,192 tokens per request: 57.13x\n"
            "Graph capturing finished in 14 secs, took 0.52 GiB",
            (14.9889, None, 468_032, 57.13, 0.52),
        ),
        (  # 0.14+: format_gib, and one line for size and concurrency (0.28–0.29)
            "Model loading took 15.0 GiB memory and 4.120000 seconds\n"
            "Available KV cache memory: 53.5 GiB\n"
            "GPU KV cache size: 438,272 tokens, Maximum concurrency for 131,072 tokens per "
            "request: 3.34x",
            (15.0, 53.5, 438_272, 3.34, None),
        ),
        (  # V0 engine
            "Loading model weights took 14.9888 GB\n"
            "Maximum concurrency for 20000 tokens per request: 1.56x",
            (14.9888, None, None, 1.56, None),
        ),
    ],
)
def test_parse_startup_log_reads_each_version_format(
    log: str, expected: tuple[object, ...]
) -> None:
    figures = parse_startup_log(log)
    assert (
        figures.weights_gib,
        figures.available_kv_cache_gib,
        figures.kv_cache_tokens,
        figures.max_concurrency,
        figures.cuda_graph_gib,
    ) == expected


@pytest.mark.parametrize(
    ("log", "cause"),
    [
        (
            "To serve at least one request with the model's max seq len (131072), (16 GiB KV "
            "cache is needed, which is larger than the available KV cache memory (7.89 GiB). "
            "Based on the available memory, the estimated maximum model length is 64624.  Try",
            "64,624 tokens",
        ),
        (
            "The model's max seq len (29000) is larger than the maximum number of tokens that "
            "can be stored in KV cache (23648).",
            "(29,000) is larger than the KV cache can hold (23,648 tokens)",
        ),
        ("No available memory for the cache blocks. Try increasing", "no GPU memory is left"),
        ("OSError: [Errno 98] Address already in use", "port 8000 is already in use"),
        (
            "ValueError: The checkpoint you are trying to load has model type `x` but "
            "Transformers does not recognize this architecture.",
            "unsupported model",
        ),
        ("RuntimeError: something else entirely", None),
    ],
)
def test_diagnose_startup_failure_recognises_vllm_texts(log: str, cause: str | None) -> None:
    found = diagnose_startup_failure(log, port=8000)
    if cause is None:
        assert found is None
    else:
        assert found is not None
        assert cause in found


@pytest.mark.gpu
def test_server_start_real_vllm_reports_figures(tmp_path: Path) -> None:
    model = os.environ.get("INFERMETER_TEST_VLLM_MODEL")
    if shutil.which("vllm") is None or not model:
        pytest.skip("needs vllm on PATH, a GPU and INFERMETER_TEST_VLLM_MODEL (a local model)")
    config = ServerConfig(
        model=model, log_path=tmp_path / "vllm.log", max_model_len=2048, load_format="dummy"
    )
    with VllmServer(config) as server:
        assert server.version
        assert server.startup.weights_gib is not None
        assert server.startup.kv_cache_tokens is not None
