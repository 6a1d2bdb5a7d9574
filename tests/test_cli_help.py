"""Meta-test: every command of the `infermeter` CLI has --help with an example."""

import click
import pytest
from click.testing import CliRunner

from infermeter.bench.cli.main import main


def _all_commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [prefix]
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found.extend(_all_commands(command, (*prefix, name)))
        else:
            found.append((*prefix, name))
    return found


@pytest.mark.parametrize("path", _all_commands(main), ids=lambda p: " ".join(p) or "infermeter")
def test_cli_every_command_has_help_with_example(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(main, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Example" in result.output, f"`infermeter {' '.join(path)} --help` shows no example"
