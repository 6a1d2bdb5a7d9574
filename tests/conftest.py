"""Fixtures every test folder may use."""

from __future__ import annotations

import errno
import functools
import os
import re
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


# `make test` runs the suite on two workers (pytest-xdist). A session fixture is made once per
# worker, so the tests of every file that uses an expensive one go to the same worker: one site
# build and Chromium, one real vLLM, one wheel, one Ray cluster. The groups are read from the
# files' function signatures by the controller (xdist's own `--dist loadgroup` renames node ids,
# which pytest 9.2 no longer lets it do), in this order; any other test goes where there is room.
XDIST_GROUPS = {
    "site": {"built_site", "site_url", "browser", "page", "phone"},
    "real-vllm": {"real_vllm", "tiny_model"},
    "wheel": {"installed"},
    "ray": {"ray_fleet"},
}
_SIGNATURE = re.compile(r"def\s+\w+\s*\(([^)]*)\)", re.S)


@functools.cache
def xdist_group(test_file: str) -> str | None:
    """The worker group of a test file: the site's for every file of tests/site (some build sites
    of their own, which share the Pyodide snapshot cache), the real vLLM's for a file marked
    real_vllm, else the first group one of whose fixtures a function of the file takes."""
    path = Path(test_file)
    if path.parent.name == "site":
        return "site"
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    if "pytest.mark.real_vllm" in text:
        return "real-vllm"
    used = {name for match in _SIGNATURE.finditer(text) for name in re.findall(r"\w+", match[1])}
    return next((group for group, names in XDIST_GROUPS.items() if used & names), None)


# The two longest groups start first, one on each worker (then the rest, as workers free up).
FIRST = ("real-vllm", "site")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker, the FIRST groups' tests come first, in that order (a stable sort,
    the same on every worker); the scheduler hands out groups in collection order."""
    if hasattr(config, "workerinput"):
        rank = {group: place for place, group in enumerate(FIRST)}
        items.sort(key=lambda item: rank.get(xdist_group(str(item.path)) or "", len(FIRST)))


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    from xdist.scheduler import LoadScopeScheduling

    root = config.rootpath
    config.option.loadscopereorder = False  # keep the collection order (FIRST first)

    class GroupScheduling(LoadScopeScheduling):  # type: ignore[misc]
        """xdist's scope scheduling with a file's group as its scope (each other test alone)."""

        def _split_scope(self, nodeid: str) -> str:
            return xdist_group(str(root / nodeid.split("::", 1)[0])) or nodeid

    return GroupScheduling(config, log)
