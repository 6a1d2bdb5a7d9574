"""`make demo`'s server (site/hooks/serve.py), run as the Makefile runs it: a process on
127.0.0.1 that prints where the site is and nothing more, whatever its readers do."""

import socket
import struct
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from infermeter.bench.launch.server import free_port

SERVE = Path(__file__).resolve().parents[2] / "site" / "hooks" / "serve.py"


def _serve(folder: Path, port: int, *more: str) -> subprocess.Popen[str]:
    command = [sys.executable, str(SERVE), "--port", str(port), "--directory", str(folder), *more]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@contextmanager
def _served(folder: Path, port: int) -> Iterator[list[str]]:
    """The server, once it has said where it is; stopped (as Ctrl-C does) after the block, when
    the list it gave holds what it wrote to stderr."""
    server = _serve(folder, port)
    errors: list[str] = []
    try:
        assert server.stdout is not None
        assert server.stdout.readline().startswith(f"infermeter site: http://127.0.0.1:{port}/")
        yield errors
    finally:
        server.terminate()
        errors.append(server.communicate(timeout=30)[1])


def _site(tmp_path: Path) -> Path:
    (tmp_path / "index.html").write_text("<p>the site</p>")
    (tmp_path / "pyodide.asm.wasm").write_bytes(bytes(range(256)) * 80_000)  # 20 MB
    return tmp_path


def _drop_mid_file(port: int, path: str) -> None:
    """A reader who leaves while a large file downloads: the browser resets the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as reader:
        reader.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        assert reader.recv(4096).startswith(b"HTTP/1.0 200")
        reader.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def test_demo_server_stays_quiet_when_readers_drop_connections(tmp_path: Path) -> None:
    port = free_port()
    with _served(_site(tmp_path), port) as errors:
        for _ in range(3):
            _drop_mid_file(port, "/pyodide.asm.wasm")
        time.sleep(0.5)  # the server's threads meet the reset writing the rest of the file
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as page:
            assert page.read() == b"<p>the site</p>"
    assert errors == [""]


def test_demo_server_names_a_taken_port_in_one_line(tmp_path: Path) -> None:
    port = free_port()
    with _served(_site(tmp_path), port):
        second = _serve(tmp_path, port)
        out, errors = second.communicate(timeout=30)
    assert second.returncode == 1
    assert out == ""
    assert errors.startswith(f"port {port} on 127.0.0.1 is not free (")
    assert errors.endswith(f"try `make demo PORT={port + 1}`\n")
    assert errors.count("\n") == 1


def test_demo_server_check_only_binds_nothing(tmp_path: Path) -> None:
    port = free_port()
    check = subprocess.run(
        [sys.executable, str(SERVE), "--check", "--port", str(port)], capture_output=True
    )
    assert (check.returncode, check.stdout, check.stderr) == (0, b"", b"")
    with _served(_site(tmp_path), port):  # the port it checked is still free to serve on
        taken = subprocess.run(
            [sys.executable, str(SERVE), "--check", "--port", str(port)], capture_output=True
        )
    assert taken.returncode == 1
    assert taken.stderr.decode().startswith(f"port {port} on 127.0.0.1 is not free")


def test_demo_server_without_a_built_site_says_so(tmp_path: Path) -> None:
    missing = _serve(tmp_path / "site", free_port())
    out, errors = missing.communicate(timeout=30)
    assert (missing.returncode, out) == (1, "")
    assert errors == f"{tmp_path / 'site'}: no built site here (run `make site` first)\n"


def test_demo_server_says_a_failed_request_in_one_line(tmp_path: Path) -> None:
    """A request the standard library's handler fails on (a NUL byte in the path: `open`
    raises ValueError, which it does not catch) is one line, and the server goes on serving."""
    port = free_port()
    with _served(_site(tmp_path), port) as errors:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as reader:
            reader.sendall(b"GET /a%00b HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert reader.recv(4096) == b""  # closed without an answer
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as page:
            assert page.read() == b"<p>the site</p>"
    assert errors == ["request from 127.0.0.1 failed: ValueError('embedded null byte')\n"]
