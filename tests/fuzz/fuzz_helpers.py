"""Helpers of the fault and fuzz suite: run a hostile case, check the rules, count its outcome.

`check_cli` runs one CLI call and checks what every case must hold: an exit code of 0, 1 or 2,
no traceback, on failure one `Error: …` line, the last (of sane length), with `--json` on success
strict JSON (no NaN or Infinity). Every case is counted by suite and outcome; tests/conftest.py
prints the tally at the end of the run.
"""

from __future__ import annotations

import json
import signal
from collections import Counter
from pathlib import Path
from types import FrameType

from click.testing import CliRunner, Result

from infermeter.bench.cli.main import main

OUTCOMES: Counter[str] = Counter()
SUITES: Counter[str] = Counter()
FAILURES: Counter[str] = Counter()  # traceback, hang, secret, gate-rejected file: each must stay 0

# One set of secrets planted in every surface (tests/fuzz/test_fuzz_secrets.py); none may be
# found in any output, file or log.
PLANTED = {
    "camelCase key": "PLANTEDcamel7f3a91",
    "JSON Authorization pair": "PLANTEDbearer52c8e0",
    "hyphenated key": "PLANTEDhyphen0b7d44",
    "URL userinfo": "PLANTEDuserpass9e21",
    "Hugging Face token": "hf_PLANTEDhuggingface0123456789ab",
    "api key": "PLANTEDapikey3c5d6e",
    "Proxy-Authorization": "PLANTEDproxy81f0aa",
}


def leaked(text: str | bytes) -> list[str]:
    """Which planted secrets `text` shows."""
    data = text.encode() if isinstance(text, str) else text
    return [name for name, secret in PLANTED.items() if secret.encode() in data]


def check_no_secret(suite: str, where: str, text: str | bytes) -> None:
    """Count one surface checked for the planted secrets; fail naming any it shows."""
    found = leaked(text)
    count(suite, "secret leaked" if found else "no secret")
    if found:
        FAILURES["secret in an output"] += 1
    assert not found, f"{where} shows {', '.join(found)}"


def check_gate_accepts(suite: str, paths: list[Path]) -> None:
    """Every result file a case wrote passes `registry validate` (count each one)."""
    from infermeter.registry.validate import validate_paths

    for path in paths:
        report = validate_paths([path])
        count(suite, "file the gate accepts" if report.ok else "file the gate rejects")
        if not report.ok:
            FAILURES["file written that the gate rejects"] += 1
        assert report.ok, [str(problem) for problem in report.problems]


def count(suite: str, outcome: str) -> None:
    """Count one case of `suite` that ended in `outcome`."""
    SUITES[suite] += 1
    OUTCOMES[outcome] += 1


class Hang(Exception):
    """A case ran past its time limit."""


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise Hang()


def check_cli(
    args: list[str], suite: str = "cli", limit_s: float = 20.0, *, report: bool = False
) -> Result:
    """Run `infermeter ARGS…` in-process and assert the rules every case holds (see above);
    a case still running after `limit_s` fails as a hang. A `report` (registry validate)
    lists one problem per line instead of one error line; each line stays short."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    try:
        result = CliRunner().invoke(main, args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    hung = isinstance(result.exception, Hang)
    crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
    count(suite, "hang" if hung else "traceback" if crashed else f"exit {result.exit_code}")
    if hung or crashed or "Traceback" in result.output:
        FAILURES["hang" if hung else "traceback"] += 1
    assert not hung, f"{args[:6]}: still running after {limit_s:g} s"
    assert not crashed, f"{args[:6]}: {result.exception!r}"
    assert "Traceback" not in result.output
    assert result.exit_code in (0, 1, 2), result.output
    if report:
        assert all(len(line) < 500 for line in result.output.splitlines()), result.output[:500]
    elif result.exit_code != 0:
        # Notes may come first ("no GPU telemetry: …"); the error is one line, the last.
        lines = result.stderr.strip().splitlines()
        errors = [line for line in lines if line.startswith("Error")]
        assert errors == lines[-1:], (args[:6], result.stderr[:500])
        assert errors[0].startswith("Error: "), errors[0]
        assert len(errors[0]) <= 600, errors[0][:200]
    elif "--json" in args:

        def refuse(name: str) -> None:
            raise AssertionError(f"{name} in --json output: not JSON")

        json.loads(result.stdout, parse_constant=refuse)
    return result
