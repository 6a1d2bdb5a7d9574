"""The pages a reader reaches from Home's presets and from Compare, on the real registry's build:
each says a thing once, and every label is a claim that holds."""

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from site_helpers import assert_side_by_side, in_view

from infermeter.calculators.answer import PRESETS


def _page(built_site: Path, path: str) -> str:
    return (built_site / path / "index.html").read_text(encoding="utf-8")


def _article_text(page: str) -> str:
    article = page.split("<article", 1)[1].split("</article>", 1)[0]
    return html.unescape(re.sub(r"<[^>]+>", "", article))


def _presets(built_site: Path) -> dict[str, Any]:
    data = json.loads((built_site / "data" / "answers.json").read_text(encoding="utf-8"))
    return {preset["id"]: preset for preset in data["presets"]}


def test_preset_page_is_a_row_per_ranking(built_site: Path) -> None:
    """Each ranking of a preset page is one row, its cheapest deployment's $ (the rest are a
    link away: the model's page, the full answer). The batch page was 975 KB: 336 rankings of
    three rows each, every row's "why it qualifies" twice (text and title), the MLPerf note
    under each of its 54 MLPerf rankings."""
    for preset_id, preset in _presets(built_site).items():
        page = _page(built_site, f"answer/{preset_id}")
        answered = [found for found in preset["answers"] if found["rows"]]
        rows = re.findall(r"<tr data-answer .*?</tr>", page, re.S)
        assert len(rows) == len(answered), preset_id
        shown = [
            float(re.search(r'data-output="usd_per_million_accepted" data-value="([^"]+)"', row)[1])
            for row in rows
        ]
        winners = [found["rows"][0]["usd_per_million_accepted"] for found in answered]
        assert sorted(shown) == pytest.approx(sorted(winners), rel=1e-5), preset_id
        # the site's chrome and the words, then under 1 KB a ranking (the batch page was
        # 975 KB for its 336: 2.9 KB each; 0.9 KB before a winner's price well above the market
        # said so, with its $ at the market's price)
        assert len(page.encode("utf-8")) < 50_000 + 1_000 * len(answered), preset_id
    batch = _page(built_site, "answer/batch")
    # why every row qualifies, once under each model's table (was under each of its 832 rows)
    sections = batch.split("<h3 ")[1:]
    assert batch.count("no latency bound: its whole throughput") == len(sections)
    # MLPerf's note once per model whose rankings hold one of MLPerf's (its rows keep their IDs)
    for section in sections:
        mlperf = re.findall(r'<tr data-answer [^>]*data-lane="mlperf.*?</tr>', section, re.S)
        assert section.count("not verified by MLCommons") == (1 if mlperf else 0)
        assert all(re.search(r" · MLPerf \S", row) for row in mlperf)


def test_preset_pages_say_their_slo_once(built_site: Path) -> None:
    """Each preset page said its SLO twice ("p99 TTFT ≤ 6,000 ms, TPOT ≤ 175 ms. … p99 TTFT ≤ 6 s
    and TPOT ≤ 175 ms"), the long-context one "2,000 tokens or more" twice too."""
    for preset in PRESETS:
        page = _page(built_site, f"answer/{preset.id}")
        intro = _article_text(page.split("<h3 ", 1)[0])
        assert intro.count(preset.slo.text()) == 1, preset.id
        assert intro.count("≤") == len(preset.slo.bounds()), preset.id
        assert intro.lower().count("latency bound") == (1 if preset.slo.is_batch else 0)
        if preset.min_input_tokens:
            assert intro.count(f"{preset.min_input_tokens:,} tokens or more") == 1
    # the answer page's list of presets says each one's bounds, once
    answer = _article_text(_page(built_site, "answer").split('class="im-calc', 1)[0])
    for preset in PRESETS:
        assert answer.count(f"{preset.title} (SLO: {preset.slo.text()}):") == 1


def test_compare_index_has_no_column_that_says_nothing(built_site: Path) -> None:
    """The compare index's "Profile" column said "custom" on every row (every result is
    harvested, and a harvester's workload is of no infermeter profile)."""
    index = _page(built_site, "compare")
    heads = re.findall(r"<th[^>]*>(.*?)</th>", index)
    assert heads == ["Model", "Tables (workload × scenario)", "Results"]
    rows = re.findall(r'<td><a href="([^"]+)/">([^<]+)</a></td>\s*<td>(\d+)</td>', index)
    assert len(rows) > 10
    for href, name, tables in rows:
        page = _page(built_site, f"compare/{href}")
        # a model's only page is the model's: "custom" (every harvested result's) says nothing
        assert "custom" not in name, href
        assert "custom traffic" not in page, href
        assert len(re.findall(r'<h2 id="', page)) == int(tables), href
    # nor the links to them: a model page's list, a GPU page's results table
    for path in ("models/deepseek-r1", "gpus/h100-sxm"):
        page = _page(built_site, path)
        assert re.findall(r'href="[^"]*compare/[^"]+">([^<]*)<', page), path
        assert not re.findall(r'href="[^"]*compare/[^"]+">[^<]*custom', page), path


def test_mlperf_workloads_say_what_they_are(built_site: Path) -> None:
    """MLPerf's workloads read "dataset → dataset tokens, MLPerf Inference … data set"."""
    batch = _article_text(_page(built_site, "answer/batch"))
    assert "dataset → dataset" not in batch
    assert "its prompts → mean 3,886 tokens, MLPerf Inference deepseek-r1 data set" in batch
    compare = _article_text(_page(built_site, "compare/gpt-j-6b--custom"))
    assert "dataset → dataset" not in compare
    assert "its prompts → its outputs, MLPerf Inference gptj data set" in compare


def test_ranked_rows_state_their_bounds_once(built_site: Path) -> None:
    """A server at an SLO's row said its bounds twice: its load ("highest rate 1069 req/s
    poisson with p99 TTFT ≤ 500 ms, TPOT ≤ 30 ms") and why it qualifies ("the whole throughput
    at its own SLO, p99 TTFT ≤ 500 ms, TPOT ≤ 30 ms", once more in its title)."""
    page = _page(built_site, "models/llama-3.1-8b-instruct")
    rows = re.findall(r"<tr data-answer-row.*?</tr>", page, re.S)
    servers = [row for row in rows if "the whole throughput at its own SLO" in row]
    assert servers
    for row in servers:
        assert row.count("TTFT ≤") == 1, row
    # and a preset page's row, which shows the load too
    preset = _page(built_site, "answer/balanced-chat")
    rows = re.findall(r"<tr data-answer .*?</tr>", preset, re.S)
    assert [row for row in rows if "TTFT ≤" in row]
    assert all(row.count("TTFT ≤") <= 1 for row in rows)


def test_compare_pages_label_mlperf_dollars_as_not_verified(built_site: Path) -> None:
    """MLPerf's tables on a compare page showed $ figures without saying MLCommons did not
    verify them (its messaging guidelines; the answer and result pages say it)."""
    page = _page(built_site, "compare/gpt-j-6b--custom")
    sections = re.split(r"<h2 ", page)[1:]
    mlperf = [s for s in sections if "MLPerf Offline" in s.split("</h2>", 1)[0]]
    assert mlperf
    for section in sections:
        heading = section.split("</h2>", 1)[0]
        said = section.count("not verified by MLCommons")
        assert said == (1 if "· MLPerf " in heading else 0), heading


def test_mlperf_note_said_once_per_list_of_rankings(built_site: Path) -> None:
    """A model page said MLPerf's note under each of its MLPerf rankings (13 times on Llama 3.1
    8B's); it is said once under each preset question's rankings that hold one."""
    page = _page(built_site, "models/llama-3.1-8b-instruct")
    blocks = page.split("<p><strong>")[1:]
    mlperf = [block for block in blocks if 'data-lane="mlperf' in block]
    assert len(mlperf) > 1
    for block in blocks:
        assert block.count("not verified by MLCommons") == (block in mlperf), block[:80]
    # the answer page's pre-rendered answer likewise, once
    answer = _page(built_site, "answer")
    assert 'data-lane="mlperf' in answer
    assert answer.count("not verified by MLCommons") == 1


def test_models_index_says_a_mixture_of_experts_active_parameters(built_site: Path) -> None:
    """The models index's Active column showed "–" for 11 mixtures of experts whose catalog
    entry publishes no active count (DeepSeek-V3.2, GLM-4.5, …), as for a dense model."""
    page = _page(built_site, "models")
    cells = dict(
        re.findall(
            r'<td><a href="([^"/]+)/">[^<]*</a></td>\s*<td>[^<]*</td>\s*'
            r"<td>[^<]*</td>\s*<td>([^<]*)</td>",
            page,
        )
    )
    assert len(cells) > 20
    assert cells["deepseek-v3.2"] == "38.4 B (computed)"  # 671.9 B in all
    assert cells["deepseek-v3"] == "37 B"  # as published
    assert cells["llama-3.1-8b-instruct"] == "–"  # dense


def test_gpus_index_says_which_price_it_shows(built_site: Path) -> None:
    """The GPU list said it shows "the cheapest hourly price per GPU in each tier"; it shows the
    price the figures use: $10.00 on-demand for the H100 SXM, whose page lists offers from
    $1.75 (low confidence, not picked by the rule)."""
    page = _page(built_site, "gpus")
    intro = _article_text(page.split("<table", 1)[0])
    assert "cheapest hourly price" not in intro
    assert "the price per GPU-hour the site's figures use" in intro
    row = re.search(r'<td><a href="h100-sxm/">[^<]*</a></td>.*?</tr>', page, re.S)
    assert row
    shown = re.findall(r"\$([\d,.]+)</a>", row[0])[0]
    offers = _article_text(_page(built_site, "gpus/h100-sxm")).split("Results on this GPU")[0]
    cheapest = min(
        float(p.replace(",", "")) for p in re.findall(r"on-demand\s*\$([\d,.]+)", offers)
    )
    assert float(shown) > cheapest  # so "cheapest" was not true


def test_gpus_index_writes_figures_as_the_gpu_pages_do(built_site: Path) -> None:
    """The GPU list printed the B300's bandwidth as "7750.0" and its memory as "288.0"; its
    page says "7,750 GB/s" and "288 GB", as every figure of the site is written."""
    page = _page(built_site, "gpus")
    row = re.search(r'<td><a href="b300/">[^<]*</a></td>.*?</tr>', page, re.S)
    assert row
    cells = re.findall(r"<td>(.*?)</td>", row[0], re.S)
    assert cells[2:6] == ["288", "7,750", "2,250", "4,500"]
    assert not re.search(r"<td>\d+\.0</td>", page)


def test_dollar_notes_say_which_price_they_use(built_site: Path) -> None:
    """Compare pages said their $ use "the cheapest usable catalog price of each tier", result
    pages "the cheapest on-demand catalog price": the H100 SXM's is OCI's $10.00 list price,
    its page lists usable offers from $1.75."""
    compare = _article_text(_page(built_site, "compare/gpt-j-6b--custom"))
    assert "cheapest usable catalog price" not in compare
    assert "the GPU's catalog price that figures use" in compare
    result = _article_text(_page(built_site, "results/c21763c1afd7"))
    assert "cheapest on-demand catalog price" not in result
    assert "the on-demand catalog price that figures use for the GPU" in result


def test_compare_page_explains_its_buyers_tables_once(built_site: Path) -> None:
    """Each of a compare page's buyer's tables repeated the same two sentences (13 times on
    DeepSeek-R1's); they are said once, above the tables."""
    text = _article_text(_page(built_site, "compare/deepseek-r1--custom"))
    tables = text.count("The buyer's table")
    assert tables > 10
    assert text.count("divide it by your utilization for the idle hours you pay too") == 1
    assert text.count("side by side, cheapest first") == 1


@pytest.mark.browser
def test_compare_table_sorts_a_column_by_its_text(page: Any, site_url: str) -> None:
    """A compare table's cell whose sort key is its text said it twice (`data-sort="fp8">fp8`:
    90 KB of DeepSeek-R1's page); it says it once, and a click still sorts by it."""
    page.goto(f"{site_url}/compare/llama-3.1-8b-instruct--custom/")
    page.wait_for_selector("table[data-sortable] th[role=button]")
    tables = page.locator("table[data-sortable]")
    sizes = [tables.nth(i).locator("tbody tr").count() for i in range(tables.count())]
    table = tables.nth(sizes.index(max(sizes)))
    column = table.locator("thead th").all_text_contents().index("GPUs") + 1
    cells = table.locator(f"tbody tr td:nth-child({column})")
    assert cells.evaluate_all("cs => cs.filter(c => 'sort' in c.dataset).length") == 0

    def counts() -> list[int]:
        return [int(text) for text in cells.all_text_contents()]

    assert len(set(counts())) > 1
    table.locator(f"thead th:nth-child({column})").click()
    assert counts() == sorted(counts())
    table.locator(f"thead th:nth-child({column})").click()
    assert counts() == sorted(counts(), reverse=True)


@pytest.mark.browser
def test_compare_table_says_each_key_and_price_once(page: Any, site_url: str) -> None:
    """DeepSeek-R1's compare page was 996 KB: its GPU and Source cells wrote their text again as
    a sort key (`data-sort="NVIDIA B200 180GB (HGX B200)"` beside the link), figures' keys had
    17 digits (`2062.2735531615012` under "2,062"), and each $/hour link had a title saying its
    price's provider, date and confidence again, as the line under it does. A click on the GPU
    header still sorts by the name shown."""
    page.goto(f"{site_url}/compare/llama-3.1-8b-instruct--custom/")
    page.wait_for_selector("table[data-sortable] th[role=button]")
    keys = page.locator("table.im-compare tbody td").evaluate_all(
        "cs => cs.filter(c => 'sort' in c.dataset).map(c => [c.dataset.sort, c.textContent])"
    )
    assert keys
    assert [key for key, text in keys if key == text] == []
    digits = [
        key.replace(".", "").lstrip("-0") for key, _ in keys if re.fullmatch(r"-?\d+\.\d+", key)
    ]
    long = [key for key in digits if len(key) > 6]
    assert long == []
    assert page.locator("table.im-compare a[href*='#price-'][title]").count() == 0
    assert page.locator("table.im-compare small.im-price").count() > 0
    tables = page.locator("table[data-sortable]")
    sizes = [tables.nth(i).locator("tbody tr").count() for i in range(tables.count())]
    table = tables.nth(sizes.index(max(sizes)))
    names = table.locator("tbody tr td:first-child")
    table.locator("thead th").first.click()
    shown = [name.lower() for name in names.all_text_contents()]
    assert len(set(shown)) > 1
    assert shown == sorted(shown)


@pytest.mark.browser
def test_prediction_error_tables_align_figures_by_a_rule(page: Any, site_url: str) -> None:
    """The prediction-error page wrote style="text-align: right;" on each figure of its long
    tables (3,627 attributes, ~100 KB: a Markdown table's `---:`); a CSS rule aligns them."""
    page.goto(f"{site_url}/prediction-error/")
    assert page.content().count('style="text-align: right;"') < 100
    page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
    for box, first in ((".im-error-breakdown", 5), (".im-error-rows", 7)):
        row = page.locator(f"{box} table tbody tr").first
        align = row.locator("td").evaluate_all("cs => cs.map(c => getComputedStyle(c).textAlign)")
        assert len(align) > first, box
        assert all(a == "right" for a in align[first - 1 :]), (box, align)
        assert all(a in ("left", "start") for a in align[: first - 1]), (box, align)


@pytest.mark.browser
def test_preset_page_shows_each_rankings_dollars_on_a_phone(phone: Any, site_url: str) -> None:
    """On a phone a preset page's rows showed the ranking and its GPUs, their $ off to the
    right behind a scroll; the $ now sits beside the ranking's title."""
    phone.goto(f"{site_url}/answer/balanced-chat/")
    rows = phone.locator("tr[data-answer]")
    assert rows.count() > 5
    for index in range(3):
        dollars = rows.nth(index).locator('[data-output="usd_per_million_accepted"]')
        dollars.scroll_into_view_if_needed()
        assert in_view(dollars), dollars.bounding_box()
        assert_side_by_side(rows.nth(index).locator("td").first, dollars)
