"""One GET of a server's small answer (its `/version`, `/v1/models` cards, `/metrics`, `/health`),
read whole within a time limit in all and a size limit.

A socket's timeout alone restarts with every byte: a server (or a proxy) that drips its answer a
byte at a time, or answers without end, would hold a plain `urlopen(...).read()` for ever and
fill memory. Nothing here raises: an answer that is not a whole 200 in time is None.

It asks the server itself, as the load client does (aiohttp without `trust_env`): a proxy that
`HTTP_PROXY` names is not asked, so what the bench learns of a server (its engine, its version,
its metrics) comes from the server it measures.
"""

from __future__ import annotations

import http.client
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

# The most of an answer read unless the caller says otherwise: a server's description of itself
# is a few KiB.
SMALL_ANSWER_BYTES = 2_000_000


# An opener without the proxies of the environment (urlopen's default opener reads them).
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@dataclass(frozen=True)
class SmallAnswer:
    """A 200 answer, read whole."""

    body: bytes
    server_header: str | None  # its `Server:` header (llama.cpp's says who it is)


def small_get(
    url: str, timeout_s: float, limit_bytes: int = SMALL_ANSWER_BYTES
) -> SmallAnswer | None:
    """`GET url`'s answer, read within `timeout_s` in all; None when there is none: the server
    cannot be reached, answers no HTTP or another status than 200, or not whole in time or
    within `limit_bytes`."""
    deadline = time.monotonic() + timeout_s
    try:
        with _DIRECT.open(url, timeout=timeout_s) as response:
            if response.status != 200:
                return None
            body = bytearray()
            while piece := response.read1(limit_bytes + 1 - len(body)):
                body += piece
                if len(body) > limit_bytes or time.monotonic() > deadline:
                    return None
            return SmallAnswer(bytes(body), response.headers.get("Server"))
    except (OSError, urllib.error.URLError, http.client.HTTPException, ValueError):
        return None
