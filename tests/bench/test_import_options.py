"""`bench import`'s options are declared once, on `ImportFacts`: generated from its fields and
checked once by the model, every error naming the option as the command line spells it."""

import pytest
from click.testing import CliRunner

from infermeter.bench.cli.bench_results import import_command
from infermeter.bench.importers.common import ImportFacts

COMMAND_ONLY = {"files", "file_format", "output", "as_json"}


def test_every_fact_is_an_option_and_every_option_a_fact() -> None:
    options = {p.name for p in import_command.params} - COMMAND_ONLY
    assert options == set(ImportFacts.model_fields)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (["--slo-ttft-ms", "-5"], "--slo-ttft-ms: must be greater than 0, got -5"),
        (["--gpu-memory-utilization", "1.5"], "--gpu-memory-utilization: must be at most 1"),
        (["--gpu-count", "0"], "--gpu-count: must be at least 1, got 0"),
        # A seed no JSON reader holds exactly was written ('"seed": 1000…0'), valid.
        (["--seed", str(10**40)], "--seed: must be at most 9007199254740992, got 1000"),
    ],
)
def test_a_bad_fact_is_one_line_naming_its_option(given: list[str], expected: str) -> None:
    result = CliRunner().invoke(import_command, ["nothing.json", *given])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert expected in lines[0]
