"""The `read_only_folder` fixture (tests/conftest.py) refuses what the kernel refuses a user
without write access, as root too (CI runs as root)."""

import os
import tempfile
from pathlib import Path

import pytest


def test_read_only_folder_refuses_what_the_kernel_refuses(read_only_folder: Path) -> None:
    for create in (
        lambda: tempfile.mkstemp(dir=read_only_folder),
        lambda: (read_only_folder / "sub").mkdir(),
        lambda: os.replace(read_only_folder.parent / "x", read_only_folder / "x"),
    ):
        (read_only_folder.parent / "x").write_text("x")
        with pytest.raises(PermissionError):
            create()
    assert list(read_only_folder.iterdir()) == []
