"""Usage errors as one line: `Error: …` on stderr, exit 2, without click's usage block.

Scripts and CI logs read the last line; a hostile value (a 400-digit number, a newline) must
not turn into a screenful. A value from the command line that the message echoes is shown as
its first `SHOWN_VALUE_CHARS` characters and "…" (so what is wrong with it, which click says
after the value, stays on the line), except a path (a value with a `/`), which the reader
needs whole to find the file; the whole line is cut to `SHOWN_CHARS` characters.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any

import click

SHOWN_CHARS = 200
SHOWN_VALUE_CHARS = 60

# The help texts the commands wrote (`OneLineCommand.get_help`): printed unredacted.
_HELP_TEXTS: ContextVar[frozenset[str]] = ContextVar("infermeter_help_texts", default=frozenset())
# The command line's arguments while the root group runs: the values a message may echo.
_GIVEN: ContextVar[tuple[str, ...]] = ContextVar("infermeter_given_args", default=())


def shown_value(value: str) -> str:
    """`value` as an error message shows it: its first `SHOWN_VALUE_CHARS` characters, then
    "…" when it is longer."""
    return value if len(value) <= SHOWN_VALUE_CHARS else value[:SHOWN_VALUE_CHARS] + "…"


def _values(arguments: Iterable[str]) -> list[str]:
    """The arguments and, for `--name=value`, the value alone, but paths; the longest first."""
    values = set()
    for argument in arguments:
        values.add(argument)
        if argument.startswith("-") and "=" in argument:
            values.add(argument.partition("=")[2])
    return sorted((value for value in values if "/" not in value), key=len, reverse=True)


def cap_values(text: str, given: Iterable[str]) -> str:
    """`text` with every long value of `given` it holds (as given, or escaped as `repr`
    writes it) shown as `shown_value` shows it."""
    for value in _values(given):
        if len(value) <= SHOWN_VALUE_CHARS:
            break
        short = shown_value(value)
        text = text.replace(value, short)
        escaped = repr(value)[1:-1]
        if escaped != value:
            text = text.replace(escaped, repr(short)[1:-1])
    return text


def one_line(text: str) -> str:
    """`text` on one line (whitespace runs become one space, other control characters
    escapes), each long command-line value capped (`cap_values`), cut to `SHOWN_CHARS`."""
    from infermeter.registry.errors import cut, escaped

    return cut(escaped(" ".join(cap_values(text, _GIVEN.get()).split())), SHOWN_CHARS)


class UsageLine(click.ClickException):
    """A bad option value: one line on stderr, exit 2 (usage)."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))


class RedactingStream:
    """A text stream that passes everything written to it through `registry.secrets`'s one
    rule (`redact_text`) first: what infermeter prints on stdout and stderr (results, notes,
    progress, error lines, tracebacks, a plan's matrix) never shows an API key, a token, an
    authorization header or a URL's user:password, whichever code wrote it.

    Each write is redacted whole (click writes a message and its newline at once); bytes are
    refused, so click treats it as the text stream it is and writes through it. Anything else
    (isatty, encoding) is the wrapped stream's. A write or flush that fails (standard output
    closed, `>&-`, or on a full disk) ends the command with one error line, exit 1; a pipe
    whose reader is gone (`| head`) is left to click, which ends quietly."""

    def __init__(self, stream: Any, name: str) -> None:
        self._stream = stream
        self._name = name

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError("a text stream; write str")
        from infermeter.registry.secrets import redact_text

        with self._failing_in_one_line():
            help_text = text.removesuffix("\n") in _HELP_TEXTS.get()
            self._stream.write(text if help_text else redact_text(text))
        return len(text)

    def flush(self) -> None:
        with self._failing_in_one_line():
            self._stream.flush()

    @contextlib.contextmanager
    def _failing_in_one_line(self) -> Iterator[None]:
        if self._stream is None:
            raise click.ClickException(f"cannot write {self._name}: it is closed")
        try:
            yield
        except OSError as error:
            if error.errno == errno.EPIPE:
                raise
            # What the stream still holds goes nowhere: Python flushes it again at exit, which
            # would fail again ("Exception ignored …", exit 120).
            with contextlib.suppress(OSError, ValueError):
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, self._stream.fileno())
                os.close(devnull)
            reason = error.strerror or type(error).__name__
            raise click.ClickException(f"cannot write {self._name}: {reason}") from None

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        if name == "buffer":  # no way around the redaction
            raise AttributeError(name)
        return getattr(self._stream, name)


class OneLineCommand(click.Command):
    """A command whose usage errors (click's own too) are one `Error: …` line (`usage_line`);
    asking for help by giving no arguments still prints it. The context keeps the arguments
    as given (`infermeter.raw_args`: click consumes the list; a result file keeps them)."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        raw_args = list(args)
        try:
            ctx = super().make_context(info_name, args, parent=parent, **extra)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as error:
            raise self.usage_line(error) from None
        ctx.meta["infermeter.raw_args"] = raw_args
        return ctx

    def usage_line(self, error: click.UsageError) -> click.ClickException:
        """The one-line error a usage error becomes."""
        return UsageLine(error.format_message())

    def get_help(self, ctx: click.Context) -> str:
        """The command's help, which `RedactingStream` writes as it is: the code's own text
        (no value given or from the environment), where an option for a credential names its
        placeholder (`--api-key KEY`, `Authorization: Bearer KEY`)."""
        text = super().get_help(ctx)
        _HELP_TEXTS.set(_HELP_TEXTS.get() | {text})
        return text


class OneLineGroup(OneLineCommand, click.Group):
    """The root group: every usage error below it, click's own included (an unknown command,
    a missing argument, a bad value), reaches the terminal as one `Error: …` line, exit 2.

    Usage errors raised while a subcommand parses or runs propagate through the root's
    `make_context` and `invoke`, so the root alone converts them. Asking a group for its
    commands without naming one still prints its help. While it runs, the command line's
    arguments are known to `one_line`, which caps the long ones a message echoes. Any other
    error (exit 1) has its control characters but its line breaks escaped
    (`registry.errors.escaped`): it may quote a hostile file's name or content, which must not
    drive the terminal.
    """

    def main(self, args: Sequence[str] | None = None, *rest: Any, **extra: Any) -> Any:
        given = list(sys.argv[1:] if args is None else args)
        token = _GIVEN.set(tuple(given))
        streams = sys.stdout, sys.stderr
        sys.stdout = RedactingStream(sys.stdout, "standard output")
        sys.stderr = RedactingStream(sys.stderr, "standard error")
        try:
            return super().main(given, *rest, **extra)
        finally:
            sys.stdout, sys.stderr = streams
            _GIVEN.reset(token)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as error:
            raise UsageLine(error.format_message()) from None
        except click.ClickException as error:
            if type(error) is not click.ClickException:  # a UsageLine is one_line already
                raise
            # Any other error (exit 1) may quote what a hostile file or name held; its lines
            # (a list of problems is one per line) keep their breaks, each long value given
            # on the command line capped as a usage error caps it.
            from infermeter.registry.errors import escaped

            given = _GIVEN.get()
            lines = [
                escaped(cap_values(line, given)) for line in error.format_message().split("\n")
            ]
            raise click.ClickException("\n".join(lines)) from None


class FiniteFloatRange(click.FloatRange):
    """click's FloatRange without NaN and infinities (which FloatRange lets through)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"expected a finite number, got {value!r}", param, ctx)
        return number


POSITIVE_FLOAT = FiniteFloatRange(min=0, min_open=True)
