"""The buyer's minimal table (candidate GPUs side by side, effective hourly cost with retries,
flagged prices never used), the $ per 1M tokens in view at a phone's width, and type-to-search
of the calculators' model and GPU fields: in a real headless Chromium, on the hook's own HTML
from a small registry (no extra site build) and on the real registry's build."""

import copy
import dataclasses
from typing import Any

import buyer_table
import compare_pages
import gpu_labels
import pytest
from site_helpers import PHONE, assert_side_by_side, in_view, result_data, write_registry

from infermeter.registry.catalog import load_gpus, load_models
from infermeter.registry.index import build_index
from infermeter.registry.index_row import IndexRow

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> list[IndexRow]:
    """One workload on an H100 (two points) and on two H200s (one point, half as fast)."""
    h100 = result_data()
    h200 = copy.deepcopy(h100)
    h200["identity"]["gpu"].update({"id": "h200-sxm", "count": 2})
    h200["identity"]["serving"]["tensor_parallel_size"] = 2
    h200["points"] = h200["points"][:1]
    h200["source"]["submitter"] = "bob"
    root = tmp_path_factory.mktemp("buyer")
    write_registry(root, [h100, h200])
    built, _count = build_index(root)
    return built


def _column(page: Any, header: str) -> dict[str, str]:
    """Figure name → cell text of the candidate column headed `header`."""
    headers = page.locator("table.im-buyer thead th").all_inner_texts()
    index = headers.index(header) + 1
    names = page.locator("table.im-buyer tbody th").all_inner_texts()
    cells = page.locator(f"table.im-buyer tbody td:nth-child({index})").all_inner_texts()
    return dict(zip(names, cells, strict=True))


def test_buyer_table_side_by_side_with_effective_cost(
    static_page: Any, rows: list[IndexRow]
) -> None:
    static_page.set_content(buyer_table.buyer_table(rows))
    headers = static_page.locator("table.im-buyer thead th").all_inner_texts()
    assert headers[1:] == [f"{row.gpu_count} × {row.gpu}" for row in buyer_table.candidates(rows)]
    assert set(headers[1:]) == {"1 × h100-sxm", "2 × h200-sxm"}
    h100 = min(
        (row for row in rows if row.gpu == "h100-sxm"),
        key=lambda row: row.on_demand.usd_per_million_accepted_tokens or 1e9,
    )
    column = _column(static_page, "1 × h100-sxm")
    assert h100.on_demand.usd_per_hour is not None
    assert h100.failure_rate  # the template fails 2 of 492 requests
    effective = h100.on_demand.usd_per_hour / (1 - h100.failure_rate)
    assert column["Effective hourly cost (full use, failures retried)"] == f"${effective:,.2f}"
    hourly, price = column["Hourly price (on-demand)"].splitlines()
    assert hourly == f"${h100.on_demand.usd_per_hour:,.2f}"
    # the price behind it: provider, tier, date, confidence
    assert price.startswith(f"{h100.on_demand.price_provider} on-demand $")
    assert price.endswith(f"{h100.on_demand.price_confidence} confidence")
    accepted = h100.on_demand.usd_per_million_accepted_tokens
    assert column["$/1M accepted output tokens"] == f"${accepted:,.3f}"
    assert column["Accepted output tokens/hour"] == (
        f"{(h100.accepted_output_tokens_per_s or 0) * 3600:,.0f}"
    )
    assert column["Failure (retry) rate"] == f"{h100.failure_rate * 100:,.1f} %"
    for figure in ("TTFT p95 ms", "E2E p95 / p99 ms", "GPU utilization (mean)"):
        assert column[figure] not in ("", "–"), figure
    assert "flagged" not in column["Notes"]


def test_buyer_table_heads_candidates_with_gpu_names_ids_only_in_links(
    static_page: Any, rows: list[IndexRow]
) -> None:
    gpus = load_gpus()
    names = gpu_labels.names_of(gpus)
    html = buyer_table.buyer_table(rows, (), names)
    static_page.set_content(html)
    heads = static_page.locator("table.im-buyer thead th")
    assert heads.all_inner_texts()[1:] == [
        f"{row.gpu_count} × {gpus[row.gpu].name}" for row in buyer_table.candidates(rows)
    ]
    assert set(heads.all_inner_texts()[1:]) == {
        "1 × NVIDIA H100 SXM5 80GB",
        "2 × NVIDIA H200 SXM 141GB",
    }
    links = heads.locator("a")
    assert links.evaluate_all("as => as.map(a => [a.getAttribute('href'), a.title])") == [
        [f"../../gpus/{row.gpu}/", row.gpu] for row in buyer_table.candidates(rows)
    ]
    # the ids are in the links' addresses and titles only, never in the text a reader reads
    text = static_page.locator("table.im-buyer").inner_text()
    assert "h100-sxm" not in text
    assert "h200-sxm" not in text
    # a GPU the catalog lacks keeps its id
    assert "1 × h100-sxm" in buyer_table.buyer_table(rows, (), {"h200-sxm": "H200"})


def test_buyer_table_compare_slots_name_gpus_ids_only_in_links(
    static_page: Any, rows: list[IndexRow]
) -> None:
    # the table of every load point and the Pareto front beside the buyer's table: names too
    names = gpu_labels.names_of(load_gpus())
    static_page.set_content("".join(compare_pages.compare_slots(rows, (), names).values()))
    for selector in ("table.im-compare", "table.im-front"):
        links = static_page.locator(f"{selector} tbody tr td:first-child a")
        assert links.count() > 0, selector
        for text, gpu_id, href in links.evaluate_all(
            "as => as.map(a => [a.innerText, a.title, a.getAttribute('href')])"
        ):
            assert text.rsplit(" × ", 1)[-1] == names[gpu_id], selector
            assert href == f"../../gpus/{gpu_id}/"
    # sorted by the name shown: its text, with no key beside it saying it again
    cells = static_page.locator("table.im-compare tbody td:first-child").evaluate_all(
        "cs => cs.map(c => [c.dataset.sort ?? null, c.textContent])"
    )
    assert {key for key, _text in cells} == {None}
    assert {text for _key, text in cells} == {names["h100-sxm"], names["h200-sxm"]}


def test_buyer_table_names_a_gpu_with_a_flagged_price(
    static_page: Any, rows: list[IndexRow]
) -> None:
    static_page.set_content(buyer_table.buyer_table(rows, {"h200-sxm"}))
    assert "flagged and not used" in _column(static_page, "2 × h200-sxm")["Notes"]
    assert "flagged" not in _column(static_page, "1 × h100-sxm")["Notes"]


def test_buyer_phone_shows_gpu_and_usd_per_million(phone: Any, site_url: str) -> None:
    phone.goto(f"{site_url}/compare/")
    phone.locator("article a[href*='llama-3.1-8b-instruct--']").first.click()
    table = phone.locator("table.im-compare").first
    table.wait_for()
    headers = table.locator("thead th")
    texts = headers.all_inner_texts()
    # the first $ per 1M column: accepted tokens, or output tokens where no row has an SLO
    gpu, usd = texts.index("GPU"), next(i for i, t in enumerate(texts) if t.startswith("$/1M"))
    assert in_view(headers.nth(gpu))
    assert in_view(headers.nth(usd))
    assert in_view(table.locator("tbody tr").first.locator("td").nth(usd))
    # the table scrolls inside its box, the page does not; the GPU column stays put
    scroller = table.locator("xpath=ancestor::div[contains(@class,'im-scroll')][1]")
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"]
    scroller.evaluate("box => { box.scrollLeft = box.scrollWidth; }")
    first = table.locator("tbody tr").first.locator("td")
    assert in_view(first.first)
    # the $ per 1M accepted tokens stays too, right after the GPU, and the GPU shows its name
    assert in_view(first.nth(usd))
    assert_side_by_side(first.nth(gpu), first.nth(usd))
    name = first.nth(gpu).locator("a")
    assert name.inner_text() == load_gpus()[name.get_attribute("title")].name
    buyer = phone.locator("table.im-buyer").first
    row = buyer.locator("tbody tr", has_text="$/1M output tokens")
    assert in_view(row.locator("th"))
    assert in_view(row.locator("td").first)


def test_buyer_calculators_type_to_search_the_catalogs(page: Any, site_url: str) -> None:
    page.goto(f"{site_url}/calculators/vram/")
    for field, catalog in (("model", load_models()), ("gpu", load_gpus())):
        listed = page.locator(f"#im-{field}").get_attribute("list")
        assert listed
        options = page.locator(f"datalist#{listed} option")
        assert sorted(options.evaluate_all("os => os.map(o => o.value)")) == sorted(catalog)
        names = options.evaluate_all("os => os.map(o => o.textContent)")
        assert sorted(names) == sorted(entry.name for entry in catalog.values())


def test_buyer_table_another_weight_format_is_another_candidate(
    static_page: Any, rows: list[IndexRow]
) -> None:
    # the same H100 rows with FP8 weights, cheaper: a column of their own, headed so; never the
    # H100's cheaper point
    h100 = [row for row in rows if row.gpu == "h100-sxm"]
    fp8 = [dataclasses.replace(row, quantization="fp8", result_id="f" * 12) for row in h100]
    chosen = buyer_table.candidates([*rows, *fp8])
    assert sorted((row.gpu, row.quantization or "") for row in chosen) == [
        ("h100-sxm", ""),
        ("h100-sxm", "fp8"),
        ("h200-sxm", ""),
    ]
    static_page.set_content(buyer_table.buyer_table([*rows, *fp8]))
    headers = static_page.locator("table.im-buyer thead th").all_inner_texts()
    assert "1 × h100-sxm\nfp8 weights" in headers
    # the unquantized columns named too: an H100 column without a format read as a duplicate
    assert "1 × h100-sxm\n16-bit weights" in headers
    assert "2 × h200-sxm\n16-bit weights" in headers
