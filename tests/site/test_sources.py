"""Every number the site shows is measured or cited with its link: a GPU page's spec values carry
their sources (a value no source states says "not cited", and no number may; the segment says it
is the catalog's own classification), every price its
date and source, every price shown elsewhere links to that row, and every reported result's
page links where its numbers were published."""

import html
import json
import re
from pathlib import Path

import pytest
from test_catalogs import GPU_UNCITED_LABELS

from infermeter.registry.models.catalog import SEGMENT_CLASSIFICATION

pytestmark = pytest.mark.slow

# Spec rows whose value is a number: each must cite a source.
NUMERIC_SPECS = (
    "Memory, GB",
    "Memory as reported, MiB",
    "Memory bandwidth",
    "Dense ",
    "Board power",
)
# Spec rows that say what the GPU is, and the catalog field each shows.
IDENTITY_SPECS = {"Vendor": "vendor", "Architecture": "architecture", "Form factor": "form_factor"}
_ROW = re.compile(r"<tr>(.*?)</tr>", re.S)
_CELL = re.compile(r"<td>(.*?)</td>", re.S)


def _section(page: str, anchor: str) -> str:
    after = page.split(f'id="{anchor}"', 1)[1]
    return after.split("<h2", 1)[0]


def _rows(table_html: str) -> list[list[str]]:
    return [cells for row in _ROW.findall(table_html) if (cells := _CELL.findall(row))]


def _gpu_pages(built_site: Path) -> list[Path]:
    pages = sorted(path for path in (built_site / "gpus").glob("*/index.html"))
    assert len(pages) > 10
    return pages


def test_sources_every_gpu_spec_value_cites_a_linked_source(built_site: Path) -> None:
    uncited: list[str] = []
    for path in _gpu_pages(built_site):
        page = path.read_text()
        sources = dict(re.findall(r'<li id="(source-\d+)">(.*?)</li>', page))
        for label, value, marks in _rows(_section(page, "specifications")):
            if value == "–":
                continue
            cited = re.findall(r'href="#(source-\d+)"', marks)
            if not cited and label == "Segment":
                # the catalog's own classification, said for what it is
                assert html.unescape(marks) == SEGMENT_CLASSIFICATION, path.parent.name
                continue
            if not cited:
                assert marks == "not cited", f"{path.parent.name}: {label}"
                uncited.append(f"{path.parent.name}: {label}")
                assert not label.startswith(NUMERIC_SPECS), f"{path.parent.name}: {label}"
                continue
            for anchor in cited:
                assert '<a href="http' in sources[anchor], f"{path.parent.name}: {anchor}"


def test_sources_gpu_identity_cites_a_source_but_for_the_known_gaps(built_site: Path) -> None:
    """Vendor, architecture and form factor cite a source on every GPU page; "not cited" only
    for the gaps test_catalogs.GPU_UNCITED_LABELS names with their reasons."""
    uncited = set()
    for path in _gpu_pages(built_site):
        rows = {row[0]: row[-1] for row in _rows(_section(path.read_text(), "specifications"))}
        for label, field in IDENTITY_SPECS.items():
            if rows[label] == "not cited":
                uncited.add((path.parent.name, field))
            else:
                assert re.search(r'href="#source-\d+"', rows[label]), (path.parent.name, label)
    known = {gap for gap in GPU_UNCITED_LABELS if gap[1] in IDENTITY_SPECS.values()}
    assert uncited == known


def test_sources_every_price_has_its_date_and_source(built_site: Path) -> None:
    seen = 0
    for path in _gpu_pages(built_site):
        prices = _section(path.read_text(), "prices")
        # by header: a column no price fills is left out (wide_tables)
        head = re.findall(r"<th>(.*?)</th>", prices.split("</thead>", 1)[0])
        for row in _rows(prices):
            seen += 1
            cells = dict(zip(head, row, strict=True))
            assert cells["Provider"].startswith('<span id="price-'), cells
            date = r"\d{4}(-\d{2}){0,2}"
            # its date, or undated with the day its source was read
            assert re.fullmatch(rf"{date}|undated \(read {date}\)", cells["Date"]), cells
            assert re.fullmatch(r'<span title="(high|medium|low): [^"]+">(high|medium|low)</span>',
                                cells["Confidence"]), cells  # fmt: skip
            # whether figures use it: a tier, not at all, or flagged and never
            used = cells.get("Used in figures", "–")
            assert used == "–" or used.startswith(("yes (", "not used: ")), cells
            assert cells["Source"].startswith('<a href="http'), cells  # every price: its address
    assert seen > 50


def test_sources_prices_elsewhere_link_to_their_row(built_site: Path) -> None:
    answers = sorted((built_site / "answer").glob("*/index.html"))
    pages = [
        built_site / "gpus/index.html",
        *sorted((built_site / "compare").glob("*/index.html")),
        *answers,
    ]
    links = 0
    for path in pages:
        page = path.read_text()
        for href in re.findall(r'href="([^"]*#price-[^"]+)"', page):
            target, anchor = (path.parent / html.unescape(href)).as_posix().split("#")
            target_page = Path(target) / "index.html"
            assert f'id="{anchor}"' in target_page.read_text(), f"{path}: {href}"
            links += 1
    assert links > 30
    answer_prices = re.findall(
        r"(<a [^>]*>)?\$[\d.,]+/GPU-h", "".join(path.read_text() for path in answers)
    )
    assert answer_prices
    assert all(answer_prices)  # every price in an answer is a link


def test_sources_reported_result_pages_link_their_source(built_site: Path) -> None:
    rows = json.loads((built_site / "data/index.json").read_text())["rows"]
    reported = sorted({row["result_id"] for row in rows if row["source_kind"] == "reported"})
    assert reported
    for result_id in reported:
        source = json.loads((built_site / f"results/{result_id}.json").read_text())["source"]
        page = (built_site / f"results/{result_id}/index.html").read_text()
        assert f'<a href="{html.escape(source["url"])}" rel="noopener">' in page, result_id


def test_sources_every_dollar_table_names_its_prices(built_site: Path) -> None:
    """Each compare section with a $ figure lists, per GPU, the provider, tier, date and
    confidence of the price its figures rest on, linked to the price's row."""
    phrase = re.compile(
        r'<a href="\.\./\.\./gpus/[^"]+#price-[^"]+">[\w.-]+ (on-demand|interruptible|reserved) '
        r"\$[\d,.]+/GPU-h, (\d{4}(-\d{2}){0,2}|undated), (high|medium|low) confidence</a>"
    )
    pages = sorted((built_site / "compare").glob("*/index.html"))
    named = 0
    for path in pages:
        page = path.read_text()
        if "$/1M" not in page:
            continue
        blocks = re.findall(r'<details class="im-prices">(.*?)</details>', page, re.S)
        assert blocks, path.parent.name
        named += sum(len(phrase.findall(block)) for block in blocks)
    assert named > 50


def test_sources_downloads_state_the_licences(built_site: Path) -> None:
    page = (built_site / "downloads/index.html").read_text()
    licences = json.loads((built_site / "data/licences.json").read_text())
    assert {"Apache License 2.0"} <= {entry["terms"][:18] for entry in licences}
    needles = ("MLCommons", "TensorRT-LLM", "ROCm/vllm", "InferenceX", "skypilot-catalog")
    for needle in (*needles, "google-cloud-pricing-cost-calculator", "azure-pricing-radar"):
        assert needle in page, needle
        assert any(needle in " ".join(entry.values()) for entry in licences), needle


def test_sources_gpu_pages_set_the_market_floor_beside_a_dear_list_price(
    built_site: Path,
) -> None:
    # H100 SXM's figures use OCI's dated list ($10/GPU-h); its page says what several providers
    # ask (registry.prices.market_floor), and a GPU with no price says no public price was found.
    page = html.unescape((built_site / "gpus/h100-sxm/index.html").read_text())
    prices = _section(page, "prices")
    assert "use a price above what the market asks" in prices
    assert "They use oci's $10.00/GPU-hour (2026-09-18)" in prices
    assert "ask from $1.75/GPU-hour (lium, 2026-08-24)" in prices
    gb200 = html.unescape((built_site / "gpus/gb200/index.html").read_text())
    assert "above what the market asks" not in gb200
    unpriced = html.unescape((built_site / "gpus/mi350x/index.html").read_text())
    assert "No public price for this GPU was found" in _section(unpriced, "prices")
    # A variant priced as its base GPU says so first, and its price's tier names the rule.
    derived = _section(
        html.unescape((built_site / "gpus/h200-sxm-1000w/index.html").read_text()), "prices"
    )
    assert "No provider lists this GPU under its own name" in derived
    assert "on-demand (derived: priced as H200 SXM" in derived
