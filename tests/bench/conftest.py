"""Fixtures of the bench tests: the stand-in OpenAI server."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

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


STANDIN_VLLM = Path(__file__).resolve().parent / "standin_vllm.py"


@pytest.fixture
def standin_vllm(tmp_path: Path) -> Path:
    """An executable called `vllm` that runs the STAND-IN (tests/bench/standin_vllm.py)."""
    folder = tmp_path / "standin-bin"
    folder.mkdir()
    launcher = folder / "vllm"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{STANDIN_VLLM}" "$@"\n')
    launcher.chmod(0o755)
    return launcher
