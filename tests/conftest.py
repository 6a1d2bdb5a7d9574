"""Fixtures every test folder may use."""

from __future__ import annotations

import errno
import os
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chromium import launched_chromium
from hypothesis import settings
from wheel_install import Installed, build_installed

# The site's code is imported by module name, as mkdocs imports its hooks and Pyodide the browser
# modules (`import registry_pages`, `from answer_render import Data`): both folders go on sys.path
# here, as pytest loads this file, before it imports any test module (an xdist worker loads it too).
SITE = Path(__file__).resolve().parents[1] / "site"
sys.path[:0] = [str(SITE / "hooks"), str(SITE / "browser")]

# Property tests check values, not speed: a case that took 300 ms on a loaded machine is not a
# failure (speed targets are measured by benchmarks/, not by unit tests).
settings.register_profile("infermeter", deadline=None)
settings.load_profile("infermeter")


# `make test` runs pytest in 2 processes (pytest-xdist, `--dist loadgroup`), and each process
# makes its own session fixtures. The tests that share one of these expensive ones (or start
# the real vLLM, which on 2 cores wants them to itself) form a group that runs in one process,
# so each is made once and two vLLM starts never compete; the other tests go where there is room.
SHARED_ONCE = {"built_site": "site", "ray_fleet": "ray", "real_vllm": "real-vllm"}


def xdist_groups(item: pytest.Item) -> set[str]:
    """The groups of SHARED_ONCE whose fixture `item` uses (or real-vllm by its mark)."""
    fixtures = getattr(item, "fixturenames", ())
    groups = {group for fixture, group in SHARED_ONCE.items() if fixture in fixtures}
    if item.get_closest_marker("real_vllm") is not None:
        groups.add(SHARED_ONCE["real_vllm"])
    return groups


@pytest.hookimpl(tryfirst=True)  # before xdist reads the marks (loadgroup)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    loadgroup = getattr(config.option, "loadgroup", False)  # set on an xdist worker
    for item in items:
        groups = xdist_groups(item)
        if not groups:
            continue
        group = "+".join(sorted(groups))
        item.add_marker(pytest.mark.xdist_group(group))
        if loadgroup and hasattr(item, "_id"):
            # xdist's scheduler reads the group from the node id (`test…@group`), which xdist
            # 3.8 sets as `_nodeid`; pytest 9.2 keeps the id in `_id` (a NodeId): set it there
            item._id = type(item._id).parse(f"{item.nodeid}@{group}")


# The fault and fuzz suite counts its cases by suite and outcome (tests/fuzz/fuzz_helpers.py) and
# the run ends with the tally. Under xdist each worker sends its counts to the controller as it
# ends (`workeroutput`), and the controller adds them up.
FUZZ_TALLIES = ("SUITES", "OUTCOMES", "FAILURES")
_from_workers: dict[str, Counter[str]] = {name: Counter() for name in FUZZ_TALLIES}


def _fuzz_tallies() -> dict[str, Counter[str]]:
    """This process's counts: none unless it ran fuzz tests (which import `fuzz_helpers`)."""
    helpers = sys.modules.get("fuzz_helpers")
    if helpers is None:
        return {name: Counter() for name in FUZZ_TALLIES}
    return {name: getattr(helpers, name) for name in FUZZ_TALLIES}


def pytest_sessionfinish(session: pytest.Session) -> None:
    output = getattr(session.config, "workeroutput", None)  # an xdist worker's only
    if output is not None:
        output["fuzz_tallies"] = {name: dict(tally) for name, tally in _fuzz_tallies().items()}


@pytest.hookimpl(optionalhook=True)  # xdist's: on the controller, as a worker ends
def pytest_testnodedown(node: Any, error: object) -> None:
    for name, tally in getattr(node, "workeroutput", {}).get("fuzz_tallies", {}).items():
        _from_workers[name].update(tally)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    own = _fuzz_tallies()
    suites, outcomes, failures = (own[name] + _from_workers[name] for name in FUZZ_TALLIES)
    if not suites:
        return
    terminalreporter.write_sep("-", "fault and fuzz suite")
    listed = ", ".join(f"{name} {n}" for name, n in sorted(suites.items()))
    terminalreporter.write_line(f"{sum(suites.values())} cases ({listed})")
    terminalreporter.write_line(
        "outcomes: " + ", ".join(f"{name}: {n}" for name, n in sorted(outcomes.items()))
    )
    labels = {
        "traceback": "tracebacks",
        "hang": "hangs",
        "secret in an output": "secrets found in any output",
        "file written that the gate rejects": "files written that the gate rejects",
    }
    terminalreporter.write_line(", ".join(f"{failures[k]} {label}" for k, label in labels.items()))


# One Chromium per test module (the site's pages, the bench's HTML report): Playwright's sync API
# keeps an asyncio loop running in this thread while it is open, and under xdist (`make test`) a
# worker runs other folders' tests (which call asyncio.run) after these; the loop stops when the
# module's tests end.
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """The real headless Chromium (`chromium.launched_chromium`)."""
    with launched_chromium() as launched:
        yield launched


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
