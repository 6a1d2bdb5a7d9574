"""The calculator error report (site/hooks/accuracy_page.py) shows the figures the accuracy script
(benchmarks/plan_accuracy.py) prints: both are run here on the real case file and compared, row by
row; every case links to its log."""

import html
import re
import subprocess
import sys

import accuracy_page
from site_helpers import REPO

from infermeter.calculators.config_reader import KNOWN_MODEL_TYPES
from infermeter.registry.plan_accuracy import MAX_SOURCE_SHARE, SPLITS, load_cases, source_shares

CASES = load_cases()
PAGE = accuracy_page.accuracy_page(CASES)


def _printed(script: str) -> str:
    """What benchmarks/<script> prints (it must succeed)."""
    return subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / script)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    ).stdout


def _script_rows() -> dict[str, list[str]]:
    """The accuracy script's weighted summary rows: "holdout, one vote per source" → its cells."""
    printed = _printed("plan_accuracy.py")
    rows = {}
    for line in printed.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if cells and cells[0].endswith(("one vote per source", "every case alike")):
            rows[cells[0]] = cells[1:]
    return rows


def _page_rows() -> dict[str, list[str]]:
    table = PAGE[PAGE.index("## Summary") : PAGE.index("## Evidence gathered after fitting")]
    rows = {}
    for row in re.findall(r"<tr>(.*?)</tr>", table):
        cells = [html.unescape(cell) for cell in re.findall(r"<td>(.*?)</td>", row)]
        if not cells:
            continue  # the header row
        split = "holdout" if cells[0] == "held out" else cells[0]
        rows[f"{split}, {cells[1]}"] = cells[2:7]
    return rows


def test_accuracy_page_headline_figures_are_the_accuracy_scripts() -> None:
    script = _script_rows()
    page = _page_rows()
    assert set(page) == {f"{s}, {c}" for s in SPLITS for c in ("one vote per source",
                                                                   "every case alike")}  # fmt: skip
    for label, cells in page.items():
        assert cells == script[label], label


def test_accuracy_page_states_the_evidence_after_fitting_as_the_script_prints_it() -> None:
    printed = _printed("plan_accuracy.py")
    script = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in printed.splitlines()
        if line.startswith(("| collected after fitting", "| held out (all)", "| target (issue"))
    ]
    table = PAGE[PAGE.index("## Evidence gathered after fitting") : PAGE.index("## By vLLM")]
    page = [
        [html.unescape(cell) for cell in re.findall(r"<td>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", table)
    ]
    assert [row for row in page if row] == script
    assert len(script) == 3


def test_accuracy_page_links_every_case_to_its_log() -> None:
    table = PAGE[PAGE.index("## Every case") :]
    for case in CASES:
        assert f'<a href="{html.escape(case.source)}" rel="noopener">{case.id}</a>' in table


def test_accuracy_page_breaks_the_figures_down_by_release_gpu_and_family() -> None:
    for heading in ("## By vLLM release", "## By GPU", "## By model family"):
        assert heading in PAGE
    assert "<td>h100-sxm</td>" in PAGE
    assert "<td>0.19</td>" in PAGE


def test_no_held_out_source_holds_more_than_its_share_of_the_weight() -> None:
    shares = source_shares([case for case in CASES if case.split == "holdout"])
    assert max(shares.values()) <= MAX_SOURCE_SHARE, max(shares, key=shares.__getitem__)


def test_accuracy_page_lists_every_stated_gap_of_the_case_file() -> None:
    table = PAGE[PAGE.index("## What the plan misses") : PAGE.index("## Every case")]
    gaps = [(case, name) for case in CASES for name in (case.raw.get("known_gaps") or {})]
    assert len(gaps) >= 10
    assert table.count("<tr>") == len(gaps) + 1  # and the header row
    for case, name in gaps:
        assert f">{case.id}</a>" in table
        assert f"<td>{name}</td>" in table


def test_accuracy_page_names_every_model_type_the_plan_reads() -> None:
    section = PAGE[PAGE.index("## Model types the plan reads") : PAGE.index("## What the plan")]
    for name in KNOWN_MODEL_TYPES:
        assert f"`{name}`" in section


def test_accuracy_page_states_vllms_architectures_as_the_script_prints_them() -> None:
    section = PAGE[PAGE.index("## Model types the plan reads") : PAGE.index("## What the plan")]
    printed = _printed("vllm_architectures.py").splitlines()
    assert printed[0] in html.unescape(section)
    for line in printed[1:]:
        architecture = line.split()[1]
        assert f"`{architecture}`" in section
