"""`--tokenizer owner/name`: a Hugging Face id, downloaded from the Hub (here a real HTTP server
on 127.0.0.1 that answers as the Hub does, named by HF_ENDPOINT), read from the Hugging Face
cache where the Hub cannot be reached, and refused at once, in one line that says what to do,
where it is neither reachable nor cached.

huggingface_hub reads HF_ENDPOINT, HF_HOME and HF_HUB_OFFLINE when it is imported, so each load
runs in a Python process of its own with the environment it needs.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers

from infermeter.bench.launch.server import free_port

REPO = "owner/tiny"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
LOAD = """
import sys
from infermeter.bench.errors import BenchError
from infermeter.bench.workloads.dataset import load_tokenizer
try:
    print(len(load_tokenizer(sys.argv[1]).encode("serving tokens").ids))
except BenchError as error:
    print(error.one_line())
    sys.exit(1)
"""


def _tokenizer_json() -> bytes:
    tokenizer = Tokenizer(models.WordLevel({"serving": 0, "tokens": 1, "[UNK]": 2}, "[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    return tokenizer.to_str().encode("utf-8")


class _Hub(BaseHTTPRequestHandler):
    """The Hub's `resolve` route for one file: HEAD gives the headers huggingface_hub reads
    (commit, ETag, size), GET the file; anything else 404."""

    body = _tokenizer_json()
    gets: ClassVar[list[str]] = []

    def _answer(self, with_body: bool) -> None:
        if self.path != f"/{REPO}/resolve/main/tokenizer.json":
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("X-Repo-Commit", COMMIT)
        self.send_header("ETag", f'"{hashlib.sha256(self.body).hexdigest()}"')
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        if with_body:
            self.gets.append(self.path)
            self.wfile.write(self.body)

    def do_HEAD(self) -> None:
        self._answer(with_body=False)

    def do_GET(self) -> None:
        self._answer(with_body=True)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def hub() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def _closed_port_url() -> str:
    return f"http://127.0.0.1:{free_port()}"


def _load(hf_home: Path, endpoint: str, offline: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    env |= {"HF_HOME": str(hf_home), "HF_ENDPOINT": endpoint, "HF_HUB_DISABLE_TELEMETRY": "1"}
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    return subprocess.run(
        [sys.executable, "-c", LOAD, REPO],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_hub_tokenizer_is_downloaded_then_read_from_the_cache_when_the_hub_is_gone(
    hub: ThreadingHTTPServer, tmp_path: Path
) -> None:
    online = _load(tmp_path, f"http://127.0.0.1:{hub.server_address[1]}")
    assert (online.returncode, online.stdout.strip()) == (0, "2"), online.stderr
    assert _Hub.gets == [f"/{REPO}/resolve/main/tokenizer.json"]
    offline = _load(tmp_path, _closed_port_url())
    assert (offline.returncode, offline.stdout.strip()) == (0, "2"), offline.stderr
    assert "Retrying" not in offline.stderr


def test_hub_tokenizer_neither_reachable_nor_cached_is_refused_at_once(tmp_path: Path) -> None:
    """Before, huggingface_hub retried the unanswered request 5 times (1+2+4+8+8 s, its
    'Retrying in 8s [Retry 5/5]' lines) and the error said to check the connection."""
    endpoint = _closed_port_url()
    refused = _load(tmp_path, endpoint)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "Retrying" not in refused.stderr
    assert refused.stdout.startswith(
        f"--tokenizer: {REPO}: the Hugging Face Hub ({endpoint}) cannot be reached ("
    )
    assert refused.stdout.rstrip().endswith(
        "and its tokenizer.json is not in the Hugging Face cache; pass --tokenizer PATH to a "
        "tokenizer.json (or a folder holding one)"
    )
    assert len(refused.stdout.splitlines()) == 1


def test_hub_tokenizer_not_cached_under_hf_hub_offline_says_so(tmp_path: Path) -> None:
    refused = _load(tmp_path, _closed_port_url(), offline=True)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert refused.stdout.strip() == (
        f"--tokenizer: {REPO}: HF_HUB_OFFLINE is set and its tokenizer.json is not in the "
        "Hugging Face cache; pass --tokenizer PATH to a tokenizer.json (or a folder holding one)"
    )
