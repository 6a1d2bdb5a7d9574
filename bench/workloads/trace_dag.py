"""AIPerf's Conversation DAG (`dag_jsonl`) read and checked (`read_dag`).

The format is specified in docs/benchmark-modes/dag.md and
src/aiperf/dataset/loader/dag_jsonl_models.py of ai-dynamo/aiperf at
05440a0e42eb3e10dc73f1590ca04b2cd777e516: one conversation a line, `{"session_id": …, "turns":
[…]}`, each turn `{"messages": [{"role", "content"}], "max_tokens", "delay" (ms before the
turn), "forks", "spawns", "model"}`. A turn's `forks` start child conversations that continue
from the parent's history and the reply it just got (a bare name ends the parent: the turn must
be its last; `{"child": …, "background": true}` lets it go on); its `spawns` start subagents
with a fresh history (`"x"` joins at the next turn, `{"children": […], "join_at": K}` at turn
K: the parent waits there until they finish; a conversation also ends only when all it started
has ended, so `"x"` on the last turn joins at its end). A conversation no other one names is a root.

What is not replayed is refused with its field named, never dropped: request-less
`orchestrator`s and their `rounds`, `pre_session_spawns`, `context_mode`, `tools`, `extra`, and
content that is not text. A bad file is a WorkloadFileError naming the file, the line and the
field. `bench.workloads.trace_dag_replay` sends it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infermeter.bench.errors import WorkloadFileError
from infermeter.bench.workloads.lengths import MAX_LENGTH_TOKENS
from infermeter.bench.workloads.trace import (
    OPTION,
    _HashingReader,
    _json_object,
    _lines,
    _open_checked,
)

FORMAT = "aiperf_dag"
_CONVERSATION_KEYS = ("session_id", "turns")
_TURN_KEYS = ("messages", "model", "max_tokens", "delay", "forks", "spawns")
_NOT_REPLAYED = (
    "orchestrator", "rounds", "pre_session_spawns", "context_mode", "spawns", "tools", "extra",
    "think_time_ms", "think_time_sigma", "think_time_min_ms", "think_time_max_ms",
)  # fmt: skip
_ROLES = ("system", "user", "assistant")
MAX_DEPTH = 200  # conversations in a chain of forks and spawns (checked depth-first)

Messages = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class DagTurn:
    """One request of a conversation, and the conversations it starts when it completes."""

    messages: Messages
    max_tokens: int
    delay_ms: float
    forks: tuple[str, ...] = ()  # continue from this turn's history and reply
    # (subagent, the turn that waits for it: the number of turns for the conversation's end)
    spawns: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class DagConversation:
    session_id: str
    line: int
    turns: tuple[DagTurn, ...]


@dataclass(frozen=True)
class Dag:
    """A DAG file: its conversations by session id, its roots in file order, and identity."""

    name: str
    sha256: str
    conversations: dict[str, DagConversation]
    roots: tuple[str, ...]

    def requests(self, session_id: str, counted: dict[str, int] | None = None) -> int:
        """The requests one start of `session_id` sends, its children's included (each
        conversation counted once, so a deep tree of shared subagents counts fast)."""
        counted = {} if counted is None else counted
        if session_id not in counted:
            total = 0
            for turn in self.conversations[session_id].turns:
                total += 1 + sum(self.requests(child, counted) for child in _children(turn))
            counted[session_id] = total
        return counted[session_id]

    @property
    def total_requests(self) -> int:
        counted: dict[str, int] = {}
        return sum(self.requests(root, counted) for root in self.roots)


def is_dag_line(row: dict[str, Any]) -> bool:
    """Whether a trace line is a conversation of AIPerf's DAG format rather than a request."""
    return "turns" in row or "orchestrator" in row


def is_dag_file(path: Path) -> bool:
    """Whether the trace at `path` is a DAG file: its first line is a conversation."""
    with _open_checked(path) as raw:
        for number, line in _lines(path, _HashingReader(raw)):
            return is_dag_line(_json_object(path, number, line))
    return False


class _Fail:
    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self, line: int, field: str, message: str) -> WorkloadFileError:
        return WorkloadFileError(f"{self.path}:{line}: {field}: {message}", OPTION)


def read_dag(path: Path) -> Dag:
    """The DAG file at `path`, every line checked, then its links (targets declared, no
    cycles, one fork parent each, system messages only where a history starts)."""
    fail = _Fail(path)
    conversations: dict[str, DagConversation] = {}
    with _open_checked(path) as raw:
        reader = _HashingReader(raw)
        for number, line in _lines(path, reader):
            conversation = _conversation(fail, number, _json_object(path, number, line))
            if conversation.session_id in conversations:
                raise fail(number, "session_id", f"{conversation.session_id!r} is declared twice")
            conversations[conversation.session_id] = conversation
        reader.drain()
    if not conversations:
        raise WorkloadFileError(f"{path}: no conversations in the DAG file", OPTION)
    _check_links(fail, conversations)
    named = {c for conv in conversations.values() for t in conv.turns for c in _children(t)}
    roots = tuple(s for s in conversations if s not in named)
    return Dag(path.name.removesuffix(".gz"), reader.digest.hexdigest(), conversations, roots)


def _children(turn: DagTurn) -> list[str]:
    return [*turn.forks, *(child for child, _ in turn.spawns)]


def _conversation(fail: _Fail, number: int, row: dict[str, Any]) -> DagConversation:
    for key in (k for k in row if k not in _CONVERSATION_KEYS):
        if key in _NOT_REPLAYED:
            raise fail(number, key, "not replayed by bench run --trace (see the trace page)")
        else:
            raise fail(number, key, f"unknown field; expected {', '.join(_CONVERSATION_KEYS)}")
    session = row.get("session_id")
    if not isinstance(session, str) or not session:
        raise fail(number, "session_id", "expected a non-empty string")
    turns = row.get("turns")
    if not isinstance(turns, list) or not turns:
        raise fail(number, "turns", "expected a non-empty list of turns")
    parsed = tuple(_turn(fail, number, f"turns.{i}", t, i, len(turns)) for i, t in enumerate(turns))
    return DagConversation(session, number, parsed)


def _turn(fail: _Fail, number: int, where: str, row: object, index: int, count: int) -> DagTurn:
    if not isinstance(row, dict):
        raise fail(number, where, "expected a JSON object")
    for key in (k for k in row if k not in _TURN_KEYS):
        if key in _NOT_REPLAYED:
            raise fail(number, f"{where}.{key}", "not replayed by bench run --trace")
        else:
            raise fail(number, f"{where}.{key}", f"unknown field; expected {', '.join(_TURN_KEYS)}")
    max_tokens = row.get("max_tokens")
    if (
        isinstance(max_tokens, bool)
        or not isinstance(max_tokens, int)
        or not 1 <= max_tokens <= MAX_LENGTH_TOKENS
    ):
        raise fail(
            number,
            f"{where}.max_tokens",
            f"expected a whole number from 1 to {MAX_LENGTH_TOKENS:,} (sent every turn)",
        )
    delay = row.get("delay", 0)
    if isinstance(delay, bool) or not isinstance(delay, int | float) or not 0 <= delay < 1e9:
        raise fail(number, f"{where}.delay", "expected milliseconds ≥ 0")
    forks = _forks(fail, number, f"{where}.forks", row.get("forks", []), index, count)
    spawns = _spawns(fail, number, f"{where}.spawns", row.get("spawns", []), index, count)
    messages = _messages(fail, number, f"{where}.messages", row.get("messages"))
    return DagTurn(messages, max_tokens, float(delay), forks, spawns)


def _messages(fail: _Fail, number: int, where: str, raw: object) -> Messages:
    if not isinstance(raw, list) or not raw:
        raise fail(number, where, "expected a non-empty list of {role, content}")
    for message in raw:
        if not isinstance(message, dict) or message.get("role") not in _ROLES:
            raise fail(number, where, f"each message needs a role of {', '.join(_ROLES)}")
        if not isinstance(message.get("content"), str):
            raise fail(number, where, "content must be text (multimodal parts are not replayed)")
    return tuple((m["role"], m["content"]) for m in raw)


def _forks(
    fail: _Fail, number: int, where: str, raw: object, index: int, count: int
) -> tuple[str, ...]:
    if not isinstance(raw, list):
        raise fail(number, where, "expected a list")
    children: list[str] = []
    for entry in raw:
        if isinstance(entry, str) and entry:
            if index != count - 1:
                raise fail(number, where, f"a bare fork {entry!r} ends the conversation: only "
                           'on its last turn (else {"child": …, "background": true})')  # fmt: skip
            children.append(entry)
        elif (
            isinstance(entry, dict)
            and set(entry) <= {"child", "background"}
            and isinstance(entry.get("child"), str)
            and entry.get("background") is True
        ):
            children.append(entry["child"])
        else:
            raise fail(number, where, 'expected a session id or {"child": …, "background": true}')
    return tuple(children)


def _spawns(
    fail: _Fail, number: int, where: str, raw: object, index: int, count: int
) -> tuple[tuple[str, int], ...]:
    if not isinstance(raw, list):
        raise fail(number, where, "expected a list")
    spawns: list[tuple[str, int]] = []
    for entry in raw:
        if isinstance(entry, str) and entry:  # joins the next turn, or the conversation's end
            spawns.append((entry, index + 1))
            continue
        join_at, children = (
            (entry.get("join_at"), entry.get("children"))
            if isinstance(entry, dict) and set(entry) <= {"children", "join_at"}
            else (None, None)
        )
        if not isinstance(children, list) or not all(isinstance(c, str) for c in children):
            raise fail(number, where, 'expected a session id or {"children": […], "join_at": K}')
        if isinstance(join_at, bool) or not isinstance(join_at, int) or not index < join_at < count:
            raise fail(number, where, f"join_at must be a later turn of this conversation "
                       f"({index + 1}…{count - 1}), got {join_at!r}")  # fmt: skip
        spawns.extend((child, join_at) for child in children)
    return tuple(spawns)


def _check_links(fail: _Fail, conversations: dict[str, DagConversation]) -> None:
    fork_parent: dict[str, str] = {}
    for conversation in conversations.values():
        for i, turn in enumerate(conversation.turns):
            for child in _children(turn):
                if child not in conversations:
                    message = f"{child!r} is not a conversation of this file"
                    raise fail(conversation.line, f"turns.{i}", message)
            for child in turn.forks:
                _check_fork(fail, conversations, conversation, child, fork_parent)
            if i and any(role == "system" for role, _ in turn.messages):
                message = "a system message only on the turn that starts a history (turn 0)"
                raise fail(conversation.line, f"turns.{i}.messages", message)
    clean: set[str] = set()
    for session in conversations:
        _no_cycle(fail, conversations, session, (), clean)


def _check_fork(
    fail: _Fail,
    conversations: dict[str, DagConversation],
    parent: DagConversation,
    child: str,
    fork_parent: dict[str, str],
) -> None:
    first = fork_parent.setdefault(child, parent.session_id)
    if first != parent.session_id:
        message = f"{child!r} is already forked from {first!r} (one fork parent each)"
        raise fail(parent.line, "forks", message)
    if any(role == "system" for role, _ in conversations[child].turns[0].messages):
        message = "a fork continues its parent's history: no system message on its turn 0"
        raise fail(conversations[child].line, "turns.0.messages", message)


def _no_cycle(
    fail: _Fail,
    conversations: dict[str, DagConversation],
    session: str,
    path: tuple[str, ...],
    clean: set[str],
) -> None:
    """Depth-first from `session`: a session met again on its own path is a cycle."""
    if session in clean:
        return
    if len(path) > MAX_DEPTH:
        message = f"children nested deeper than {MAX_DEPTH} conversations"
        raise fail(conversations[session].line, "turns", message)
    if session in path:
        cycle = " -> ".join((*path[path.index(session) :], session))
        raise fail(conversations[session].line, "turns", f"cycle {cycle}")
    for turn in conversations[session].turns:
        for child in _children(turn):
            _no_cycle(fail, conversations, child, (*path, session), clean)
    clean.add(session)
