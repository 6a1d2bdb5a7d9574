"""Ports on 127.0.0.1 for the tests of what a client or a launcher does when a port is wrong."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator


def refusing_port() -> int:
    """A port that was free a moment ago and that nothing listens on: a connection is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def busy_port() -> Iterator[int]:
    """A port that a listening socket holds while the block runs: a server cannot bind it."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        yield int(busy.getsockname()[1])
