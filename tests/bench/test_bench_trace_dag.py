"""`bench run --trace` with AIPerf's Conversation DAG (`bench.workloads.trace_dag`,
`bench.workloads.trace_dag_replay`): the pinned DAG replayed against the stand-in server, whose log
of every request shows the order,
the joins and the live replies carried into forks; hostile DAGs give one line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fake_openai_server import FakeOpenAIServer

from infermeter.bench.cli.main import main
from infermeter.bench.errors import BenchConfigError, WorkloadFileError
from infermeter.bench.run.config import RunConfig
from infermeter.bench.workloads.trace_dag import read_dag
from infermeter.bench.workloads.trace_plan import trace_setup
from infermeter.registry.models import Result

DAG = Path(__file__).parent / "traces" / "agents.dag.jsonl"


def _label(body: dict[str, Any]) -> str:
    """A request's name: the label before the colon of its last user message."""
    last = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
    return str(last.split(":")[0])


def _replay(server: FakeOpenAIServer, tmp_path: Path, *load: str) -> tuple[dict[str, Any], Path]:
    """The pinned DAG replayed at `load`: each request's log entry by its label, the result."""
    server.config.ttft_s = 0.03
    server.config.version = "0.9.1"
    # 30 ms a token: far within what an H100 decodes the 8B model at (223 tok/s, 4.5 ms), even
    # when a busy host sends a late first token and the second right after it (the physics gate
    # refused 3.2 ms at 6 ms, CI of c6b14e32)
    server.config.itl_s = 0.03
    output = tmp_path / "dag.json"
    run = CliRunner().invoke(
        main,
        ["bench", "run", "--endpoint", server.url, "--trace", str(DAG), "--api", "chat", *load,
         "--output", str(output), "--gpu", "h100-sxm", "--model-id", "llama-3.1-8b-instruct",
         "--quiet"],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    stats = server.stats
    log: dict[str, Any] = {}
    for ordinal, body in enumerate(stats.bodies):
        entry = {"body": body, "at": stats.arrival_times[ordinal], "end": stats.end_times[ordinal]}
        log.setdefault(_label(body), []).append(entry)
    return log, output


def test_the_pinned_dag_is_read_with_its_roots_and_request_count() -> None:
    dag = read_dag(DAG)
    assert dag.roots == ("plan", "chat")
    assert dag.requests("plan") == 3 + 2 + 1 + 1 + 2  # plan, search, read, review-a, review-b
    assert dag.total_requests == 9 + 3  # chat: 2 turns and its `read`
    assert dag.sha256 == hashlib.sha256(DAG.read_bytes()).hexdigest()
    assert dag.conversations["plan"].turns[0].spawns == (("search", 2), ("read", 2))


def test_a_deep_tree_of_shared_subagents_is_counted_without_walking_it(tmp_path: Path) -> None:
    """40 levels, each spawning the next twice: 2**41 - 1 requests, counted in a blink."""
    lines = [
        _conversation(f"s{level}", _turn(spawns=[f"s{level + 1}", f"s{level + 1}"]))
        for level in range(40)
    ]
    dag = read_dag(_write(tmp_path / "deep.dag.jsonl", [*lines, _conversation("s40", _turn())]))
    assert dag.total_requests == 2**41 - 1


def test_a_dag_replay_keeps_turn_order_joins_and_the_live_reply_in_forks(
    fake_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    log, output = _replay(fake_server, tmp_path, "--concurrency", "1")
    (plan, outline, merge) = (log["plan"][0], log["outline"][0], log["merge"][0])
    (search, narrow) = (log["search"][0], log["narrow"][0])
    (read_by_plan, read_by_chat) = log["read"]
    assert sum(len(entries) for entries in log.values()) == 12
    # Subagents start after their parent's turn, with a fresh history of their own.
    assert search["at"] >= plan["end"]
    assert read_by_plan["at"] >= plan["end"]
    assert [m["role"] for m in search["body"]["messages"]] == ["system", "user"]
    # join_at 2: the parent's turn 1 runs beside them, its turn 2 waits until they finished.
    assert outline["at"] < search["end"]
    assert merge["at"] >= max(narrow["end"], read_by_plan["end"]) + 0.02  # and its delay
    # Turns in order, each sending the history with the replies the server gave.
    sent = merge["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert sent[2]["content"] == " tok" * 3
    assert sent[4]["content"] == " tok" * 2
    # A fork's branch continues from the parent's history and the reply to the forking turn.
    for branch in ("review-a", "review-b"):
        entry = log[branch][0]
        assert entry["at"] >= merge["end"]
        assert entry["body"]["messages"][:6] == sent
        assert entry["body"]["messages"][6] == {"role": "assistant", "content": " tok" * 4}
    shorten = log["shorten"][0]
    assert shorten["at"] >= log["review-b"][0]["end"] + 0.01
    assert len(shorten["body"]["messages"]) == 10
    # One root at a time: `chat` starts when plan's whole tree has ended; its bare spawn joins
    # at its next turn.
    tree_end = max(e["end"] for label in ("review-a", "shorten") for e in log[label])
    chat, chat_2 = log["chat"][0], log["chat-2"][0]
    assert chat["at"] >= tree_end
    assert read_by_chat["at"] >= chat["end"]
    assert chat_2["at"] >= read_by_chat["end"]
    trace = Result.model_validate_json(output.read_text()).identity.workload.trace
    assert trace is not None
    assert (trace.format, trace.sha256, trace.concurrency, trace.requests) == (
        "aiperf_dag", hashlib.sha256(DAG.read_bytes()).hexdigest(), 1, 12
    )  # fmt: skip


@pytest.mark.parametrize(
    ("load", "stated"),
    [(("--request-rate", "1000"), (1000, None)), (("--concurrency", "2"), (None, 2))],
)
def test_dag_roots_at_a_request_rate_or_two_at_once_start_without_waiting_for_each_other(
    fake_server: FakeOpenAIServer,
    tmp_path: Path,
    load: tuple[str, str],
    stated: tuple[float | None, int | None],
) -> None:
    log, output = _replay(fake_server, tmp_path, *load)
    assert log["chat"][0]["at"] < log["plan"][0]["end"]
    trace = Result.model_validate_json(output.read_text()).identity.workload.trace
    assert trace is not None
    assert (trace.rate, trace.concurrency) == stated


def _conversation(session: str, *turns: dict[str, Any]) -> dict[str, Any]:
    return {"session_id": session, "turns": list(turns)}


def _turn(**fields: Any) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": "go"}], "max_tokens": 2, **fields}


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            [_conversation("a", _turn(forks=["b"])), _conversation("b", _turn(spawns=["a"]))],
            r":1: turns: cycle a -> b -> a",
        ),
        ([_conversation("a", _turn(forks=["ghost"]))], r":1: turns.0: 'ghost' is not a conv"),
        (
            [_conversation("a", _turn(spawns=[{"agent": "b"}])), _conversation("b", _turn())],
            r":1: turns.0.spawns: expected a session id or \{\"children\"",
        ),
        ([_conversation("a", _turn(kind="tool"))], r":1: turns.0.kind: unknown field"),
        ([_conversation("a", _turn(forks=["b"]), _turn())], r":1: turns.0.forks: a bare fork"),
        (
            [
                _conversation("a", _turn(spawns=[{"children": ["b"], "join_at": 0}]), _turn()),
                _conversation("b", _turn()),
            ],
            r":1: turns.0.spawns: join_at must be a later turn",
        ),
        (
            [
                _conversation("a", _turn(forks=["b"])),
                _conversation(
                    "b", {"messages": [{"role": "system", "content": "x"}], "max_tokens": 1}
                ),
            ],
            r":2: turns.0.messages: a fork continues",
        ),
        ([{"session_id": "o", "orchestrator": True}], r":1: orchestrator: not replayed"),
        (  # an answer of 10^20 tokens: the turn streamed for ever
            [_conversation("a", _turn(max_tokens=10**20))],
            r":1: turns.0.max_tokens: expected a whole number from 1 to 10,000,000",
        ),
        ([_conversation("a", _turn(extra={"top_p": 1}))], r":1: turns.0.extra: not replayed"),
        ([_conversation("a", _turn()), _conversation("a", _turn())], r":2: session_id: 'a' is"),
        (
            [_conversation(f"s{n}", _turn(spawns=[f"s{n + 1}"])) for n in range(300)]
            + [_conversation("s300", _turn())],
            r": turns: children nested deeper than 200",
        ),
    ],
)
def test_hostile_dags_are_refused_naming_line_and_field(
    tmp_path: Path, lines: list[dict[str, Any]], message: str
) -> None:
    with pytest.raises(WorkloadFileError, match=message):
        read_dag(_write(tmp_path / "bad.dag.jsonl", lines))


@pytest.mark.parametrize(
    ("lines", "field"),
    [
        ([_conversation("a", _turn(forks=["b"])), _conversation("b", _turn(spawns=["a"]))],
         "turns: cycle"),
        ([_conversation("a", _turn(spawns=["ghost"]))], "turns.0: 'ghost'"),
        ([_conversation("a", _turn(forks=[{"child": "b", "kind": "x"}]))], "turns.0.forks"),
    ],
)  # fmt: skip
def test_a_hostile_dag_stops_the_run_in_one_line(
    fake_server: FakeOpenAIServer, tmp_path: Path, lines: list[dict[str, Any]], field: str
) -> None:
    dag = _write(tmp_path / "bad.dag.jsonl", lines)
    run = CliRunner().invoke(
        main,
        ["bench", "run", "--endpoint", fake_server.url, "--trace", str(dag), "--api", "chat",
         "--quiet"],
    )  # fmt: skip
    assert run.exit_code == 1, run.output
    assert "Traceback" not in run.output
    assert run.output.strip().splitlines() == [run.output.strip()]
    assert f"{dag}:1: {field}" in run.output
    assert fake_server.stats.bodies == []


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"api": "completions"}, "give --api chat"),
        ({"num_requests": 5}, "does not apply to a --trace replay"),
        ({"duration_s": 5.0}, "does not apply to a --trace replay"),
        ({"trace_speed": 2.0}, "does not apply to a --trace replay"),
        ({"concurrency": (2,), "request_rates": (5.0,)}, "--concurrency or --request-rate"),
    ],
)
def test_options_a_dag_replay_cannot_honour_are_refused(
    options: dict[str, Any], message: str
) -> None:
    config = RunConfig(endpoint="http://127.0.0.1:1", trace=DAG, **{"api": "chat", **options})
    with pytest.raises(BenchConfigError, match=message):
        trace_setup(config, None)
