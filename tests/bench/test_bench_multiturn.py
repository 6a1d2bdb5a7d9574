"""Multi-turn sessions (`chat-multiturn`): the history each turn sends, TTFT by turn and the
prefix-cache hit rate read from /metrics, against a stand-in server that models a prefix cache."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from bench_helpers import PACE_8B_ITL_S
from click.testing import CliRunner
from fake_openai_server import FakeOpenAIServer

from infermeter.bench.cli.main import main
from infermeter.bench.errors import WorkloadFileError
from infermeter.bench.workloads.conversation import (
    ConversationSpec,
    SessionFactory,
    load_conversations,
)
from infermeter.bench.workloads.lengths import MAX_TURNS, parse_length, parse_turns
from infermeter.registry.models import Result


def test_sessions_are_reproducible_and_unlike_each_other() -> None:
    spec = ConversationSpec(turns=parse_length("uniform:2:5"), seed=3, think_time_s=1.5)
    factory = SessionFactory(spec)
    first, again, other = factory.session(0), SessionFactory(spec).session(0), factory.session(1)
    assert first == again
    assert first.user_messages[0] != other.user_messages[0]
    assert 2 <= len(first.user_messages) <= 5
    assert len(first.reply_tokens) == len(first.user_messages)
    assert all(t >= 0 for t in first.think_times_s)
    assert first.user_messages[0].startswith("session 0.0: ")


# A real ShareGPT conversation: three exchanges of the file vLLM's benchmarks download
# (tests/data/datasets/README.md says where from, and its licence).
SHAREGPT = Path(__file__).resolve().parents[1] / "data" / "datasets" / "sharegpt-v3-excerpt.json"


def test_load_conversations_reads_a_real_sharegpt_conversation() -> None:
    turns = json.loads(SHAREGPT.read_text())[0]["conversations"]
    (session,) = load_conversations(SHAREGPT)
    assert session.user_messages == tuple(t["value"] for t in turns[0::2])
    assert session.user_messages[2].startswith("What are the mental triggers in Jeff Walker's")
    # Each reply's length is the word count of the gpt turn after its human turn.
    assert session.reply_tokens == (202, 260, 223)
    assert session.user_tokens == (29, 28, 14)
    assert session.system is None


OPENAI = SHAREGPT.with_name("openai-cookbook-toy-chat-excerpt.jsonl")


def test_load_conversations_reads_openai_messages_as_openai_writes_them(tmp_path: Path) -> None:
    happy = "You are a happy assistant that puts a positive spin on everything."
    one, four, bare = load_conversations(OPENAI)  # the fourth line has no user turn: skipped
    assert (one.system, one.user_messages, one.reply_tokens) == (
        happy,
        ("I fell off my bike today.",),
        (7,),
    )
    assert four.system == happy
    assert four.user_messages == (
        "I lost my tennis match today.",
        "But I trained so hard!",
        "I'm going to switch to golf.",
        "I don't even know how to play golf.",
    )
    assert four.reply_tokens == (6, 6, 4, 4)
    assert four.user_tokens == (6, 5, 6, 8)
    assert (bare.system, bare.user_messages, bare.reply_tokens) == (
        None,
        ("I lost my book today.",),
        (8,),
    )
    assert [session.index for session in (one, four, bare)] == [0, 1, 2]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "no turns"}\n')
    with pytest.raises(WorkloadFileError, match=r"bad\.jsonl:1: expected a `conversations`"):
        load_conversations(bad)


def test_load_conversations_reads_openai_content_parts_as_text(tmp_path: Path) -> None:
    # A system message whose content was a list of parts was sent as its Python repr
    # ("[{'type': 'text', …}]"), and a user turn written so was skipped without a word.
    def parts(*texts: str) -> list[dict[str, str]]:
        return [{"type": "text", "text": text} for text in texts]

    image = [{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]
    rows = [
        {"messages": [
            {"role": "system", "content": parts("Be brief.", "Be kind.")},
            {"role": "user", "content": parts("I fell off my bike today.")},
            {"role": "assistant", "content": parts("Ouch, heal well!")},
            {"role": "user", "content": image},  # not text: not sent
            {"role": "assistant", "content": "A picture."},
        ]},
    ]  # fmt: skip
    path = tmp_path / "parts.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    (session,) = load_conversations(path)
    assert session.system == "Be brief.\nBe kind."
    assert session.user_messages == ("I fell off my bike today.",)
    assert session.reply_tokens == (3,)


def test_load_conversations_passes_over_a_message_without_a_role(tmp_path: Path) -> None:
    # Bug (8b50e811): a message with no "role" ended the run in a KeyError traceback; it is
    # passed over, as a message that is no object is.
    rows = [
        {"messages": [
            {"content": "Be brief."},
            {"role": "user", "content": "Hi there."},
            {"role": "assistant", "content": "Hello!"},
        ]},
    ]  # fmt: skip
    path = tmp_path / "roleless.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    (session,) = load_conversations(path)
    assert session.system is None
    assert session.user_messages == ("Hi there.",)


def test_multiturn_run_replays_a_real_sharegpt_conversation(
    fake_server: FakeOpenAIServer,
) -> None:
    run = CliRunner().invoke(
        main,
        [
            "bench", "run", "--endpoint", fake_server.url, "--profile", "chat-multiturn",
            "--api", "chat", "--concurrency", "1", "--think-time", "0", "--dataset",
            str(SHAREGPT), "--num-requests", "3", "--warmup", "0", "--quiet", "--json",
        ],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    humans = [t["value"] for t in json.loads(SHAREGPT.read_text())[0]["conversations"][0::2]]
    bodies = fake_server.stats.bodies
    assert len(bodies) == 3
    for turn, body in enumerate(bodies, start=1):
        messages = body["messages"]
        # Turn t sends the conversation's first t human messages with the server's own replies.
        assert [m["content"] for m in messages if m["role"] == "user"] == humans[:turn]
        assert [m["role"] for m in messages] == ["user", "assistant"] * (turn - 1) + ["user"]
    assert [b["max_tokens"] for b in bodies] == [202, 260, 223]
    (point,) = json.loads(run.stdout)["points"]
    assert point["completed"] == 3


def test_multiturn_run_shows_ttft_rising_by_turn_and_the_prefix_hit_rate_standin(
    fake_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    config = fake_server.config
    config.version = "0.9.1"
    config.prefix_block_words = 8
    config.ttft_s = 0.002
    config.ttft_s_per_new_word = 0.002
    config.ttft_s_per_cached_word = 0.002  # as dear as a new word: the growth shows clearly
    config.itl_s = PACE_8B_ITL_S
    output = tmp_path / "multiturn.json"
    run = CliRunner().invoke(
        main,
        [
            "bench", "run", "--endpoint", fake_server.url, "--profile", "chat-multiturn",
            "--api", "chat", "--concurrency", "2", "--turns", "4", "--think-time", "0.01",
            "--input-len", "24", "--output-len", "8", "--num-requests", "16", "--warmup", "0",
            "--output", str(output), "--gpu", "h100-sxm", "--model-id", "llama-3.1-8b-instruct",
            "--quiet",
        ],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    # What was sent: turn 2 of a session carries turn 1, the server's own reply, and turn 2.
    bodies = fake_server.stats.bodies
    assert len(bodies) == 16
    second = next(b for b in bodies if len(b["messages"]) == 3)
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    assert second["messages"][1]["content"] == " tok" * 8
    assert max(len(b["messages"]) for b in bodies) == 7

    result = Result.model_validate_json(output.read_text())
    workload = result.identity.workload
    assert workload.profile == "chat-multiturn"
    assert workload.turns is not None
    assert workload.turns.model_dump()["value"] == 4
    assert workload.think_time_s == 0.01
    assert workload.dataset is not None
    assert "whole history" in workload.dataset
    (point,) = result.points
    assert point.turns is not None
    assert [t.turn for t in point.turns] == [1, 2, 3, 4]
    assert [t.requests for t in point.turns] == [4, 4, 4, 4]
    prompts = [t.input_tokens_mean for t in point.turns]
    assert prompts == sorted(prompts)
    assert prompts[3] - prompts[0] == pytest.approx(3 * (24 + 8))  # each turn adds one exchange
    medians = [t.ttft_ms.p50 for t in point.turns]
    assert all(m is not None for m in medians)
    assert medians == sorted(medians)  # type: ignore[type-var]
    # The model: 26 new words each turn and 32 more cached ones, 2 ms each.
    assert medians[3] - medians[0] == pytest.approx(3 * 32 * 2, abs=60)  # type: ignore[operator]
    # The hit rate comes from the server's /metrics counters, differenced over the point.
    assert point.telemetry is not None
    assert point.telemetry.engine is not None
    stats = fake_server.stats
    expected = stats.prefix_hits / stats.prefix_queries
    assert expected > 0.3
    assert point.telemetry.engine.prefix_cache_hit_rate == pytest.approx(expected, abs=1e-4)


def test_multiturn_options_are_checked(fake_server: FakeOpenAIServer) -> None:
    runner = CliRunner()
    base = ["bench", "run", "--endpoint", fake_server.url, "--num-requests", "4"]
    rate = runner.invoke(main, [*base, "--profile", "chat-multiturn", "--request-rate", "5"])
    assert rate.exit_code == 2
    assert "--request-rate: does not apply to --profile chat-multiturn" in rate.output
    turns = runner.invoke(main, [*base, "--concurrency", "1", "--turns", "3"])
    assert turns.exit_code == 2
    assert "--turns: applies to --profile chat-multiturn" in turns.output
    assert fake_server.stats.requests == 0


@pytest.mark.parametrize("option", ["--output-len", "--turns", "--input-len"])
def test_a_multiturn_dataset_refuses_what_its_conversations_set(option: str) -> None:
    # --output-len and --turns were passed over: the replies kept the conversations' lengths
    # and their turns, while the result stated the --output-len given.
    run = CliRunner().invoke(
        main,
        ["bench", "run", "--endpoint", "http://127.0.0.1:9", "--profile", "chat-multiturn",
         "--dataset", str(SHAREGPT), option, "16"],
    )  # fmt: skip
    assert run.exit_code == 2, run.output
    assert run.stderr == (
        f"Error: {option}: applies to synthesised prompts, not to a --dataset's, which keep "
        "their own lengths and turns\n"
    )


@pytest.mark.parametrize(
    ("turns", "message"),
    [
        ("0", "'0': a session must have at least 1 turn"),
        ("2.5", "'2.5': turn counts must be whole numbers"),
        (
            "5000001",
            "'5000001': a session must have at most 5,000,000 turns (the last turn sends every "
            "earlier message, each at least a token, in one context of at most 10,000,000 tokens)",
        ),
    ],
)
def test_turns_are_refused_in_turns_and_bounded_by_a_context(turns: str, message: str) -> None:
    # They said "lengths must be at least 1 token" and took up to 10,000,000 turns, whose
    # session took minutes to make (3.1 s per 100,000 turns) before its first request.
    run = CliRunner().invoke(
        main,
        ["bench", "run", "--endpoint", "http://127.0.0.1:9", "--profile", "chat-multiturn",
         "--turns", turns],
    )  # fmt: skip
    assert run.exit_code == 2, run.output
    assert run.stderr == f"Error: --turns: {message}\n"


def test_a_drawn_number_of_turns_stops_at_the_bound() -> None:
    spread = parse_turns("lognormal:4000000:3")
    assert spread.maximum == MAX_TURNS == 5_000_000
    assert max(spread.sample(random.Random(seed)) for seed in range(20)) == MAX_TURNS
