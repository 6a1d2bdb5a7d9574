"""`data/evidence.json` (`answer_render.evidence_json`), what the answer page's browser
recomputes from: read back (`Data.from_json`) it is the data the build ranked with, and an
estimate the same for both kinds of question (a bound) is written once, and each text of a
target missed once. A result page lists a measured point's per-request figures as a count."""

import json
from dataclasses import replace

from answer_render import Data, estimate_gpu, evidence_json
from registry_pages import browser_catalog

from infermeter.calculators.answer import PREDICTION, ROOFLINE_BOUND, Estimate, Price
from infermeter.registry.answers import catalog_estimator
from infermeter.registry.catalog import load_gpus, load_models, load_prices
from infermeter.registry.evidence import answer_prices
from infermeter.registry.lookup import cheapest_prices

BOUND = Estimate(
    "h100-sxm", 1, "fp8", ROOFLINE_BOUND, 9000.0, 0.06, "p1", "the roofline bound", "on_demand", 2.0
)


def test_evidence_json_reads_back_and_writes_a_shared_bound_once() -> None:
    estimates = {
        ("m", "w", "fp8", "on_demand", "offline"): replace(BOUND, missed_target="offline: 22 %"),
        ("m", "w", "fp8", "on_demand", "server"): replace(BOUND, missed_target="server: 34 %"),
        ("m", "w", "16-bit", "on_demand", "offline"): replace(
            BOUND, precision="16-bit", kind=PREDICTION, note="predicted: median error 9 %"
        ),
        ("m", "w", "16-bit", "on_demand", "server"): replace(
            BOUND, precision="16-bit", missed_target="server: 34 %"
        ),
    }
    prices = [Price("p1", "h100-sxm", "on_demand", 2.0, "provider", "2026-10", "low")]
    data = Data([], prices, {"m": "M"}, {"h100-sxm": "H100 SXM"}, estimates)
    text = evidence_json(data)
    assert Data.from_json(text) == data
    published = json.loads(text)
    assert [item["kinds"] for item in published["estimates"]] == [
        {"offline": None},
        {"server": 0},
        {"offline": 1, "server": 0},
    ]
    assert published["missed_targets"] == ["server: 34 %", "offline: 22 %"]


def test_the_browser_reads_each_gpu_as_the_registrys_estimator_does() -> None:
    """The answer page's estimator reads each GPU from the calculators' catalog
    (`assets/catalog.json`) exactly as `registry answer`'s reads it from gpus.yaml: the same
    memory for the predictor and for the bound, rates and links (so both give one number)."""
    gpus, models, prices = load_gpus(), load_models(), list(load_prices().values())
    cheapest = {gpu_id: cheapest_prices(gpu_id, prices) for gpu_id in gpus}
    catalog = json.loads(json.dumps(browser_catalog(gpus, models, cheapest)))  # as published
    registry = catalog_estimator(gpus, models, answer_prices(prices), {}).gpus
    assert registry
    for gpu_id, expected in registry.items():
        assert estimate_gpu(gpu_id, catalog["gpus"][gpu_id]) == expected, gpu_id


def test_a_result_page_counts_a_points_request_figures() -> None:
    """The page lists every field, but a measured point's per-request figures as a count."""
    import result_pages

    from tests.measured_result import MS, measured_result, request_record

    result = measured_result([request_record(i, (10 + i) * MS, 4) for i in range(3)])
    page = result_pages.result_body(result, [])
    assert "<th>points[0].request_figures</th>" in page
    assert "3 requests&#x27; output tokens, TTFT, TPOT and E2E" in page
    assert "request_figures.ttft_ms" not in page  # no column is listed value by value
