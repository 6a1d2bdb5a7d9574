"""The answer page (`answer/`) in a real headless Chromium on the real registry's build: the
buyer's questions get a ranked answer with $ figures or a stated nearest miss, recomputed in the
browser by the code the CLI runs; a shared link reproduces the answer; the presets read without
JavaScript; answers.json is homogeneous; Home says only what the data says."""

import contextlib
import copy
import json
import re
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from serve import QuietHandler
from site_helpers import PHONE, REPO, served_folder

from infermeter.bench.launch.server import free_port
from infermeter.calculators.accepted import Slo
from infermeter.calculators.answer import PREDICTION, ROOFLINE_BOUND, Question
from infermeter.calculators.perf_labels import missed_target
from infermeter.registry.answers import answer_estimator, ask, load_evidence
from infermeter.registry.catalog import load_models
from infermeter.registry.evidence import point_evidence
from tests.cli_helpers import json_output
from tests.measured_result import MS, measured_result, request_record

pytestmark = pytest.mark.browser

READY = (
    "() => { const e = document.querySelector('.im-calc[data-calc=\"answer\"]');"
    " return e && ['ready', 'invalid', 'failed'].includes(e.dataset.state); }"
)
ROWS = """() => [...document.querySelectorAll('[data-answer]')].map((section) => ({
  scenario: section.dataset.scenario, lane: section.dataset.lane,
  precision: section.dataset.precision, workload_key: section.dataset.workloadKey,
  rows: [...section.querySelectorAll('[data-answer-row]')].map((row) => [
    row.dataset.gpu, Number(row.dataset.gpuCount),
    row.querySelector('[data-output="usd_per_million_accepted"]').dataset.value ?? null]),
}))"""

QUESTIONS = {
    "llama 3.1 70b chat, p95 TTFT ≤ 1 s": {
        "model": "llama-3.1-70b-instruct",
        "percentile": "95",
        "ttft_ms": "1000",
    },
    "llama 3.1 8b chat, p95 TTFT ≤ 1 s": {
        "model": "llama-3.1-8b-instruct",
        "percentile": "95",
        "ttft_ms": "1000",
    },
    "long-context RAG": {
        "model": "llama-3.1-405b-instruct",
        "percentile": "99",
        "ttft_ms": "6000",
        "tpot_ms": "175",
    },
    "offline batch": {"model": "llama-3.1-70b-instruct"},
    "deepseek-r1 at MLPerf Server's bounds": {
        "model": "deepseek-r1",
        "percentile": "99",
        "ttft_ms": "2000",
        "tpot_ms": "80",
    },
    "deepseek-r1 at MLPerf Interactive's bounds": {
        "model": "deepseek-r1",
        "percentile": "99",
        "ttft_ms": "450",
        "tpot_ms": "40",
    },
    "llama 2 70b at MLPerf Server's bounds": {
        "model": "llama-2-70b-chat",
        "percentile": "99",
        "ttft_ms": "2000",
        "tpot_ms": "200",
    },
    "llama 2 70b at MLPerf Interactive's bounds": {
        "model": "llama-2-70b-chat",
        "percentile": "99",
        "ttft_ms": "450",
        "tpot_ms": "40",
    },
}


def _answer(page: Any, url: str) -> list[dict[str, Any]]:
    page.goto(url)
    page.wait_for_function(READY, timeout=90_000)
    assert page.eval_on_selector(".im-calc", "e => e.dataset.state") == "ready"
    result: list[dict[str, Any]] = page.evaluate(ROWS)
    return result


def _cli(query: dict[str, str]) -> dict[str, Any]:
    args = ["registry", "answer", "--model", query["model"], "--no-estimate"]
    for key, option in (
        ("percentile", "--percentile"),
        ("ttft_ms", "--slo-ttft-ms"),
        ("tpot_ms", "--slo-tpot-ms"),
        ("e2e_ms", "--slo-e2e-ms"),
    ):
        if key in query:
            args += [option, query[key]]
    return json_output(*args)


@pytest.mark.parametrize("name", list(QUESTIONS))
def test_answer_page_ranks_with_dollars_or_states_the_nearest_miss(
    page: Any, site_url: str, name: str
) -> None:
    query = QUESTIONS[name]
    sections = _answer(page, f"{site_url}/answer/?{urlencode(query)}")
    ranked = [s for s in sections if s["rows"]]
    if ranked:
        for section in ranked:
            values = [float(usd) for _gpu, _count, usd in section["rows"] if usd is not None]
            assert values, section
            assert values == sorted(values)
            assert all(value > 0 for value in values)
    else:
        miss = page.locator("[data-nearest-miss]")
        assert miss.count() == 1
        # the nearest miss by a figure, or where no point has one, that
        assert re.search(r"nearest miss: |has (a|no) figure to hold against", miss.inner_text())
    # the browser ranked what the CLI ranks, with the same $ figures, like with like
    cli = _cli(query)
    expected = [
        {
            "scenario": found["scenario"],
            "lane": found["lane"],
            "precision": found["precision"],
            "workload_key": found["workload_key"],
            "rows": [
                [row["gpu"], row["gpu_count"], row["usd_per_million_accepted"]]
                for row in found["rows"] + found["unpriced_rows"]
            ],
        }
        for found in cli["answers"]
        if found["rows"] or found["unpriced_rows"]
    ]

    shown = [
        s | {"rows": [[g, c, None if v is None else float(v)] for g, c, v in s["rows"]]}
        for s in ranked
    ]
    assert shown == [
        e
        | {
            "rows": [
                [g, c, None if v is None else pytest.approx(v, rel=1e-5)] for g, c, v in e["rows"]
            ]
        }
        for e in expected
    ]


def test_answer_page_expected_outcomes(page: Any, site_url: str) -> None:
    """MLPerf answers the questions at its own bounds (an Interactive point also answers Server's
    looser ones); a Server point never answers Interactive's tighter bounds."""
    at_least = {
        "llama 2 70b at MLPerf Server's bounds": {"mlperf_server", "mlperf_interactive"},
        "llama 2 70b at MLPerf Interactive's bounds": {"mlperf_interactive"},
        "deepseek-r1 at MLPerf Server's bounds": {"mlperf_server"},
        "long-context RAG": {"mlperf_server"},
        "deepseek-r1 at MLPerf Interactive's bounds": set(),
    }
    for name, scenarios in at_least.items():
        sections = _answer(page, f"{site_url}/answer/?{urlencode(QUESTIONS[name])}")
        ranked = {s["scenario"] for s in sections if s["rows"]}
        assert ranked >= scenarios, name
        if "Interactive" in name:
            assert "mlperf_server" not in ranked, name


def test_answer_page_shared_link_reproduces_the_answer(browser: Any, site_url: str) -> None:
    first = browser.new_page()
    first.goto(f"{site_url}/answer/?model=llama-2-70b-chat")
    first.wait_for_function(READY, timeout=90_000)
    first.fill('input[name="ttft_ms"]', "2000")
    first.fill('input[name="tpot_ms"]', "200")
    first.wait_for_function("() => new URL(location.href).searchParams.get('tpot_ms') === '200'")
    first.wait_for_function(
        "() => document.querySelector('.im-calc').dataset.state === 'ready'"
        " && document.querySelector('[data-slo]').textContent.includes('TPOT ≤ 200 ms')"
    )
    shared = first.url
    answer = first.evaluate(ROWS)
    first.close()
    assert any(s["scenario"] == "mlperf_server" and s["rows"] for s in answer)
    second = browser.new_page()
    try:
        assert _answer(second, shared) == answer
    finally:
        second.close()


ESTIMATE = """() => [...document.querySelectorAll('[data-estimate]')].map((e) => ({
  value: Number(e.dataset.value), kind: e.dataset.kind, precision: e.dataset.precision,
  tier: e.dataset.tier, price_id: e.dataset.priceId, text: e.textContent}))"""


def test_answer_page_estimates_at_every_price_tier(page: Any, site_url: str) -> None:
    """Where nothing qualifies, every tier the form offers gets its estimate at the question's
    precision, labelled, the figure the CLI's estimator gives for that tier."""
    query = {
        "model": "llama-2-70b-chat",
        "workload": "c138352968",  # 128 → 128 tokens, static batches with no TTFT stated
        "precision": "fp8",
        "percentile": "99",
        # any bound leaves them out; 1 ms was one no roofline bound of every tier meets either
        # (one 128-token prompt of the 70B takes 1.1 ms on 8 H100s at their peak)
        "ttft_ms": "1000",
    }
    page.goto(f"{site_url}/answer/?{urlencode(query)}")
    page.wait_for_function(READY, timeout=90_000)
    tiers = page.eval_on_selector_all("select[name=tier] option", "os => os.map(o => o.value)")
    assert {"on_demand", "reserved", "interruptible"} <= set(tiers)
    figures = {}
    for tier in tiers:
        _answer(page, f"{site_url}/answer/?{urlencode(query | {'tier': tier})}")
        assert page.locator("[data-nearest-miss]").count() == 1, tier
        shown = page.evaluate(ESTIMATE)
        assert len(shown) == 1, (tier, shown)
        estimate = shown[0]
        cli = json_output(
            "registry",
            "answer",
            "--model",
            query["model"],
            "--workload",
            query["workload"],
            "--precision",
            "fp8",
            "--percentile",
            "99",
            "--slo-ttft-ms",
            query["ttft_ms"],
            "--tier",
            tier,
        )["answers"][0]["estimate"]
        assert estimate["value"] == pytest.approx(cli["usd_per_million_output_tokens"], rel=1e-9)
        assert (estimate["tier"], estimate["price_id"], estimate["precision"]) == (
            tier,
            cli["price_id"],
            "fp8",
        )
        assert estimate["kind"] == cli["kind"]
        # the published error table decides: the prediction where the server kind met its
        # target (worked out in the browser at this SLO, as the next test shows), else the
        # bound naming the target missed
        missed = missed_target("server")
        assert cli["kind"] == (PREDICTION if missed is None else ROOFLINE_BOUND)
        assert cli["missed_target"] == missed
        assert missed is None or (
            f"the prediction is not shown: its measured error misses the target ({missed})"
            in estimate["text"]
        )
        assert f"Estimate, not a measurement ({cli['kind']}, fp8 weights)" in estimate["text"]
        assert f"{tier.replace('_', '-')} price" in estimate["text"]
        figures[tier] = estimate["value"]
    assert len(set(figures.values())) == len(figures), figures  # each tier priced on its own


def test_answer_page_estimates_a_format_of_an_export_as_the_cli_does(
    page: Any, site_url: str
) -> None:
    """Bug: DeepSeek-R1 at fp4 said 'No estimate: quantization: the checkpoint is fp8 …' in
    each group nothing qualifies for: true of the catalog's FP8 checkpoint, not of NVIDIA's FP4
    export those results ran. The page now shows the estimate `registry answer` prints, planned
    on the export and saying so."""
    query = {
        "model": "deepseek-r1",
        "precision": "fp4",
        "percentile": "99",
        "ttft_ms": "2000",
        "tpot_ms": "100",
    }
    _answer(page, f"{site_url}/answer/?{urlencode(query)}")
    assert page.locator("[data-no-estimate]").count() == 0
    shown = page.evaluate(ESTIMATE)
    cli = json_output(
        "registry", "answer", "--model", "deepseek-r1", "--precision", "fp4", "--percentile",
        "99", "--slo-ttft-ms", "2000", "--slo-tpot-ms", "100",
    )["answers"]  # fmt: skip
    estimates = [a["estimate"] for a in cli if a["estimate"]]
    assert len(estimates) >= 5
    assert [e["value"] for e in shown] == pytest.approx(
        [e["usd_per_million_output_tokens"] for e in estimates], rel=1e-9
    )
    assert all("exported in nvfp4" in e["text"] for e in shown), shown


def test_answer_page_says_why_a_data_set_group_has_no_estimate_as_the_cli_does(
    page: Any, site_url: str
) -> None:
    """Bug: MLPerf's groups of a data set whose lengths the calculators do not know (gpt-oss-120b)
    showed their nearest miss and neither an estimate nor a reason. The page now says why, in the
    words `registry answer` prints; DeepSeek-R1's data set gets its estimate at its mean
    lengths, saying so."""
    slo = {"percentile": "99", "ttft_ms": "2000", "tpot_ms": "100"}
    cli_slo = ("--percentile", "99", "--slo-ttft-ms", "2000", "--slo-tpot-ms", "100")
    _answer(page, f"{site_url}/answer/?{urlencode({'model': 'gpt-oss-120b'} | slo)}")
    shown = page.eval_on_selector_all("[data-no-estimate]", "es => es.map(e => e.textContent)")
    cli = json_output("registry", "answer", "--model", "gpt-oss-120b", *cli_slo)["answers"]
    reasons = [a["no_estimate"] for a in cli if a["no_estimate"]]
    assert len(reasons) == 4  # MLPerf's offline groups (its Server groups are answered)
    assert shown == [f"No estimate: {reason}" for reason in reasons]
    assert reasons[0].startswith("this workload states no typical input and output lengths")
    query = {"model": "deepseek-r1", "precision": "fp8", "workload": "bf670d661d"} | slo
    _answer(page, f"{site_url}/answer/?{urlencode(query)}")
    (estimate,) = page.evaluate(ESTIMATE)
    assert "planned at the mean lengths of the MLPerf deepseek-r1" in estimate["text"]
    assert page.locator("[data-no-estimate]").count() == 0


@pytest.mark.parametrize("tpot_ms", ["8", "0.05", "1e6"])
def test_answer_page_draws_the_bound_within_the_tpot_bound_as_the_cli_does(
    page: Any, site_url: str, tpot_ms: str
) -> None:
    """Bug: the roofline bound was drawn at the most sequences the memory plan holds whatever
    the TPOT bound: 1 × MI325X at 1,024 sequences (a ~55 ms step) at TPOT ≤ 8 ms. The page now
    works the bound out in the browser within the reader's bounds, as `registry answer` does,
    and where no deployment meets them says why in its words."""
    # at "1e6" the TPOT bound is loose and an E2E bound sets the step (a bug: it was ignored)
    e2e = "1000" if tpot_ms == "1e6" else "1e9"
    query = {"model": "llama-3.1-70b-instruct", "workload": "c138352968", "precision": "fp8",
             "percentile": "99", "ttft_ms": "1000", "tpot_ms": tpot_ms, "e2e_ms": e2e}  # fmt: skip
    _answer(page, f"{site_url}/answer/?{urlencode(query)}")
    cli = json_output(
        "registry", "answer", "--model", query["model"], "--workload", query["workload"],
        "--precision", "fp8", "--slo-ttft-ms", "1000", "--slo-tpot-ms", tpot_ms,
        "--slo-e2e-ms", e2e,
    )["answers"]  # fmt: skip
    estimates = [a["estimate"] for a in cli if a["estimate"]]
    reasons = [a["no_estimate"] for a in cli if a["no_estimate"]]
    shown = page.evaluate(ESTIMATE)
    assert [e["value"] for e in shown] == pytest.approx(
        [e["usd_per_million_output_tokens"] for e in estimates], rel=1e-9
    )
    no_estimate = page.eval_on_selector_all(
        "[data-no-estimate]", "es => es.map(e => e.textContent)"
    )
    assert no_estimate == [f"No estimate: {reason}" for reason in reasons]
    if tpot_ms == "8":
        assert estimates
        assert not reasons
        assert all("within TPOT ≤ 8 ms" in e["text"] for e in shown), shown
        assert all(" 1 × AMD Instinct MI325X" not in e["text"] for e in shown), shown
    elif tpot_ms == "1e6":  # the E2E bound, 1 s over 127 steps, sets the step (7.9 ms)
        assert estimates
        assert all("within E2E ≤ 1,000 ms over the 127 steps" in e["text"] for e in shown), shown
    else:
        assert reasons
        assert not estimates
        assert reasons[0].startswith(
            "no deployment of the priced GPUs decodes a step within TPOT ≤ 0.05 ms"
        )


def test_answer_page_refuses_a_model_it_does_not_list_as_the_cli_does(
    page: Any, site_url: str
) -> None:
    # Bug: ?model=nope (a link to a model without results) said "model: required": the model
    # <select> dropped a value it does not list, where `registry answer --model nope` says
    # "no result for 'nope'".
    page.goto(f"{site_url}/answer/?model=nope")
    page.wait_for_function(
        "() => ['invalid', 'error', 'failed'].includes(document.querySelector('.im-calc')"
        ".dataset.state)",
        timeout=90_000,
    )
    assert page.eval_on_selector(".im-calc", "e => e.dataset.state") == "invalid"
    assert "no result for 'nope'" in page.inner_text('[data-error-for="model"]')


def _refitted_to_meet(table: dict[str, Any]) -> dict[str, Any]:
    """The published error table, refitted: every kind's median on every split 5 points under
    its target (as `tests/registry/test_answer_estimates.py` feeds the CLI's estimator)."""
    table = copy.deepcopy(table)
    for error in table.values():
        median = error["target_pct"] - 5.0
        error.update(met=True, median_pct=median, splits=dict.fromkeys(error["splits"], median))
    return table


def _served_overlay(
    built_site: Path, evidence: dict[str, Any]
) -> contextlib.AbstractContextManager[str]:
    """The built site with `evidence` as its data/evidence.json, on a second real HTTP server."""
    handler = type("Overlay", (_EvidenceOverlay,), {"evidence": json.dumps(evidence).encode()})
    return served_folder(built_site, free_port(), handler)


@pytest.fixture
def site_where_server_predictions_met(built_site: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """The built site, its evidence's error table refitted so that the server kind meets its
    target: a prediction at an SLO depends on the SLO, so the browser must work it out."""
    evidence = json.loads((built_site / "data" / "evidence.json").read_text("utf-8"))
    evidence["held_out"] = _refitted_to_meet(evidence["held_out"])
    with _served_overlay(built_site, evidence) as url:
        yield url, evidence["held_out"]


def test_answer_page_predicts_at_the_readers_slo_as_the_cli_does(
    page: Any, site_where_server_predictions_met: tuple[str, dict[str, Any]]
) -> None:
    """Where the server kind meets its target, the answer page in Chromium shows the prediction
    at the reader's own SLO, worked out in the browser: the same figure, deployment, price and
    label as `registry answer`'s code gives with the same error table."""
    url, held_out = site_where_server_predictions_met
    evidence = load_evidence(REPO)
    estimator = answer_estimator(REPO, evidence, held_out)
    query = {
        "model": "llama-2-70b-chat",
        "workload": "c138352968",  # 128 → 128 tokens, static batches with no TTFT stated
        "precision": "fp8",
    }
    for slo in (Slo(95.0, ttft_ms=1000.0),):  # one question: Pyodide takes seconds each
        question = Question(query["model"], slo, "on_demand", query["workload"], "fp8")
        (found,) = ask(evidence, question, estimator)
        cli = found.estimate
        assert cli is not None
        assert cli.kind == PREDICTION
        bounds = {"percentile": f"{slo.percentile:g}"} | {
            name: f"{value:g}" for name, value in slo.bounds().items()
        }
        _answer(page, f"{url}/answer/?{urlencode(query | bounds)}")
        assert page.locator("[data-nearest-miss]").count() == 1
        (shown,) = page.evaluate(ESTIMATE)
        assert shown["value"] == pytest.approx(cli.usd_per_million_output_tokens, rel=1e-12)
        assert (shown["kind"], shown["price_id"], shown["precision"]) == (
            PREDICTION,
            cli.price_id,
            "fp8",
        )
        assert "fp8 weights): predicted $" in shown["text"]
        assert cli.note in shown["text"]  # its measured error, from the refitted table


def _get(url: str) -> str:
    with urllib.request.urlopen(url) as response:
        return str(response.read().decode("utf-8"))


def test_answer_presets_read_without_javascript(site_url: str) -> None:
    bounds = {
        "interactive-chat": "p99 TTFT ≤ 500 ms, TPOT ≤ 40 ms",
        "balanced-chat": "p99 TTFT ≤ 2,000 ms, TPOT ≤ 200 ms",
        "long-context-rag": "p99 TTFT ≤ 6,000 ms, TPOT ≤ 175 ms",
        "batch": "none (batch)",
    }
    for preset, text in bounds.items():
        page = _get(f"{site_url}/answer/{preset}/")
        assert f"SLO: {text}" in page, preset
        values = re.findall(r'data-output="usd_per_million_accepted" data-value="([^"]+)"', page)
        assert values, preset
        assert all(float(value) > 0 for value in values)


def _answers(built_site: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((built_site / "data" / "answers.json").read_text("utf-8"))
    return data


def test_answers_json_is_homogeneous_and_listed(built_site: Path, site_url: str) -> None:
    evidence = json.loads((built_site / "data" / "evidence.json").read_text("utf-8"))
    points = {(p["result_id"], p["point_index"]): p for p in evidence["points"]}
    answers = [found for preset in _answers(built_site)["presets"] for found in preset["answers"]]
    assert sum(bool(found["rows"]) for found in answers) > 20
    fields = ("model", "workload_key", "precision", "scenario", "lane")
    for found in answers:
        assert set(found) >= {"workload", "slo", "tier", "rows", *fields}
        for row in found["rows"]:
            assert set(row) >= {
                "gpu",
                "gpu_count",
                "usd_per_million_accepted",
                "accepted_output_tokens_per_s",
                "price_id",
                "usd_per_gpu_hour",
                "price_as_of",
                "price_confidence",
                "result_ids",
                "evidence",
            }
            point = points[(row["result_ids"][0], row["evidence"]["point_index"])]
            assert tuple(point[f] for f in fields) == tuple(found[f] for f in fields)
    assert 'data/answers.json">data/answers.json</a>' in _get(f"{site_url}/downloads/")


def test_home_sentences_are_what_the_data_says(built_site: Path, site_url: str) -> None:
    """Each preset's sentence on Home, recomputed from answers.json: how many rankings, over how
    many models, and the GPUs that top the most of them (no hand-written shortlist)."""
    home = _get(f"{site_url}/")
    evidence = json.loads((built_site / "data" / "evidence.json").read_text("utf-8"))
    names: dict[str, str] = evidence["gpus"]
    for preset in _answers(built_site)["presets"]:
        answered = [found for found in preset["answers"] if found["rows"]]
        match = re.search(
            rf'data-preset="{preset["id"]}".*?<span data-home-sentence>(.*?)</span>', home, re.S
        )
        assert match, preset["id"]
        sentence = match.group(1)
        if not answered:
            assert sentence == "No result meets this yet."
            continue
        wins = Counter(names[found["rows"][0]["gpu"]] for found in answered)
        top = sorted(wins.items(), key=lambda item: (-item[1], item[0]))[:3]
        models = {found["model"] for found in answered}
        assert sentence.startswith(f"{len(answered)} rankings over {len(models)} models"), sentence
        for name, count in top:
            assert f"{name} ({count})" in sentence.replace("&amp;", "&")
    # the hand-written shortlist is gone
    assert "Where to start" not in home
    # each preset's bounds once: "Batch (no latency bound) (none (batch))" said it twice
    assert "(none (batch))" not in home
    assert "(p99 TTFT ≤ 500 ms, TPOT ≤ 40 ms)" in home
    assert "H200 wins when its memory cuts the GPU count" not in home


def test_home_fits_three_phone_screens_before_the_model_list(browser: Any, site_url: str) -> None:
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        page.goto(f"{site_url}/")
        top = page.evaluate("() => document.getElementById('models').getBoundingClientRect().top")
        assert top <= 3 * PHONE["height"], top
        assert page.locator("form.im-picker select[name=model]").count() == 1
        assert page.locator("[data-preset]").count() == 4
        # the picker's Answer button looks like one: the theme's reset left it plain text
        border = page.eval_on_selector(
            "form.im-picker button", "b => parseFloat(getComputedStyle(b).borderTopWidth)"
        )
        assert border > 0
    finally:
        context.close()


def test_home_picker_asks_the_question_at_the_readers_latency_target(
    page: Any, site_url: str
) -> None:
    """The home page's picker sent the model only, so its answer was always the batch
    question: a latency target had to be set again on the answer page."""
    page.goto(f"{site_url}/")
    page.select_option("form.im-picker select[name=model]", "llama-3.1-70b-instruct")
    page.fill("form.im-picker input[name=ttft_ms]", "1000")
    page.fill("form.im-picker input[name=tpot_ms]", "50")
    page.click("form.im-picker button")
    page.wait_for_function(READY, timeout=90_000)
    assert "ttft_ms=1000" in page.url
    assert "tpot_ms=50" in page.url
    slo = page.locator("[data-slo]").first.inner_text()
    assert slo == "SLO: p99 TTFT ≤ 1,000 ms, TPOT ≤ 50 ms"
    # left empty, no bound: the batch question, with no error
    page.goto(f"{site_url}/")
    page.click("form.im-picker button")
    page.wait_for_function(READY, timeout=90_000)
    assert page.eval_on_selector(".im-calc", "e => e.dataset.state") == "ready"
    assert page.locator("[data-slo]").first.inner_text() == "SLO: none (batch)"


def test_comparisons_show_price_ratio_beside_accepted_throughput_ratio(site_url: str) -> None:
    page = _get(f"{site_url}/answer/comparisons/")
    rows = re.findall(r"<tr data-comparison>(.*?)</tr>", page, re.S)
    assert rows
    pairs = {re.sub(r"<[^>]+>", "", row).split(" vs ")[0] for row in rows}
    assert any("H200" in pair for pair in pairs)
    # the current generation against each other: a reader asking "DeepSeek-R1 on Blackwell or
    # on an MI355X?" found only H200/H100, B200/H200 and MI300X/H100 here
    texts = [re.sub(r"<[^>]+>", "", row) for row in rows]
    for first, second in (("AMD Instinct MI355X", "NVIDIA B200"), ("NVIDIA B300", "NVIDIA B200")):
        assert any(
            text.startswith(first) and f" vs {second}" in text and "DeepSeek-R1" in text
            for text in texts
        ), (first, second)
    for row in rows:
        price = float(re.search(r'data-output="price_ratio" data-value="([^"]+)"', row).group(1))
        throughput = float(
            re.search(r'data-output="accepted_throughput_ratio" data-value="([^"]+)"', row).group(1)
        )
        market = float(re.search(r'data-output="market_price_ratio" data-value="([^"]+)"', row)[1])
        first = re.sub(r"<[^>]+>", "", row).split(" vs ")[0]
        winner, market_winner = re.findall(r"<td>(.*?)</td>", row)[-2:]
        # the first GPU wins exactly when its throughput ratio beats its price ratio, at the
        # prices every ranking uses and again at the market floors
        assert (f"× {first} (" in winner) == (throughput > price), row
        assert (f"× {first} (" in market_winner) == (throughput > market), row
    # Bug: "H200 wins 143, H100 wins 1" rested on OCI's $10 H100 list, where two providers ask
    # $1.75; the verdict at the market floors is said beside it, and it differs
    at_market = re.search(r"where its price is more than 25 % above it \(as every ranking's row "
                          r"says\): (.*?)\.</p>", page, re.S)[1]  # fmt: skip
    counts = [int(count) for count in re.findall(r" wins (\d+)", at_market)]
    assert sum(counts) == len(rows)


# A measured run's requests: the first token of request i after 10 + 20·i ms, 4 tokens each;
# two more failed.
MEASURED = [request_record(i, (10 + 20 * i) * MS, 4) for i in range(20)] + [
    request_record(20 + i, 0, 0, ok=False) for i in range(2)
]


class _EvidenceOverlay(QuietHandler):
    """The built site as it is, but for `data/evidence.json`: `evidence`."""

    evidence = b""

    def do_GET(self) -> None:
        if self.path.split("?")[0].endswith("/data/evidence.json"):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(self.evidence)))
            self.end_headers()
            self.wfile.write(self.evidence)
            return
        super().do_GET()


@pytest.fixture
def site_with_a_measured_run(built_site: Path) -> Iterator[str]:
    """The built site, its evidence with a measured run's point added (its per-request figures
    included, as the site build publishes a measured result's), on a second real HTTP server."""
    evidence = json.loads((built_site / "data" / "evidence.json").read_text("utf-8"))
    evidence["points"].append(point_evidence(measured_result(MEASURED), 0).as_dict())
    with _served_overlay(built_site, evidence) as url:
        yield url


def test_answer_page_counts_a_measured_runs_requests_at_the_readers_slo(
    page: Any, built_site: Path, site_with_a_measured_run: str
) -> None:
    """In Chromium, a reader's SLO looser and tighter than any the run had: the $ figure is
    the price over the output tokens of exactly the requests that met it, recounted here from
    the request records."""
    evidence = json.loads((built_site / "data" / "evidence.json").read_text("utf-8"))
    (price,) = [
        p["usd_per_gpu_hour"]
        for p in evidence["prices"]
        if (p["gpu"], p["tier"]) == ("h100-sxm", "on_demand")
    ]
    window_s = (max(r.end_ns for r in MEASURED) - min(r.send_ns for r in MEASURED)) / 1e9
    for percentile, ttft_ms in ((90, 1000), (25, 110)):  # 20 and 6 of the 22 met
        met = [r for r in MEASURED if r.ok and r.token_times_ns[0] - r.send_ns <= ttft_ms * MS]
        assert len(met) >= percentile / 100 * len(MEASURED)
        tokens_per_s = sum(r.output_tokens or 0 for r in met) / window_s
        query = {"model": "llama-3.1-8b-instruct", "percentile": percentile, "ttft_ms": ttft_ms}
        sections = _answer(page, f"{site_with_a_measured_run}/answer/?{urlencode(query)}")
        (measured,) = [s for s in sections if s["lane"] == "measured"]
        (row,) = measured["rows"]
        assert row[:2] == ["h100-sxm", 1]
        assert float(row[2]) == pytest.approx(price / (tokens_per_s * 3600) * 1e6, rel=1e-4)


def test_answer_page_answers_a_model_without_results_as_the_cli_does(
    page: Any, site_url: str
) -> None:
    """Bug: a catalog model no result measures (33 of 51) was in no model list of Home or the
    answer page, and `?model=<it>` was refused, while its model page showed an estimate per
    preset. It is now asked like any other, and answered by its estimate alone, the CLI's."""
    measured = {point.model for point in load_evidence(REPO).points}
    model = sorted(set(load_models()) - measured)[0]
    page.goto(f"{site_url}/")
    page.select_option("form.im-picker select[name=model]", model)
    page.fill("form.im-picker input[name=tpot_ms]", "40")
    page.click("form.im-picker button")
    page.wait_for_function(READY, timeout=90_000)
    assert page.eval_on_selector(".im-calc", "e => e.dataset.state") == "ready"
    said = page.inner_text("[data-no-result]")
    assert said.startswith("No result measures this model yet. The estimate for 1,000 → 1,000")
    [answer] = json_output("registry", "answer", "--model", model, "--slo-tpot-ms", "40")["answers"]
    [shown] = page.evaluate(ESTIMATE)
    estimate = answer["estimate"]
    assert shown["value"] == pytest.approx(estimate["usd_per_million_output_tokens"], rel=1e-9)
    assert (shown["kind"], shown["price_id"]) == (estimate["kind"], estimate["price_id"])
    # its model page links each preset's question to the answer page, to ask with other bounds
    page.goto(f"{site_url}/models/{model}/")
    link = page.locator("li[data-preset] a").first
    assert link.inner_text() == "ask with your own bounds, workload or precision"
    link.click()
    page.wait_for_function(READY, timeout=90_000)
    assert page.locator("[data-no-result] [data-estimate]").count() == 1
