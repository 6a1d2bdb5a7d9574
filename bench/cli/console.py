"""The `infermeter` console script: quiet on Ctrl-C from its first instant to its last.

Importing the CLI takes a noticeable moment (pydantic, the models, click); a Ctrl-C or SIGTERM
then would print a KeyboardInterrupt traceback, or (SIGTERM's default) kill the process. Until
the CLI is imported, either signal ends it at once with click's "Aborted!" and exit status 1;
afterwards the CLI handles them (a run stops as `bench.session.interrupts` says).
"""

import signal
import sys
from types import FrameType


def _aborted(number: int, frame: FrameType | None) -> None:
    sys.stderr.write("Aborted!\n")
    sys.stderr.flush()
    raise SystemExit(1)


def main() -> None:
    """Import the CLI under quiet handlers, then run it with Python's usual ones."""
    previous = {
        number: signal.signal(number, _aborted) for number in (signal.SIGINT, signal.SIGTERM)
    }
    from infermeter.bench.cli.main import main as cli
    from infermeter.bench.session.interrupts import process_ends_after_command

    process_ends_after_command()
    for number, handler in previous.items():
        signal.signal(number, handler)
    try:
        cli()
    except KeyboardInterrupt:  # one that arrived while click was already ending on another
        _ignore_signals()
        sys.stderr.write("Aborted!\n")
        raise SystemExit(1) from None
    finally:
        _ignore_signals()  # the command is over: nothing may turn its exit into a signal's


def _ignore_signals() -> None:
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.SIG_IGN)
