"""The theme's search: the text it reads from a page, and its worker's token set.

Material's search worker bundles lunr 2.3.9, whose token set (the words a query's prefix expands
to) merges nodes by a key that writes each edge's character and its target's numeric id
together (`TokenSet.prototype.toString`): `7`+`12` then reads as `71`+`2`, so words that mix
digits, such as result ids, can merge into a word the index does not hold, and every query
whose prefix reaches it throws; Material answers "Invalid query" and nothing (lunr.js issue
503, open; tests/site/test_search_index.py). `mend_search_worker` ends each id in the key with a
comma, which makes it read one way.

The index keeps a page's text without its tags, so table cells written edge to edge
(`<td>Computed active per token</td><td>41.78 B</td>`, as the hooks write their tables) read as
one word (`token41.78`), which no reader types. Markdown writes each cell on its own line;
`cells_apart` does so for the hooks' tables, which show the same."""

import re
from pathlib import Path

WORKERS = "assets/javascripts/workers"
_CELL_END = re.compile(r"</(td|th)>(?=<)")
# lunr's minified TokenSet.prototype.toString: `for(…){var s=r[i],o=this.edges[s];e=e+s+o.id}`.
_TOKEN_SET_KEY = re.compile(
    r"(TokenSet\.prototype\.toString=function\(\)\{[^{}]*\{[^{}]*?)"
    r"(\w+)=\2\+(\w+)\+(\w+)\.id\}"
)


class SearchWorkerError(Exception):
    """The theme's search worker is not the one `mend_search_worker` knows how to mend."""


def cells_apart(html: str) -> str:
    """`html` with a line break after each table cell that another tag follows at once."""
    return _CELL_END.sub(r"</\1>\n", html)


def mend_search_worker(site_dir: Path) -> Path:
    """Mend lunr's token-set key in the built site's search worker (see the module docstring);
    the worker's path. Raises SearchWorkerError unless there is one worker with one such key."""
    workers = sorted((site_dir / WORKERS).glob("search.*.min.js"))
    if len(workers) != 1:
        raise SearchWorkerError(f"{site_dir / WORKERS}: expected one search.*.min.js")
    worker = workers[0]
    code = worker.read_text(encoding="utf-8")
    mended, count = _TOKEN_SET_KEY.subn(r'\1\2=\2+\3+\4.id+","}', code)
    if count != 1:
        raise SearchWorkerError(
            f"{worker.name}: expected lunr's TokenSet.prototype.toString once, found {count}"
        )
    worker.write_text(mended, encoding="utf-8")
    return worker
