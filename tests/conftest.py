"""Fixtures every test folder may use."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from wheel_install import Installed, build_installed

# Property tests check values, not speed: a case that took 300 ms on a loaded machine is not a
# failure (speed targets are measured by benchmarks/, not by unit tests).
settings.register_profile("infermeter", deadline=None)
settings.load_profile("infermeter")


@pytest.fixture
def read_only_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder in which no file or folder can be created.

    Its mode is 0o555, which binds every user but root. CI runs as root, which the mode does
    not stop, so for root the folder is guarded by a STAND-IN of the kernel's answer to a user
    without write access: creating (`os.open` with O_CREAT, as tempfile and every atomic write
    do), making a folder, or renaming into it raises PermissionError (EACCES)."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    if os.geteuid() == 0:
        real_open, real_mkdir, real_replace, real_rename = os.open, os.mkdir, os.replace, os.rename

        def inside(path: Any) -> bool:
            return folder in Path(os.fsdecode(path)).absolute().parents

        def refuse(path: Any) -> PermissionError:
            return PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fsdecode(path))

        def guarded_open(path: Any, flags: int, mode: int = 0o777, **kwargs: Any) -> int:
            if flags & os.O_CREAT and inside(path):
                raise refuse(path)
            return real_open(path, flags, mode, **kwargs)

        def guarded_mkdir(path: Any, mode: int = 0o777, **kwargs: Any) -> None:
            if inside(path):
                raise refuse(path)
            real_mkdir(path, mode, **kwargs)

        def guarded_replace(source: Any, target: Any, **kwargs: Any) -> None:
            if inside(target):
                raise refuse(target)
            real_replace(source, target, **kwargs)

        def guarded_rename(source: Any, target: Any, **kwargs: Any) -> None:
            if inside(target):
                raise refuse(target)
            real_rename(source, target, **kwargs)

        monkeypatch.setattr(os, "open", guarded_open)
        monkeypatch.setattr(os, "mkdir", guarded_mkdir)
        monkeypatch.setattr(os, "replace", guarded_replace)
        monkeypatch.setattr(os, "rename", guarded_rename)
    yield folder
    folder.chmod(0o755)  # so that pytest can remove tmp_path


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """This tree's wheel installed in a fresh venv (tests/wheel_install.py), built ONCE per
    session for every test that runs the installed `infermeter` (building it takes ~10 s)."""
    return build_installed(tmp_path_factory.mktemp("wheel"))
