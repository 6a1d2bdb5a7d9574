"""`bench run --trace`: a published trace replayed with its arrivals and shared prefix blocks.

The Mooncake excerpt (`traces/mooncake_conversation_head40.jsonl`) is the first 40 lines of
`FAST25-release/traces/conversation_trace.jsonl` in kvcache-ai/Mooncake at commit
3cca71daccf2a7afb8fe3f0295358f70e3a69fdb, Apache-2.0 (the repository's LICENSE-APACHE); see
`traces/README.md`.
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
import os
import tracemalloc
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from bench_helpers import PACE_8B_ITL_S
from click.testing import CliRunner
from fake_openai_server import FakeOpenAIServer
from tiny_model import train_tokenizer

from infermeter.bench.cli.main import main
from infermeter.bench.errors import WorkloadFileError
from infermeter.bench.plan.file import load_plan
from infermeter.bench.result.raw_records import raw_records_path
from infermeter.bench.run.config import RunConfig
from infermeter.bench.workloads.trace import (
    DEFAULT_BLOCK_SIZE,
    Trace,
    TracePrompts,
    read_trace,
)
from infermeter.bench.workloads.trace_plan import trace_setup
from infermeter.registry.models import Result
from infermeter.registry.workloads import workload_key

TRACES = Path(__file__).resolve().parent / "traces"
MOONCAKE = TRACES / "mooncake_conversation_head40.jsonl"
SESSIONS = TRACES / "infermeter_sessions.jsonl"
EARLY_TICK_S = 0.001  # an event loop may wake a timer this much early (seen: 0.11 ms)


def _leading_common(first: list[object], second: list[object]) -> int:
    return next(
        (n for n, (a, b) in enumerate(zip(first, second, strict=False)) if a != b),
        min(len(first), len(second)),
    )


def test_trace_prompts_share_exactly_their_common_blocks_counted_by_the_tokenizer() -> None:
    tokenizer = train_tokenizer()
    trace = read_trace(MOONCAKE)
    prompts = TracePrompts(trace, tokenizer)
    built = [prompts.build(n, r) for n, r in enumerate(trace.requests[:8])]
    assert all(p.input_tokens_exact for p in built)
    ids = [tokenizer.encode(p.prompt, add_special_tokens=False).ids for p in built]
    assert [len(i) for i in ids] == [r.input_length for r in trace.requests[:8]]
    shift = len(tokenizer.encode(prompts.block(0)[0]).ids) - 1  # the first word's, every prompt's
    for a, b in itertools.combinations(range(8), 2):
        blocks = _leading_common(list(trace.requests[a].hash_ids), list(trace.requests[b].hash_ids))
        assert blocks == 1  # the excerpt's requests share block 0 and nothing after it
        assert _leading_common(ids[a], ids[b]) == blocks * trace.block_size + shift


def test_trace_prompts_without_tokenizer_share_words_block_for_block() -> None:
    trace = read_trace(SESSIONS)
    prompts = TracePrompts(trace)
    words = {r.line: prompts.build(0, r).prompt.split() for r in trace.requests}
    for a, b in itertools.combinations(trace.requests, 2):
        blocks = _leading_common(list(a.hash_ids), list(b.hash_ids))
        shared = min(blocks * trace.block_size, a.input_length, b.input_length)
        assert words[a.line][:shared] == words[b.line][:shared]
        if shared < min(a.input_length, b.input_length):
            block = slice(shared, shared + trace.block_size)
            assert words[a.line][block] != words[b.line][block]
    assert [len(words[r.line]) for r in trace.requests] == [r.input_length for r in trace.requests]


def test_trace_identity_and_theoretical_reuse() -> None:
    trace = read_trace(SESSIONS)
    assert (trace.name, trace.block_size, trace.format) == (
        "two-sessions-and-singles", 16, "infermeter",
    )  # fmt: skip
    assert trace.sha256 == hashlib.sha256(SESSIONS.read_bytes()).hexdigest()
    assert trace.cut is None
    # Leading blocks seen earlier, in tokens: 0, 30, 16, 48, 0, 48, 32 of 40+30+48+70+20+64+33.
    assert trace.prefix_reuse_max() == pytest.approx(174 / 305)
    cut = read_trace(MOONCAKE, limit=12)
    assert len(cut.requests) == 12
    assert cut.lines == 40
    assert cut.cut == "first 12 of 40 requests (line 12, 3 s into the trace)"
    assert cut.sha256 == hashlib.sha256(MOONCAKE.read_bytes()).hexdigest()


def _request_records(output: Path) -> list[dict[str, Any]]:
    """The client's record of each request (`--raw-records`), by request index."""
    with gzip.open(raw_records_path(output), "rt") as lines:
        records = [record for line in lines if (record := json.loads(line))["kind"] == "request"]
    return sorted(records, key=lambda record: record["index"])


def _sent_in_trace_order(output: Path, trace: Trace) -> list[dict[str, Any]]:
    """The client's record of each request, in the trace's order: the records' prompt lengths
    say which request each one is."""
    records = _request_records(output)
    assert [r["input_tokens"] for r in records] == [r.input_length for r in trace.requests]
    return records


def _stated_lateness_s(point: dict[str, Any], output: Path) -> float:
    """The point's stated lateness (its largest send lag), checked against the raw records (it
    is what they show), plus a tick for a loop that woke early (the lag is stored as 0 then).
    The client's own send times are compared with the trace, not the in-process server's
    receive times, which a loaded machine delays beyond the client's lateness (the claim is
    the client's schedule)."""
    records = _request_records(output)
    lags_ms = [(r["send_ns"] - r["intended_send_ns"] - r["slot_wait_ns"]) / 1e6 for r in records]
    stated_ms: float = point["send_lag_ms"]["max"]
    assert stated_ms == pytest.approx(max(0.0, *lags_ms), abs=0.001)
    return stated_ms / 1000 + EARLY_TICK_S


def test_trace_replay_follows_the_arrivals_within_the_stated_lateness(
    fake_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_server.config.version = "0.9.1"
    fake_server.config.prefix_block_words = 8
    fake_server.config.itl_s = PACE_8B_ITL_S
    output = tmp_path / "trace.json"
    run = CliRunner().invoke(
        main,
        [
            "bench", "run", "--endpoint", fake_server.url, "--trace", str(SESSIONS),
            "--trace-speed", "2", "--output", str(output), "--gpu", "h100-sxm",
            "--model-id", "llama-3.1-8b-instruct", "--quiet", "--json", "--raw-records",
        ],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    trace = read_trace(SESSIONS)
    bodies = fake_server.stats.bodies
    assert len(bodies) == len(trace.requests) == 7
    (point,) = json.loads(run.stdout)["points"]
    late_s = _stated_lateness_s(point, output)
    # Requests that open a chain leave the client at their timestamp / 2 after the first
    # (which may itself be up to the lateness late).
    sent = _sent_in_trace_order(output, trace)
    for record, request in zip(sent, trace.requests, strict=True):
        if request.timestamp_ms is not None and request.delay_ms is None:
            offset = (record["send_ns"] - sent[0]["send_ns"]) / 1e9
            assert offset == pytest.approx(request.timestamp_ms / 2000, abs=late_s)
    prompts = TracePrompts(trace)
    # The server's log: every prompt it got is one of the trace's, and two prompts share
    # exactly the words of their common leading blocks (a word is a token without a tokenizer).
    built = {prompts.build(0, request).prompt: request for request in trace.requests}
    logged = [(body["prompt"].split(), built[body["prompt"]]) for body in bodies]
    for (words_a, a), (words_b, b) in itertools.combinations(logged, 2):
        blocks = _leading_common(list(a.hash_ids), list(b.hash_ids))
        shared = min(blocks * trace.block_size, a.input_length, b.input_length)
        assert _leading_common(words_a, words_b) == shared, (a.line, b.line)
    # A session's later turn waits for the reply before it, then its delay / 2 (less the tick
    # the event loop may wake early).
    assert (sent[3]["send_ns"] - sent[0]["end_ns"]) / 1e9 >= 0.075 - EARLY_TICK_S
    assert (sent[5]["send_ns"] - sent[2]["end_ns"]) / 1e9 >= 0.050 - EARLY_TICK_S
    result = Result.model_validate_json(output.read_text())
    workload = result.identity.workload
    assert workload.trace is not None
    assert workload.trace.sha256 == hashlib.sha256(SESSIONS.read_bytes()).hexdigest()
    assert (workload.trace.speed, workload.trace.rate, workload.trace.block_size) == (2.0, None, 16)
    assert workload.trace.prefix_reuse_max == pytest.approx(174 / 305, abs=1e-4)
    (stored,) = result.points
    assert stored.send_lag_ms is not None
    assert stored.turns is not None
    assert [t.turn for t in stored.turns] == [1, 2]
    assert stored.ttft_by_cached_share
    assert sum(b.requests for b in stored.ttft_by_cached_share) == 7
    # The stand-in's prefix cache (8-word blocks) saw the sharing the trace recorded.
    assert stored.telemetry is not None
    assert stored.telemetry.engine is not None
    hit_rate = stored.telemetry.engine.prefix_cache_hit_rate
    stats = fake_server.stats
    assert hit_rate == pytest.approx(stats.prefix_hits / stats.prefix_queries, abs=1e-4)
    assert 0 < hit_rate <= workload.trace.prefix_reuse_max


def test_trace_workload_key_follows_the_trace_not_the_lengths(
    fake_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_server.config.version = "0.9.1"
    fake_server.config.itl_s = PACE_8B_ITL_S
    keys = []
    for speed in ("4", "8"):
        output = tmp_path / f"speed{speed}.json"
        run = CliRunner().invoke(
            main,
            [
                "bench", "run", "--endpoint", fake_server.url, "--trace", str(SESSIONS),
                "--trace-speed", speed, "--output", str(output), "--gpu", "h100-sxm",
                "--model-id", "llama-3.1-8b-instruct", "--quiet",
            ],
        )  # fmt: skip
        assert run.exit_code == 0, run.output
        keys.append(workload_key(Result.model_validate_json(output.read_text()).identity.workload))
    assert keys[0] != keys[1]


def _write(path: Path, lines: list[object]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


ROW = {"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [0, 1]}


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([], r"no requests in the trace"),
        ([ROW, {**ROW, "timestamp": -1}], r":2: timestamp: expected milliseconds from 0 to 1e\+11"),
        (
            [{**ROW, "timestamp": 500}, ROW],
            r":2: timestamp: 0 ms is before the previous line's 500 ms",
        ),
        ([{**ROW, "input_length": -3}], r":1: input_length: expected a whole number from 1 to"),
        ([{**ROW, "output_length": 0}], r":1: output_length: expected a whole number from 1 to"),
        # Beyond any context: a prompt of 10^11 words filled the memory (the host's OOM killer
        # ended the run), an answer of 10^20 tokens streamed for ever.
        (
            [{**ROW, "input_length": 10**11}],
            r":1: input_length: expected a whole number from 1 to 10,000,000, got 100000000000",
        ),
        ([{**ROW, "output_length": 10**20}], r":1: output_length: expected a whole number from"),
        # A request 10^300 ms in waited in silence for ever; one of 400 digits ended the run in
        # a traceback (OverflowError: int too large to convert to float).
        ([ROW, {**ROW, "timestamp": 1e300}], r":2: timestamp: expected milliseconds from 0 to"),
        ([ROW, {**ROW, "timestamp": 10**400}], r":2: timestamp: expected milliseconds from 0 to"),
        (
            [{**ROW, "session_id": "a"}, {**ROW, "session_id": "a", "delay": 10**400}],
            r":2: delay: expected milliseconds from 0 to 1e\+11 \(3.2 years\)",
        ),
        (
            [{**ROW, "hash_ids": [0, 1, 2]}],
            r":1: hash_ids: 3 blocks, but input_length 600 needs 2 blocks of 512 tokens",
        ),
        ([{**ROW, "hash_ids": [0, "x"]}], r":1: hash_ids: expected a list of whole numbers"),
        ([[1, 2]], r":1: expected a JSON object"),
        (
            [{"infermeter_trace": 1, "block_size": 0}, ROW],
            r":1: block_size: expected a whole number",
        ),
        # The name reaches the result's dataset, one line of plain text: the run measured,
        # then its result was refused ('identity.workload.trace.name: contains the control …').
        (
            [{"infermeter_trace": 1, "name": "x\x1b]0;pwned\x07"}, ROW],
            r":1: name: 'x\\x1b\]0;pwned\\x07': contains the control character U\+001B",
        ),
        (
            [{"infermeter_trace": 1, "name": "x\n  1. forged"}, ROW],
            r":1: name: 'x\\n  1. forged': holds a line break; the field is one line of text",
        ),
        (
            [{"infermeter_trace": 1, "name": "n" * 3000}, ROW],
            r":1: name: 'nnn.*\(3000 characters\): String should have at most 2000 characters",
        ),
        (  # each block was 10^14 words: a MemoryError's traceback, or the OOM killer
            [{"infermeter_trace": 1, "block_size": 10**14}, {**ROW, "hash_ids": [0]}],
            r":1: block_size: expected a whole number of tokens from 1 to 10,000,000",
        ),
    ],
)
def test_hostile_trace_lines_name_the_line_and_field(
    tmp_path: Path, lines: list[object], message: str
) -> None:
    with pytest.raises(WorkloadFileError, match=message):
        read_trace(_write(tmp_path / "bad.jsonl", lines))


def test_a_trace_line_giving_a_field_twice_is_refused(tmp_path: Path) -> None:
    # Bug: json kept the last of the two, silently: this line replayed 9,000 tokens.
    path = tmp_path / "twice.jsonl"
    path.write_text(
        '{"timestamp": 0, "input_length": 600, "input_length": 9000, "output_length": 5}\n'
    )
    with pytest.raises(
        WorkloadFileError, match=r"twice.jsonl:1: not JSON \(duplicate key 'input_length'\)"
    ):
        read_trace(path)


def test_a_trace_named_by_a_file_name_no_result_may_hold_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "<img src=x onerror=alert(1)>.jsonl", [ROW])
    with pytest.raises(WorkloadFileError) as caught:
        read_trace(path)
    assert str(caught.value) == (
        f"{path}: the trace is named by its file, '<img src=x onerror=alert(1)>.jsonl': "
        "contains markup '<img src=x onerror=alert(1)>'; strings are plain text; name it in a "
        'first line {"infermeter_trace": 1, "name": …} or rename the file'
    )


def test_hostile_traces_give_one_line_and_exit_1(
    fake_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    bad_gzip = tmp_path / "bad.jsonl.gz"
    packed = gzip.compress(MOONCAKE.read_bytes())
    bad_gzip.write_bytes(packed[:20] + bytes(255 - b for b in packed[20:200]))  # damaged
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    unsorted = _write(tmp_path / "unsorted.jsonl", [{**ROW, "timestamp": 9}, ROW])
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)  # would block a reader forever
    for path, expected in (
        (bad_gzip, "not a readable gzip file"),
        (empty, "no requests in the trace"),
        (unsorted, "before the previous line's"),
        (fifo, "not a regular file"),
    ):
        run = CliRunner().invoke(
            main, ["bench", "run", "--endpoint", fake_server.url, "--trace", str(path), "--quiet"]
        )
        assert run.exit_code == 1, run.output
        assert expected in run.output
        assert "Traceback" not in run.output
        assert len(run.output.strip().splitlines()) == 1, run.output


@pytest.mark.parametrize(
    ("line", "where"),
    [
        ({**ROW, "timestamp": -1}, "bad.jsonl:2: timestamp: expected milliseconds from 0 to"),
        ({**ROW, "timestamp": 10**400}, "bad.jsonl:2: timestamp: expected milliseconds from 0"),
        ({**ROW, "input_length": -3}, "bad.jsonl:2: input_length: expected a whole number from"),
        ({**ROW, "output_length": -1}, "bad.jsonl:2: output_length: expected a whole number from"),
        (
            {**ROW, "hash_ids": [0, 1, 2]},
            "bad.jsonl:2: hash_ids: 3 blocks, but input_length 600 needs 2 blocks of 512 tokens",
        ),
    ],
)
def test_hostile_trace_fields_give_one_line_naming_file_line_and_field_and_exit_1(
    fake_server: FakeOpenAIServer, tmp_path: Path, line: dict[str, object], where: str
) -> None:
    bad = _write(tmp_path / "bad.jsonl", [ROW, line])
    run = CliRunner().invoke(
        main, ["bench", "run", "--endpoint", fake_server.url, "--trace", str(bad), "--quiet"]
    )
    assert run.exit_code == 1, run.output
    assert "Traceback" not in run.output
    assert len(run.output.strip().splitlines()) == 1, run.output
    assert where in run.output
    assert str(bad) in run.output
    assert fake_server.stats.bodies == []  # refused before a single request was sent


def test_a_gzip_trace_reads_as_the_plain_one_with_its_own_hash(tmp_path: Path) -> None:
    packed = tmp_path / "trace.jsonl.gz"
    packed.write_bytes(gzip.compress(MOONCAKE.read_bytes()))
    trace = read_trace(packed)
    assert trace.requests == read_trace(MOONCAKE).requests
    assert trace.sha256 == hashlib.sha256(packed.read_bytes()).hexdigest()
    assert trace.name == "trace.jsonl"


def test_a_1_gib_trace_is_streamed_not_loaded(tmp_path: Path) -> None:
    """A sparse 1-GiB file (no disk written) after 40 real lines: the replay keeps the first 5,
    hashes and counts the rest, and never holds more than a few MiB."""
    import tracemalloc

    huge = tmp_path / "huge.jsonl"
    with huge.open("wb") as out:
        out.write(MOONCAKE.read_bytes())
        out.truncate(1 << 30)  # a hole of NUL bytes: one 1-GiB "line" past the cut
    tracemalloc.start()
    with pytest.raises(WorkloadFileError, match=r"huge\.jsonl:41: a line longer than 4 MiB"):
        read_trace(huge)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 64 * 1024 * 1024
    assert huge.stat().st_size == 1 << 30


def test_trace_options_are_checked(fake_server: FakeOpenAIServer) -> None:
    base = ["bench", "run", "--endpoint", fake_server.url, "--trace", str(SESSIONS), "--quiet"]
    for extra, option in (
        (["--concurrency", "2"], "--concurrency"),
        (["--request-rate", "2", "--trace-speed", "3"], "--trace-speed"),
        (["--input-len", "100"], "--input-len"),
    ):
        run = CliRunner().invoke(main, [*base, *extra])
        assert run.exit_code in (1, 2), run.output
        assert option in run.output
        assert "Traceback" not in run.output


def test_trace_block_size_help_states_the_default_the_reader_uses() -> None:
    run = CliRunner().invoke(main, ["bench", "run", "--help"])
    assert run.exit_code == 0, run.output
    help_text = " ".join(run.output.split())
    assert f"hash_ids block of a Mooncake trace (default {DEFAULT_BLOCK_SIZE}," in help_text


def test_a_plan_names_a_trace_and_its_command_replays_it(tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "runs:\n"
        f"  - {{name: replay, endpoint: http://127.0.0.1:9, trace: {SESSIONS}, trace-speed: 2}}\n"
    )
    (run,) = load_plan(plan)
    assert run.session.run.trace == SESSIONS
    assert run.session.run.trace_speed == 2.0
    assert f"--trace {SESSIONS}" in run.session.command
    assert "--trace-speed 2" in run.session.command


def test_aiperf_lines_messages_text_and_no_hash_ids_are_replayed_as_given(
    fake_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    """AIPerf's Mooncake extensions: `messages` (history mode) and `text_input` are sent as
    recorded; a line without `hash_ids` gets a prompt that shares nothing."""
    chat = [{"role": "user", "content": "Hello there"}]
    later = [*chat, {"role": "assistant", "content": "Hi!"}, {"role": "user", "content": "More"}]
    trace = _write(
        tmp_path / "aiperf.jsonl",
        [
            {"timestamp": 0, "session_id": "s", "messages": chat, "output_length": 3},
            {"timestamp": 10, "text_input": "what is a prefix cache", "output_length": 3},
            {"timestamp": 20, "input_length": 12, "output_length": 3},
            {"timestamp": 30, "input_length": 12, "output_length": 3},
            {"session_id": "s", "delay": 5, "messages": later, "output_length": 3},
        ],
    )
    run = CliRunner().invoke(
        main,
        ["bench", "run", "--endpoint", fake_server.url, "--trace", str(trace), "--api", "chat",
         "--quiet", "--json"],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    sent = sorted((b["messages"] for b in fake_server.stats.bodies), key=len)
    assert {json.dumps(m) for m in sent} >= {json.dumps(chat), json.dumps(later)}
    assert [{"role": "user", "content": "what is a prefix cache"}] in sent
    unique = [m[0]["content"].split() for m in sent if len(m[0]["content"].split()) == 12]
    assert len(unique) == 2
    assert unique[0][:4] != unique[1][:4]
    assert read_trace(trace).prefix_reuse_max() == 0.0


def test_aiperf_messages_of_text_parts_read_as_the_multi_turn_datasets_read_them(
    tmp_path: Path,
) -> None:
    # One reader of a message's text (`dataset.message_text`): the trace refused the content
    # parts OpenAI's API takes, which the multi-turn dataset reads.
    parts = [{"type": "text", "text": "Hello"}, {"type": "text", "text": "there"}]
    row = {"timestamp": 0, "messages": [{"role": "user", "content": parts}], "output_length": 3}
    (request,) = read_trace(_write(tmp_path / "parts.jsonl", [row])).requests
    assert request.messages == (("user", "Hello\nthere"),)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({**ROW, "tools": []}, r":1: tools: not supported by bench run --trace"),
        ({**ROW, "extra": {"a": 1}}, r":1: extra: not supported"),
        (
            {
                "timestamp": 0,
                "messages": [{"role": "user", "content": "x"}],
                "output_length": 2,
                "message_mode": "delta",
            },
            r":1: message_mode: only `history`",
        ),
        (
            {"timestamp": 0, "messages": [{"role": "user"}], "output_length": 2},
            r":1: messages: expected a list of \{role, content\}",
        ),
        (
            {
                "timestamp": 0,
                "messages": [{"role": "user", "content": [{"type": "image_url"}]}],
                "output_length": 2,
            },
            r":1: messages: expected a list of \{role, content\} objects with text content",
        ),
    ],
)
def test_aiperf_extensions_not_replayed_are_refused(
    tmp_path: Path, line: dict[str, object], message: str
) -> None:
    with pytest.raises(WorkloadFileError, match=message):
        read_trace(_write(tmp_path / "ext.jsonl", [line]))


def test_a_dag_conversation_among_request_lines_is_refused_by_name_in_one_line(
    fake_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    """A file whose first line is a request and a later line a conversation of `turns` (AIPerf's
    Conversation DAG, `bench.workloads.trace_dag`) mixes two formats: refused, not guessed."""
    ask = [{"role": "user", "content": "plan the task"}]
    mixed = _write(
        tmp_path / "mixed.jsonl",
        [ROW, {"session_id": "root", "turns": [{"messages": ask, "max_tokens": 8}]}],
    )
    run = CliRunner().invoke(
        main, ["bench", "run", "--endpoint", fake_server.url, "--trace", str(mixed), "--quiet"]
    )
    assert run.exit_code == 1, run.output
    assert "Traceback" not in run.output
    assert len(run.output.strip().splitlines()) == 1, run.output
    assert f"{mixed}:2: turns: " in run.output
    assert "Conversation DAG `dag_jsonl`" in run.output
    assert fake_server.stats.bodies == []


def test_a_client_that_falls_behind_the_trace_is_judged(
    fake_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    """400 requests of 4,096 words all due at once: the client builds them one after another,
    so the later ones leave late, and the point says the client fell behind the trace."""
    burst = _write(
        tmp_path / "burst.jsonl",
        [
            {"timestamp": 0, "input_length": 4096, "output_length": 2, "hash_ids": [n, n + 1]}
            for n in range(0, 800, 2)
        ]
        + [{"timestamp": 5, "input_length": 10, "output_length": 2}],
    )
    run = CliRunner().invoke(
        main,
        ["bench", "run", "--endpoint", fake_server.url, "--trace", str(burst), "--trace-block-size",
         "2048", "--quiet", "--json"],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    (point,) = json.loads(run.stdout)["points"]
    assert point["send_lag_ms"]["p99"] > 10
    assert "client_send_lag" in [verdict["code"] for verdict in point["verdicts"]]


def test_the_mooncake_excerpt_replays_on_its_timestamps_and_its_cut_is_stated(
    fake_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_server.config.version = "0.9.1"
    fake_server.config.itl_s = PACE_8B_ITL_S
    output = tmp_path / "mooncake.json"
    run = CliRunner().invoke(
        main,
        [
            "bench", "run", "--endpoint", fake_server.url, "--trace", str(MOONCAKE),
            "--trace-speed", "20", "--num-requests", "20", "--output", str(output),
            "--gpu", "h100-sxm", "--model-id", "llama-3.1-8b-instruct", "--quiet", "--json",
            "--raw-records",
        ],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    trace = read_trace(MOONCAKE, limit=20)
    prompts = TracePrompts(trace)
    # The server got the excerpt's first 20 prompts, each once.
    got = sorted(body["prompt"] for body in fake_server.stats.bodies)
    assert got == sorted(prompts.build(0, r).prompt for r in trace.requests)
    (point,) = json.loads(run.stdout)["points"]
    late_s = _stated_lateness_s(point, output)
    # Each left the client at its timestamp / 20 after the first, within the stated lateness.
    sent = _sent_in_trace_order(output, trace)
    for record, request in zip(sent, trace.requests, strict=True):
        assert (record["send_ns"] - sent[0]["send_ns"]) / 1e9 == pytest.approx(
            (request.timestamp_ms or 0.0) / 20_000, abs=late_s
        )
    identity = Result.model_validate_json(output.read_text()).identity.workload.trace
    assert identity is not None
    assert (identity.requests, identity.requests_in_file) == (20, 40)
    assert identity.cut == "first 20 of 40 requests (line 20, 3 s into the trace)"
    assert (identity.format, identity.block_size) == ("mooncake", 512)


def test_duration_cuts_the_trace_at_the_arrivals_it_covers() -> None:
    """--duration 0.5 at speed 20 covers the first 10 s of the trace: 38 of the excerpt's 40
    requests arrive by 9 s, the next at 12 s."""
    config = RunConfig(
        endpoint="http://127.0.0.1:9", trace=MOONCAKE, trace_speed=20, duration_s=0.5
    )
    replay = trace_setup(config, None)
    assert replay is not None
    assert replay.plan.num_requests == 38
    assert replay.identity["cut"] == "first 38 of 40 requests (line 38, 9 s into the trace)"
    retimed = trace_setup(replace(config, trace_speed=1.0, request_rates=(50.0,)), None)
    assert retimed is not None
    assert retimed.identity["rate"] == 50.0
    assert retimed.identity["speed"] is None
    assert 10 <= retimed.plan.num_requests <= 40  # a Poisson process at 50/s for 0.5 s


def test_a_replay_keeps_a_bounded_number_of_prompt_blocks(tmp_path: Path) -> None:
    # Every block made was kept: a 35 MB trace of 4 million one-token blocks took 750 MB.
    size, blocks = 1024, 100
    rows = [
        {"timestamp": n, "input_length": size * blocks, "output_length": 1,
         "hash_ids": list(range(n * blocks, (n + 1) * blocks))}
        for n in range(30)
    ]  # fmt: skip
    header = {"infermeter_trace": 1, "block_size": size}
    trace = read_trace(_write(tmp_path / "t.jsonl", [header, *rows]))
    prompts = TracePrompts(trace)
    first = prompts.build(0, trace.requests[0]).prompt
    tracemalloc.start()
    try:
        for index, request in enumerate(trace.requests[1:], start=1):
            prompts.build(index, request)
        kept_mib = tracemalloc.get_traced_memory()[0] / 2**20
    finally:
        tracemalloc.stop()
    assert kept_mib < 16  # all 3,000 blocks kept: 25 MiB; 1,024 of them: 8.5 MiB
    assert prompts.build(0, trace.requests[0]).prompt == first  # made again, the same
