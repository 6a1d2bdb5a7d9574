"""Replicates (the same comparability key and load from other submitters) share one compare row
showing their median, n and the spread of output tokens/s, with every replicate linked; each
replicate's result page links its siblings."""

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
import result_pages
from site_helpers import build_site, result_data, write_registry

from infermeter.registry.index_rows import index_rows
from infermeter.registry.models import Result
from infermeter.registry.prices import PriceBook

pytestmark = pytest.mark.slow

# Output tokens/s of the two load points (concurrency 8 and 64) in each replicate.
ALICE = (1180.0, 2400.0)
BOB = (1350.0, 2600.0)


def _variant(
    submitter: str, throughputs: tuple[float, float], gpu: str = "h100-sxm"
) -> dict[str, Any]:
    data = result_data()
    data["source"]["submitter"] = submitter
    data["identity"]["gpu"]["id"] = gpu
    for point, output_tokens_per_s in zip(data["points"], throughputs, strict=True):
        point["throughput"]["output_tokens_per_s"] = output_tokens_per_s
        point["throughput"]["accepted_output_tokens_per_s"] = output_tokens_per_s * 0.99
    return data


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Result]]:
    tmp = tmp_path_factory.mktemp("replicates")
    results = write_registry(
        tmp / "registry",
        [
            _variant("alice", ALICE),
            _variant("bob", BOB),
            _variant("carol", (900.0, 1500.0), "l40s"),
        ],
    )
    out = tmp / "out"
    completed = build_site(out, tmp / "registry")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return out, results


def _compare_rows(out: Path) -> list[str]:
    page = next((out / "compare").glob("llama-3.1-8b-instruct--*/index.html")).read_text()
    table = page.split('class="im-table im-compare"', 1)[1]  # after the buyer's table
    body = table.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return re.findall(r"<tr data-kind=.*?</tr>", body)


def test_replicates_share_one_compare_row_with_spread(built: tuple[Path, list[Result]]) -> None:
    out, (alice, bob, carol) = built
    rows = _compare_rows(out)
    assert len(rows) == 4  # two replicate groups (one per load point) and carol's two points
    grouped = [row for row in rows if 'data-replicates="2"' in row]
    assert len(grouped) == 2
    low_load = next(row for row in grouped if ">concurrency 8<" in row)
    assert "n=2, 1,180–1,350 tok/s" in low_load
    assert '<td data-sort="1265">1,265<br>' in low_load  # the median, sortable
    for result in (alice, bob):
        assert f'href="../../results/{result.id}/"' in low_load
        assert f'href="../../results/{result.id}.json"' in low_load
    high_load = next(row for row in grouped if ">concurrency 64<" in row)
    assert "n=2, 2,400–2,600 tok/s" in high_load
    single = [row for row in rows if carol.id in row]
    assert len(single) == 2
    assert not any("n=" in row or "data-replicates" in row for row in single)


def test_replicates_linked_from_each_result_page(built: tuple[Path, list[Result]]) -> None:
    out, (alice, bob, carol) = built
    for result, sibling in ((alice, bob), (bob, alice)):
        page = (out / "results" / result.id / "index.html").read_text()
        assert 'class="im-replicates"' in page
        assert f'<a href="../{sibling.id}/">{sibling.id}</a>' in page
        assert "n=2, 1,180–1,350 tok/s; this result " in page
    assert 'class="im-replicates"' not in (out / "results" / carol.id / "index.html").read_text()


@pytest.mark.parametrize("siblings", [1, result_pages.MAX_REPLICATE_LINKS, 25])
def test_a_result_page_links_at_most_a_few_replicates_and_counts_the_rest(siblings: int) -> None:
    result = Result.model_validate(result_data())
    row = index_rows(result, "f.json", PriceBook([]))[0]
    group = [row] + [
        dataclasses.replace(row, result_id=f"{number:012x}") for number in range(siblings)
    ]
    html = result_pages.replicates_html([row], {row.replicate_key: group})
    shown = min(siblings, result_pages.MAX_REPLICATE_LINKS)
    assert html.count('<a href="../') == shown
    more = siblings - shown
    assert (f"and {more:,} more" in html) == (more > 0)
