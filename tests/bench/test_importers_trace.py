"""`bench import` of trace replays: an AIPerf or GuideLLM run of a Mooncake trace imports with
the trace's identity (name, SHA-256, block size, cut, speed) and the load a `bench run --trace`
of the same trace at the same speed states, so the two group as one workload.

The exports were written by the real tools (pip-installed, run on 127.0.0.1 against
tests/bench/fake_openai_server.py; tests/data/importers/real/README.md has the commands): no
public export of a trace run was found. Their figures describe the stand-in, not a GPU.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from synthetic_run import IMPORTER_FILES
from test_importers_guidellm_aiperf import _mutations

from infermeter.bench.cli.main import main
from infermeter.bench.importers import ImportFacts, ResultImportError, import_files
from infermeter.bench.run.config import RunConfig
from infermeter.bench.workloads.identity import workload
from infermeter.bench.workloads.trace_plan import trace_setup
from infermeter.registry.models.identity import Workload
from infermeter.registry.workloads import workload_key

HERE = Path(__file__).resolve().parent
REAL = IMPORTER_FILES / "real"
TRACES = HERE / "traces"
MOONCAKE = TRACES / "mooncake_conversation_head40.jsonl"
AIPERF_TRACE = REAL / "aiperf-0.13.0-mooncake-trace-speedup4-stand-in-server.json"
AIPERF_CONCURRENCY = REAL / "aiperf-0.11.0-qwen3-4b-rtx-pro-4500-concurrency16.json"
GUIDELLM_TRACE = REAL / "guidellm-0.8.1-mooncake-replay-stand-in-server.json"
SHARED_BLOCKS = TRACES / "shared_blocks_trace.jsonl"  # 8 requests, 16-token blocks

FACTS = ImportFacts(
    gpu="h100-sxm",
    gpu_count=1,
    model_id="llama-3.1-8b-instruct",
    hf_repo="TinyLlama/TinyLlama-1.1B-Chat-v1.0",
    engine_version="0.11.0",
    submitter="octocat",
    timezone="UTC",
    trace=MOONCAKE,
)
CLI_FACTS = [
    "--gpu", "h100-sxm", "--gpu-count", "1", "--model-id", "llama-3.1-8b-instruct",
    "--hf-repo", "TinyLlama/TinyLlama-1.1B-Chat-v1.0", "--engine-version", "0.11.0",
    "--submitter", "octocat", "--timezone", "UTC",
]  # fmt: skip


def _own_replay(
    trace: Path, speed: float, api: str, block_size: int | None = None
) -> tuple[str, Any]:
    """(workload key, offered rate) of `bench run --trace trace --trace-speed speed
    [--trace-block-size N]`, by the functions the run itself uses to state them."""
    config = RunConfig(
        endpoint="http://127.0.0.1:9", trace=trace, trace_speed=speed, trace_block_size=block_size
    )
    run = trace_setup(config, None)
    assert run is not None
    # As the builder checks it: the unchecked workload's data, validated.
    stated = workload(config, api, trace=run.identity).model_dump(exclude_none=True, warnings=False)
    return workload_key(Workload.model_validate(stated)), run.plan.request_rate


def _edited(tmp_path: Path, source: Path, edit: Any) -> Path:
    data = json.loads(source.read_text(encoding="utf-8"))
    edit(data)
    target = tmp_path / source.name
    target.write_text(json.dumps(data), encoding="utf-8")
    return target


def test_an_aiperf_trace_replay_imports_as_the_same_workload_as_our_own_replay() -> None:
    export = json.loads(AIPERF_TRACE.read_text(encoding="utf-8"))
    dataset = export["input_config"]["datasets"][0]
    assert (dataset["format"], dataset["synthesis"]["speedup_ratio"]) == ("mooncake_trace", 4.0)
    result = import_files([AIPERF_TRACE], FACTS)
    trace = result.identity.workload.trace
    assert trace is not None
    assert trace.name == MOONCAKE.name
    assert trace.sha256 == "e6edf0412e43967b8a761bede0c104da7491788b8f181d7cbb4b668d42592c64"
    assert (trace.block_size, trace.speed, trace.rate) == (512, 4.0, None)
    assert (trace.requests, trace.requests_in_file, trace.cut) == (40, 40, None)
    key, rate = _own_replay(MOONCAKE, 4.0, "chat")
    assert workload_key(result.identity.workload) == key
    (point,) = result.points
    assert (point.load.arrival, point.load.request_rate) == ("poisson", rate)
    assert point.requests.completed == export["request_count"]["avg"] == 40
    # AIPerf judged its own schedule (send lag p99 over 500 ms): kept as a verdict, after the
    # one bench run gives its own 40 requests (too few for the p99 the file states)
    assert export["replay_sched_degraded"]["avg"] == 1.0
    assert [verdict.code for verdict in point.validity] == [
        "too_few_requests",
        "client_send_lag",
        "itl_per_chunk",  # AIPerf's inter_chunk_latency: fewer gaps than tokens
    ]
    # another speed is another workload
    assert _own_replay(MOONCAKE, 2.0, "chat")[0] != key


def test_a_replay_cut_short_states_its_cut(tmp_path: Path) -> None:
    """The export edited to say the run sent 30 requests: the identity is the trace's first
    30 of 40, and says so."""

    def thirty(data: dict[str, Any]) -> None:
        data["request_count"]["avg"] = 30.0

    result = import_files([_edited(tmp_path, AIPERF_TRACE, thirty)], FACTS)
    trace = result.identity.workload.trace
    assert trace is not None
    assert (trace.requests, trace.requests_in_file) == (30, 40)
    assert trace.cut is not None
    assert trace.cut.startswith("first 30 of 40 requests")


def _reshaped(data: dict[str, Any]) -> None:
    data["input_config"]["datasets"][0]["synthesis"]["prompt_len_multiplier"] = 2.0


def _by_concurrency(data: dict[str, Any]) -> None:
    data["input_config"]["phases"][0] = {
        "name": "profiling",
        "type": "concurrency",
        "concurrency": 4,
    }


def _started_late(data: dict[str, Any]) -> None:
    data["input_config"]["phases"][0]["start_offset"] = 5000


def _no_path(data: dict[str, Any]) -> None:
    del data["input_config"]["datasets"][0]["path"]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (_reshaped, r"synthesis\.prompt_len_multiplier: 2\.0 reshaped the trace"),
        (_by_concurrency, r"sent the trace's requests by concurrency, not at their timestamps"),
        (_started_late, r"started 5000 ms into the trace"),
        (_no_path, r"datasets\[0\]\.path: expected the trace file's path"),
    ],
    ids=["reshaped", "not-on-its-clock", "start-offset", "no-path"],
)
def test_a_run_that_did_not_replay_the_trace_as_it_is_is_refused_in_one_line(
    tmp_path: Path, edit: Any, message: str
) -> None:
    path = _edited(tmp_path, AIPERF_TRACE, edit)
    with pytest.raises(ResultImportError, match=message) as caught:
        import_files([path], FACTS)
    assert "\n" not in caught.value.one_line()


def _cli(tmp_path: Path, *args: str) -> Any:
    return CliRunner().invoke(
        main, ["bench", "import", *args, *CLI_FACTS, "--output", str(tmp_path)]
    )


def test_the_trace_file_is_a_fact_the_command_checks(tmp_path: Path) -> None:
    export = str(AIPERF_TRACE)
    cases = {
        "missing": ([export], "--trace: missing; "),
        "another name": (
            [export, "--trace", str(TRACES / "infermeter_sessions.jsonl")],
            "--trace: infermeter_sessions.jsonl is not the trace the run replayed",
        ),
        "no trace run": (
            [str(AIPERF_CONCURRENCY), "--trace", str(MOONCAKE)],
            "--trace: the run replayed no trace",
        ),
        "lengths given": (
            [export, "--trace", str(MOONCAKE), "--input-len", "100"],
            "--input-len: does not apply to a trace replay",
        ),
        "block size contradicted": (
            [export, "--trace", str(MOONCAKE), "--trace-block-size", "16"],
            "--trace: ",  # the trace's hash_ids do not fit 16-token blocks
        ),
    }
    # the same name, fewer requests than the run sent: not the file it replayed
    short = tmp_path / "short" / MOONCAKE.name
    short.parent.mkdir()
    short.write_text("".join(MOONCAKE.read_text().splitlines(True)[:20]))
    cases["fewer requests"] = (
        [export, "--trace", str(short)],
        "--trace: the run sent 40 requests",
    )
    for name, (args, start) in cases.items():
        outcome = _cli(tmp_path, *args)
        assert outcome.exit_code == 1, (name, outcome.output)
        assert outcome.output.startswith(f"Error: {start}"), (name, outcome.output)
        assert outcome.output.count("\n") == 1, (name, outcome.output)


def test_a_guidellm_trace_replay_imports_as_the_same_workload_as_our_own_replay() -> None:
    """GuideLLM 0.8.1 read the Mooncake timestamps (ms) as seconds: the run scaled them by
    `data.time_scale` 0.001 and the replay profile's `time_scale` 0.5, twice as fast as
    recorded, which is `--trace-speed 2` here."""
    report = json.loads(GUIDELLM_TRACE.read_text(encoding="utf-8"))
    (data,) = report["config"]["spec"]["data"]
    (benchmark,) = report["benchmarks"]
    assert (data["time_scale"], benchmark["config"]["strategy"]["time_scale"]) == (0.001, 0.5)
    facts = FACTS.model_copy(update={"trace": SHARED_BLOCKS, "command": "guidellm run"})
    result = import_files([GUIDELLM_TRACE], facts)
    trace = result.identity.workload.trace
    assert trace is not None
    assert (trace.name, trace.block_size, trace.speed) == (SHARED_BLOCKS.name, 16, 2.0)
    assert (trace.requests, trace.requests_in_file, trace.cut) == (8, 8, None)
    key, rate = _own_replay(SHARED_BLOCKS, 2.0, "chat", block_size=16)
    assert workload_key(result.identity.workload) == key
    (point,) = result.points
    assert (point.load.arrival, point.load.request_rate) == ("poisson", rate)
    # GuideLLM scheduled all 8 but counted 7: the 8th was in flight when it stopped
    assert benchmark["scheduler_state"]["created_requests"] == 8
    assert point.requests.completed == benchmark["metrics"]["request_totals"]["total"] == 7
    codes = [verdict.code for verdict in point.validity]
    # its root_late warning, kept, after bench run's own for 7 requests
    assert codes == ["too_few_requests", "client_send_lag", "requests_not_counted"]


def _copies(data: dict[str, Any]) -> None:
    data["config"]["spec"]["data"][0]["copies"] = 2


def _synthetic(data: dict[str, Any]) -> None:
    data["config"]["spec"]["data"][0]["kind"] = "trace_synthetic"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (_copies, r"data\[0\]\.copies: 2 changes the trace"),
        (_synthetic, r"one dataset of kind mooncake .*; found trace_synthetic"),
    ],
    ids=["copies", "not-mooncake"],
)
def test_a_guidellm_replay_of_another_workload_is_refused_in_one_line(
    tmp_path: Path, edit: Any, message: str
) -> None:
    path = _edited(tmp_path, GUIDELLM_TRACE, edit)
    facts = FACTS.model_copy(update={"trace": SHARED_BLOCKS, "command": "guidellm run"})
    with pytest.raises(ResultImportError, match=message) as caught:
        import_files([path], facts)
    assert "\n" not in caught.value.one_line()


@pytest.mark.parametrize("path", [AIPERF_TRACE, GUIDELLM_TRACE], ids=lambda p: p.name[:9])
def test_fuzzed_trace_exports_give_a_result_or_one_import_error(tmp_path: Path, path: Path) -> None:
    rng = random.Random(path.name)
    data = json.loads(path.read_text(encoding="utf-8"))
    trace = MOONCAKE if path == AIPERF_TRACE else SHARED_BLOCKS
    facts = FACTS.model_copy(update={"trace": trace, "command": "x"})
    lines = []
    for trial in range(8):
        target = tmp_path / f"fuzz{trial}.json"
        target.write_text(json.dumps(_mutations(data, rng)), encoding="utf-8")
        try:
            import_files([target], facts)
        except ResultImportError as error:
            lines.append(error.one_line())
    assert lines  # the mutations do break files
    assert all("\n" not in line for line in lines)


def test_the_aiperf_0x_layout_of_a_trace_replay_is_read_too(tmp_path: Path) -> None:
    """AIPerf 0.x states the trace in `input_config.input` (`file`, `custom_dataset_type`,
    `fixed_schedule`; v0.1.1's aiperf/common/config/input_config.py) and had no speed-up. No
    real export of such a run was found: the real 0.1 export, edited to say it replayed the
    excerpt (29 requests counted plus its 11 cancelled ones: the excerpt's 40)."""
    legacy = REAL / "aiperf-0.1-records-gpt-oss-20b-concurrency100.json"

    def replayed(data: dict[str, Any], on_its_clock: bool = True) -> None:
        data["input_config"]["input"] = {
            "file": f"/data/traces/{MOONCAKE.name}",
            "custom_dataset_type": "mooncake_trace",
            "fixed_schedule": on_its_clock,
        }
        data["records"]["request_count"]["avg"] = 29.0

    facts = FACTS.model_copy(update={"hf_repo": "openai/gpt-oss-20b", "tool_version": "0.1.1"})
    result = import_files([_edited(tmp_path, legacy, replayed)], facts)
    trace = result.identity.workload.trace
    assert trace is not None
    assert (trace.requests, trace.speed, trace.block_size, trace.cut) == (40, 1.0, 512, None)
    assert workload_key(result.identity.workload) == _own_replay(MOONCAKE, 1.0, "chat")[0]
    with pytest.raises(ResultImportError, match=r"input: AIPerf sent the trace's requests by"):
        import_files([_edited(tmp_path, legacy, lambda d: replayed(d, False))], facts)
