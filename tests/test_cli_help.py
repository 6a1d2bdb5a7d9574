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


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        (("bench", "run"), ["--api-key KEY", "`Authorization: Bearer KEY`, never stored"]),
        (("bench", "plan", "render"), ["--hf-token-secret NAME", "--api-key-secret NAME"]),
    ],
)
def test_cli_help_names_a_credentials_placeholder_as_written(
    path: tuple[str, ...], shown: list[str]
) -> None:
    # what the commands print is redacted (RedactingStream), but their help is their own text
    result = CliRunner().invoke(main, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "REDACTED" not in result.output
    for text in shown:
        assert text in " ".join(result.output.split()), text


def test_cli_output_after_help_is_redacted_still() -> None:
    # a token given on the command line, echoed in an error, never shows, though help was shown
    assert CliRunner().invoke(main, ["bench", "run", "--help"]).exit_code == 0
    token = "hf_" + "abcdefghij" * 3
    run = CliRunner().invoke(main, ["calc", "vram", "--model", token, "--gpu", "h100-sxm"])
    assert run.exit_code == 1
    assert "unknown model id 'REDACTED'" in run.output
    assert token not in run.output


@pytest.mark.parametrize(
    "command", [("bench", "run"), ("bench", "compare"), ("calc", "perf"), ("calc", "cost")]
)
def test_no_help_calls_the_catalog_price_the_cheapest(command: tuple[str, ...]) -> None:
    """The price a default takes is the one the site's figures use (registry.prices: a recent
    official list first), not the cheapest offer: the H100 SXM's is OCI's $10 list price while
    its page lists offers from $1.75."""
    result = CliRunner().invoke(main, [*command, "--help"])
    assert result.exit_code == 0
    assert "cheapest" not in " ".join(result.output.split())
