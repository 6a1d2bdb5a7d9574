"""The STAND-IN vLLM dies with whatever launched it: no server outlives a killed infermeter (or
a lost Ray worker) holding the GPUs. A real child process launches the stand-in through
`VllmServer` and is SIGKILLed, so it cannot stop the server itself. A server that ignores
SIGTERM, as vLLM does while it starts, goes too, and so does the engine process it started:
the watchdog (`bench.launch.watchdog`) sends SIGKILL to the group after the grace period."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

LAUNCHER = """
import sys, time
from pathlib import Path
from infermeter.bench.launch.server import ServerConfig, VllmServer

server = VllmServer(ServerConfig(model="m", executable=sys.argv[1], log_path=Path(sys.argv[2])))
server.start()
print(server.pid, flush=True)
time.sleep(600)
"""
GONE_WITHIN_S = 30.0
# A server that ignores SIGINT and SIGTERM, and starts an engine process (in its group) that
# ignores SIGTERM too; it answers /health and says the engine's pid in its log.
STUBBORN_SERVER = """
import http.server, signal, subprocess, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGINT, signal.SIG_IGN)
engine = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
print("engine", engine.pid, flush=True)

class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()

port = int(sys.argv[sys.argv.index("--port") + 1])
http.server.HTTPServer(("127.0.0.1", port), Health).serve_forever()
"""
STUBBORN_LAUNCHER = """
import re, sys, time
from pathlib import Path
from infermeter.bench.launch.server import ServerConfig, VllmServer

config = ServerConfig(
    model="m", executable=sys.argv[1], log_path=Path(sys.argv[2]), stop_grace_s=0.2
)
server = VllmServer(config)
server.start()
while not (found := re.search(r"engine (\\d+)", server.log_text())):
    time.sleep(0.05)
print(server.pid, found[1], server.watchdog_pid or "", flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux parent-death signal")
def test_server_standin_dies_when_its_launcher_is_killed(
    tmp_path: Path, standin_vllm: Path
) -> None:
    launcher = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER, str(standin_vllm), str(tmp_path / "vllm.log")],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert launcher.stdout is not None
    server_pid = int(launcher.stdout.readline())
    try:
        assert _alive(server_pid)
        launcher.kill()  # SIGKILL: the launcher runs no clean-up of its own
        launcher.wait(30)
        deadline = time.monotonic() + GONE_WITHIN_S
        while _alive(server_pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(server_pid), "the stand-in vLLM outlived its launcher"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server_pid, signal.SIGKILL)
        launcher.kill()
        launcher.stdout.close()


def _gone(pids: list[int]) -> list[int]:
    """The processes of `pids` still alive after up to GONE_WITHIN_S."""
    deadline = time.monotonic() + GONE_WITHIN_S
    while any(map(_alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [pid for pid in pids if _alive(pid)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux parent-death signal")
def test_a_server_ignoring_sigterm_and_its_engine_die_when_their_launcher_is_killed(
    tmp_path: Path,
) -> None:
    """The parent-death signal alone (SIGTERM) would leave this server and its engine running
    for ever: the watchdog sends SIGKILL to their group after the grace period (0.2 s here)."""
    server = tmp_path / "vllm"
    server.write_text(f"#!{sys.executable}\n{STUBBORN_SERVER}")
    server.chmod(0o755)
    launcher = subprocess.Popen(
        [sys.executable, "-c", STUBBORN_LAUNCHER, str(server), str(tmp_path / "vllm.log")],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert launcher.stdout is not None
    pids: list[int] = []
    try:
        pids += map(int, launcher.stdout.readline().split())  # server, engine, watchdog
        assert len(pids) >= 2, "the launcher did not start the server"
        assert all(map(_alive, pids))
        launcher.kill()  # SIGKILL: the launcher runs no clean-up of its own
        launcher.wait(30)
        assert _gone(pids[:2]) == [], "a server ignoring SIGTERM outlived its launcher"
        assert len(pids) == 3, "the server has no watchdog"
        assert _gone(pids[2:]) == [], "the watchdog stayed after its server was gone"
    finally:
        launcher.kill()
        with contextlib.suppress(ProcessLookupError, IndexError):
            os.killpg(pids[0], signal.SIGKILL)
        launcher.stdout.close()


def _blocked(pid: int) -> int:
    """The signal mask (`SigBlk`) of process `pid`'s main thread."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigBlk:"):
            return int(line.split()[1], 16)
    raise AssertionError(f"no SigBlk in /proc/{pid}/status")


@pytest.mark.skipif(
    not sys.platform.startswith("linux"),
    reason="reads the launched process's signal mask from /proc/PID/status, which only Linux has",
)
def test_server_standin_launched_from_a_thread_blocking_sigint_still_stops_on_sigint(
    tmp_path: Path, standin_vllm: Path
) -> None:
    """A Ray worker's threads block SIGINT, and a child keeps its launcher's mask across
    `exec`: the launched vLLM must not, or `stop()`'s SIGINT never reaches it and it is only
    stopped by the SIGTERM after the grace period (300 s here)."""
    import threading

    from infermeter.bench.launch.server import ServerConfig, VllmServer

    config = ServerConfig(
        model="m", executable=str(standin_vllm), log_path=tmp_path / "vllm.log", stop_grace_s=300
    )
    server = VllmServer(config)
    started: list[BaseException] = []
    launched, finished = threading.Event(), threading.Event()

    def launch() -> None:
        """Launch, then live on until the test ends, as the Ray worker's thread that runs the
        session does: the server's parent-death signal is tied to this thread, and its end
        would stop the server with SIGTERM before `stop()` is tried."""
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # as in a Ray worker
        try:
            server.start()
        except BaseException as error:
            started.append(error)
        finally:
            launched.set()
        finished.wait(300)

    thread = threading.Thread(target=launch, daemon=True)
    thread.start()
    assert launched.wait(120), "the server did not start in 120 s"
    assert not started, started
    try:
        assert server.pid is not None
        assert not _blocked(server.pid) & (1 << (signal.SIGINT - 1))
        watchdog = server.watchdog_pid
        assert watchdog is not None
        assert _alive(watchdog)
        began = time.monotonic()
        server.stop()
        assert time.monotonic() - began < 60, "the stand-in waited for SIGTERM, not SIGINT"
        assert not _alive(watchdog), "stop() left the server's watchdog running"
    finally:
        server.kill()
        finished.set()
        thread.join(10)
