"""How long the stream parser takes on one huge SSE line (a hostile or broken server).

A line longer than `bench.client.stream.MAX_EVENT_BYTES` fails the request as a malformed stream
instead of being buffered; the time must stay flat as the line grows (it grew with the square
of the size before: 162 s for 64 MiB). Prints seconds per size; run with
`.venv/bin/python benchmarks/sse_long_line.py`.
"""

from __future__ import annotations

import time

from infermeter.bench.client.stream import MAX_EVENT_BYTES, StreamParser

READ_BYTES = 65536


def parse_seconds(mib: int) -> tuple[float, str]:
    """Seconds to feed one `mib`-MiB line in 64 KiB reads and finish, and the error kind."""
    parser = StreamParser("completions")
    started = time.perf_counter()
    parser.feed(0, b'data: {"choices":[{"text":"')
    for index in range(mib * (1 << 20) // READ_BYTES):
        parser.feed(index, b"x" * READ_BYTES)
    parser.feed(0, b'"}]}\n\n')
    parsed = parser.finish()
    return time.perf_counter() - started, str(parsed.error)


def main() -> None:
    print(f"limit: {MAX_EVENT_BYTES:,} bytes per SSE line")
    for mib in (1, 4, 16, 64):
        seconds, error = parse_seconds(mib)
        print(f"{mib:3d} MiB line: {seconds:.3f} s ({error})")


if __name__ == "__main__":
    main()
