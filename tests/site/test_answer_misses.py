"""Where nothing meets the reader's question, the answer page (`answer_render.render`, the code
the browser runs) names the evidence group of its nearest miss and lists every other group with
its own nearest miss, as `infermeter registry answer` does: a reader of Qwen3 30B-A3B at
interactive bounds got one nearest miss with no workload or precision, and 14 groups hidden."""

import html
import sys
from functools import cache

from site_helpers import REPO

from infermeter.calculators.answer import answer

sys.path.insert(0, str(REPO / "site" / "hooks"))
sys.path.insert(0, str(REPO / "site" / "browser"))
from answer_render import Data, answer_title, parse_question, render

QUERY = {"model": "qwen3-30b-a3b", "ttft_ms": "500", "tpot_ms": "40"}


@cache
def _data() -> Data:
    from infermeter.registry.answers import load_evidence

    found = load_evidence(REPO)
    return Data(found.points, found.prices, {}, {}, {})


def test_no_answer_names_every_group_and_its_nearest_miss() -> None:
    data = _data()
    question = parse_question(QUERY, data)
    assert not isinstance(question, dict), question
    groups = answer(data.points, data.prices, question, data.estimator)
    assert len(groups) > 1
    assert not any(group.rows or group.unpriced for group in groups)
    shown = render(QUERY, data)["html"]
    no_answer = shown.split("data-nearest-miss>", 1)[1].split("</div>", 1)[0]
    titled = [html.escape(answer_title(group)) + ": nearest miss" for group in groups]
    assert sum(title in no_answer for title in titled) == 1, no_answer
    assert all(title in shown for title in titled), shown
    assert f"{len(groups) - 1} more evidence group(s) nothing there meets" in shown
