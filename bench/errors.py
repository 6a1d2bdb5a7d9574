"""Errors raised by the benchmark library; only the CLI turns them into messages and exit codes.

Hierarchy::

    BenchError                  every error the bench library raises on purpose
    ├── BenchConfigError        an option or setting is unusable (exit 2: usage)
    ├── WorkloadFileError       a dataset or tokenizer file cannot be read or parsed (exit 1)
    └── EndpointError           the server is unreachable or fails as a whole (exit 1)

A failing *request* is not an exception: it is a measured outcome, recorded with its
`ErrorKind` (see `bench.client.client`) and counted as an SLO miss.

Every error carries `option`, the command-line option (or setting) it is about when there is
one, so the CLI can name it in its one-line message.
"""


class BenchError(Exception):
    """Base class of every error the bench library raises on purpose."""

    exit_code = 1

    def __init__(self, message: str, option: str | None = None) -> None:
        self.option = option
        super().__init__(message)

    def one_line(self) -> str:
        """The message as one line, prefixed with the option it is about."""
        text = " ".join(str(self).split())
        return f"{self.option}: {text}" if self.option else text


class BenchConfigError(BenchError):
    """An option or setting holds an unusable value (a usage error)."""

    exit_code = 2


class WorkloadFileError(BenchError):
    """A dataset or tokenizer file cannot be read or does not have the expected format."""


class EndpointError(BenchError):
    """The server cannot be reached, or fails every request, so nothing can be measured."""
