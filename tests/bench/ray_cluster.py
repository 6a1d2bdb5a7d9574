"""A real local Ray cluster for the fleet tests: a head and worker nodes, each a `ray start`.

Every node is its own `ray start --block` process in its own session, so a test can kill one
node (its whole process group, as a lost machine would vanish) and the cluster is stopped by
signalling exactly the groups it started, never with `ray stop` (which would stop every Ray
process on the machine). Nodes are kept small: one CPU each (one task at a time), the
smallest object store Ray allows, no dashboard, no log monitor (no driver reads the
workers' output). The head can take tasks too (fewer processes
than a head of its own), and workers start side by side; `stop()` stops every node at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from infermeter.bench.launch.server import free_port

RAY = Path(sys.executable).parent / "ray"
OBJECT_STORE_BYTES = 78_643_200  # Ray's minimum, 75 MiB
START_TIMEOUT_S = 180.0
STOP_GRACE_S = 5.0


@dataclass
class RayNode:
    """One `ray start --block` process and its log."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def descendants(self) -> list[int]:
        """Every process below this node's `ray start` (raylet, workers, their children)."""
        parents: dict[int, int] = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
        found: list[int] = []
        frontier = [self.process.pid]
        while frontier:
            parent = frontier.pop()
            children = [pid for pid, ppid in parents.items() if ppid == parent]
            found += children
            frontier += children
        return found

    def processes(self, text: str) -> list[int]:
        """The processes below this node with `text` in their command line."""
        found: list[int] = []
        for pid in self.descendants():
            with contextlib.suppress(OSError):
                if text in Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode():
                    found.append(pid)
        return found

    def running(self, text: str) -> bool:
        """Whether a process below this node has `text` in its command line."""
        return bool(self.processes(text))

    def kill(self, leave: tuple[str, ...] = ()) -> None:
        """The node vanishes: SIGKILL to its process group and to every process below it
        (Ray's workers run in groups of their own, and so does a vLLM the bench launched), so
        nothing outlives the test; except, with `leave`, the processes with one of those texts
        in their command line, left to die on their own (or for the test to kill)."""
        spared = {pid for text in leave for pid in self.processes(text)}
        stray = [pid for pid in self.descendants() if pid not in spared]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        for pid in stray:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        """SIGTERM to the group, then SIGKILL to whatever is left."""
        if self.process.poll() is not None:
            return
        stray = self.descendants()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(15)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        for pid in stray:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(10)


@dataclass
class LocalRayCluster:
    """`start()` a head, `add_worker({...})` nodes, `stop()` them all."""

    folder: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="ray", dir="/tmp")))
    port: int = field(default_factory=free_port)
    nodes: list[RayNode] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # the nodes' (and so their tasks') own

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _launch(
        self, name: str, arguments: list[str], node_env: dict[str, str] | None = None
    ) -> RayNode:
        log = self.folder / f"{name}.log"
        env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", **self.env, **(node_env or {})}
        with log.open("wb") as sink:
            process = subprocess.Popen(
                [str(RAY), "start", *arguments, "--block", "--disable-usage-stats"],
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=env,
            )
        node = RayNode(name, process, log)
        self.nodes.append(node)
        return node

    def wait_started(self, node: RayNode) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while "Ray runtime started" not in node.log.read_text(errors="replace"):
            if node.process.poll() is not None:
                raise RuntimeError(f"ray start {node.name} exited: {node.log.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"ray start {node.name} did not start in {START_TIMEOUT_S} s")
            time.sleep(0.3)

    def start(self, resources: dict[str, float] | None = None, gpus: int = 0) -> RayNode:
        """The head; with `resources` it takes tasks as a worker node would (one CPU)."""
        head = self._launch(
            "head",
            [
                "--head", "--node-ip-address=127.0.0.1", f"--port={self.port}",
                f"--num-cpus={1 if resources else 0}", f"--num-gpus={gpus}",
                f"--resources={json.dumps(resources or {})}", "--include-dashboard=false",
                "--include-log-monitor=false",
                f"--object-store-memory={OBJECT_STORE_BYTES}", f"--temp-dir={self.folder}",
            ],
        )  # fmt: skip
        self.wait_started(head)
        return head

    def add_workers(
        self,
        specs: dict[str, tuple[dict[str, float], int]],
        node_env: dict[str, dict[str, str]] | None = None,
    ) -> list[RayNode]:
        """Worker nodes, name → (custom resources, GPUs it claims to have: Ray takes the number
        as given), launched side by side, each with the cluster's env plus its own `node_env`
        (its tasks inherit it); one that Ray gives up on is started again once (a raylet on a
        loaded machine may miss Ray's fixed 30 s registration window)."""
        envs = node_env or {}
        started = {
            name: self._launch_worker(name, *spec, envs.get(name)) for name, spec in specs.items()
        }
        nodes: list[RayNode] = []
        for name, node in started.items():
            try:
                self.wait_started(node)
            except RuntimeError:
                self.nodes.remove(node)
                node.stop()
                node = self._launch_worker(name, *specs[name], envs.get(name))
                self.wait_started(node)
            nodes.append(node)
        return nodes

    def _launch_worker(
        self,
        name: str,
        resources: dict[str, float],
        gpus: int,
        node_env: dict[str, str] | None = None,
    ) -> RayNode:
        return self._launch(
            name,
            [
                f"--address={self.address}", "--node-ip-address=127.0.0.1",
                "--num-cpus=1", f"--num-gpus={gpus}", f"--resources={json.dumps(resources)}",
                f"--object-store-memory={OBJECT_STORE_BYTES}", "--include-log-monitor=false",
            ],
            node_env,
        )  # fmt: skip

    def stop(self) -> None:
        """Every node at once: SIGTERM to all, a short wait, SIGKILL to what is left."""
        live = [node for node in self.nodes if node.process.poll() is None]
        strays = {node.name: node.descendants() for node in live}
        for node in live:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(node.process.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for node in live:
            with contextlib.suppress(subprocess.TimeoutExpired):
                node.process.wait(max(0.1, deadline - time.monotonic()))
        for node in live:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(node.process.pid, signal.SIGKILL)
            for pid in strays[node.name]:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                node.process.wait(10)
        shutil.rmtree(self.folder, ignore_errors=True)


@dataclass(frozen=True)
class RayFleet:
    """The session's local Ray cluster: the head advertises an H100 SXM, one worker an L40S,
    and a second L40S worker is the one a test may kill (the others outlive every test)."""

    cluster: LocalRayCluster
    h100: RayNode
    l40s: RayNode
    doomed_l40s: RayNode

    @property
    def address(self) -> str:
        return self.cluster.address
