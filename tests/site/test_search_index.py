"""The site's search, run by the theme's own worker (the built site's search.*.js) in Node, over
the built index: every word the index holds can be searched for.

lunr (inside Material's worker) keeps the index's words in a token set, merging nodes whose key
(`TokenSet.toString`: each edge's character and the target's numeric id, written together) reads
alike. Words that mix digits can collide: two words are merged into one the index does not hold,
and any query whose prefix reaches it throws ("Cannot read properties of undefined (reading
'_index')"); Material answers "Invalid query" with no results. In the site of 39b2fef6 the model
pages' parameter tables wrote `Computed active per token` and `41.78 B` edge to edge, which the
search read as the words `token41.78` and `token41.25` (GLM-5, GLM-5.2): "token", "tok" and "cost
per token" found nothing. The prediction-error page's table of 918 result ids (79e4ac04) had
broken "8B" the same way, not by its size."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from site_search import WORKERS, SearchWorkerError, cells_apart, mend_search_worker

HARNESS = Path(__file__).with_name("search_worker.cjs")
# The query language's operators (lunr's field, boost, fuzz, wildcard and presence): a word that
# starts with one cannot be typed as a query.
OPERATORS = set("*+-~^:")
READER_QUERIES = ("token", "cost per token", "tok", "8B", "compare llama 8B", "H100", "fp8")


def _searched(site: Path, queries: list[str], tmp_path: Path) -> list[dict[str, object]]:
    node = shutil.which("node")
    assert node, "node (from `make test`'s npm) runs the theme's search worker"
    (worker,) = (site / "assets/javascripts/workers").glob("search.*.min.js")
    asked = tmp_path / "queries.json"
    asked.write_text(json.dumps(queries), encoding="utf-8")
    index = site / "search/search_index.json"
    command = [node, str(HARNESS), str(worker), str(index), str(asked)]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert completed.returncode == 0, completed.stderr
    return [json.loads(line) for line in completed.stdout.splitlines()]


def _words(site: Path) -> set[str]:
    """The index's words, near enough for their prefixes: text without tags, split as the
    index's config splits it, lower case."""
    index = json.loads((site / "search/search_index.json").read_text(encoding="utf-8"))
    separator = re.compile(index["config"]["separator"])
    words: set[str] = set()
    for doc in index["docs"]:
        text = re.sub(r"<[^>]+>", " ", f"{doc['title']} {doc['text']}").lower()
        words.update(word for word in separator.split(text) if word)
    return words


def _broken(answers: list[dict[str, object]]) -> list[str]:
    return [str(answer["query"]) for answer in answers if answer["warnings"]]


def test_search_finds_what_readers_ask(built_site: Path, tmp_path: Path) -> None:
    answers = _searched(built_site, list(READER_QUERIES), tmp_path)
    assert _broken(answers) == []
    assert [a["query"] for a in answers if not a["results"]] == []


def test_search_reaches_every_word_of_the_index(built_site: Path, tmp_path: Path) -> None:
    """Each query is a prefix (the theme searches `tok` as `tok*`, every word that starts so):
    the first characters of all words, and longer prefixes under one that finds nothing (a
    stop word such as `a` is no query)."""
    words = _words(built_site)
    prefixes = sorted({word[0] for word in words} - OPERATORS)
    broken: list[str] = []
    while prefixes:
        answers = _searched(built_site, prefixes, tmp_path)
        broken += _broken(answers)
        empty = {str(a["query"]) for a in answers if not a["results"] and not a["warnings"]}
        longer = {w[: len(p) + 1] for p in empty for w in words if w.startswith(p) and w != p}
        prefixes = sorted(longer)
    assert broken == [], f"the search throws on these prefixes: {broken}"


def test_cells_apart_keeps_each_cell_a_word_of_its_own() -> None:
    html = "<table><tr><td>Computed active per token</td><td>41.78 B</td></tr></table><p>x</p>"
    assert cells_apart(html) == (
        "<table><tr><td>Computed active per token</td>\n<td>41.78 B</td>\n</tr></table><p>x</p>"
    )
    assert cells_apart("<td>a</td> <td>b</td>") == "<td>a</td> <td>b</td>"


def test_mend_search_worker_refuses_a_worker_it_does_not_know(tmp_path: Path) -> None:
    workers = tmp_path / WORKERS
    workers.mkdir(parents=True)
    with pytest.raises(SearchWorkerError, match="expected one search"):
        mend_search_worker(tmp_path)
    (workers / "search.0.min.js").write_text("t.TokenSet.prototype.toString=function(){}")
    with pytest.raises(SearchWorkerError, match="found 0"):
        mend_search_worker(tmp_path)
