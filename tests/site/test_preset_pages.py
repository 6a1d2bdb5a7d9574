"""The pages a reader reaches from Home's presets and from Compare, on the real registry's build:
each says a thing once, and every label is a claim that holds."""

import html
import re
from pathlib import Path


def _page(built_site: Path, path: str) -> str:
    return (built_site / path / "index.html").read_text(encoding="utf-8")


def _article_text(page: str) -> str:
    article = page.split("<article", 1)[1].split("</article>", 1)[0]
    return html.unescape(re.sub(r"<[^>]+>", "", article))


def test_mlperf_workloads_say_what_they_are(built_site: Path) -> None:
    """MLPerf's workloads read "dataset → dataset tokens, MLPerf Inference … data set"."""
    batch = _article_text(_page(built_site, "answer/batch"))
    assert "dataset → dataset" not in batch
    assert "its prompts → mean 3,886 tokens, MLPerf Inference deepseek-r1 data set" in batch
    compare = _article_text(_page(built_site, "compare/gpt-j-6b--custom"))
    assert "dataset → dataset" not in compare
    assert "its prompts → its outputs, MLPerf Inference gptj data set" in compare
