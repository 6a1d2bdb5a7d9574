"""The stand-in vLLM (`standin_vllm.py`) as an executable called `vllm`, for the tests that
launch vLLM: `bench run --vllm-executable`, a fleet plan's, a contributor's PATH."""

from __future__ import annotations

import sys
from pathlib import Path

STANDIN_VLLM = Path(__file__).resolve().parent / "standin_vllm.py"


def standin_launcher(folder: Path) -> Path:
    """`folder/vllm` (`folder` made if missing): a shell script that runs the stand-in with its
    arguments under this Python."""
    folder.mkdir(parents=True, exist_ok=True)
    launcher = folder / "vllm"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{STANDIN_VLLM}" "$@"\n')
    launcher.chmod(0o755)
    return launcher
