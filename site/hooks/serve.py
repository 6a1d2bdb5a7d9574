"""Serve the built site on 127.0.0.1 for `make demo`: bind first, then say where, then stay quiet.

`python -m http.server` prints its own banner, logs every request to the terminal and only
finds out that the port is taken after the Makefile has printed the address. This binds the port
before anything is printed, names the port when it is taken (exit 1), and logs nothing per request:
a browser that drops a connection mid-file (a reader who leaves a page while Pyodide loads) is
not an error of the server's, and any other failure of one request is one line, not a traceback.
"""

import argparse
import functools
import http.server
import sys
from pathlib import Path
from typing import Any


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No line per request: the terminal keeps the one line that says where the site is."""


class SiteServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """One line for a request that failed; nothing when the client went away."""
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError):
            return
        sys.stderr.write(f"request from {client_address[0]} failed: {error!r}\n")


def _port_taken(port: int, error: OSError) -> int:
    sys.stderr.write(
        f"port {port} on 127.0.0.1 is not free ({error.strerror}); "
        f"try `make demo PORT={port + 1}`\n"
    )
    return 1


def _check_port(port: int) -> int:
    try:
        probe = http.server.HTTPServer(("127.0.0.1", port), http.server.BaseHTTPRequestHandler)
    except OSError as error:
        return _port_taken(port, error)
    probe.server_close()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--directory", type=Path, default=Path("build/site"))
    parser.add_argument("--check", action="store_true", help="only check that the port is free")
    args = parser.parse_args(argv)
    if args.check:
        return _check_port(args.port)
    if not (args.directory / "index.html").is_file():
        sys.stderr.write(f"{args.directory}: no built site here (run `make site` first)\n")
        return 1
    handler = functools.partial(QuietHandler, directory=str(args.directory))
    try:
        server = SiteServer(("127.0.0.1", args.port), handler)
    except OSError as error:
        return _port_taken(args.port, error)
    sys.stdout.write(
        f"infermeter site: http://127.0.0.1:{args.port}/  "
        f"(built in {args.directory}; Ctrl-C stops the server)\n"
    )
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
