"""Request traces (`bench run --trace FILE`): published traffic with its arrival times and shared
prefixes, read, checked and turned into prompts.

Formats, one JSON object a line, plain or gzip (recognised by its first bytes):

- **Mooncake** (FAST'25, the format AIPerf's `mooncake_trace` loader reads): `timestamp` (ms
  from the trace's start), `input_length` and `output_length` (tokens), `hash_ids` (one ID per
  block of `block_size` tokens, 512 as Mooncake's published traces use: `len(hash_ids)` is
  `ceil(input_length / block_size)`, and two requests with the same leading IDs share those
  blocks of prompt; without them a request's prompt shares nothing); optionally `session_id`
  and `delay` (ms after the session's previous turn ended, closed-loop turns; a later turn may
  give `delay` instead of `timestamp`), and, as AIPerf reads them, `text_input` (the prompt
  itself) or `messages` (each turn's whole chat as recorded, AIPerf's `history` mode). AIPerf's
  `tools`, `extra`, `payload` and `message_mode: delta` are refused, not dropped, and so is a
  conversation of `turns` among request lines (a DAG file is read by `bench.workloads.trace_dag`).
- **infermeter's own**: the same lines after a first line `{"infermeter_trace": 1,
  "block_size": N, "name": "…"}` that states the block size (and a name); see the site's
  trace page for how to write one from a server's logs.

The file is streamed, never loaded: each line is read with a length limit, the SHA-256 covers
every byte, and only the requests to replay (`limit`) are parsed and kept; the rest of the file
is hashed and counted, and the trace says where it was cut. Every problem is a
`WorkloadFileError` naming the file, the line and the field.

Prompts (`TracePrompts`): block ID h is `block_size` words drawn from a generator seeded by
(salt, h), of words the tokenizer holds as one token, so a prompt is its blocks' words in order,
cut to `input_length`; requests that share leading block IDs share exactly those tokens. With
the server's tokenizer the count is checked (the request says whether it is exact); without
one a word stands for a token.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import math
import random
import stat
import zlib
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pydantic import TypeAdapter, ValidationError

from infermeter.bench.client.request_record import PromptRequest
from infermeter.bench.errors import WorkloadFileError
from infermeter.bench.workloads.dataset import Tokenizer, message_text
from infermeter.bench.workloads.lengths import MAX_LENGTH_TOKENS
from infermeter.bench.workloads.prompts import PROMPT_WORDS
from infermeter.calculators.json_text import json_loads
from infermeter.registry.checks.strings import text_problem
from infermeter.registry.errors import shown, validator_message
from infermeter.registry.models.common import Text
from infermeter.registry.store import reject_duplicate_keys

DEFAULT_BLOCK_SIZE = 512
CACHED_BLOCK_WORDS = 1 << 20
CACHED_BLOCKS = 1 << 14
"""The most words, and blocks, of prompt a replay keeps made (`TracePrompts.block`): 8 MiB
of references to the shared words, and the blocks' own lists (2,048 blocks of 512 tokens, a
prefix of a million; 16,384 of fewer); a block no longer kept is made again, the same."""
MAX_TRACE_MS = 1e11
"""The latest a request of a trace may arrive, ms from its start (3.2 years: ten times the
longest published trace we know of, BurstGPT's 121 days). A later `timestamp` or `delay` is a
typo or an attack: its replay would wait in silence for ever."""
MAX_LINE_BYTES = 4 * 1024 * 1024
OWN_FORMAT_KEY = "infermeter_trace"
OPTION = "--trace"
_CHUNK = 1024 * 1024
# AIPerf's extensions of the Mooncake lines that a replay here would silently drop.
_UNSUPPORTED = ("tools", "extra", "payload")
# A file whose first line is a conversation of `turns` is AIPerf's Conversation DAG
# (`bench.workloads.trace_dag`); one among request lines is a mix of two formats.
_TOKENS_RANGE = f"from 1 to {MAX_LENGTH_TOKENS:,}"
_MS_RANGE = f"from 0 to {MAX_TRACE_MS:g} ({MAX_TRACE_MS / 1000 / 86400 / 365:.1f} years)"
_CONVERSATIONS_REFUSED = (
    "a conversation of turns (AIPerf's Conversation DAG `dag_jsonl`) among request lines; a "
    "DAG file holds conversations only, a request trace one request a line with its timestamp"
)


@dataclass(frozen=True)
class TraceRequest:
    """One line of a trace: when it arrives (or how long after its session's previous turn)
    and what it asks."""

    line: int
    timestamp_ms: float | None
    input_length: int
    output_length: int
    hash_ids: tuple[int, ...] = ()
    session_id: str | None = None
    delay_ms: float | None = None
    text: str | None = None
    messages: tuple[tuple[str, str], ...] | None = None

    @property
    def synthesized(self) -> bool:
        """Whether the prompt is made from `hash_ids` (or made unique without them), rather
        than given as `text_input` or `messages`."""
        return self.text is None and self.messages is None


@dataclass(frozen=True)
class Trace:
    """The requests to replay, and what identifies the trace they came from."""

    name: str
    sha256: str
    block_size: int
    requests: tuple[TraceRequest, ...]
    lines: int  # requests in the whole file
    format: str  # "mooncake" or "infermeter"

    @property
    def cut(self) -> str | None:
        """Where the replay stops short of the file's end, or None when it replays it all."""
        if len(self.requests) >= self.lines:
            return None
        last = self.requests[-1]
        at = f" (line {last.line}" + (
            f", {last.timestamp_ms / 1000:g} s into the trace)"
            if last.timestamp_ms is not None
            else ")"
        )
        return f"first {len(self.requests)} of {self.lines} requests{at}"

    def seen_prefixes(self) -> Iterator[tuple[TraceRequest, int]]:
        """Each request made from block IDs, in replay order, with its input tokens in leading
        blocks whose IDs were all seen earlier (what a cache that keeps everything would serve);
        a given prompt is left out: what it shares is not known."""
        seen: set[int] = set()
        for request in self.requests:
            if not request.synthesized:
                continue
            run = 0
            for block in request.hash_ids:
                if block not in seen:
                    break
                run += 1
            yield request, min(run * self.block_size, request.input_length)
            seen.update(request.hash_ids)

    def prefix_reuse_max(self) -> float | None:
        """The trace's theoretical prefix-cache hit rate: the share of input tokens in leading
        blocks seen earlier (`seen_prefixes`); None when no request has block IDs."""
        reusable = total = 0
        for request, cached in self.seen_prefixes():
            reusable += cached
            total += request.input_length
        return reusable / total if total else None


class _HashingReader(io.RawIOBase):
    """A file's bytes as a raw stream, every byte fed to a SHA-256 as it is read (by gzip or
    by a buffered reader's lines)."""

    def __init__(self, raw: IO[bytes]) -> None:
        super().__init__()
        self.raw = raw
        self.digest = hashlib.sha256()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.raw.read(len(buffer))
        buffer[: len(data)] = data
        self.digest.update(data)
        return len(data)

    def drain(self) -> None:
        """Hash what is left of the file."""
        while data := self.raw.read(_CHUNK):
            self.digest.update(data)


def _open_checked(path: Path) -> IO[bytes]:
    """The file, opened for reading, when it is a regular file (a FIFO or a device would hang
    or never end)."""
    try:
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):
            raise WorkloadFileError(f"{path}: not a regular file", OPTION)
        return path.open("rb")
    except OSError as error:
        raise WorkloadFileError(f"{path}: cannot read: {error.strerror or error}", OPTION) from None


def _lines(path: Path, reader: _HashingReader) -> Iterator[tuple[int, bytes]]:
    """The file's non-blank lines with their numbers, gzip undone, each at most
    MAX_LINE_BYTES long."""
    head = reader.raw.peek(2)[:2] if hasattr(reader.raw, "peek") else b""
    source: Any = (
        gzip.GzipFile(fileobj=reader, mode="rb")
        if head == b"\x1f\x8b"
        else io.BufferedReader(reader, _CHUNK)
    )
    number = 0
    try:
        while True:
            line = source.readline(MAX_LINE_BYTES + 1)
            if not line:
                return
            number += 1
            if len(line) > MAX_LINE_BYTES:
                raise WorkloadFileError(
                    f"{path}:{number}: a line longer than {MAX_LINE_BYTES // 1024 // 1024} MiB; "
                    "expected one JSON object a line",
                    OPTION,
                )
            if line.strip():
                yield number, line
    except (gzip.BadGzipFile, EOFError, zlib.error) as error:
        raise WorkloadFileError(f"{path}: not a readable gzip file ({error})", OPTION) from None


def read_trace(path: Path, *, block_size: int | None = None, limit: int | None = None) -> Trace:
    """The trace at `path` (see the module docstring), its first `limit` requests parsed and
    checked, the rest hashed and counted. `block_size` overrides the default and must agree
    with a size the file states. Raises WorkloadFileError."""
    with _open_checked(path) as raw:
        reader = _HashingReader(raw)
        parser = _Parser(path, block_size)
        kept: list[TraceRequest] = []
        lines = 0
        first = True
        for number, line in _lines(path, reader):
            if limit is not None and len(kept) >= limit:
                lines += 1  # past the cut: hashed and counted, not parsed
                continue
            row = _json_object(path, number, line)
            if first and OWN_FORMAT_KEY in row:
                parser.header(number, row)
                first = False
                continue
            first = False
            lines += 1
            kept.append(parser.request(number, row))
        reader.drain()
    if not kept:
        raise WorkloadFileError(f"{path}: no requests in the trace", OPTION)
    name = parser.name or _file_name(path)
    return Trace(
        name=name,
        sha256=reader.digest.hexdigest(),
        block_size=parser.block_size,
        requests=tuple(kept),
        lines=lines,
        format=parser.format,
    )


def _file_name(path: Path) -> str:
    """The name of a trace without a header that names it: its file's, without `.gz`."""
    name = path.name.removesuffix(".gz")
    problem = name_problem(name)
    if problem is not None:
        raise WorkloadFileError(
            f"{path}: the trace is named by its file, {problem}; name it in a first line "
            f'{{"{OWN_FORMAT_KEY}": 1, "name": …}} or rename the file',
            OPTION,
        )
    return name


def _json_object(path: Path, number: int, line: bytes) -> dict[str, Any]:
    try:
        # a field given twice says two things of one request: neither is taken
        row = json_loads(line, object_pairs_hook=reject_duplicate_keys)
    except (ValueError, UnicodeDecodeError) as error:
        raise WorkloadFileError(f"{path}:{number}: not JSON ({error})", OPTION) from None
    if not isinstance(row, dict):
        raise WorkloadFileError(f"{path}:{number}: expected a JSON object", OPTION)
    return row


def _count(value: object, minimum: int, maximum: int | None = None) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        return None
    return value if maximum is None or value <= maximum else None


def _time_ms(value: object) -> float | None:
    """`value` as milliseconds from 0 to MAX_TRACE_MS, else None (compared before it is made a
    float: an integer of 400 digits is none)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0 <= value <= MAX_TRACE_MS else None  # NaN compares false


_DATASET = TypeAdapter(Text)


def name_problem(name: str) -> str | None:
    """Why a trace's name cannot name it in a result, or None: the result states it as its
    dataset (`trace NAME`, `trace_workload`), one line of plain text."""
    try:
        _DATASET.validate_python(f"trace {name}")
    except ValidationError as error:
        return f"{shown(name)}: {validator_message(error.errors()[0])}"
    problem = text_problem(name)
    return f"{shown(name)}: {problem}" if problem is not None else None


class _Parser:
    """Checks a trace's lines in order (arrival order, block counts, sessions)."""

    def __init__(self, path: Path, block_size: int | None) -> None:
        self.path = path
        self.block_size = block_size or DEFAULT_BLOCK_SIZE
        self.given_block_size = block_size
        self.name: str | None = None
        self.format = "mooncake"
        self.last_timestamp_ms = -1.0
        self.sessions: set[str] = set()

    def fail(self, number: int, field: str, message: str) -> WorkloadFileError:
        return WorkloadFileError(f"{self.path}:{number}: {field}: {message}", OPTION)

    def header(self, number: int, row: dict[str, Any]) -> None:
        """The first line of infermeter's own format."""
        if row.get(OWN_FORMAT_KEY) != 1:
            raise self.fail(number, OWN_FORMAT_KEY, "expected 1 (the format's version)")
        size = _count(row.get("block_size", DEFAULT_BLOCK_SIZE), 1, MAX_LENGTH_TOKENS)
        if size is None:
            raise self.fail(
                number, "block_size", f"expected a whole number of tokens {_TOKENS_RANGE}"
            )
        if self.given_block_size is not None and self.given_block_size != size:
            raise self.fail(
                number,
                "block_size",
                f"the file states {size}, --trace-block-size says {self.given_block_size}",
            )
        name = row.get("name")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise self.fail(number, "name", "expected a non-empty string")
        problem = name_problem(name) if name is not None else None
        if problem is not None:
            raise self.fail(number, "name", problem)
        self.block_size, self.name, self.format = size, name, "infermeter"

    def request(self, number: int, row: dict[str, Any]) -> TraceRequest:
        """One request line, checked."""
        if "turns" in row:
            raise self.fail(number, "turns", _CONVERSATIONS_REFUSED)
        for field in _UNSUPPORTED:
            if field in row:
                raise self.fail(number, field, "not supported by bench run --trace")
        if row.get("message_mode", "history") != "history":
            raise self.fail(
                number, "message_mode", "only `history` (each turn's messages as recorded)"
            )
        output_length = self._length(number, row, "output_length")
        session, timestamp, delay = self._timing(number, row)
        text, messages = self._given_prompt(number, row)
        if text is None and messages is None:
            input_length = self._length(number, row, "input_length")
            hash_ids = self._hash_ids(number, row, input_length)
        else:
            given = _count(row.get("input_length"), 1, MAX_LENGTH_TOKENS)
            words = text.split() if text else [w for _, c in messages or () for w in c.split()]
            input_length, hash_ids = given or max(len(words), 1), ()
        return TraceRequest(
            number, timestamp, input_length, output_length, hash_ids, session, delay, text,
            messages,
        )  # fmt: skip

    def _length(self, number: int, row: dict[str, Any], field: str) -> int:
        value = _count(row.get(field), 1, MAX_LENGTH_TOKENS)
        if value is None:
            got = shown(row.get(field))
            raise self.fail(number, field, f"expected a whole number {_TOKENS_RANGE}, got {got}")
        return value

    def _given_prompt(
        self, number: int, row: dict[str, Any]
    ) -> tuple[str | None, tuple[tuple[str, str], ...] | None]:
        """`text_input` or `messages` (AIPerf's history mode: each turn's whole chat)."""
        text = row.get("text_input")
        if text is not None and (not isinstance(text, str) or not text):
            raise self.fail(number, "text_input", "expected a non-empty string")
        raw = row.get("messages")
        if raw is None:
            return text, None
        if text is not None or "hash_ids" in row:
            raise self.fail(number, "messages", "give messages, text_input or hash_ids, not two")
        turns = [
            (m["role"], message_text(m.get("content")))
            for m in raw if isinstance(m, dict) and isinstance(m.get("role"), str)
        ] if isinstance(raw, list) else []  # fmt: skip
        if not turns or len(turns) != len(raw) or any(text is None for _, text in turns):
            raise self.fail(
                number, "messages", "expected a list of {role, content} objects with text content"
            )
        return None, tuple((role, text) for role, text in turns if text is not None)

    def _timing(
        self, number: int, row: dict[str, Any]
    ) -> tuple[str | None, float | None, float | None]:
        raw_session = row.get("session_id")
        session = None if raw_session is None else str(raw_session)
        timestamp = _time_ms(row["timestamp"]) if "timestamp" in row else None
        if "timestamp" in row and timestamp is None:
            raise self.fail(number, "timestamp", f"expected milliseconds {_MS_RANGE}")
        delay = _time_ms(row["delay"]) if "delay" in row else None
        if "delay" in row and delay is None:
            raise self.fail(number, "delay", f"expected milliseconds {_MS_RANGE}")
        later_turn = session is not None and session in self.sessions
        if timestamp is None and not (later_turn and delay is not None):
            raise self.fail(
                number, "timestamp", "missing (a session's later turn may give `delay` instead)"
            )
        if timestamp is not None:
            if timestamp < self.last_timestamp_ms:
                raise self.fail(
                    number,
                    "timestamp",
                    f"{timestamp:g} ms is before the previous line's "
                    f"{self.last_timestamp_ms:g} ms; a trace lists requests in arrival order",
                )
            self.last_timestamp_ms = timestamp
        if session is not None:
            self.sessions.add(session)
        return session, timestamp, delay

    def _hash_ids(self, number: int, row: dict[str, Any], input_length: int) -> tuple[int, ...]:
        raw = row.get("hash_ids")
        if raw is None:
            return ()  # optional, as in AIPerf: a prompt that shares nothing
        if not isinstance(raw, list) or any(_count(block, 0) is None for block in raw):
            raise self.fail(number, "hash_ids", "expected a list of whole numbers ≥ 0")
        needed = math.ceil(input_length / self.block_size)
        if len(raw) != needed:
            raise self.fail(
                number,
                "hash_ids",
                f"{len(raw)} blocks, but input_length {input_length} needs "
                f"{needed} blocks of {self.block_size} tokens",
            )
        return tuple(raw)


class TracePrompts:
    """The prompt of each trace request, from its block IDs (see the module docstring)."""

    def __init__(self, trace: Trace, tokenizer: Tokenizer | None = None, salt: int = 0) -> None:
        self.trace = trace
        self.tokenizer = tokenizer
        self.salt = salt
        self.words = _single_token_words(PROMPT_WORDS, tokenizer)
        self._blocks: OrderedDict[int, list[str]] = OrderedDict()

    def block(self, block_id: int) -> list[str]:
        """The words of block `block_id`: the same for every request that names it (drawn
        from its seed, so a block made again is the same). The blocks used last are kept, at
        most CACHED_BLOCKS of CACHED_BLOCK_WORDS words: every block of a trace kept filled the
        memory (a 35 MB trace of 4 million one-token blocks took 750 MB)."""
        words = self._blocks.get(block_id)
        if words is not None:
            self._blocks.move_to_end(block_id)
            return words
        rng = random.Random(f"trace:{self.salt}:{block_id}")
        words = self._blocks[block_id] = rng.choices(self.words, k=self.trace.block_size)
        size = self.trace.block_size
        while len(self._blocks) > min(CACHED_BLOCKS, CACHED_BLOCK_WORDS // size):
            self._blocks.popitem(last=False)
        return words

    def build(self, index: int, request: TraceRequest) -> PromptRequest:
        """Request `index` of the replay: trace request `request` as a prompt."""
        if request.messages is not None:
            return PromptRequest(
                index=index,
                prompt="",
                max_tokens=request.output_length,
                input_tokens=request.input_length,
                expected_output_tokens=request.output_length,
                messages=request.messages,
            )
        if request.text is not None:
            text = request.text
        else:
            words: list[str] = []
            for block_id in request.hash_ids:
                words.extend(self.block(block_id))
            if not request.hash_ids:  # no block IDs: words of its own, shared with no one
                rng = random.Random(f"trace:{self.salt}:line:{request.line}")
                words = rng.choices(self.words, k=request.input_length)
            text = self._cut(words, request.input_length)
        exact = False
        if self.tokenizer is not None:
            exact = self._count(text) == request.input_length
        return PromptRequest(
            index=index,
            prompt=text,
            max_tokens=request.output_length,
            input_tokens=request.input_length,
            input_tokens_exact=exact,
            expected_output_tokens=request.output_length,
        )

    def _count(self, text: str) -> int:
        assert self.tokenizer is not None
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def _cut(self, words: list[str], tokens: int) -> str:
        """The first words that make `tokens` tokens: one a word after a space, less what the
        prompt's start encodes to beyond one token a word (the same for every prompt that
        starts with the same block, so shared blocks stay shared token for token)."""
        text = " ".join(words[:tokens])
        if self.tokenizer is None:
            return text
        extra = self._count(text) - min(tokens, len(words))
        return " ".join(words[: max(tokens - extra, 1)]) if extra > 0 else text


def _single_token_words(words: tuple[str, ...], tokenizer: Tokenizer | None) -> tuple[str, ...]:
    """The words the tokenizer encodes as one token after a space, so that n such words are n
    tokens and a block's tokens do not depend on what comes before it (all words, the count
    then approximate, when the tokenizer holds fewer than 16)."""
    if tokenizer is None:
        return words
    kept = tuple(
        word
        for word in words
        if len(tokenizer.encode(" " + word, add_special_tokens=False).ids) == 1
    )
    return kept if len(kept) >= 16 else words
