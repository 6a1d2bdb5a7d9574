"""Fixtures of the bench tests: the stand-in OpenAI server."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from fake_openai_server import FakeOpenAIServer, FakeServerConfig


@pytest.fixture
def fake_server() -> Iterator[FakeOpenAIServer]:
    """A fake server with instant responses; tests set `fake_server.config` fields."""
    # The server thread and the client share the GIL: switch often so neither waits 5 ms.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    with FakeOpenAIServer(FakeServerConfig()) as server:
        yield server
    sys.setswitchinterval(interval)
