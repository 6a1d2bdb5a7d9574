"""A REAL local Ray cluster and the STAND-IN vLLM: `bench fleet --ray`, and `bench run
--ray-address` serving one model over two nodes.

The cluster is real (`ray start` head and worker nodes on this machine, each advertising a
fake GPU kind as a custom resource: the session's `ray_fleet`, tests/bench/conftest.py); each
fleet task runs the entry's `bench run`, which launches the stand-in vllm
(tests/bench/standin_vllm.py) on its node and measures it, with load points as small as
still prove the point. The multi-node stand-in reserves its GPUs on the cluster as vLLM's Ray
executor does. The node kill test comes after every other test of the session's cluster
(pytest runs a file's tests in order); it kills the one node meant for it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from bench_helpers import SHORT_PLAN_DEFAULTS, SMALLER, STANDIN_MODEL
from click.testing import CliRunner
from ray_cluster import RayFleet, RayNode
from standin_launcher import standin_launcher

from infermeter.bench.cli.main import main
from infermeter.registry.models import Result as RegistryResult
from infermeter.registry.validate import validate_paths

pytestmark = pytest.mark.slow

RUN_TIMEOUT_S = 300
WATCHDOG = "launch/watchdog.py"  # in the command line of a launched vLLM's watchdog


def _plan(folder: Path, runs: list[dict[str, Any]]) -> Path:
    defaults = {**SHORT_PLAN_DEFAULTS, "vllm-executable": str(standin_launcher(folder))}
    path = folder / "plan.yaml"
    path.write_text(yaml.safe_dump({"defaults": defaults, "runs": runs}, sort_keys=False))
    return path


_LIVE: list[subprocess.Popen[str]] = []  # every fleet child a test started


@pytest.fixture(autouse=True)
def _no_fleet_outlives_its_test() -> Any:
    """A test that fails before `finish()` still stops its `bench fleet` child (left running,
    it would be reaped during a later test, which would then fail on the ResourceWarning)."""
    yield
    while _LIVE:
        process = _LIVE.pop()
        if process.poll() is None:
            process.kill()
        process.wait(10)
        if process.stderr is not None:
            process.stderr.close()


class _Fleet:
    """`infermeter bench fleet` as a child process, its progress lines read as they come."""

    def __init__(self, plan: Path, address: str, results: Path) -> None:
        command = [
            sys.executable, "-c", "from infermeter.bench.cli.main import main; main()",
            "bench", "fleet", str(plan), "--ray", address, "--results-dir", str(results),
            "--json",
        ]  # fmt: skip
        self.stdout_path = plan.parent / "fleet-summary.json"
        with self.stdout_path.open("w") as stdout:
            self.process = subprocess.Popen(
                command, stdout=stdout, stderr=subprocess.PIPE, text=True, cwd=plan.parent
            )
        _LIVE.append(self.process)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, text: str, timeout_s: float = RUN_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while not any(text in line for line in self.lines):
            assert self.process.poll() is None or self._reader.is_alive(), self.lines
            assert time.monotonic() < deadline, f"no {text!r} in {self.lines}"
            time.sleep(0.1)

    def finish(self) -> tuple[int, dict[str, Any]]:
        try:
            self.process.wait(timeout=RUN_TIMEOUT_S)
        finally:
            if self.process.poll() is None:
                self.process.kill()
        self._reader.join(5)
        assert self.process.stderr is not None
        self.process.stderr.close()
        stdout = self.stdout_path.read_text()
        assert stdout.strip(), self.lines
        return self.process.returncode, json.loads(stdout)


def _bench_run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    launcher = standin_launcher(folder)
    command = [
        sys.executable, "-c", "from infermeter.bench.cli.main import main; main()", "bench", "run",
        "--model", STANDIN_MODEL, "--vllm-executable", str(launcher), "--load-format", "dummy",
        "--max-model-len", "4096", "--gpu", "l40s", "--concurrency", "1",
        *SMALLER,
        "--output", str(folder / "result.json"), *args,
    ]  # fmt: skip
    # The stand-in's tokens 10 ms apart, as on the cluster's nodes (ray_fleet): a pace an L40S
    # could serve a 1B model at.
    env = {**os.environ, "STANDIN_VLLM_ITL_S": "0.01"}
    return subprocess.run(
        command, capture_output=True, text=True, cwd=folder, env=env, timeout=RUN_TIMEOUT_S,
        check=False,
    )  # fmt: skip


def test_bench_run_standin_vllm_over_two_ray_nodes_records_nodes_and_gpus_per_node(
    tmp_path: Path, ray_fleet: RayFleet
) -> None:
    run = _bench_run(
        tmp_path,
        "--tensor-parallel-size", "2", "--pipeline-parallel-size", "2",
        "--ray-address", ray_fleet.address, "--price-per-hour", "2.5",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    result = RegistryResult.model_validate_json((tmp_path / "result.json").read_text())
    gpu = result.identity.gpu
    assert (gpu.count, gpu.nodes, gpu.gpus_per_node) == (4, 2, 2)
    assert result.identity.serving.tensor_parallel_size == 2
    assert result.identity.serving.pipeline_parallel_size == 2
    assert result.source.host.gpu_count == 2  # the fingerprint is one node's
    server_command = result.source.server_command or ""
    assert "--tensor-parallel-size 2 --pipeline-parallel-size 2" in server_command
    assert "--distributed-executor-backend ray" in server_command
    assert f"--ray-address {ray_fleet.address}" in result.source.command
    log = (tmp_path / "result.vllm.log").read_text()
    # vLLM found the cluster through RAY_ADDRESS and its 4 ranks filled both 2-GPU nodes.
    assert f"Connecting to existing Ray cluster at address: {ray_fleet.address}" in log
    assert "world_size=4 placement group on 2 nodes" in log
    assert f"vLLM over the Ray cluster at {ray_fleet.address}: 2 nodes × 2 GPUs" in run.stderr
    # bench run read from Ray where vLLM's group landed, as vLLM's own log says (the two
    # 2-GPU L40S nodes, not the H100 head's one GPU).
    ranks = r"vLLM's ranks are on 2 nodes × 2 GPUs: Ray nodes (\S+), (\S+)"
    (placed,) = re.findall(ranks, run.stderr)
    (logged,) = re.findall(r"world_size=4 placement group on 2 nodes: (\S+), (\S+)", log)
    assert placed == logged
    # $/hour follows the GPU count: 4 GPUs × $2.50.
    rows = run.stdout.splitlines()
    header = next(i for i, line in enumerate(rows) if line.split()[:2] == ["point", "$/h"])
    assert rows[header + 1].split()[:2] == ["c=1", "10.00"]
    assert validate_paths([tmp_path / "result.json"]).ok


def test_bench_run_ray_cluster_without_the_gpus_exits_2_before_launching(
    tmp_path: Path, ray_fleet: RayFleet
) -> None:
    run = _bench_run(
        tmp_path,
        "--tensor-parallel-size", "4", "--pipeline-parallel-size", "2",
        "--ray-address", ray_fleet.address,
    )  # fmt: skip
    assert run.returncode == 2, run.stderr
    # Only the nodes of the run's GPU kind count: the L40S ones, not the H100 head's GPU.
    assert run.stderr.strip().splitlines()[-1] == (
        "Error: --pipeline-parallel-size: tensor × pipeline parallel needs 8 GPUs, but the Ray "
        f"cluster at {ray_fleet.address} has 4 (2 + 2 on 2 nodes)"
    )
    assert not (tmp_path / "result.vllm.log").exists()


def _leader_wait(tmp_path: Path, pipeline: int) -> tuple[int, list[str]]:
    """A LeaderWorkerSet's size and its leader's wait for the group, rendered for a run of
    tensor parallel 2 × `pipeline` on nodes of 2 GPUs (`bench.fleet.lws`)."""
    from infermeter.bench.fleet.kubernetes import job_documents
    from infermeter.bench.fleet.matrix import load_matrix
    from infermeter.bench.fleet.pods import JobsConfig

    plan = tmp_path / f"lws-{pipeline}.yaml"
    run = {"model": STANDIN_MODEL, "tensor-parallel-size": 2, "pipeline-parallel-size": pipeline,
           "ray-address": "auto", "gpus": ["l40s"]}  # fmt: skip
    plan.write_text(yaml.safe_dump({"runs": [run]}))
    (document,) = job_documents(load_matrix(plan), JobsConfig(gpus_per_node_default=2))
    group = document["spec"]["leaderWorkerTemplate"]
    script = group["leaderTemplate"]["spec"]["initContainers"][0]["command"][2]
    return group["size"], shlex.split(script.split(" && ")[1])


def test_lws_leader_waits_for_every_pod_of_its_group_on_a_real_ray_cluster(
    tmp_path: Path, ray_fleet: RayFleet
) -> None:
    """The one piece of a rendered LeaderWorkerSet that runs Ray code, run against the real
    cluster: the leader's check passes once the group's nodes are alive (1 here, the head is
    one) and keeps it waiting while fewer than the group's are (5 > this cluster's 3)."""
    environment = {**os.environ, "RAY_ADDRESS": ray_fleet.address}
    for pipeline, joined in ((1, True), (5, False)):
        size, words = _leader_wait(tmp_path, pipeline)
        assert size == pipeline
        assert words[:3] == ["until", "python3", "-c"]
        check = subprocess.run(
            [sys.executable, "-c", words[3]], env=environment, capture_output=True,
            text=True, timeout=RUN_TIMEOUT_S, check=False,
        )  # fmt: skip
        assert check.returncode == (0 if joined else 1), check.stderr[-2000:]
        assert "Traceback" not in check.stderr  # it connected and counted, it did not fail


_KEPT = re.compile(r"\] (\S+): 1 point kept so far \(worker (\d+) on ")


def _first_points_from(node: RayNode, lines: list[str]) -> str | None:
    """The entry under way whose first point the driver got from a worker process of `node`."""
    workers = set(node.descendants())
    running = None
    for line in lines:
        match = _KEPT.search(line)
        if match and int(match.group(2)) in workers:
            running = match.group(1)
        elif running and f"] {running}: " in line and "kept so far" not in line:
            running = None  # it ended
    return running


def _wait_gone(pids: list[int], timeout_s: float = 30.0) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        alive = [pid for pid in pids if _alive(pid)]
        if not alive:
            return []
        time.sleep(0.1)
    return alive


def _environ(pid: int) -> dict[str, str]:
    """The environment a running process was started with (empty once it is gone)."""
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    pairs = (item.decode(errors="replace").partition("=") for item in raw.split(b"\0") if item)
    return {name: value for name, _, value in pairs}


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_fleet_multinode_entry_holds_only_nodes_of_its_kind_standin_vllm(
    tmp_path: Path, ray_fleet: RayFleet
) -> None:
    runs: list[dict[str, Any]] = [
        {"name": "solo", "gpus": ["h100-sxm"]},
        {
            "name": "big", "gpus": ["l40s"], "tensor-parallel-size": 2,
            "pipeline-parallel-size": 2, "ray-address": "auto",
        },
    ]  # fmt: skip
    results = tmp_path / "fleet-results"
    fleet = _Fleet(_plan(tmp_path, runs), ray_fleet.address, results)
    code, summary = fleet.finish()
    assert code == 0, fleet.lines
    entries = {entry["id"]: entry for entry in summary["entries"]}
    assert summary["counts"] == {"collected": 2}
    big, solo = entries["big--l40s-x4"], entries["solo--h100-sxm-x1"]
    submitted = "big--l40s-x4: submitted for 4× l40s over 2 nodes × 2"
    assert any(submitted in line for line in fleet.lines)
    # Its placement group (Ray's placement group table) held two nodes, both of its kind:
    # the two L40S nodes, never the H100 head that ran the other entry.
    placement = big["placement"]
    held = {node["node_id"] for node in placement}
    assert len(held) == 2
    assert all(node["resources"].get("gpu_l40s") == 1 for node in placement)
    assert all("gpu_h100-sxm" not in node["resources"] for node in placement)
    assert solo["node_id"] not in held
    assert big["node_id"] in held  # the task itself: bundle 0
    assert solo["placement"] == []
    # The single-node entry holds a GPU of its own (the head's one); the multi-node entry's
    # task holds none: vLLM's ranks take the held nodes' GPUs.
    assert (solo["gpu_ids"], big["gpu_ids"]) == (["0"], [])
    # vLLM's own ranks were checked to be on those very nodes before anything was measured.
    log = (results / "logs" / "big--l40s-x4.log").read_text()
    ranks = r"vLLM's ranks are on 2 nodes × 2 GPUs: Ray nodes (\S+), (\S+), all held for it \(2\)"
    (placed,) = re.findall(ranks, log)
    assert set(placed) == held
    result = RegistryResult.model_validate_json((results / "big--l40s-x4.json").read_text())
    gpu = result.identity.gpu
    assert (gpu.id, gpu.count, gpu.nodes, gpu.gpus_per_node) == ("l40s", 4, 2, 2)
    assert result.identity.serving.tensor_parallel_size == 2
    assert result.identity.serving.pipeline_parallel_size == 2
    server_command = result.source.server_command or ""
    assert "--tensor-parallel-size 2 --pipeline-parallel-size 2" in server_command
    assert "--distributed-executor-backend ray" in server_command
    # The run's command names the fleet's own cluster (its GCS, as the task's node knows it),
    # not the plan's `auto`.
    (address,) = re.findall(r"--ray-address (\S+)", result.source.command)
    assert address.rpartition(":")[2] == ray_fleet.address.rpartition(":")[2], address
    assert validate_paths([results]).ok


def _in_its_second_point(tmp_path: Path, ray_fleet: RayFleet, results: Path) -> _Fleet:
    """`bench fleet` of one L40S entry, once its first point has come back. 32 tokens a
    request, 10 ms apart: the second point (12 requests one at a time) lasts about 4 s, time
    to stop or kill the fleet while it is under way."""
    runs = [
        {"name": "chat", "gpus": ["l40s"], "concurrency": [2, 1], "num-requests": 12,
         "output-len": 32},
    ]  # fmt: skip
    fleet = _Fleet(_plan(tmp_path, runs), ray_fleet.address, results)
    fleet.wait_for("chat--l40s-x1: 1 point kept so far")
    return fleet


@pytest.mark.parametrize(
    ("sent", "reason"),
    [(signal.SIGINT, "interrupted"), (signal.SIGTERM, "terminated (SIGTERM)")],
    ids=["ctrl-c", "sigterm"],
)
def test_fleet_ctrl_c_stops_the_run_which_hands_back_every_point_and_stops_the_standin_vllm(
    tmp_path: Path, ray_fleet: RayFleet, sent: signal.Signals, reason: str
) -> None:
    """Ctrl-C of `bench fleet`, or the SIGTERM a scheduler sends, asks each run to stop
    (`bench.fleet.ray_stop`), which stops as `bench run` stops on Ctrl-C and hands its result
    back: the finished point whole, the point under way as interrupted (a Ray cancel would
    have lost it), and its vLLM stopped."""
    results = tmp_path / "fleet-results"
    fleet = _in_its_second_point(tmp_path, ray_fleet, results)
    time.sleep(1.0)  # some requests of the second point finish before the stop
    fleet.process.send_signal(sent)
    code, summary = fleet.finish()
    assert code == 1, fleet.lines
    assert summary["interrupted"] is True
    assert summary["stop_reason"] == reason
    assert f"{reason}: asking every run to stop and hand back what it measured" in fleet.lines
    (entry,) = summary["entries"]
    assert entry["status"] == "cancelled", entry
    assert entry["message"] == "interrupted; the run stopped and wrote what it had measured"
    result = RegistryResult.model_validate_json(Path(entry["result"]).read_text())
    assert result.source.complete is False
    first, second = result.points
    assert (first.load.concurrency, first.requests.completed) == (2, 12)
    assert "interrupted" not in {verdict.code for verdict in first.validity}
    # The point under way came back too, marked interrupted, with what had finished of it.
    assert second.load.concurrency == 1
    assert 1 <= second.requests.completed < 12, second.requests
    assert "interrupted" in {verdict.code for verdict in second.validity}
    assert validate_paths([results]).ok
    assert not (results / "partial").exists()  # the whole result replaced the result so far
    # No vLLM is left behind on the nodes.
    nodes = (ray_fleet.l40s, ray_fleet.doomed_l40s)
    deadline = time.monotonic() + 30
    while any(node.running("standin_vllm.py") for node in nodes):
        assert time.monotonic() < deadline, "a stand-in vLLM outlived the cancelled run"
        time.sleep(0.1)


def test_fleet_driver_killed_outright_keeps_the_points_streamed_back_standin_vllm(
    tmp_path: Path, ray_fleet: RayFleet
) -> None:
    """A `bench fleet` killed with no chance to clean up (SIGKILL, an out-of-memory kill)
    still leaves what its runs had streamed back: each result so far is written to
    `partial/` as it arrives. Ray ends the dead driver's tasks, and their vLLMs go too."""
    results = tmp_path / "fleet-results"
    fleet = _in_its_second_point(tmp_path, ray_fleet, results)
    fleet.process.kill()
    fleet.process.wait(30)
    kept = results / "partial" / "chat--l40s-x1.attempt-1.json"
    result = RegistryResult.model_validate_json(kept.read_text())
    assert result.source.complete is False
    assert [(p.load.concurrency, p.requests.completed) for p in result.points] == [(2, 12)]
    assert validate_paths([kept]).ok
    assert not (results / "chat--l40s-x1.json").exists()  # no whole result was written
    nodes = (ray_fleet.l40s, ray_fleet.doomed_l40s)
    deadline = time.monotonic() + 60
    while any(node.running("standin_vllm.py") for node in nodes):
        assert time.monotonic() < deadline, "a stand-in vLLM outlived the killed fleet"
        time.sleep(0.2)


HOLD_ONE_L40S_GPU = """
import sys
import ray
from ray.util.placement_group import placement_group

ray.init(address=sys.argv[1], log_to_driver=False, logging_level="ERROR")
group = placement_group([{"GPU": 1, "gpu_l40s": 0.5}])  # one GPU of one L40S node
ray.get(group.ready(), timeout=120)
print("held", flush=True)
sys.stdin.read()  # held until the test closes stdin (the group goes with this driver)
"""


def test_bench_run_refuses_to_measure_when_vllms_ranks_land_on_another_kinds_node(
    tmp_path: Path, ray_fleet: RayFleet
) -> None:
    """vLLM's Ray executor takes free GPUs on any node (it cannot be handed a placement
    group): with one L40S GPU busy, the STAND-IN's four ranks must take the H100 head's GPU
    too, and `bench run` refuses before measuring anything."""
    assert ray_fleet.doomed_l40s.process.poll() is None, "runs before the node kill test"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_ONE_L40S_GPU, ray_fleet.address],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        run = _bench_run(
            tmp_path,
            "--tensor-parallel-size", "2", "--pipeline-parallel-size", "2",
            "--ray-address", ray_fleet.address,
        )  # fmt: skip
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(60)
        assert holder.stdout is not None
        holder.stdout.close()
    assert run.returncode == 1, run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "Error: --ray-address: vLLM's Ray executor placed ranks on 1 node(s) without gpu_l40s ("
    ), last
    assert "cannot be confined to one kind; give this kind a Ray cluster of its own" in last
    assert not (tmp_path / "result.json").exists()  # nothing was measured


def test_fleet_six_entries_two_gpu_kinds_a_node_killed_mid_run_all_collected_and_valid(
    tmp_path: Path, ray_fleet: RayFleet
) -> None:
    """One fleet run proves both: the six entries (three runs × two GPU kinds) are all
    collected and valid, and killing the doomed L40S node mid-run loses no finished result:
    the lost run's streamed points are kept and it is retried on the other L40S node."""
    doomed = ray_fleet.doomed_l40s
    runs: list[dict[str, Any]] = [
        {
            "name": name, "gpus": ["h100-sxm", "l40s"], "output": f"results/{name}.json",
            "concurrency": [1, 2], "num-requests": 24,
        }
        for name in ("chat", "short", "long")
    ]  # fmt: skip
    runs.append({"name": "nowhere", "gpus": ["mi300x"]})
    results = tmp_path / "fleet-results"
    fleet = _Fleet(_plan(tmp_path, runs), ray_fleet.address, results)
    # Kill the doomed L40S node once some result has come back and the entry it runs has
    # sent its first point to the driver, while the entry's second point is under way.
    deadline = time.monotonic() + RUN_TIMEOUT_S
    lost_id = None
    while lost_id is None or not list(results.glob("*.json")):
        assert time.monotonic() < deadline, "\n".join(fleet.lines)
        time.sleep(0.05)
        lost_id = _first_points_from(doomed, list(fleet.lines))
    finished = {path.name: path.read_bytes() for path in results.glob("*.json")}
    standins = doomed.processes("standin_vllm.py")
    assert standins, "the doomed node's run ended before it could be killed mid-run"
    # Ray gave the run one of the node's two GPUs, and the vLLM it launched was started with
    # just that one: without asking for Ray's GPU, CUDA_VISIBLE_DEVICES would be unset.
    seen = {_environ(pid).get("CUDA_VISIBLE_DEVICES") for pid in standins} - {None}
    assert len(seen) == 1, seen
    assert seen <= {"0", "1"}, seen
    # Each vLLM's watchdog is started just after it (its command line may show a moment later).
    deadline = time.monotonic() + 10
    while len(watchdogs := doomed.processes(WATCHDOG)) < len(standins):
        assert time.monotonic() < deadline, "a launched vLLM without its watchdog"
        time.sleep(0.05)
    # Every process of the node dies but what the lost worker launched: the vLLMs and their
    # watchdogs (bench.launch.watchdog), which are not the worker's to take down.
    doomed.kill(leave=("standin_vllm.py", WATCHDOG))
    # The vLLM that the lost worker had launched dies with it (a parent-death SIGTERM, then
    # its watchdog's SIGTERM and SIGKILL to its group), and the watchdog ends then.
    survivors = _wait_gone(standins + watchdogs)
    for pid in survivors:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
    assert survivors == [], "a stand-in vLLM or its watchdog outlived the worker that launched it"
    code, summary = fleet.finish()
    assert code == 1, fleet.lines  # the mi300x entry has nowhere to run
    assert summary["ok"] is False
    assert summary["counts"] == {"collected": 6, "unplaceable": 1}
    assert summary["set_problems"] == []
    entries = {entry["id"]: entry for entry in summary["entries"]}
    nowhere = entries.pop("nowhere--mi300x-x1")
    assert nowhere["status"] == "unplaceable"
    assert "no live node advertises {'gpu_mi300x': 1} and 1 GPU" in nowhere["message"]
    assert sorted(entries) == sorted(
        f"{name}--{gpu}-x1" for name in ("chat", "short", "long") for gpu in ("h100-sxm", "l40s")
    )
    assert lost_id.endswith("--l40s-x1")
    # Pinned by resource: every entry of a GPU kind ran on a node that advertises it (the one
    # H100 node; the two L40S nodes), never on another kind's.
    nodes = {
        gpu: {entry["node_id"] for name, entry in entries.items() if gpu in name}
        for gpu in ("h100", "l40s")
    }
    assert len(nodes["h100"]) == 1
    assert 1 <= len(nodes["l40s"]) <= 2
    assert None not in nodes["h100"] | nodes["l40s"]
    assert not nodes["h100"] & nodes["l40s"]
    # The lost run: retried once, on the other L40S node, and collected; the points its lost
    # attempt had measured are kept, marked incomplete.
    lost = [entry for entry in entries.values() if entry["lost"]]
    assert [entry["id"] for entry in lost] == [lost_id], summary
    (retried,) = lost
    assert retried["attempts"] == 2
    assert retried["status"] == "collected"
    assert any("trying another node" in line for line in fleet.lines)
    partial = results / "partial" / f"{lost_id}.attempt-1.json"
    assert retried["partial"] == [str(partial)]
    kept = RegistryResult.model_validate_json(partial.read_text())
    assert kept.source.kind == "measured"
    assert kept.source.complete is False
    assert [p.load.concurrency for p in kept.points][:1] == [1]
    assert [p.requests.completed for p in kept.points][:1] == [24]
    assert validate_paths([partial]).ok
    for name, content in finished.items():
        assert (results / name).read_bytes() == content  # nothing finished was lost
    for entry_id, entry in entries.items():
        path = results / f"{entry_id}.json"
        assert entry["result"] == str(path)
        assert entry["status"] == "collected"
        if entry_id != lost_id:
            assert entry["attempts"] == 1
            assert entry["lost"] == []
        result = RegistryResult.model_validate_json(path.read_text())
        assert result.identity.gpu.id == entry_id.split("--")[1].removesuffix("-x1")
        assert result.source.kind == "measured"
        assert result.source.complete
        assert result.source.host.gpu_count == 1
        # A GPU of its own on its node (the head has one, each L40S node two).
        (gpu_id,) = entry["gpu_ids"]
        assert gpu_id in {"0", "1"}, entry
        assert f"--gpu {result.identity.gpu.id}" in result.source.command
        completed = [(p.load.concurrency, p.requests.completed) for p in result.points]
        assert completed == [(1, 24), (2, 24)]
        # Each run streamed its first point back before it ended.
        assert any(f"] {entry_id}: 1 point kept so far (worker " in line for line in fleet.lines)
    # The set validates together (one pull request); the lost attempt's points in partial/
    # are skipped by name: they are not a result to submit.
    report = validate_paths([results])
    assert report.ok
    assert report.files_checked == 6
    assert report.skipped == (str(partial),)
    # One merged answer: the two GPU kinds' results of a run, side by side.
    pair = [str(results / f"chat--{gpu}-x1.json") for gpu in ("h100-sxm", "l40s")]
    compared = CliRunner().invoke(main, ["bench", "compare", "--json", *pair])
    assert compared.exit_code == 0, compared.output
    first = json.loads(compared.stdout)["loads"][0]
    assert [row["gpu"] for row in first["rows"]] == ["h100-sxm", "l40s"]
    assert sum(": collected on " in line for line in fleet.lines) == 6
    assert fleet.lines[-2].startswith("7 entries: 6 collected, 1 unplaceable; results in ")
    assert fleet.lines[-1] == "Error: not every entry was collected complete and valid"
    assert ray_fleet.l40s.process.poll() is None


@pytest.mark.gpu
def test_fleet_entry_on_a_real_gpu_node_gets_that_gpu_and_its_telemetry(tmp_path: Path) -> None:
    """On a GPU host (NVML): a one-node Ray cluster of the host's real GPU kind; the fleet
    task gets GPU 0 from Ray (CUDA_VISIBLE_DEVICES), and the run's telemetry reads exactly
    that GPU through NVML. vLLM is the STAND-IN (this checks Ray's GPU, not vLLM's)."""
    from ray_cluster import LocalRayCluster

    from infermeter.bench.telemetry.host import catalog_gpu_id
    from infermeter.bench.telemetry.nvml import open_gpus

    gpus, reason = open_gpus(1)
    if gpus is None:
        pytest.skip(f"needs an NVIDIA GPU: {reason}")
    name = gpus.inventory.gpus[0].name
    gpus.close()
    gpu_id = catalog_gpu_id(name)
    if gpu_id is None:
        pytest.skip(f"the GPU {name!r} has no catalog id (the run's --gpu needs one)")
    cluster = LocalRayCluster(env={"STANDIN_VLLM_ITL_S": "0.01"})
    try:
        cluster.start({f"gpu_{gpu_id}": 1}, gpus=1)
        results = tmp_path / "fleet-results"
        plan = _plan(tmp_path, [{"name": "chat", "gpus": [gpu_id]}])
        fleet = _Fleet(plan, cluster.address, results)
        code, summary = fleet.finish()
    finally:
        cluster.stop()
    assert code == 0, fleet.lines
    (entry,) = summary["entries"]
    assert (entry["status"], entry["gpu_ids"]) == ("collected", ["0"])
    result = RegistryResult.model_validate_json(Path(entry["result"]).read_text())
    assert result.source.host.telemetry_gpu_indices == [0]
    telemetry = result.points[0].telemetry
    assert telemetry is not None
    assert telemetry.gpu is not None
    assert telemetry.gpu.power_w_mean is not None
