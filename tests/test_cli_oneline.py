"""Usage errors are one line, and a long value they echo is capped (bench/cli/oneline.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from infermeter.bench.cli.main import main
from infermeter.bench.cli.oneline import SHOWN_VALUE_CHARS, cap_values, shown_value

BIG = "9" * 400
CALC = ["calc", "vram", "--model", "llama-3.1-8b-instruct", "--gpu", "h100-sxm"]


def _usage_line(*args: str) -> str:
    run = CliRunner().invoke(main, list(args))
    assert run.exit_code == 2, run.output
    assert run.exception is None or isinstance(run.exception, SystemExit), run.output
    (line,) = run.stderr.strip().splitlines()
    return line


@pytest.mark.parametrize(
    ("args", "shown", "reason"),
    [
        # click echoes a number out of range unquoted
        ([*CALC, "-tp", BIG], f": {'9' * 60}… is", "is not in the range"),
        # the `=` form, quoted
        ([*CALC, f"--max-model-len=x{BIG}"], f"'x{'9' * 59}…'", "is not a valid integer"),
        # a newline in it, escaped as click's repr writes it
        (["bench", "run", "--endpoint", "http://127.0.0.1:1", "--num-requests", f"x\n{BIG}"],
         f"'x\\n{'9' * 58}…'", "is not a valid integer"),
    ],
    ids=["unquoted", "equals-form", "newline"],
)  # fmt: skip
def test_usage_error_caps_a_long_value_and_keeps_what_is_wrong_with_it(
    args: list[str], shown: str, reason: str
) -> None:
    line = _usage_line(*args)
    assert shown in line, line
    assert "9" * 61 not in line
    assert reason in line, line


def test_huge_counts_are_refused_in_one_line() -> None:
    line = _usage_line("bench", "run", "--endpoint", "http://127.0.0.1:1", "--concurrency", BIG)
    assert line == "Error: --concurrency: 9e+399 concurrent requests; at most 1,000,000"


def test_a_model_name_too_long_for_a_file_is_an_unknown_id() -> None:
    run = CliRunner().invoke(main, ["calc", "vram", "--model", "x" * 300, "--gpu", "h100-sxm"])
    assert run.exit_code == 1, run.output
    assert run.exception is None or isinstance(run.exception, SystemExit), run.exception
    assert run.stderr.startswith("Error: unknown model id 'xxx")


@pytest.mark.parametrize(
    "args",
    [
        ["calc", "vram", "--model", "x" * 100_000, "--gpu", "h100-sxm"],
        ["calc", "vram", "--model", "llama-3.1-8b-instruct", "--gpu", "x" * 100_000],
        ["bench", "compare", "x" * 3_000],
    ],
    ids=["model", "gpu", "result-file"],
)
def test_an_error_exit_1_caps_a_long_value_given_on_the_command_line(args: list[str]) -> None:
    run = CliRunner().invoke(main, args)
    assert run.exit_code == 1, run.output
    (line,) = run.stderr.strip().splitlines()
    assert f"{'x' * 60}…" in line
    assert "x" * 61 not in line


def test_shown_value_is_the_first_sixty_characters_and_an_ellipsis() -> None:
    assert SHOWN_VALUE_CHARS == 60
    assert shown_value("a" * 60) == "a" * 60
    assert shown_value("a" * 61) == "a" * 60 + "…"


def test_cap_values_caps_only_long_command_line_values_and_never_a_path() -> None:
    path = "/" + "p" * 70
    long = "v" * 70
    text = f"'{BIG}' is wrong; so is {long}; {path} stays; 12 is fine; {'q' * 80} was not given"
    capped = cap_values(text, ["--count", BIG, f"--name={long}", "--out", path, "12"])
    assert capped == (
        f"'{'9' * 60}…' is wrong; so is {'v' * 60}…; {path} stays; 12 is fine; {'q' * 80} was "
        "not given"
    )


def test_an_error_line_escapes_what_a_hostile_file_name_holds(tmp_path: Path) -> None:
    # An OSC sequence (retitles the terminal), a newline and U+2028 in a file's name reach the
    # error line of `bench import` (exit 1) as escapes, never as what drives the terminal.
    name = "a\x1b]0;owned\x07\n\u2028b.json"
    (tmp_path / name).write_text("{}", encoding="utf-8")
    run = CliRunner().invoke(main, ["bench", "import", str(tmp_path / name), "--gpu", "h100-sxm"])
    assert run.exit_code == 1, run.output
    (line,) = run.stderr.strip().splitlines()
    assert "a\\x1b]0;owned\\x07" in line
    assert "b.json: not a known benchmark file" in line
    assert all(character.isprintable() for character in line), repr(line)
