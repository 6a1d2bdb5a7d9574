"""A library function fits a screen: at most 5 over 60 lines, each stating why above it
(`# long: <why>`), none over complexity 15 (benchmarks/function_sizes.py --check 5)."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "function_sizes.py"


def test_at_most_five_long_library_functions_each_with_its_reason() -> None:
    completed = subprocess.run(
        [sys.executable, str(SCRIPT), "--check", "5"], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_the_check_fails_past_the_limit() -> None:
    completed = subprocess.run(
        [sys.executable, str(SCRIPT), "--max-lines", "10", "--check", "5"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 1
    assert "without a reason" in completed.stdout
