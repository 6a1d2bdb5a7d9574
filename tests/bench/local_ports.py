"""A port on 127.0.0.1 that is taken, for the tests of a launcher given a port in use (a port
that nothing listens on, for a refused connection, is the library's `free_port`)."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator


@contextlib.contextmanager
def busy_port() -> Iterator[int]:
    """A port that a listening socket holds while the block runs: a server cannot bind it."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        yield int(busy.getsockname()[1])
