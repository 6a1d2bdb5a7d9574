"""The Contribute page (site/contribute.md), followed literally: its command block runs as one
bash script, line by line as written, from an empty folder, with the installed wheel.

What stands in for what this machine cannot reach, and only that:
- `pip` is a STAND-IN that checks it was asked for the page's install line (the repository's
  address from pyproject.toml) and installs nothing: the `installed` fixture already installed
  the wheel of this tree (tests/wheel_install.py), which is what that line installs;
- `https://github.com/YOU/infermeter` is the contributor's fork: git's `insteadOf` sends it to a
  bare clone of this repository in a temp folder;
- `vllm` on the PATH is the STAND-IN vLLM (tests/bench/standin_vllm.py), as a GPU host's
  `vllm serve` would be; no `gh`, so `registry submit` prints the pull request's address.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest
from wheel_install import Installed

from infermeter.registry.models import Result
from tests.bench.standin_launcher import standin_launcher

pytestmark = pytest.mark.slow
REPOSITORY = Path(__file__).resolve().parents[1]
PAGE = REPOSITORY / "site" / "contribute.md"
FORK_URL = "https://github.com/YOU/infermeter"


def _repository_url() -> str:
    pyproject = tomllib.loads((REPOSITORY / "pyproject.toml").read_text(encoding="utf-8"))
    return str(pyproject["project"]["urls"]["Repository"])


def page_commands() -> list[str]:
    """The lines of the page's one bash block, in order."""
    blocks = re.findall(r"```bash\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) == 1, "the page's path is one block of commands"
    return [line for line in blocks[0].splitlines() if line.strip()]


def _executable(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)


def _stand_ins(folder: Path, install_line: str) -> Path:
    """`pip` (checks its arguments), `vllm` (the stand-in) and `git`, and nothing else."""
    folder.mkdir()
    expected = shlex.split(install_line)[1:]
    _executable(
        folder / "pip",
        "#!/bin/sh\n"  # STAND-IN for pip's download: the wheel of this tree is installed
        f'[ "$*" = {shlex.quote(" ".join(expected))} ] || {{ echo "pip: unexpected: $*" >&2; '
        "exit 2; }\n",
    )
    standin_launcher(folder)
    (folder / "git").symlink_to("/usr/bin/git")
    return folder


def _git_config(path: Path, fork: Path) -> Path:
    path.write_text(
        f'[url "file://{fork}"]\n\tinsteadOf = {FORK_URL}\n'
        "[user]\n\tname = Contributor\n\temail = contributor@example.com\n",
        encoding="utf-8",
    )
    return path


def test_contribute_page_installs_from_the_repository_declared_in_pyproject() -> None:
    install = page_commands()[0]
    assert install == f"pip install 'infermeter[bench] @ git+{_repository_url()}'"


def test_contribute_page_is_one_short_page() -> None:
    assert len(PAGE.read_text(encoding="utf-8").splitlines()) <= 60


def test_contribute_page_commands_run_as_written(installed: Installed, tmp_path: Path) -> None:
    commands = page_commands()
    fork = tmp_path / "fork.git"
    subprocess.run(
        ["git", "init", "--quiet", "--bare", "--initial-branch=main", str(fork)], check=True
    )
    subprocess.run(  # the fork holds this tree's commit as its main
        ["git", "-C", str(REPOSITORY), "push", "--quiet", str(fork), "HEAD:refs/heads/main"],
        check=True, timeout=300,
    )  # fmt: skip
    tools = _stand_ins(tmp_path / "bin", commands[0])
    home, walk = tmp_path / "home", tmp_path / "walk"
    home.mkdir()
    walk.mkdir()
    script = "set -euo pipefail\n" + "\n".join(commands) + "\n"
    walked = subprocess.run(
        ["/bin/bash", "-c", script],
        cwd=walk,
        env=installed.environment(
            PATH=f"{tools}:{installed.venv / 'bin'}",
            HOME=str(home),
            GIT_CONFIG_GLOBAL=str(_git_config(home / ".gitconfig", fork)),
            GIT_CONFIG_NOSYSTEM="1",
            # Slow enough that a stall of this host cannot fake a decode faster than an H100's
            # memory allows for an 8B model (the registry's physics check).
            STANDIN_VLLM_ITL_S="0.008",
            STANDIN_VLLM_TTFT_S="0.03",
        ),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert walked.returncode == 0, walked.stdout[-3000:] + walked.stderr[-3000:]
    assert "Traceback" not in walked.stderr
    checkout = walk / "infermeter"
    result = Result.model_validate_json((checkout / "result.json").read_text(encoding="utf-8"))
    assert [point.load.concurrency for point in result.points] == [8, 32]
    branches = subprocess.run(
        ["git", "-C", str(fork), "branch", "--list", "--format=%(refname:short)"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    pushed = [branch for branch in branches if branch != "main"]
    assert len(pushed) == 1, branches
    files = subprocess.run(
        ["git", "-C", str(fork), "diff", "--name-only", "main", pushed[0]],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert len(files) == 1, files
    assert files[0].startswith("registry/results/h100-sxm/"), files
    # Without gh: the address to open the pull request at, from the fork's configured URL.
    assert f"# or open {FORK_URL}/pull/new/{pushed[0]}" in walked.stdout
