"""A benchmark's figures as a dated record: `benchmarks/records/<script>.json`, which the site's
Performance page shows with the date, the machine and the command that produced them.

A record is written by the script itself (`--record`), never by hand: the page carries no
figure that a rerun would change.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import sys
from pathlib import Path
from typing import Any

RECORDS = Path(__file__).resolve().parent / "records"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> dict[str, Any]:
    """What the figures were measured on, and how busy it was when the record was written."""
    return {
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.release()}",
        "load_average_1m": round(os.getloadavg()[0], 2),
    }


def write_record(script: str, figures: dict[str, Any], load_at_start: float) -> Path:
    """Write `figures` with the date, the machine and the command line; returns the path."""
    RECORDS.mkdir(exist_ok=True)
    command = " ".join([".venv/bin/python", f"benchmarks/{script}.py", *sys.argv[1:]])
    record = {
        "script": script,
        "command": command,
        "measured_at": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine() | {"load_average_1m_at_start": round(load_at_start, 2)},
        "figures": figures,
    }
    path = RECORDS / f"{script}.json"
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    temporary.replace(path)
    return path
