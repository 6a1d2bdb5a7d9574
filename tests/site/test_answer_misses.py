"""Where nothing meets the reader's question, the answer page (`answer_render.render`, the code
the browser runs) names the evidence group of its nearest miss and lists every other group with
its own nearest miss, as `infermeter registry answer` does: a reader of Qwen3 30B-A3B at
interactive bounds got one nearest miss with no workload or precision, and 14 groups hidden."""

import html
from collections import Counter

from answer_render import answer_title, answers_html, gpus_text, parse_question, render, usd
from site_helpers import REPO, answer_page_data

from infermeter.calculators.answer import answer, miss_heading

QUERY = {"model": "qwen3-30b-a3b", "ttft_ms": "500", "tpot_ms": "40"}


def test_no_answer_names_every_group_and_its_nearest_miss() -> None:
    data = answer_page_data()
    question = parse_question(QUERY, data)
    assert not isinstance(question, dict), question
    groups = answer(data.points, data.prices, question, data.estimator)
    assert len(groups) > 1
    assert not any(group.rows or group.unpriced for group in groups)
    shown = render(QUERY, data)["html"]
    no_answer = shown.split("data-nearest-miss>", 1)[1].split("</div>", 1)[0]
    titled = [f"{html.escape(answer_title(group))}: {miss_heading(group)}" for group in groups]
    assert sum(title in no_answer for title in titled) == 1, no_answer
    assert all(html.escape(answer_title(group)) in shown for group in groups), shown
    assert f"{len(groups) - 1} more evidence group(s) nothing there meets" in shown


def test_groups_nothing_meets_are_one_table_saying_what_they_share_once() -> None:
    # A reader of Llama 3.1 70B at p95 TTFT ≤ 1 s and TPOT ≤ 50 ms got 22 near-identical
    # paragraphs, each explaining the roofline bound and the prediction's missed target again.
    from infermeter.registry.answers import answer_estimator, load_evidence

    evidence = load_evidence(REPO)
    query = {"model": "llama-3.1-70b-instruct", "percentile": "95", "ttft_ms": "1000",
             "tpot_ms": "50"}  # fmt: skip
    question = parse_question(query, answer_page_data())
    assert not isinstance(question, dict), question
    groups = answer(evidence.points, evidence.prices, question, answer_estimator(REPO, evidence))
    shown = answers_html(groups, question.slo, "../", {})
    no_answer, table = shown.split("<details>", 1)
    rows = table.split("</tbody>", 1)[0].split("<tr data-missed-group")[1:]
    missed = [g for g in groups if not (g.rows or g.unpriced)]
    others = [
        g for g in missed if f"{html.escape(answer_title(g))}: {miss_heading(g)}" not in no_answer
    ]
    assert len(rows) == len(others) > 2
    for group, row in zip(others, rows, strict=True):
        assert html.escape(answer_title(group)) in row
        # under the "Nearest miss" heading, a group with no figure to miss by says so
        assert (miss_heading(group) in row) is not group.miss_measured
        if group.no_estimate is not None:
            assert f"No estimate: {html.escape(group.no_estimate)}" in row
            continue
        estimate = group.estimate
        assert estimate is not None
        value = estimate.usd_per_million_output_tokens
        assert f'data-value="{value!r}" data-kind="{html.escape(estimate.kind)}"' in row
        assert f"{usd(value)}</td>" in row
        assert html.escape(gpus_text(estimate.gpu_count, estimate.gpu, {})) in row
        assert f"#price-{html.escape(estimate.price_id)}" in row
        assert html.escape(estimate.note) in row
        assert html.escape(estimate.shared_note) not in row
    # what the estimates say alike, once, under the table, the label over every figure
    shared = Counter(g.estimate.shared_note for g in others if g.estimate and not g.no_estimate)
    assert max(shared.values()) > 1, shared
    for text in shared:
        assert table.count(html.escape(text)) == 1, text
    assert table.count("Estimate, not a measurement") == 1
    assert table.count("Prices: on-demand tier.") == 1
