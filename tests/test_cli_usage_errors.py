"""Every command and group of the CLI reports a usage error the same way: one `Error: …` line
naming what is wrong, exit 2, no usage block and no traceback (the same for click's own
errors: an unknown option or command, a missing argument, a value of the wrong type)."""

from __future__ import annotations

from collections.abc import Iterator

import click
import pytest
from click.testing import CliRunner

from infermeter.bench.cli.main import main


def _walk(
    group: click.Group, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    for name, command in sorted(group.commands.items()):
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from _walk(command, (*path, name))


COMMANDS = [(" ".join(path), command) for path, command in _walk(main)]
GROUPS = [("", main)] + [(path, c) for path, c in COMMANDS if isinstance(c, click.Group)]


def _one_usage_line(args: list[str], expected: str) -> None:
    outcome = CliRunner().invoke(main, args)
    assert outcome.exit_code == 2, outcome.output
    assert "Traceback" not in outcome.output
    assert outcome.stdout == ""
    lines = outcome.stderr.splitlines()
    assert len(lines) == 1, outcome.stderr
    assert lines[0].startswith("Error: ")
    assert expected in lines[0]


@pytest.mark.parametrize(
    "path", [path for path, _ in COMMANDS], ids=lambda path: path.replace(" ", "-")
)
def test_cli_unknown_option_is_one_line(path: str) -> None:
    _one_usage_line([*path.split(), "--no-such-option-xyz"], "--no-such-option-xyz")


@pytest.mark.parametrize("path", [path for path, _ in GROUPS], ids=lambda p: p or "infermeter")
def test_cli_unknown_command_is_one_line(path: str) -> None:
    _one_usage_line([*path.split(), "no-such-command"], "No such command 'no-such-command'")


def test_cli_tree_is_walked() -> None:
    names = {path for path, _ in COMMANDS}
    assert {"calc vram", "bench run", "registry validate", "registry submit"} <= names


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["calc", "vram"], "Missing option '--model'"),
        (["calc", "vram", "--model", "llama-3.1-8b-instruct", "--max-model-len", "zero"],
         "--max-model-len"),
        (["registry", "validate", "--base"], "Option '--base' requires an argument"),
        (["registry", "submit"], "Missing argument"),
        (["registry", "index", "--registry", "/no/such/folder"], "--registry"),
        (["bench", "run", "--concurrency", "abc", "--endpoint", "http://127.0.0.1:9"],
         "--concurrency"),
    ],
)  # fmt: skip
def test_cli_usage_errors_of_each_group_read_alike(args: list[str], expected: str) -> None:
    _one_usage_line(args, expected)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--engine", "Bad Name"], "Error: --engine: expected lowercase letters, digits, - or ."),
        (["--engine-version", ""], "Error: --engine-version: String should have at least 1"),
        (["--gpu", ""], "Error: --gpu: String should have at least 1"),
        (["--vllm-arg", ""], "Error: --vllm-arg: String should have at least 1"),
    ],
)
def test_bench_run_option_errors_name_the_option(args: list[str], expected: str) -> None:
    # What the typed options refuse names the option as the command line spells it, and a
    # pattern's meaning rather than its regular expression.
    _one_usage_line(["bench", "run", "--endpoint", "http://127.0.0.1:9", *args], expected)
