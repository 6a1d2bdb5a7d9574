"""Compare pages compare like with like: one table per workload × scenario (never two workloads
in one), the workload on every row and in the CSV, the Pareto front computed in the index from
real sweeps only and shown as a table readable without JavaScript, and Home answering per
model × workload × lane (MLPerf apart, with its result ID and footnote).

The page HTML comes from the hook's own functions on a small registry (no extra site build),
rendered in a real headless Chromium; the real registry's build (the session's `built_site`)
is checked for the same rules."""

import copy
import csv
import io
import re
from pathlib import Path
from typing import Any

import compare_pages
import pytest
import row_groups
from site_helpers import REPO, result_data, write_registry

from infermeter.registry.index import build_index, render_csv
from infermeter.registry.index_row import IndexRow
from infermeter.registry.models.measurements import Load
from infermeter.registry.roofline_share import DISAGGREGATED
from infermeter.registry.tables import INTERRUPTED_NOTE, points_table_html
from infermeter.registry.workloads import scenario

pytestmark = pytest.mark.browser

# (concurrency, output tokens/s) of a closed-loop sweep on one H100: per user 90, 80, 50, 60
# tokens/s; per GPU 90, 640, 800, 1920. (16, 800) is beaten by (32, 1920) on both axes.
SWEEP = [(1, 90.0), (8, 640.0), (16, 800.0), (32, 1920.0)]
FRONT = {1, 8, 32}


def _point(template: dict[str, Any], concurrency: int, output_tps: float) -> dict[str, Any]:
    point = copy.deepcopy(template)
    factor = output_tps / point["throughput"]["output_tokens_per_s"]
    throughput, tokens = point["throughput"], point["tokens"]
    point["load"] = {"arrival": "closed", "concurrency": concurrency}
    throughput["output_tokens_per_s"] = output_tps
    throughput["accepted_output_tokens_per_s"] = round(
        throughput["accepted_output_tokens_per_s"] * factor, 3
    )
    tokens["output"] = round(tokens["output"] * factor)
    tokens["accepted_output"] = round(tokens["accepted_output"] * factor)
    throughput["total_tokens_per_s"] = round(
        (tokens["input"] + tokens["output"]) / point["duration_s"], 3
    )
    return point


def _variants() -> list[dict[str, Any]]:
    sweep = result_data()
    sweep["points"] = [_point(sweep["points"][0], c, tps) for c, tps in SWEEP]
    other = result_data()  # another workload: fixed 128 → 2048 tokens
    other["identity"]["workload"]["input_len"] = {"kind": "fixed", "value": 128}
    other["identity"]["workload"]["output_len"] = {"kind": "fixed", "value": 2048}
    other["source"]["submitter"] = "bob"
    return [sweep, other]


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> list[IndexRow]:
    root = tmp_path_factory.mktemp("workloads")
    write_registry(root, _variants())
    built, _count = build_index(root)
    return built


SEARCH = {"percentile": 99, "ttft_ms": 2000}


@pytest.mark.parametrize(
    ("load", "expected"),
    [
        ({"arrival": "closed", "concurrency": 8}, "closed"),
        ({"arrival": "closed", "concurrency": 8, "concurrency_search": SEARCH}, "server_at_slo"),
        ({"arrival": "poisson", "request_rate": 2.0}, "open"),
        ({"arrival": "poisson", "request_rate": 2.0, "rate_search": SEARCH}, "server_at_slo"),
        ({"arrival": "offline"}, "offline"),
        ({"arrival": "static_batch", "concurrency": 8}, "static_batch"),
    ],
)
def test_compare_scenario_of_each_load_kind(load: dict[str, Any], expected: str) -> None:
    assert scenario(Load.model_validate(load)) == expected


def test_compare_index_front_is_the_true_front(rows: list[IndexRow]) -> None:
    sweep = [row for row in rows if row.workload.startswith("~1,024")]
    assert {row.concurrency: row.on_pareto_front for row in sweep} == {
        c: c in FRONT for c, _tps in SWEEP
    }
    # a result of two points is a sweep too: its front is its own
    other = [row for row in rows if row.workload.startswith("128")]
    assert len(other) == 2
    assert all(row.on_pareto_front is not None for row in other)
    assert {row.scenario for row in rows} == {"closed"}
    assert len({row.workload_key for row in rows}) == 2


def test_compare_workloads_never_share_a_table(static_page: Any, rows: list[IndexRow]) -> None:
    static_page.set_content("".join(compare_pages.compare_slots(rows).values()))
    tables = static_page.locator("table.im-compare")
    assert tables.count() == 2
    workloads = set()
    for index in range(tables.count()):
        table = tables.nth(index)
        headers = table.locator("thead th").all_inner_texts()
        column = headers.index("Workload") + 1
        cells = table.locator(f"tbody tr td:nth-child({column})").all_inner_texts()
        assert len(set(cells)) == 1, cells
        workloads |= set(cells)
    assert workloads == {"~1,024 → ~256 tokens", "128 → 2,048 tokens"}
    # the CSV names the workload and scenario of every row
    records = list(csv.DictReader(io.StringIO(render_csv(rows))))
    assert {record["workload"] for record in records} == workloads
    assert {record["scenario"] for record in records} == {"closed"}


def test_compare_front_table_without_javascript(static_page: Any, rows: list[IndexRow]) -> None:
    sweep = [row for row in rows if row.workload.startswith("~1,024")]
    static_page.set_content(compare_pages.front_table(sweep))
    loads = static_page.locator("table.im-front tbody tr td:nth-child(2)").all_inner_texts()
    assert sorted(int(load.split()[-1]) for load in loads) == sorted(FRONT)


def test_compare_real_site_tables_hold_one_workload_and_name_their_bound(built_site: Path) -> None:
    pages = sorted((built_site / "compare").glob("*/index.html"))
    assert pages
    mixed = {}
    shares: list[str] = []
    for path in pages:
        html = path.read_text(encoding="utf-8")
        for table in re.findall(r'<table class="im-table im-compare".*?</table>', html, re.S):
            head = re.findall(r"<th[^>]*>(.*?)</th>", table.split("</thead>")[0])
            column = head.index("Workload")
            rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table.split("<tbody>")[1], re.S)
            cells = {re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)[column] for row in rows}
            if len(cells) != 1:
                mixed[path.parent.name] = sorted(cells)
            bound = head.index("% of bound")
            for row in rows:
                cell = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)[bound]
                shares.append(cell)
        csv_text = (path.parent.parent / f"{path.parent.name}.csv").read_text(encoding="utf-8")
        header = next(csv.reader(io.StringIO(csv_text)))
        assert {"workload", "scenario", "on_pareto_front"} <= set(header), path
    assert mixed == {}
    # every row says how close it came to its physical limit, and against which bound, or
    # why none can be drawn (a GPU the catalog states no rate for, at an unknown batch)
    named = [
        cell
        for cell in shares
        if re.match(
            r'<span class="im-nowrap">[\d,]+ %<br><small class="im-bound" title="[^"]*bound[^"]*">'
            r"of [\d,]+ tok/s, (bandwidth|compute|interconnect)</small></span>$",
            cell,
        )
    ]
    assert len(named) > len(shares) / 2
    why = (
        '<span class="im-nowrap">–<br><small class="im-bound">no sourced compute rate</small>',
        # AMD's tables: total tokens/s or a static batch's latency, no output rate to compare
        '<span class="im-nowrap">–<br><small class="im-bound">no output tokens/s stated</small>',
        # InferenceX's disaggregated runs: the bound models one pool serving prefill and decode
        f'<span class="im-nowrap">–<br><small class="im-bound">{DISAGGREGATED}</small>',
    )
    assert [cell for cell in shares if cell not in named and not cell.startswith(why)] == []


def test_compare_real_answers_keep_mlperf_in_its_lane(built_site: Path) -> None:
    preset = (built_site / "answer" / "balanced-chat" / "index.html").read_text(encoding="utf-8")
    # a row per ranking (`winners_html`), a table per model with MLPerf's note under it
    rows = re.findall(r'<tr data-answer [^>]*data-lane="mlperf".*?</tr>', preset, re.S)
    assert rows, "the registry has MLPerf results: the answer must show their lane"
    # its result ID, or where a round's table gives none (v6.1) its run's path, whose
    # folders may hold spaces (`closed/Naeem Khoshnevis/results/H200/…/run_1`)
    cited = r"MLPerf (\S+-\d{4}|(closed|open)/[^<]+?/run_\d+)"
    assert all(re.search(cited, row) for row in rows)
    for table in re.findall(r"<table .*?</table>.*?(?=<h3 |$)", preset, re.S):
        if 'data-lane="mlperf' in table:
            assert "not verified by MLCommons" in table
    # and a model page's answer likewise
    model_page = (built_site / "models" / "llama-3.1-8b-instruct" / "index.html").read_text(
        encoding="utf-8"
    )
    own = model_page.split('class="im-table im-answer-ranking"')[1].split("</table>", 1)[0]
    assert re.findall(r"<th>(.*?)</th>", own)[:3] == ["GPUs", "$/1M accepted", "vs winner"]


# Per "% of bound" cell of every compare table: its lines (the distinct tops of its content's
# client rects) and its content's height in ems (a row may be taller for another cell).
_BOUND_CELLS = """() => [...document.querySelectorAll('table.im-compare')].flatMap(table => {
  const head = [...table.tHead.rows[0].cells].map(c => c.textContent.trim());
  const column = head.indexOf('% of bound');
  return [...table.tBodies[0].rows].map(row => {
    const cell = row.cells[column];
    const lines = new Set([...cell.firstElementChild.getClientRects()].map(r => Math.round(r.top)));
    const em = parseFloat(getComputedStyle(cell).fontSize);
    return {lines: lines.size, ratio: cell.firstElementChild.getBoundingClientRect().height / em,
            text: cell.innerText};
  });
})"""


def test_compare_bound_cells_stay_two_lines_and_say_why_there_is_none(
    page: Any, site_url: str, built_site: Path
) -> None:
    # at a phone's width, where a table squeezes its columns most (white-space is the same on
    # every width: without `.im-nowrap` the cells wrapped into 5 lines at 1280 px as at 390)
    width = 390
    texts = {p.parent.name: p.read_text() for p in (built_site / "compare").glob("*/index.html")}
    no_bound = [slug for slug, text in texts.items() if "no sourced compute rate" in text]
    assert no_bound, "the registry's GH200 results (no sourced compute rate) have no bound"
    largest = max(texts, key=lambda slug: texts[slug].count("im-nowrap"))
    page.set_viewport_size({"width": width, "height": 900})
    cells = []
    for slug in sorted({no_bound[0], largest}):
        page.goto(f"{site_url}/compare/{slug}/")
        page.locator(".im-wide > .im-more-columns input").evaluate_all(
            "boxes => boxes.forEach(box => { box.checked = true; })"
        )  # every column in view
        cells += page.evaluate(_BOUND_CELLS)
    assert len(cells) > 10
    # two short lines each (the share, then the bound), never wrapped into a tall row
    assert [cell for cell in cells if cell["lines"] > 2 or cell["ratio"] > 3.5] == []
    assert any("no sourced compute rate" in cell["text"] for cell in cells)
    assert [c for c in cells if c["text"].strip() == "–"] == []  # a dash always says why


def test_compare_static_batches_stay_apart_from_offline_points() -> None:
    """AMD's README at f94ec9be: the 70B throughput (offline) and latency (static batch) rows of
    128 → 2048 tokens land in two tables, the static one saying why it has no front."""
    from infermeter.registry.index_rows import index_rows
    from infermeter.registry.prices import PriceBook
    from infermeter.registry.store import read_result

    rows = [
        row
        for path in sorted((REPO / "registry/results/mi300x/llama-3.1-70b-instruct").glob("*.json"))
        if "f94ec9be" in path.read_text(encoding="utf-8")
        for row in index_rows(read_result(path), path.name, PriceBook([]))
        if row.workload == "128 → 2,048 tokens"
    ]
    groups = compare_pages.comparable_groups(rows)
    assert [(key[2], len(members)) for key, members in groups] == [
        ("offline", 1),
        ("static_batch", 8),
    ]
    html = list(compare_pages.compare_slots(rows).values())
    assert "Static batches" in html[1]
    assert "Static batches" not in html[0]
    # the figures the source states show in their own columns: 12,638.9 total tokens/s and
    # 17.236 s for a batch of one
    assert "Total tok/s (prompt + output)" in html[0]
    assert ">12,639<" in html[0]
    assert ">17,236<" in html[1]


def test_compare_an_interrupted_point_is_shown_on_its_page_but_never_ranked(
    tmp_path: Path,
) -> None:
    # The sweep plus a point cut short by SIGTERM that would top the front if it were ranked.
    sweep = _variants()[0]
    cut = _point(sweep["points"][0], 64, 4000.0)
    cut["validity"] = [
        {
            "code": "interrupted",
            "message": "the run was terminated (SIGTERM) "
            "during this point: its figures are those of the 9 measured requests",
        }
    ]
    sweep["points"].append(cut)
    replicate = copy.deepcopy(sweep)  # the same run again: each point's replicate
    replicate["source"]["submitter"] = "carol"
    write_registry(tmp_path, [sweep, replicate])
    rows, _count = build_index(tmp_path)
    assert sorted({row.concurrency for row in rows if row.interrupted}) == [64]
    assert {c for c, _ in SWEEP} == {row.concurrency for row in rows if not row.interrupted}
    for row in rows:
        if row.interrupted:
            assert row.on_pareto_front is None  # no point of the sweep's curve
            assert row.replicates == 1  # no replicate of anything, nor is anything its own
        else:
            assert row.on_pareto_front == (row.concurrency in FRONT)
            assert row.replicates == 2
    ranked = row_groups.ranked(rows)
    assert len(ranked) == len(rows) - 2
    assert not [row for row in ranked if row.interrupted]
    # the result's own page (and `bench report`) shows it, saying it was cut short
    one = sorted((r for r in rows if r.result_id == rows[0].result_id), key=lambda r: r.point_index)
    table = points_table_html(one)
    assert table.count('data-interrupted="1"') == 1
    assert f"concurrency 64 ({INTERRUPTED_NOTE})" in table
