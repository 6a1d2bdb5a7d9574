"""The fault and fuzz suite prints how many cases it ran and how each ended (`fuzz_helpers`)."""

from __future__ import annotations

import pytest
from fuzz_helpers import FAILURES, OUTCOMES, SUITES


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not SUITES:
        return
    total = sum(SUITES.values())
    suites = ", ".join(f"{name} {n}" for name, n in sorted(SUITES.items()))
    outcomes = ", ".join(f"{name}: {n}" for name, n in sorted(OUTCOMES.items()))
    terminalreporter.write_sep("-", "fault and fuzz suite")
    terminalreporter.write_line(f"{total} cases ({suites})")
    terminalreporter.write_line(f"outcomes: {outcomes}")
    labels = {
        "traceback": "tracebacks",
        "hang": "hangs",
        "secret in an output": "secrets found in any output",
        "file written that the gate rejects": "files written that the gate rejects",
    }
    terminalreporter.write_line(", ".join(f"{FAILURES[k]} {label}" for k, label in labels.items()))
