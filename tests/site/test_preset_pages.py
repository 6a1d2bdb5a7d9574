"""The pages a reader reaches from Home's presets and from Compare, on the real registry's build:
each says a thing once, and every label is a claim that holds."""

import html
import re
from pathlib import Path

from infermeter.calculators.answer import PRESETS


def _page(built_site: Path, path: str) -> str:
    return (built_site / path / "index.html").read_text(encoding="utf-8")


def _article_text(page: str) -> str:
    article = page.split("<article", 1)[1].split("</article>", 1)[0]
    return html.unescape(re.sub(r"<[^>]+>", "", article))


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
