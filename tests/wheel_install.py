"""The package as a contributor installs it: a wheel built from this tree, in a fresh venv.

The wheel is built offline (`pip wheel --no-deps --no-build-isolation`, this environment's
setuptools) from a copy of the tree's files, installed with `--no-deps` into a new venv made
without pip; its third-party dependencies come from this environment's site-packages through a
`.pth` line (added after the venv's own site-packages, and without running this environment's
`.pth` files, so the editable install of the checkout stays out). Built once per session (the
`installed` fixture, tests/conftest.py) and shared by every test that runs the installed CLI.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Installed:
    """The built wheel, the venv it is installed in, and an empty folder outside the checkout."""

    wheel: Path
    venv: Path
    site_packages: Path
    empty: Path

    def environment(self, **env: str) -> dict[str, str]:
        """This process's environment without PYTHON* (no PYTHONPATH to the checkout) and
        INFERMETER* variables, plus `env`."""
        ours = ("PYTHON", "INFERMETER")
        return {k: v for k, v in os.environ.items() if not k.startswith(ours)} | env

    def run(
        self, *args: str, cwd: Path | None = None, timeout: float = 120, **env: str
    ) -> subprocess.CompletedProcess[str]:
        """`infermeter ARGS…` from the venv, in `cwd` (default: the empty folder)."""
        return subprocess.run(
            [str(self.venv / "bin" / "infermeter"), *args],
            cwd=cwd or self.empty,
            env=self.environment(**env),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


def _tree_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPOSITORY,
        capture_output=True,
        check=True,
    )
    return [name for name in listed.stdout.decode().split("\0") if name]


def build_installed(base: Path) -> Installed:
    """Build the tree's wheel under `base` and install it into a fresh venv there."""
    source = base / "source"
    for name in _tree_files():
        if (REPOSITORY / name).is_symlink():  # registry/json_schemas -> ../schemas
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            (source / name).symlink_to((REPOSITORY / name).readlink())
        elif (REPOSITORY / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPOSITORY / name, source / name)
    dist = base / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-index", "--wheel-dir", str(dist), str(source)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (wheel,) = dist.glob("infermeter-*.whl")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
         "--quiet", "--no-deps", "--no-index", "--no-compile", str(wheel)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (site_packages,) = (venv / "lib").glob("python3*/site-packages")
    dependencies = "\n".join(site.getsitepackages()) + "\n"
    (site_packages / "zz-test-dependencies.pth").write_text(dependencies)
    empty = base / "empty"
    empty.mkdir()
    return Installed(wheel, venv, site_packages, empty)
