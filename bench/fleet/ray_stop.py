"""How Ctrl-C of `bench fleet` reaches the runs on the nodes, so that each still hands back
what it measured.

A Ray cancel interrupts a task, but Ray hands nothing more of a cancelled task back to the
driver: a run stopped that way keeps only the points it had streamed before, and the point
under way, which the run itself writes as interrupted, never comes back. So the driver asks
the runs to stop instead, and they end as `bench run` ends on Ctrl-C, returning their result:

- the driver creates a named actor, `stop_name(fleet)` (`request_stop`); its existence in the
  cluster is the request (Ray registers the name at once, before the actor has a process);
- each task looks for it every `POLL_S` (`watch`, in a thread of its worker) and, once it is
  there, passes a SIGINT on to its run (`bench.session.interrupts.pass_on`), which stops measuring,
  keeps the point under way as interrupted, stops its vLLM and writes its result; the task
  hands that back as it hands back any result.

The actor goes with the driver (it is not detached). If it cannot be made, the driver falls
back to Ray's cancel.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import uuid
from typing import Any

from infermeter.bench.session.interrupts import pass_on

POLL_S = 0.5
_PREFIX = "infermeter-fleet-stop-"


def stop_name() -> str:
    """A name for one fleet run's stop request, unique on the cluster."""
    return f"{_PREFIX}{uuid.uuid4().hex}"


class _StopRequest:
    """The request itself: an actor with nothing to do, found by its name."""

    def ready(self) -> bool:
        return True


def request_stop(ray: Any, name: str) -> Any:
    """Ask every run of the fleet `name` to stop; the actor's handle, which the driver keeps
    until it ends (None: the request could not be made, so cancel the tasks instead)."""
    try:
        return ray.remote(_StopRequest).options(name=name, num_cpus=0).remote()
    except Exception:  # a cluster that cannot take the actor: the caller cancels instead
        return None


def requested(ray: Any, name: str) -> bool:
    """Whether the driver of fleet `name` asked its runs to stop."""
    try:
        ray.get_actor(name)
    except ValueError:  # no actor of that name: no request
        return False
    return True


def watch(ray: Any, name: str, run: threading.Thread, done: threading.Event) -> None:
    """Until `done` is set: once the stop is requested, a SIGINT for the run in `run`, passed
    on as the worker's main thread passes a signal on (tried again until the run has started
    listening for one)."""
    while not done.wait(POLL_S):
        with contextlib.suppress(Exception):  # a cluster gone: the task ends with its worker
            if requested(ray, name) and run.ident is not None and pass_on(run.ident, signal.SIGINT):
                return
