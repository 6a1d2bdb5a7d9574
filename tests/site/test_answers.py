"""Where no result meets a stated SLO, the calculators' estimate stands beside "no result meets
this yet", marked as an estimate and kept out of the measured and reported figures; a model
page without any result shows the estimates as their own table. In a real headless Chromium on
the real registry's build."""

import re
import sys
from typing import Any

import pytest
from site_helpers import PHONE, REPO, assert_side_by_side, in_view, visit

from registry.catalog import load_gpus, load_models
from registry.index import build_index

sys.path.insert(0, str(REPO / "site" / "hooks"))
import answer_pages

pytestmark = pytest.mark.browser

# The answer tables' text with every estimate taken out: what the results themselves say.
WITHOUT_ESTIMATES = """tables => tables.map((table) => {
  const copy = table.cloneNode(true);
  copy.querySelectorAll('.im-estimate').forEach((e) => e.remove());
  return copy.innerText;
}).join('\\n')"""


def test_answers_estimate_beside_no_result_marked_and_apart(page: Any, site_url: str) -> None:
    page.goto(f"{site_url}/")
    answer = page.locator("table.im-answer")
    missing = answer.locator("tbody td", has_text="no result meets a stated SLO yet")
    assert missing.count() > 0
    estimates = answer.locator(".im-estimate")
    assert estimates.count() > 0
    names = "|".join(re.escape(gpu.name) for gpu in load_gpus().values())
    for text in estimates.all_inner_texts():
        # it says it is the cheapest over every GPU, not the row's own
        assert text.startswith(
            "Estimate (not measured), over every catalog GPU for this workload: at best $"
        ), text
        # its GPUs by their catalog name, not their id
        assert re.search(rf"/1M output on \d+ × (?:{names}), the roofline bound", text), text
    # every estimate sits in a "no result meets" cell, never beside a result's own $
    cells = answer.locator("td:has(.im-estimate)").all_inner_texts()
    assert all(cell.startswith("no result meets a stated SLO yet") for cell in cells)
    assert "Estimate" not in answer.evaluate_all(WITHOUT_ESTIMATES)


def test_answers_model_without_results_shows_estimates_only(page: Any, site_url: str) -> None:
    rows, _count = build_index(REPO)
    without = sorted(set(load_models()) - {row.model for row in rows})
    assert without, "every catalog model has a result: this test would check nothing"
    page.goto(f"{site_url}/models/{without[0]}/")
    article = page.locator("article")
    assert "No result meets this yet." in article.inner_text()
    assert article.locator("table.im-answer").count() == 0
    table = article.locator("table.im-estimates")
    assert "Estimate: at best $/1M output" in table.locator("thead").inner_text()
    costs = [
        float(text.removeprefix("$"))
        for text in table.locator("tbody tr td:nth-child(5)").all_inner_texts()
    ]
    assert costs
    assert costs == sorted(costs)
    gpus = table.locator("tbody tr td:nth-child(1) a")
    catalog = load_gpus()
    for text, gpu_id in gpus.evaluate_all("as => as.map(a => [a.innerText, a.title])"):
        assert text.split(" × ", 1)[1] == catalog[gpu_id].name


@pytest.fixture(scope="module")
def real_rows() -> list[Any]:
    rows, _count = build_index(REPO)
    return rows


def test_answers_of_every_model_in_one_pass_match_each_models_own(real_rows: list[Any]) -> None:
    from result_index import Index

    index = Index(rows=real_rows, results={}, texts={})
    models = load_models()
    answers = answer_pages.model_answers(index, models)
    assert set(answers) == set(models)
    with_results = {row.model for row in real_rows if row.correction is None}
    assert with_results & set(models)
    for model_id in models:
        assert answers[model_id] == answer_pages.model_answer(index, model_id, models)
        assert ("im-answer" in answers[model_id]) == (model_id in with_results)


def test_answers_server_at_slo_names_its_percentile_bounds_not_a_missing_slo(
    real_rows: list[Any],
) -> None:
    rows = real_rows
    server = [row for row in rows if row.scenario == "server_at_slo" and row.correction is None]
    assert server, "the registry has no server-at-SLO result: this test would check nothing"
    answers = re.findall(r"<tr [^>]*>(.*?)</tr>", answer_pages.answer_rows(server, {}, ""))
    assert answers
    for answer in answers:
        # its whole throughput is accepted at its own SLO: a $/1M accepted figure, or no price
        assert re.search(r"<td>(\$[\d.,]+|–)</td>", answer), answer
        assert re.search(r"<td>p\d+(\.\d+)? TTFT ≤ [\d,]+ ms", answer), answer
        assert "no result meets" not in answer


def test_answers_home_narrows_to_the_readers_model_without_javascript(
    browser: Any, site_url: str, real_rows: list[Any]
) -> None:
    from compare_pages import ranked

    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.set_viewport_size({"width": 1280, "height": 800})
        page.goto(f"{site_url}/")
        jumps = page.locator("ul.im-jump a")
        sections = page.locator("article h3[id^='answer-']")
        assert jumps.count() == sections.count() > 3
        model_of = {row.result_id: row.model for row in real_rows}
        total = 0
        for href in jumps.evaluate_all("links => links.map(a => a.getAttribute('href'))"):
            model_id = href.removeprefix("#answer-")
            heading = page.locator(f"h3[id='answer-{model_id}']")
            table = heading.locator(
                "xpath=following-sibling::div[1]//table[@class='im-table im-answer']"
            )
            # inside a model's section no Model column: the heading names it
            assert "Model" not in table.locator("thead th").all_inner_texts()
            results = table.locator("tbody tr td:last-child a[href^='results/']").evaluate_all(
                "links => links.map(a => a.getAttribute('href'))"
            )
            assert results
            # this model's rows only
            assert {model_of[link.split("/")[1]] for link in results} == {model_id}
            total += len(results)
        # every answer the one long table held, none lost or repeated
        every = answer_pages.answer_rows(ranked(real_rows), {}, "")
        assert total == every.count("<tr ")
        # a link of the jump list lands on its model's heading, no script needed
        last = jumps.nth(jumps.count() - 1)
        target = last.get_attribute("href")
        last.click()
        page.wait_for_url(f"**/{target}")
        top = page.locator(f"h3[id='{target[1:]}']").evaluate("e => e.getBoundingClientRect().top")
        assert 0 <= top < 200
    finally:
        context.close()


def test_answers_phone_shows_gpu_and_usd_per_million(phone: Any, site_url: str) -> None:
    # each model's answer table on Home: its GPUs and $/1M accepted in view at a phone's width
    # without scrolling, the table scrolling inside its box (not the page) with both kept
    gpus_catalog = load_gpus()
    visit(phone, f"{site_url}/")
    tables = phone.locator("table.im-answer")
    assert tables.count() > 1
    for table in (tables.first, tables.last):
        headers = table.locator("thead th")
        texts = headers.all_inner_texts()
        gpus, usd = texts.index("GPUs"), texts.index("$/1M accepted")
        assert in_view(headers.nth(gpus))
        assert in_view(headers.nth(usd))
        first = table.locator("tbody tr").first.locator("td")
        assert in_view(first.nth(gpus))
        assert in_view(first.nth(usd))
        scroller = table.locator("xpath=ancestor::div[contains(@class,'im-scroll')][1]")
        assert scroller.evaluate("box => box.scrollWidth > box.clientWidth")
        scroller.evaluate("box => { box.scrollLeft = box.scrollWidth; }")
        assert scroller.evaluate("box => box.scrollLeft > 0")
        # scrolled to its end, the table keeps both the GPUs and their $ in view, side by
        # side, and the last column's links clear of them
        for row in (headers, first):
            assert in_view(row.nth(gpus))
            assert in_view(row.nth(usd))
            assert_side_by_side(row.nth(gpus), row.nth(usd))
        assert_side_by_side(first.nth(usd), first.last.locator("a").first)
        # the GPUs by their catalog name, the id in the link's title
        link = first.nth(gpus).locator("a")
        count = link.inner_text().split(" × ")[0]
        assert link.inner_text() == f"{count} × {gpus_catalog[link.get_attribute('title')].name}"
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
