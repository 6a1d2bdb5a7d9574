"""The watchdog of a launched server: it ends the server's whole process group once the process
that launched it is gone, however it went (SIGKILL, an out-of-memory kill, a lost Ray worker).

`bench.launch.server` runs this file as a script, `python -I -S watchdog.py GROUP GRACE_S
LAUNCHER_PID`, in a session of its own (a Ctrl-C at the terminal does not reach it), with its
stdin the read end of a pipe whose write end only the launcher holds. The launcher is gone when
that pipe reads end of file or when the watchdog's parent is no longer the launcher (a process
whose parent dies is handed to another). Then the watchdog sends SIGTERM to the group, waits up
to GRACE_S seconds for every process of it to end, and sends SIGKILL to what is left: a server
that ignores or mishandles SIGTERM (vLLM while it starts has its own handler, which does not end
it) goes too, and so do its engine and worker processes. The watchdog ends by itself once the
group is gone (the launcher stopped the server, or it exited).

Stdlib only and nothing of infermeter's, so it is running in milliseconds.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time

POLL_S = 0.2  # how often the group and the parent are looked at while the launcher lives
USAGE = "usage: watchdog.py GROUP GRACE_S LAUNCHER_PID"


def group_alive(group: int) -> bool:
    """True while some process of the group exists (one not yet reaped counts)."""
    try:
        os.killpg(group, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def launcher_gone(launcher: int, timeout_s: float) -> bool:
    """Whether the launcher is gone, waiting up to `timeout_s` for its pipe to say so."""
    readable, _, _ = select.select([sys.stdin.fileno()], [], [], timeout_s)
    if readable and not os.read(sys.stdin.fileno(), 64):
        return True
    return os.getppid() != launcher


def end_group(group: int, grace_s: float) -> None:
    """SIGTERM to the group, then SIGKILL to what is left of it after `grace_s`."""
    if not group_alive(group):
        return
    _signal(group, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while group_alive(group) and time.monotonic() < deadline:
        time.sleep(0.05)
    _signal(group, signal.SIGKILL)


def watch(group: int, grace_s: float, launcher: int) -> None:
    """Wait while the group lives; end it if the launcher goes first."""
    while group_alive(group):
        if launcher_gone(launcher, POLL_S):
            end_group(group, grace_s)
            return


def _signal(group: int, number: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, number)


def main(argv: list[str]) -> int:
    try:
        group, grace_s, launcher = int(argv[0]), float(argv[1]), int(argv[2])
    except (IndexError, ValueError):
        sys.stderr.write(USAGE + "\n")
        return 2
    watch(group, grace_s, launcher)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
