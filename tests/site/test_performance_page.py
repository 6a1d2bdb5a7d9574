"""The Performance page shows the benchmark scripts' own records (benchmarks/records/*.json,
written with `--record`), each with its date, machine, load and command: no figure typed by hand."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "benchmarks"))

import performance_page  # noqa: E402
import records  # noqa: E402


def test_a_record_carries_its_date_machine_load_and_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(records, "RECORDS", tmp_path)
    monkeypatch.setattr(sys, "argv", ["site_perf.py", "--sizes", "1000", "--record"])
    path = records.write_record("site_perf", {"build_1000_results_wall_s": 12.3}, 1.5)
    record = json.loads(path.read_text())
    assert record["command"] == ".venv/bin/python benchmarks/site_perf.py --sizes 1000 --record"
    assert record["machine"]["load_average_1m_at_start"] == 1.5
    assert record["machine"]["cpus"] >= 1
    markdown = performance_page.fill(f"intro\n{performance_page.MARKER}\n", tmp_path)
    assert "| `build_1000_results_wall_s` | 12.3 |" in markdown
    assert record["measured_at"] in markdown
    assert record["command"] in markdown
    assert performance_page.MARKER not in markdown


def test_no_record_says_so(tmp_path: Path) -> None:
    assert "No benchmark has recorded" in performance_page.render_records(tmp_path)
    # another snapshot kept beside the records is not a timing record
    (tmp_path / "vllm_architectures.json").write_text('{"release": "0.29.0", "architectures": {}}')
    assert "No benchmark has recorded" in performance_page.render_records(tmp_path)


def test_the_built_page_shows_every_recorded_figure(built_site: Path) -> None:
    html = (built_site / "performance" / "index.html").read_text(encoding="utf-8")
    assert "infermeter:benchmark-records" not in html
    found = sorted((REPOSITORY / "benchmarks" / "records").glob("*.json"))
    assert found, "run a benchmark with --record"
    timed = [
        path for path in found if performance_page.is_timing_record(json.loads(path.read_text()))
    ]
    assert timed, "run a benchmark with --record"
    for path in timed:
        record = json.loads(path.read_text(encoding="utf-8"))
        assert record["measured_at"] in html
        for name in record["figures"]:
            assert f"<code>{name}" in html, f"{path.name}: {name}"
