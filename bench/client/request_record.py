"""One request and what happened to it: `PromptRequest` (what to send) and `RequestRecord`
(its timestamps, token counts and error), filled from the parsed stream by
`record_from_parsed`, which refuses usage no server can report (`check_usage`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from infermeter.bench.client.stream import ErrorKind, ParsedStream

TokenCounter = Callable[[str], int]


@dataclass(frozen=True)
class PromptRequest:
    """One request to send: the prompt text and how many output tokens to ask for."""

    index: int
    prompt: str
    max_tokens: int
    input_tokens: int
    input_tokens_exact: bool = False
    expected_output_tokens: int | None = None
    # A turn of a multi-turn session (`bench.workloads.conversation`): the whole chat so far, sent
    # instead of `prompt`; its reply text is kept in the record for the next turn.
    messages: tuple[tuple[str, str], ...] | None = None
    session: int | None = None
    turn: int | None = None


@dataclass(slots=True)
class RequestRecord:
    """What happened to one request, with monotonic nanosecond timestamps.

    `token_times_ns[i]` is the arrival time of the i-th chunk that carried output text, and
    `chunk_chars[i]` the length of that text; `chunk_tokens[i]`, when the server reported a
    running token count in every chunk (vLLM's `continuous_usage_stats`), is that chunk's
    number of tokens. `output_tokens` is the server's `usage.completion_tokens` (None when the
    server reported no usage); `client_output_tokens` is the client's own count (see
    `client_count_exact`). `session` and `turn` (from 1) place a multi-turn request, whose
    reply text is kept in `output_text`. `slot_wait_ns` is how long a capped open loop held the
    request back for a free slot after its scheduled time (`bench.run.load`).
    """

    index: int
    send_ns: int
    end_ns: int
    intended_send_ns: int | None = None
    slot_wait_ns: int = 0
    warmup: bool = False
    token_times_ns: list[int] = field(default_factory=list)
    chunk_chars: list[int] = field(default_factory=list)
    chunk_tokens: list[int] | None = None
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    client_output_tokens: int = 0
    client_count_exact: bool = False
    input_tokens: int = 0
    requested_output_tokens: int = 0
    expected_output_tokens: int | None = None
    error: ErrorKind | None = None
    error_detail: str = ""
    http_status: int | None = None
    session: int | None = None
    turn: int | None = None
    output_text: str | None = None
    # Why the server's usage was not believed (negative, or more tokens than were asked for):
    # `output_tokens` / `prompt_tokens` are then None and the client's count stands.
    usage_rejected: str | None = None
    # A trace replay's request (`bench.workloads.trace_replay`): the share of its prompt in blocks
    # that earlier requests of the trace sent, what a prefix cache could serve.
    cached_share: float | None = None

    @property
    def ok(self) -> bool:
        """True when the request completed and produced output."""
        return self.error is None

    def fail(self, kind: ErrorKind, detail: str) -> None:
        """Mark the request failed: what kind of failure, and the detail the report shows."""
        self.error, self.error_detail = kind, detail


def record_from_parsed(
    record: RequestRecord,
    parsed: ParsedStream,
    count_tokens: TokenCounter | None,
    keep_text: bool = False,
) -> None:
    """Fill `record` from its parsed stream: chunk times and sizes, the server's usage (as
    `check_usage` believes it), the client's own token count, and what went wrong, if any."""
    record.token_times_ns = parsed.token_times_ns
    if keep_text:
        record.output_text = "".join(parsed.text_parts)
    record.chunk_chars = parsed.chunk_chars
    record.chunk_tokens = parsed.chunk_tokens
    record.prompt_tokens = parsed.prompt_tokens
    record.output_tokens = parsed.output_tokens
    check_usage(record)
    if count_tokens is not None:
        record.client_output_tokens = count_tokens("".join(parsed.text_parts))
        record.client_count_exact = True
    else:
        record.client_output_tokens = len(parsed.token_times_ns)
    if record.error is not None:
        return
    if parsed.error is not None:
        record.fail(parsed.error, parsed.error_detail)
    elif not (parsed.done or parsed.finished):
        record.fail(ErrorKind.DISCONNECT, "the stream ended without [DONE] or a finish_reason")
    elif not parsed.token_times_ns:
        record.fail(ErrorKind.EMPTY_OUTPUT, "the stream carried no output text")


# No request asks for more output than this; a usage above it (or above max_tokens) is not real.
MAX_USAGE_TOKENS = 100_000_000


def check_usage(record: RequestRecord) -> None:
    """Refuse usage no server can report: negative counts, more output tokens than the request
    asked for (`max_tokens`), or than any context holds. The refused count is dropped (the
    client's own count stands) and the record says why (`usage_rejected`)."""
    output, prompt = record.output_tokens, record.prompt_tokens
    asked = record.requested_output_tokens
    problem = None
    if output is not None and (output < 0 or output > MAX_USAGE_TOKENS):
        problem = f"usage reports {output} output tokens"
    elif output is not None and asked > 0 and output > asked:
        problem = f"usage reports {output} output tokens, but max_tokens was {asked}"
    elif prompt is not None and (prompt < 0 or prompt > MAX_USAGE_TOKENS):
        problem = f"usage reports {prompt} prompt tokens"
    if problem is not None:
        record.usage_rejected = problem
        record.output_tokens = record.prompt_tokens = None
        record.chunk_tokens = None  # running counts from the same usage are not believed
