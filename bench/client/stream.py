"""What one streamed response turned into: its server-sent events (SSE) parsed after it ended.

`parse_stream` takes the response body as `(arrival_ns, bytes)` pairs, one per socket read, and
returns a `ParsedStream`: the arrival time and text length of every chunk that carried output
text, the server's usage counts, and the failure kind when the stream is not a valid one.

Speed matters here: at a million streamed tokens a minute the client spends most of its time in
this module. `json.loads` of one ~250-byte chunk costs ~2 µs, more than the rest of the client
per token, so a stream's chunks are matched against a *template*: a chunk that was fully parsed
once, split around the bytes of its output text. A later chunk whose bytes are the template's
prefix, then plain text (no quote, no backslash, printable UTF-8), then the template's suffix is
the same JSON object with another text, so only the text is decoded. A template is accepted only
after two probe parses show that replacing those bytes changes the output text and nothing else.
Chunks that do not match (the last one, usage, errors, escaped text) take the full parse.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from infermeter.calculators.json_text import json_loads

Api = Literal["completions", "chat"]

ERROR_BODY_CHARS = 300
# Chunks of one stream that may become its template; servers that vary every chunk (a
# per-chunk id) stop costing probe parses after this many.
_TEMPLATE_TRIES = 3
_PROBE_TEXT = "probe"


class ErrorKind(StrEnum):
    """Why a request failed; each kind is counted separately per load point."""

    TIMEOUT = "timeout"  # the per-request timeout passed (e.g. the server stalled)
    HTTP_STATUS = "http_status"  # the server answered with a non-200 status (kept in the record)
    DISCONNECT = "disconnect"  # the connection closed, or the stream ended, before completion
    MALFORMED_STREAM = "malformed_stream"  # an event that is not valid SSE/JSON of the API
    SERVER_ERROR = "server_error"  # the server reported an error inside the stream
    OUT_OF_MEMORY = "out_of_memory"  # an error whose text says the server ran out of memory
    CONNECTION = "connection"  # the server could not be reached at all
    EMPTY_OUTPUT = "empty_output"  # the stream completed without a single output token


@dataclass(slots=True)
class ParsedStream:
    """The outcome of parsing one response's SSE bytes."""

    token_times_ns: list[int] = field(default_factory=list)
    chunk_chars: list[int] = field(default_factory=list)
    chunk_tokens: list[int] | None = None
    text_parts: list[str] = field(default_factory=list)
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    done: bool = False
    finished: bool = False
    error: ErrorKind | None = None
    error_detail: str = ""


def is_out_of_memory(text: str) -> bool:
    """True when an error message says the server ran out of (GPU) memory."""
    lowered = text.lower()
    return "out of memory" in lowered or "outofmemory" in lowered


def parse_stream(reads: list[tuple[int, bytes]], api: Api) -> ParsedStream:
    """Parse the SSE bytes of one streamed response, each read stamped with its arrival time.

    An event takes the timestamp of the read that completed its line. Chunks whose text is
    empty (vLLM's first chat chunk carries only the role) do not count as tokens. With a running
    usage count in every chunk, each text chunk's token count is the increase since the previous
    text chunk. A payload that is not JSON, or an `error` object, ends parsing with the kind set.
    """
    parser = StreamParser(api)
    for arrived_ns, data in reads:
        parser.feed(arrived_ns, data)
    return parser.finish()


# The longest SSE line accepted: a vLLM chunk is a few hundred bytes, a large one some KiB.
MAX_EVENT_BYTES = 1 << 20


class StreamParser:
    """`parse_stream`, one read at a time: the client feeds each read as it arrives, so the
    parsing is spread over the stream instead of landing at once when many streams end
    together (which would leave every other socket unread meanwhile)."""

    __slots__ = ("failed", "last_ns", "parser", "pending")

    def __init__(self, api: Api) -> None:
        self.parser = _SseParser(api)
        self.pending = b""
        self.failed = False
        self.last_ns = 0

    def feed(self, arrived_ns: int, data: bytes) -> None:
        """Take one read of the body."""
        self.last_ns = arrived_ns
        if self.failed:
            return
        if len(self.pending) + len(data) > MAX_EVENT_BYTES and b"\n" not in data:
            # One line longer than any real event: refused, not buffered without end (and
            # the buffer never grows past this, so parsing stays linear in the body).
            self.failed = True
            self.parser.fail(
                ErrorKind.MALFORMED_STREAM, f"an SSE line longer than {MAX_EVENT_BYTES:,} bytes"
            )
            return
        if b"\n" not in data:
            self.pending += data
            return
        lines = (self.pending + data).split(b"\n") if self.pending else data.split(b"\n")
        self.pending = lines.pop()
        if not self.parser.feed_lines(arrived_ns, lines):
            self.failed = True

    def finish(self) -> ParsedStream:
        """The parsed stream (after the last read, or when the response was cut short)."""
        parser = self.parser
        if self.failed:
            return parser.parsed
        if self.pending.strip() and not parser.feed_lines(self.last_ns, [self.pending]):
            return parser.parsed
        return parser.finish()


@dataclass(slots=True)
class _Template:
    """A chunk's line around its output text, and what every chunk of that shape means."""

    prefix: bytes  # from `data:` to the text's opening quote
    suffix: bytes  # from the text's closing quote to the end of the line
    finished: bool
    fixed_len: int = 0

    def __post_init__(self) -> None:
        self.fixed_len = len(self.prefix) + len(self.suffix)


class _SseParser:
    """Line-by-line state of `parse_stream`."""

    def __init__(self, api: Api) -> None:
        self.chat = api == "chat"
        self.text_key = b'"content":' if self.chat else b'"text":'
        self.parsed = ParsedStream()
        self.running_tokens: list[int] = []
        self.last_usage_total = 0
        self.usage_in_every_chunk = True
        self.template: _Template | None = None
        self.template_tries = _TEMPLATE_TRIES

    def fail(self, kind: ErrorKind, detail: str) -> bool:
        self.parsed.error, self.parsed.error_detail = kind, detail
        return False

    def feed_lines(self, arrived_ns: int, lines: list[bytes]) -> bool:
        """Take the complete lines of one read; False when the stream turned out to be failed.

        The template match is inlined here (no call per event): this loop is the hot path."""
        parsed = self.parsed
        times, chars, texts = parsed.token_times_ns, parsed.chunk_chars, parsed.text_parts
        template = self.template
        for line in lines:
            if not line.startswith(b"data:"):
                continue  # blank separators, comments (": ping"), `event:` fields
            if (
                template is not None
                and len(line) >= template.fixed_len
                and line.startswith(template.prefix)
                and line.endswith(template.suffix)
            ):
                raw = line[len(template.prefix) : len(line) - len(template.suffix)]
                if b'"' not in raw and b"\\" not in raw:
                    try:
                        text = raw.decode()
                    except UnicodeDecodeError:
                        text = "\n"  # not printable: the full parse decides
                    if text.isprintable():  # no control characters, which JSON refuses
                        if template.finished:
                            parsed.finished = True
                        if text:
                            self.usage_in_every_chunk = False
                            times.append(arrived_ns)
                            chars.append(len(text))
                            texts.append(text)
                        continue
            if not self.feed_parsed(arrived_ns, line):
                return False
            template = self.template
        return True

    def feed_parsed(self, arrived_ns: int, line: bytes) -> bool:
        """The full parse of one `data:` line."""
        parsed = self.parsed
        payload = line[5:].strip()
        if payload == b"[DONE]":
            parsed.done = True
            return True
        try:
            event = json_loads(payload)
        except ValueError:
            return self.fail(ErrorKind.MALFORMED_STREAM, f"not JSON: {payload[:80]!r}")
        if not isinstance(event, dict):
            return self.fail(ErrorKind.MALFORMED_STREAM, f"not an object: {payload[:80]!r}")
        error = event.get("error")
        if error is not None:
            message = str(error.get("message", "") if isinstance(error, dict) else error)
            kind = ErrorKind.OUT_OF_MEMORY if is_out_of_memory(message) else ErrorKind.SERVER_ERROR
            return self.fail(kind, message[:ERROR_BODY_CHARS])
        read = _text_and_finish(event, self.chat)
        usage = event.get("usage")
        if read is None or (usage and not isinstance(usage, dict)):
            api = "chat" if self.chat else "completions"
            return self.fail(ErrorKind.MALFORMED_STREAM, f"not a {api} chunk: {payload[:80]!r}")
        text, finished = read
        if finished:
            parsed.finished = True
        if usage:
            completion = usage.get("completion_tokens")
            if type(completion) is int:  # not a bool, a float or a string
                parsed.output_tokens = completion
                if text:
                    self.running_tokens.append(completion - self.last_usage_total)
                self.last_usage_total = completion
            prompt = usage.get("prompt_tokens")
            if type(prompt) is int:
                parsed.prompt_tokens = prompt
        elif text:
            self.usage_in_every_chunk = False
            if self.template_tries > 0:
                self.template_tries -= 1
                self.template = self.make_template(line, finished) or self.template
        if text:
            parsed.token_times_ns.append(arrived_ns)
            parsed.chunk_chars.append(len(text))
            parsed.text_parts.append(text)
        return True

    def make_template(self, line: bytes, finished: bool) -> _Template | None:
        """A template from a fully parsed text chunk without usage, or None when the probes
        show that its text bytes are not simply its output text."""
        key_at = line.find(self.text_key)
        if key_at < 0:
            return None
        start = key_at + len(self.text_key)
        while line[start : start + 1] == b" ":
            start += 1
        if line[start : start + 1] != b'"':
            return None
        start += 1
        end = line.find(b'"', start)
        if end < 0 or b"\\" in line[start:end]:
            return None
        prefix, suffix = line[:start], line[end:]
        for probe in (_PROBE_TEXT, ""):
            try:
                event = json_loads((prefix + probe.encode() + suffix)[5:])
            except ValueError:
                return None
            if not isinstance(event, dict) or event.get("error") is not None or event.get("usage"):
                return None
            if _text_and_finish(event, self.chat) != (probe, finished):
                return None
        return _Template(prefix, suffix, finished)

    def finish(self) -> ParsedStream:
        parsed = self.parsed
        if (
            self.usage_in_every_chunk
            and self.running_tokens
            and len(self.running_tokens) == len(parsed.token_times_ns)
        ):
            parsed.chunk_tokens = self.running_tokens
        return parsed


def _text_and_finish(event: dict[str, Any], chat: bool) -> tuple[str, bool] | None:
    """The output text of one chunk (first choice) and whether it carries a finish reason;
    None when the chunk is not in the API's shape (`choices` not a list of objects, a `delta`
    not an object, a text not a string)."""
    choices = event.get("choices")
    if not choices:
        return "", False
    if not isinstance(choices, list) or not isinstance(choices[0], dict):
        return None
    choice = choices[0]
    if chat:
        delta = choice.get("delta") or {}
        if not isinstance(delta, dict):
            return None
        text = (
            delta.get("content") or delta.get("reasoning_content") or delta.get("reasoning") or ""
        )
    else:
        text = choice.get("text") or ""
    if not isinstance(text, str):
        return None
    return text, bool(choice.get("finish_reason"))
