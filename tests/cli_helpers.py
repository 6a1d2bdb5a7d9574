"""Run the `infermeter` CLI in-process and insist it never ends in a traceback; read a refusal's
one-line message."""

import json
from typing import Any

from click.testing import CliRunner, Result

from infermeter.bench.cli.main import main


def invoke(*args: str) -> Result:
    """`infermeter ARGS…`; fails the test on any exception other than a clean exit."""
    result = CliRunner().invoke(main, list(args))
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    return result


def json_output(*args: str) -> dict[str, Any]:
    """`infermeter ARGS… --json`: exit 0 and exactly one JSON object on stdout."""
    result = invoke(*args, "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert isinstance(payload, dict)
    return payload


def one_line_error(result: Result, exit_code: int = 1) -> str:
    """The one line `Error: …` that a refused command printed, ending with `exit_code`."""
    assert result.exit_code == exit_code, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("Error: ")
    return lines[0]
