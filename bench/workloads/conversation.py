"""Multi-turn chat sessions, the `chat-multiturn` profile: real prefix reuse, as in chat and agents.

A session is N turns. Turn t sends the whole chat so far — every earlier user message and the
reply the server actually gave to it — plus the t-th user message, so the engine's prefix cache
can serve everything but the newest part, and the prompt grows turn by turn. Between a reply and
the next user message the user thinks for a while (exponentially distributed, mean
`think_time_s`; the user's think time is not the server's load, so it is outside every latency).

Synthetic sessions (reproducible from the seed, as `bench.workloads.prompts`'s requests):

| what                      | distribution (tokens; `parse_length` syntax) |
|---------------------------|----------------------------------------------|
| turns per session         | `uniform:2:6`                                |
| each new user message     | `lognormal:128:0.6`, clipped to 16–1024      |
| each reply (`max_tokens`) | `lognormal:192:0.6`, clipped to 16–1024      |
| think time                | exponential, mean 2 s                        |

`--turns`, `--input-len`, `--output-len` and `--think-time` override them. A dataset file gives
real conversations instead (`load_conversations`): ShareGPT's full `conversations` (every human
turn, each reply's length from the gpt turn after it) or OpenAI-messages JSONL (`{"messages":
[{"role": "user", …}, {"role": "assistant", …}, …]}`, system messages kept at the start).

Load: a closed loop of `concurrency` users, each running one session after another (a user
whose session ends starts the next unused one), until the point's request count or duration is
spent; the first `warmup_requests` turns sent are warm-up. A failed turn ends its session (its
history would be wrong).
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from infermeter.bench.client.request_record import PromptRequest, RequestRecord
from infermeter.bench.errors import BenchConfigError, WorkloadFileError
from infermeter.bench.run.distribution import Distribution, summarize
from infermeter.bench.run.load import PointPlan, PointRun, Send
from infermeter.bench.run.request_figures import ttft_s
from infermeter.bench.workloads.dataset import message_text, read_json_rows
from infermeter.bench.workloads.lengths import LengthDistribution
from infermeter.bench.workloads.profiles import PROFILES
from infermeter.bench.workloads.prompts import PROMPT_WORDS
from infermeter.calculators.units import NS_PER_S

DEFAULT_TURNS = LengthDistribution("uniform", 2, 6)
DEFAULT_USER_LEN = PROFILES["chat-multiturn"].input_len
DEFAULT_REPLY_LEN = PROFILES["chat-multiturn"].output_len
DEFAULT_THINK_TIME_S = 2.0


@dataclass(frozen=True)
class Session:
    """One conversation: the system prompt, the user messages and each reply's length."""

    index: int
    user_messages: tuple[str, ...]
    reply_tokens: tuple[int, ...]
    think_times_s: tuple[float, ...]
    system: str | None = None
    user_tokens: tuple[int, ...] = ()


@dataclass(frozen=True)
class ConversationSpec:
    """What sessions look like (see the module docstring for the defaults)."""

    turns: LengthDistribution = DEFAULT_TURNS
    user_len: LengthDistribution = DEFAULT_USER_LEN
    reply_len: LengthDistribution = DEFAULT_REPLY_LEN
    think_time_s: float = DEFAULT_THINK_TIME_S
    seed: int = 0
    prompt_salt: int = 0

    def __post_init__(self) -> None:
        if self.think_time_s < 0:
            raise BenchConfigError("must not be negative", "--think-time")


class SessionFactory:
    """Session `index`, from the spec or from a dataset (taken in a seeded order)."""

    def __init__(self, spec: ConversationSpec, dataset: Sequence[Session] | None = None) -> None:
        self.spec = spec
        self.dataset = list(dataset) if dataset else None
        self._order = list(range(len(self.dataset))) if self.dataset else []
        random.Random(f"{spec.seed}:sessions").shuffle(self._order)

    def session(self, index: int) -> Session:
        """The same index and spec always give the same session (the think times too)."""
        spec = self.spec
        think = random.Random(f"{spec.seed}:{index}:think")

        def pauses(turns: int) -> tuple[float, ...]:
            mean = spec.think_time_s
            return tuple(think.expovariate(1 / mean) if mean > 0 else 0.0 for _ in range(turns))

        if self.dataset:
            entry = self.dataset[self._order[index % len(self.dataset)]]
            return Session(
                index,
                entry.user_messages,
                entry.reply_tokens,
                pauses(len(entry.user_messages)),
                entry.system,
                entry.user_tokens,
            )
        lengths = random.Random(f"{spec.seed}:{index}:session-lengths")
        text = random.Random(f"{spec.seed}:{spec.prompt_salt}:{index}:session-text")
        turns = spec.turns.sample(lengths)
        user_tokens = tuple(spec.user_len.sample(lengths) for _ in range(turns))
        replies = tuple(spec.reply_len.sample(lengths) for _ in range(turns))
        # Session and salt open the first message, so no two sessions share a prefix.
        messages = tuple(
            (f"session {index}.{spec.prompt_salt}: " if turn == 0 else "")
            + " ".join(text.choices(PROMPT_WORDS, k=tokens))
            for turn, tokens in enumerate(user_tokens)
        )
        return Session(index, messages, replies, pauses(turns), None, user_tokens)


def _words(text: str) -> int:
    return len(text.split())


def load_conversations(path: Path) -> list[Session]:
    """Conversations from a ShareGPT file (JSON array or lines of `conversations`) or an
    OpenAI-messages JSONL file; token counts are word counts (the server's usage is what is
    reported). Raises WorkloadFileError naming the line."""
    rows = read_json_rows(path)
    sessions: list[Session] = []
    for number, row in rows:
        if isinstance(row, dict) and isinstance(row.get("conversations"), list):
            turns = [
                ("user" if t.get("from") == "human" else "assistant", t.get("value"))
                for t in row["conversations"]
                if isinstance(t, dict) and t.get("from") in ("human", "gpt")
            ]
            system = None
        elif isinstance(row, dict) and isinstance(row.get("messages"), list):
            messages = [m for m in row["messages"] if isinstance(m, dict)]
            systems = [
                message_text(m.get("content")) for m in messages if m.get("role") == "system"
            ]
            system = systems[0] if systems and systems[0] else None
            turns = [
                (str(m.get("role")), message_text(m.get("content")))
                for m in messages
                if m.get("role") in ("user", "assistant")
            ]
        else:
            raise WorkloadFileError(
                f"{path}:{number}: expected a `conversations` (ShareGPT) or `messages` "
                "(OpenAI) list",
                "--dataset",
            )
        users: list[str] = []
        replies: list[int] = []
        for (role, content), (next_role, reply) in itertools.pairwise(turns):
            if (
                role == "user"
                and next_role == "assistant"
                and isinstance(content, str)
                and isinstance(reply, str)
                and content.strip()
            ):
                users.append(content)
                replies.append(max(_words(reply), 1))
        if users:
            index = len(sessions)
            sessions.append(
                Session(
                    index,
                    tuple(users),
                    tuple(replies),
                    (),
                    system,
                    tuple(_words(u) for u in users),
                )
            )
    if not sessions:
        raise WorkloadFileError(
            f"{path}: no conversation with a user turn followed by a reply", "--dataset"
        )
    return sessions


async def run_sessions(
    send: Send,
    factory: SessionFactory,
    plan: PointPlan,
    first_session: int = 0,
    into: PointRun | None = None,
) -> PointRun:
    """One closed-loop point of multi-turn sessions (see the module docstring); records come
    back in the order their requests were sent. Request indices start at `plan.first_index`,
    sessions at `first_session`; `into` as `bench.run.load.run_point` takes it."""
    if plan.concurrency is None:
        raise BenchConfigError(
            "multi-turn sessions run as concurrent users: give --concurrency", "--request-rate"
        )
    run = into if into is not None else PointRun(plan)
    cpu_start = time.process_time()
    wall_start = time.monotonic()
    users = _Users(send, factory, plan, run, first_session)
    await asyncio.gather(*(users.user() for _ in range(plan.concurrency)))
    return run.finish(cpu_start, time.monotonic() - wall_start)


@dataclass
class _Users:
    """The concurrent users of one point, sharing its request count and its deadline."""

    send: Send
    factory: SessionFactory
    plan: PointPlan
    run: PointRun
    next_session: int
    sent: int = 0
    deadline_ns: int | None = None

    def may_send(self) -> bool:
        """Whether another request fits the point's count or duration (warm-ups first)."""
        plan = self.plan
        if plan.total_requests is not None and self.sent >= plan.total_requests:
            return False
        if self.sent >= plan.warmup_requests and plan.duration_s is not None:
            now = time.monotonic_ns()
            if self.deadline_ns is None:
                self.deadline_ns = now + int(plan.duration_s * NS_PER_S)
            elif now >= self.deadline_ns:
                return False
        return True

    async def user(self) -> None:
        """One user: session after session, until the point ends."""
        while self.may_send():
            session = self.factory.session(self.next_session)
            self.next_session += 1
            if not await self._converse(session):
                return

    async def _converse(self, session: Session) -> bool:
        """A session's turns, each after the reply to the last; False when the point ended."""
        plan = self.plan
        history: list[tuple[str, str]] = [("system", session.system)] if session.system else []
        for turn, message in enumerate(session.user_messages):
            if not self.may_send():
                return False
            history.append(("user", message))
            index = plan.first_index + self.sent
            warmup = self.sent < plan.warmup_requests
            self.sent += 1
            tokens = session.reply_tokens[turn]
            request = PromptRequest(
                index=index,
                prompt="",
                max_tokens=tokens,
                input_tokens=sum(_words(text) for _, text in history),
                expected_output_tokens=tokens,
                messages=tuple(history),
                session=session.index,
                turn=turn + 1,
            )
            record = await self.send(request, None)
            record.warmup = warmup
            self.run.records.append(record)
            if not record.ok:
                break
            history.append(("assistant", record.output_text or ""))
            if turn + 1 < len(session.user_messages) and session.think_times_s:
                await asyncio.sleep(session.think_times_s[turn])
        return True


@dataclass(frozen=True)
class TurnSummary:
    """The measured requests of one turn index across a point's sessions. Its fields are named
    as the `--json` turn's keys and the registry's `TurnStats`."""

    turn: int
    requests: int
    input_tokens_mean: float
    ttft_ms: Distribution


def turn_summaries(records: Sequence[RequestRecord]) -> tuple[TurnSummary, ...]:
    """TTFT and prompt length by turn index (measured, successful requests; the server's
    prompt token count where it reported one)."""
    by_turn: dict[int, list[RequestRecord]] = {}
    for record in records:
        if record.turn is not None and record.ok and not record.warmup:
            by_turn.setdefault(record.turn, []).append(record)
    summaries = []
    for turn in sorted(by_turn):
        group = by_turn[turn]
        prompts = [
            r.prompt_tokens if r.prompt_tokens is not None else r.input_tokens for r in group
        ]
        summaries.append(
            TurnSummary(
                turn=turn,
                requests=len(group),
                input_tokens_mean=sum(prompts) / len(prompts),
                ttft_ms=summarize(ttft_s(r) for r in group),
            )
        )
    return tuple(summaries)
