"""Launch `vllm serve` as a child process, wait until it answers, read what it reports, stop it.

The server runs in its own process group (so Ctrl-C at the terminal reaches infermeter, which
then stops vLLM in order), on 127.0.0.1 and a free port, and never outlives its launcher: a
killed infermeter or a lost Ray worker leaves no vLLM behind. On Linux it gets SIGTERM when the
thread that launched it dies (a parent-death signal), and a watchdog process
(`bench.launch.watchdog`) then sends SIGTERM to its whole group and SIGKILL after a grace
period, so a vLLM that does not end on SIGTERM (as while it starts) and its engine processes go
too, with its whole output in a log file, every secret in it redacted before it
is written (`bench.launch.server_log`).
`VllmServer.start` waits for `GET /health` to answer 200 within the startup timeout; when vLLM
exits or the timeout passes first, it raises `ServerStartError` with the cause recognised in
the log (see `diagnose_startup_failure`) and the log's last lines. `VllmServer.stop` sends
SIGINT to the group, then SIGTERM, then SIGKILL, each after a grace period, and ends the
watchdog.

Startup figures are read from vLLM's own log lines and failures recognised in them by
`bench.launch.vllm_log`. The startup time is measured here: from the launch to the first healthy
answer.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from infermeter.bench.client.small_get import small_get
from infermeter.bench.errors import EndpointError
from infermeter.bench.launch.server_log import RedactedLog
from infermeter.bench.launch.vllm_log import (
    StartupFigures,
    diagnose_startup_failure,
    parse_startup_log,
)
from infermeter.bench.launch.watchdog import group_alive
from infermeter.bench.telemetry.engine_metrics import server_cache_config
from infermeter.calculators.json_text import json_loads

LOG_TAIL_LINES = 20
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent thread dies
TERM_GRACE_S = 10.0  # at most this long from SIGTERM to SIGKILL of the group
WATCHDOG = Path(__file__).with_name("watchdog.py")


class ServerStartError(EndpointError):
    """vLLM could not be started, or it exited or stalled before answering `/health`."""

    def __init__(
        self,
        message: str,
        *,
        option: str = "--model",
        cause: str | None = None,
        log_path: Path | None = None,
        log_tail: list[str] | None = None,
    ) -> None:
        super().__init__(message, option)
        self.cause = cause
        self.log_path = log_path
        self.log_tail = log_tail or []


@dataclass(frozen=True)
class ServerConfig:
    """How to launch vLLM: option names as `vllm serve` spells them; None = vLLM's default."""

    model: str
    log_path: Path
    executable: str | None = None
    host: str = "127.0.0.1"
    port: int | None = None
    tensor_parallel_size: int | None = None
    pipeline_parallel_size: int | None = None
    ray_address: str | None = None  # vLLM's ranks on this Ray cluster's nodes
    ray_nodes: tuple[str, ...] = ()  # and on these of them only (a fleet's held nodes)
    max_model_len: int | None = None
    gpu_memory_utilization: float | None = None
    quantization: str | None = None
    kv_cache_dtype: str | None = None
    max_num_seqs: int | None = None
    load_format: str | None = None
    extra_args: tuple[str, ...] = ()
    startup_timeout_s: float = 1800.0
    stop_grace_s: float = 30.0
    env: Mapping[str, str] | None = None


def find_executable(executable: str | None) -> str:
    """The vLLM executable: the one given, or `vllm` on PATH."""
    if executable is not None:
        path = Path(executable)
        if not path.is_file() or not os.access(path, os.X_OK):
            raise ServerStartError(
                f"{executable} is not an executable file", option="--vllm-executable"
            )
        # As given, but never a bare name: `./vllm` is a file here, while `vllm` (what
        # str(Path("./vllm")) gives) would be looked up on PATH.
        return executable if os.sep in executable else f".{os.sep}{executable}"
    found = shutil.which("vllm")
    if found is None:
        raise ServerStartError(
            "vllm is not on PATH; install it (pip install 'infermeter[vllm]'), pass "
            "--vllm-executable PATH, or benchmark a running server with --endpoint URL"
        )
    return found


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port


def port_is_free(host: str, port: int) -> bool:
    """True when nothing listens on `host:port` (so vLLM can bind it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
        return True


def server_command(config: ServerConfig, executable: str, port: int) -> list[str]:
    """The `vllm serve` command line (each `extra_args` item is split like a shell word list)."""
    command = [executable, "serve", config.model, "--host", config.host, "--port", str(port)]
    options: list[tuple[str, object]] = [
        ("--tensor-parallel-size", config.tensor_parallel_size),
        ("--pipeline-parallel-size", config.pipeline_parallel_size),
        ("--distributed-executor-backend", "ray" if config.ray_address else None),
        ("--max-model-len", config.max_model_len),
        ("--gpu-memory-utilization", config.gpu_memory_utilization),
        ("--quantization", config.quantization),
        ("--kv-cache-dtype", config.kv_cache_dtype),
        ("--max-num-seqs", config.max_num_seqs),
        ("--load-format", config.load_format),
    ]
    for name, value in options:
        if value is not None:
            command += [name, f"{value:g}" if isinstance(value, float) else str(value)]
    for argument in config.extra_args:
        command += shlex.split(argument)
    return command


@dataclass
class VllmServer:
    """One vLLM server process: `start()` it (or use `with`), read `url`, then `stop()` it."""

    config: ServerConfig
    command: list[str] = field(default_factory=list)
    port: int = 0
    startup: StartupFigures = field(default_factory=StartupFigures)
    version: str | None = None
    _process: subprocess.Popen[bytes] | None = None
    _log: RedactedLog | None = None
    _watchdog: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Root URL of the server's OpenAI-compatible API."""
        return f"http://{self.config.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        """Process id of the `vllm serve` process (also its process group id)."""
        return self._process.pid if self._process is not None else None

    @property
    def watchdog_pid(self) -> int | None:
        """Process id of the watchdog that ends the server's group if the launcher dies."""
        return self._watchdog.pid if self._watchdog is not None else None

    def __enter__(self) -> VllmServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def exit_code(self) -> int | None:
        """The server's exit status once it has exited, else None."""
        return self._process.poll() if self._process is not None else None

    def wait_exit(self, timeout_s: float) -> int | None:
        """The server's exit status if it exits within `timeout_s`, else None."""
        if self._process is None:
            return None
        try:
            return self._process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def log_text(self) -> str:
        """Everything the server has written so far (redacted)."""
        if self._log is not None:
            self._log.sync()
        try:
            return self.config.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> list[str]:
        """The last `lines` non-empty lines of the log."""
        return [line for line in self.log_text().splitlines() if line.strip()][-lines:]

    def start(self) -> None:
        """Launch vLLM and wait until it is healthy; on any failure it is stopped first."""
        config = self.config
        executable = find_executable(config.executable)
        if config.port is not None and not port_is_free(config.host, config.port):
            # Checked first: another server on the port could even answer /health.
            cause = f"port {config.port} is already in use; pass a free --port"
            raise ServerStartError(f"cannot start vLLM: {cause}", cause=cause)
        self.port = config.port if config.port is not None else free_port(config.host)
        self.command = server_command(config, executable, self.port)
        config.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = RedactedLog(config.log_path)
        env = dict(os.environ if config.env is None else config.env)
        env.setdefault("PYTHONUNBUFFERED", "1")
        if config.ray_address:
            env["RAY_ADDRESS"] = config.ray_address  # where vLLM's Ray executor connects
        launched = time.monotonic()
        try:
            self._process = subprocess.Popen(
                self.command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
                preexec_fn=_child_setup(),
            )
        except OSError as error:
            self._close_log()
            raise ServerStartError(f"cannot run {executable}: {error.strerror}") from None
        self._watchdog = _start_watchdog(self._process.pid, min(config.stop_grace_s, TERM_GRACE_S))
        assert self._process.stdout is not None
        self._log.attach(self._process.stdout)
        try:
            self._wait_healthy(launched)
        except BaseException:
            self.stop()
            raise
        startup_s = time.monotonic() - launched
        # the log's figures, completed by what vLLM's /metrics says of its cache
        figures = parse_startup_log(self.log_text()).filled_from(server_cache_config(self.url))
        self.startup = StartupFigures(**{**figures.__dict__, "startup_s": startup_s})
        self.version = self._read_version()

    def _wait_healthy(self, launched: float) -> None:
        assert self._process is not None
        deadline = launched + self.config.startup_timeout_s
        while True:
            code = self._process.poll()
            if code is not None:
                self._fail(f"vLLM exited with code {code} while starting")
            if small_get(self.url + "/health", 1.0) is not None:
                return  # else not listening yet
            if time.monotonic() >= deadline:
                self._fail(
                    f"vLLM did not answer {self.url}/health within "
                    f"{self.config.startup_timeout_s:g} s (raise --startup-timeout)"
                )
            time.sleep(0.2)

    def _fail(self, what: str) -> None:
        self.stop()  # flushes the log and frees the GPU before the message is shown
        text = self.log_text()
        cause = diagnose_startup_failure(text, self.port)
        message = f"{what}: {cause}" if cause else what
        raise ServerStartError(
            f"{message} (log: {self.config.log_path})",
            cause=cause,
            log_path=self.config.log_path,
            log_tail=self.log_tail(),
        )

    def _read_version(self) -> str | None:
        answer = small_get(self.url + "/version", 5.0)
        try:
            version = json_loads(answer.body).get("version") if answer is not None else None
        except (ValueError, AttributeError):
            return None
        return str(version) if version else None

    def stop(self) -> None:
        """Stop the server and every process of its group: SIGINT, SIGTERM, then SIGKILL."""
        process = self._process
        if process is not None:
            grace = self.config.stop_grace_s
            for sig, wait_s in (
                (signal.SIGINT, grace),
                (signal.SIGTERM, min(grace, TERM_GRACE_S)),
                (signal.SIGKILL, 5.0),
            ):
                if process.poll() is not None:
                    break
                _signal_group(process.pid, sig)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(wait_s)
            # Workers that outlived the main process (tensor-parallel ranks) go too.
            if group_alive(process.pid):
                _signal_group(process.pid, signal.SIGTERM)
                time.sleep(0.5)
                _signal_group(process.pid, signal.SIGKILL)
        self._end_watchdog()
        self._close_log()

    def kill(self) -> None:
        """SIGKILL the server's whole process group now (a `stop()` under way then ends)."""
        if self._process is not None and self._process.poll() is None:
            _signal_group(self._process.pid, signal.SIGKILL)

    def _end_watchdog(self) -> None:
        """Close the watchdog's pipe (the group is gone: it ends without a signal), reap it."""
        watchdog, self._watchdog = self._watchdog, None
        if watchdog is None:
            return
        with contextlib.suppress(OSError):
            assert watchdog.stdin is not None
            watchdog.stdin.close()
        try:
            watchdog.wait(5.0)
        except subprocess.TimeoutExpired:
            watchdog.kill()
            watchdog.wait()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


def _child_setup() -> Callable[[], None]:
    """What the child runs before `exec`:

    - the stop signals unblocked: a child keeps the signal mask of the thread that launched
      it, and a Ray worker blocks SIGINT (`SigBlk` in /proc), so a vLLM launched from a fleet
      task would never see `stop()`'s SIGINT and would be stopped only by the SIGTERM after
      the whole grace period;
    - on Linux, a parent-death signal (`_die_with_launcher`)."""
    die = _die_with_launcher()

    def in_child() -> None:  # after fork: no imports, no locks, plain calls only
        signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGINT, signal.SIGTERM))
        if die is not None:
            die()

    return in_child


def _die_with_launcher() -> Callable[[], None] | None:
    """Linux: what the child runs before `exec`: the kernel sends it SIGTERM when the thread
    that launched it dies, however it dies (SIGKILL, an out-of-memory kill, a Ray worker that
    goes with its node), so no vLLM outlives infermeter holding the GPUs. SIGTERM rather than
    SIGKILL: vLLM then stops its own engine processes; the watchdog sends SIGKILL to the group
    after a grace period (`_start_watchdog`). None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    launcher = os.getpid()

    def in_child() -> None:  # after fork: no imports, no locks, plain calls only
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != launcher:  # the launcher died before the signal was armed
            os.kill(os.getpid(), signal.SIGTERM)

    return in_child


def _start_watchdog(group: int, grace_s: float) -> subprocess.Popen[bytes] | None:
    """The watchdog of process group `group` (`bench.launch.watchdog`): it holds the read end
    of a pipe whose write end only this process holds, and ends the group when this process is
    gone. None where no Python interpreter can be named to run it."""
    if not sys.executable or os.name != "posix":
        return None
    command = [sys.executable, "-I", "-S", str(WATCHDOG), str(group), f"{grace_s:g}"]
    try:
        return subprocess.Popen(
            [*command, str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        return None


def _signal_group(group_id: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group_id, sig)
