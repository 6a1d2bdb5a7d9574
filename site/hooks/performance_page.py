"""The Performance page's figures, from the records the benchmark scripts write
(`benchmarks/records/<script>.json`, by `benchmarks/records.py`): each shown with its date, the
machine and its load, and the command that produced it. site/performance.md holds the method;
this fills its marker, so no figure on the page is typed by hand.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

MARKER = "<!-- infermeter:benchmark-records -->"


def _value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:,.3g}"
    if isinstance(value, int):
        return f"{value:,}"
    return html.escape(str(value))


def _rows(figures: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for name, value in sorted(figures.items()):
        key = f"{prefix}{name}"
        if isinstance(value, dict):
            rows.extend(_rows(value, f"{key}."))
        else:
            rows.append((key, _value(value)))
    return rows


def _section(record: dict[str, Any]) -> str:
    machine = record["machine"]
    lines = [
        f"## `{html.escape(record['script'])}`",
        "",
        f"Measured {html.escape(record['measured_at'])} on {html.escape(str(machine['cpu']))} "
        f"({machine['cpus']} CPUs, Python {html.escape(str(machine['python']))}), load average "
        f"{machine['load_average_1m_at_start']} at the start and {machine['load_average_1m']} "
        f"at the end, with `{html.escape(record['command'])}`:",
        "",
        "| figure | value |",
        "|---|---|",
    ]
    lines += [f"| `{name}` | {value} |" for name, value in _rows(record["figures"])]
    return "\n".join(lines) + "\n"


def is_timing_record(record: Any) -> bool:
    """Whether a JSON file of the records folder is a timing record (`benchmarks/records.py`)."""
    return isinstance(record, dict) and {"script", "machine", "figures"} <= record.keys()


def render_records(folder: Path) -> str:
    """Markdown for every record in `folder`, newest script name order; a line when none."""
    read = [json.loads(path.read_text(encoding="utf-8")) for path in sorted(folder.glob("*.json"))]
    # Only the timing records `benchmarks/records.py` writes; the folder also keeps other
    # snapshots (vllm_architectures.json), which have no machine or figures to show here.
    records = [record for record in read if is_timing_record(record)]
    if not records:
        return "No benchmark has recorded its figures yet (run a script with `--record`).\n"
    return "\n".join(_section(record) for record in records)


def fill(markdown: str, folder: Path) -> str:
    """`markdown` with its marker replaced by the records' tables."""
    return markdown.replace(MARKER, render_records(folder))
