"""A server on 127.0.0.1 that answers every request with the same raw bytes, then (with
`drip_s`) one more byte every `drip_s` seconds without end: what no HTTP library can be made
to send, as a broken server or proxy sends it (a status line that is no HTTP, a body that never
ends, a body of any size)."""

from __future__ import annotations

import socket
import threading
from types import TracebackType


class RawHttpServer:
    """`with RawHttpServer(answer) as server:` serves `answer` at `server.url`."""

    def __init__(self, answer: bytes, drip_s: float | None = None, hold: bool = False) -> None:
        self.answer = answer
        self.drip_s = drip_s
        self.hold = hold  # keep the connection open after the answer, sending nothing more
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._stopped = threading.Event()

    def __enter__(self) -> RawHttpServer:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stopped.set()
        self._listener.close()

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                connection, _address = self._listener.accept()
            except OSError:  # closed
                return
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            try:
                request = b""
                while b"\r\n\r\n" not in request:
                    piece = connection.recv(65536)
                    if not piece:
                        return
                    request += piece
                connection.sendall(self.answer)
                while self.drip_s is not None and not self._stopped.wait(self.drip_s):
                    connection.sendall(b" ")
                if self.hold:
                    self._stopped.wait()
            except OSError:  # the client went away
                return
