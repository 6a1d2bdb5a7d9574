"""Running git on a repository: its output, or one line that says why there is none."""

import subprocess
from collections.abc import Sequence
from pathlib import Path


class GitCommandError(Exception):
    """git is missing or ran too long (`failed` False), or exited non-zero (`failed` True)."""

    def __init__(self, message: str, *, failed: bool) -> None:
        super().__init__(message)
        self.failed = failed


def run_git(
    repository: Path,
    arguments: Sequence[str],
    *,
    needed_for: str,
    timeout_s: int,
    stdin: bytes | None = None,
) -> bytes:
    """`git -C repository arguments…`'s stdout; a failure names the subcommand and git's last
    line (`needed_for`: why git is needed, said when it is not installed)."""
    try:
        completed = subprocess.run(
            ["git", "-C", str(repository), *arguments],
            input=stdin,
            capture_output=True,
            check=False,
            timeout=timeout_s,
        )
    except FileNotFoundError:
        raise GitCommandError(
            f"git is not installed; it is needed {needed_for}", failed=False
        ) from None
    except subprocess.TimeoutExpired:
        raise GitCommandError(
            f"git {arguments[0]} took longer than {timeout_s} s", failed=False
        ) from None
    if completed.returncode != 0:
        lines = completed.stderr.decode("utf-8", "replace").strip().splitlines()
        message = f"git {arguments[0]} failed: {lines[-1] if lines else 'no message'}"
        raise GitCommandError(message, failed=True)
    return completed.stdout
