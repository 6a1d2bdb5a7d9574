"""A page per result, written as HTML after the build instead of as one mkdocs page each.

Ten thousand results through Markdown, the theme's template and the search plugin cost about
10 ms each; so mkdocs renders one page, the *shell* (`results/_shell.md`: a marker for the title
and the body, the four headings for the table of contents), and `write_pages` fills a copy of
its HTML per result: a string replacement, well under a millisecond. Every result page sits at
the same depth (`results/<id>/`), so the shell's relative links hold for all of them. Its
load points are `registry.tables.points_table_html`, the table `infermeter bench report` shows.

Result pages stay out of the search index (their words are ids and numbers); readers reach
them from the compare tables and from Home. Every string from a result file is HTML-escaped.
"""

import functools
import gzip
import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape as xml_escape

from catalog_pages import esc, scrolled
from gpu_labels import gpu_name
from wide_tables import more_columns

from infermeter.registry.index_row import COLUMN_DESCRIPTIONS, IndexRow
from infermeter.registry.models import Result
from infermeter.registry.tables import points_table_html, stated_columns

SHELL_URI = "results/_shell.md"
SHELL_DIR = "results/_shell"
TITLE_MARK = "imResultTitleSlot"
HEADING_MARK = "imResultHeadingSlot"
BODY_MARK = '<div data-im-slot="result-body"></div>'
SECTIONS = (
    ("points", "Load points"),
    ("reproduce", "Reproduce"),
    ("provenance", "Provenance"),
    ("derived", "Derived figures (per load point)"),
    ("fields", "Every field"),
)
# The shell's Markdown: the headings give the theme its table of contents; `on_page_content`
# swaps the whole body for `shell_content()`.
SHELL_MARKDOWN = (
    f"---\ntitle: {TITLE_MARK}\nsearch:\n  exclude: true\n---\n\n# Result {{#result}}\n\n"
    + "".join(f"## {name} {{#{anchor}}}\n\n" for anchor, name in SECTIONS)
)
_DERIVED_SUFFIXES = (
    *("usd_per_hour", "tokens", "per_gpu", "per_user", "per_joule", "per_dollar"),
    *("roofline_tokens_per_s", "roofline_pct", "roofline_basis"),
)


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """(path, leaf) pairs in document order; a list of scalars is one leaf."""
    pairs: list[tuple[str, Any]] = []
    _flatten_into(value, prefix, pairs)
    return pairs


def _flatten_into(value: Any, prefix: str, pairs: list[tuple[str, Any]]) -> None:
    # Into one list, not through nested generators: a result has ~170 leaves and a build
    # renders ten thousand results.
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten_into(item, f"{prefix}.{key}" if prefix else key, pairs)
    elif isinstance(value, list) and value and isinstance(value[0], (dict, list)):
        for index, item in enumerate(value):
            _flatten_into(item, f"{prefix}[{index}]", pairs)
    else:
        pairs.append((prefix, value))


# A backticked span of a source's conditions that runs something: a program or script name, then
# arguments (an option alone, such as `--tp 8`, is not a command).
_QUOTED = re.compile(r"`([^`]+)`")
_COMMAND = re.compile(r"^(?!-)(?:[\w.-]+/)*[\w.-]*[A-Za-z][\w.-]*\s+\S")


def source_commands(result: Result) -> list[str]:
    """The commands the source itself states for this result: a measured run's exact command
    lines; a reported result's commands quoted in its source's conditions. Never one made up."""
    source = result.source
    if source.kind == "measured":
        return [c for c in (source.server_command, source.command) if c]
    stated = getattr(source, "command", None)
    if isinstance(stated, str) and stated:
        return [stated]
    quoted = (span.strip() for span in _QUOTED.findall(source.conditions))
    return list(dict.fromkeys(span for span in quoted if _COMMAND.match(span)))


def _reproduce_html(result: Result) -> str:
    commands = source_commands(result)
    if not commands:
        return (
            "<p>The source states no command for this run; its conditions (under Provenance) "
            "say how it was measured.</p>\n"
        )
    note = (
        ""
        if result.source.kind == "measured"
        else "<p>As the source quotes them (its placeholders kept):</p>\n"
    )
    return note + f"<pre><code>{esc(chr(10).join(commands))}</code></pre>\n"


def _heading(level: int, anchor: str, text: str) -> str:
    # What the toc extension writes (permalink: true), so the shell's contents links land.
    return (
        f'<h{level} id="{anchor}">{esc(text)}<a class="headerlink" href="#{anchor}" '
        f'title="Permanent link">&para;</a></h{level}>\n'
    )


def _text(value: Any) -> str:
    """A leaf as the page shows it: a string escaped, anything else as its JSON."""
    if isinstance(value, str):
        return esc(value)
    if value is None or isinstance(value, bool):
        return "null" if value is None else ("true" if value else "false")
    if type(value) in (int, float) and math.isfinite(value):
        return repr(value)  # what json.dumps writes for a finite number; nothing to escape
    return esc(json.dumps(value))


def _grouped(value: int | float, text: str) -> str:
    """A number's JSON text with thousands separators (`12345.5` → `12,345.5`); an exponent
    form (`1e-07`) stays as it is."""
    if type(value) is int:
        return f"{value:,}"
    if "e" in text or "n" in text:  # 1e+22, nan, inf
        return text
    sign, digits = ("-", text[1:]) if text.startswith("-") else ("", text)
    whole, dot, fraction = digits.partition(".")
    return f"{sign}{int(whole):,}{dot}{fraction}"


def _leaf(value: Any, path: str) -> str:
    """A field's cell in a reader's units: a byte count in GiB, a number with thousands
    separators; the exact value (`_text`, the file's JSON) beside a byte count and in the
    title of every number whose text differs from it."""
    text = _text(value)
    if type(value) not in (int, float) or not math.isfinite(value):
        return text
    grouped = _grouped(value, text)
    if type(value) is int and (path.endswith("_bytes") or "_bytes_" in path):
        return (
            f'<span title="{text}">{value / 2**30:,.2f} GiB</span> '
            f'<small class="im-unit">({grouped} bytes)</small>'
        )
    return text if grouped == text else f'<span title="{text}">{grouped}</span>'


# Words of the index's column names as a reader says them.
_LABEL_WORDS = {"usd": "$", "per_million": "per 1M", "pct": "%", "gpu": "GPU", "s": "s"}


@functools.lru_cache(maxsize=256)
def field_label(name: str) -> str:
    """An index column's name in a reader's words: `on_demand_usd_per_hour` → `On-demand $
    per hour`, `roofline_pct` → `Roofline %`."""
    text = name.replace("per_million", "per 1M").replace("on_demand", "on-demand")
    words = [_LABEL_WORDS.get(word, word) for word in text.split("_")]
    label = " ".join(words)
    return label[:1].upper() + label[1:]


def _figure(value: Any) -> str:
    """A derived figure: a number to at most 4 decimals with thousands separators."""
    if isinstance(value, float):
        return f"{value:,.4f}".rstrip("0").rstrip(".")
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return esc(value)


# The field paths repeat from result to result (`points[0].ttft_ms.p50`); escape each once.
_escaped_path = functools.lru_cache(maxsize=8192)(esc)


def shell_content() -> str:
    """The shell's article: its own <h1> (else the theme adds one) and the body's marker."""
    return _heading(1, "result", HEADING_MARK) + BODY_MARK


def heading(
    result: Result,
    gpu_names: Mapping[str, str] | None = None,
    model_names: Mapping[str, str] | None = None,
) -> str:
    """`Llama 3.1 8B Instruct on 2 × NVIDIA H100 SXM5 80GB`: the catalog's names (catalog id →
    name), else the result's ids (plain text)."""
    identity = result.identity
    model = (model_names or {}).get(identity.model.id, identity.model.id)
    return f"{model} on {identity.gpu.count} × {gpu_name(identity.gpu.id, gpu_names)}"


def title(
    result: Result,
    gpu_names: Mapping[str, str] | None = None,
    model_names: Mapping[str, str] | None = None,
) -> str:
    """The page's title: its heading and the result's id."""
    return f"{heading(result, gpu_names, model_names)} ({result.id})"


def _load(row: IndexRow) -> str:
    return row.load_label


def _tokens_per_s(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f} tok/s"


def _spread(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "output tokens/s not stated"
    return f"{low:,.0f}–{high:,.0f} tok/s"


MAX_REPLICATE_LINKS = 10
"""Sibling links per load point on a result page; the rest are counted. A setup measured by
hundreds of submitters would otherwise list every sibling on every sibling's page (quadratic in
the group's size); the compare page's row links them all once."""


def replicates_html(rows: list[IndexRow], replicates: Mapping[str, list[IndexRow]]) -> str:
    """Links to the other results with the same setup and load (replicates), per load point:
    the first MAX_REPLICATE_LINKS of them, and how many more there are."""
    items = []
    for row in rows:
        siblings = [
            other
            for other in replicates.get(row.replicate_key, [])
            if other.result_id != row.result_id
        ]
        if not siblings:
            continue
        links = ", ".join(
            f'<a href="../{esc(other.result_id)}/">{esc(other.result_id)}</a> '
            f"({_tokens_per_s(other.output_tokens_per_s)})"
            for other in siblings[:MAX_REPLICATE_LINKS]
        )
        more = len(siblings) - MAX_REPLICATE_LINKS
        if more > 0:
            links += f" and {more:,} more (the compare page links every one)"
        items.append(
            f"<li>Load point {row.point_index} ({esc(_load(row))}): n={row.replicates}, "
            f"{_spread(row.output_tokens_per_s_min, row.output_tokens_per_s_max)}; this result "
            f"{_tokens_per_s(row.output_tokens_per_s)}, replicates {links}</li>"
        )
    if not items:
        return ""
    return (
        '<div class="im-replicates"><p>Replicates: the same setup and load measured in other '
        f"results.</p><ul>{''.join(items)}</ul></div>\n"
    )


def citation_html(result: Result) -> str:
    """For a reported result: who published its numbers, where (linked), when."""
    source = result.source
    if source.kind != "reported":
        return ""
    published = f", published {esc(source.published)}" if source.published else ""
    return (
        f'<p class="im-citation">Reported by {esc(source.publisher)}: '
        f'<a href="{esc(source.url)}" rel="noopener">{esc(source.title)}</a>{published}; '
        f"read {esc(source.retrieved)}.</p>\n"
    )


def correction_html(rows: list[IndexRow]) -> str:
    """The notice of a corrected or withdrawn result (registry/corrections.yaml), or nothing."""
    row = rows[0] if rows else None
    if row is None or row.correction is None:
        return ""
    reason = esc(row.correction_reason or "")
    when = esc(row.correction_date or "")
    if row.correction == "withdrawal":
        what = f"<strong>Withdrawn</strong> on {when}: {reason}"
    else:
        replaced = esc(row.replaced_by or "")
        what = (
            f"<strong>Corrected</strong> on {when}: {reason} The corrected result is "
            f'<a href="../{replaced}/"><code>{replaced}</code></a>.'
        )
    return (
        f'<p class="im-correction" data-correction="{esc(row.correction)}">{what} '
        "It is left out of the comparisons and rankings.</p>\n"
    )


def _points(rows: list[IndexRow]) -> str:
    """The table of the load points (`infermeter bench report` shows it too) in its scroll box,
    its columns past the first ten behind "more columns" (its first is the load)."""
    return more_columns(scrolled(points_table_html(rows)), 1 + len(stated_columns(rows)))


def _rows_table(rows: str) -> str:
    """Label-and-value rows (HTML) as a table in the site's scroll box."""
    return scrolled(f'<table class="im-table"><tbody>{rows}</tbody></table>') + "\n"


def _figures_counted(data: dict[str, Any]) -> dict[str, Any]:
    """A measured point's per-request figures as a count (the file has every value)."""
    for point in data.get("points", []):
        figures = point.get("request_figures")
        if figures is not None:
            point["request_figures"] = (
                f"{len(figures['output_tokens']):,} requests' output tokens, TTFT, TPOT and E2E "
                "(in the result file): answers count those that meet a reader's SLO"
            )
    return data


def result_body(
    result: Result,
    rows: list[IndexRow],
    replicates: Mapping[str, list[IndexRow]] | None = None,
) -> str:
    """The HTML of a result page's article below its <h1>: every field, provenance, the
    reproduce command, links to its replicates (`replicates`: replicate key → index rows)."""
    data = _figures_counted(result.model_dump(mode="json", exclude_none=True))
    source = data.get("source", {})
    fields = "".join(
        f"<tr><th>{_escaped_path(path)}</th><td>{_leaf(value, path)}</td></tr>"
        for path, value in _flatten({k: v for k, v in data.items() if k != "source"})
    )
    provenance = "".join(
        f"<tr><th>{_escaped_path(path)}</th><td>{_text(value)}</td></tr>"
        for path, value in _flatten(source)
    )
    derived = "".join(
        f'<tr><th title="{esc(name)}: {esc(COLUMN_DESCRIPTIONS[name])}">{esc(field_label(name))}'
        "</th>" + "".join(f"<td>{_figure(row.column(name))}</td>" for row in rows) + "</tr>"
        for name in COLUMN_DESCRIPTIONS
        if name.endswith(_DERIVED_SUFFIXES)
    )
    identity = result.identity
    kind = esc(result.source.kind)
    tables = {
        # The table `infermeter bench report` shows for a result: one builder for both.
        "points": _points(rows) + "\n",
        "reproduce": _reproduce_html(result),
        "provenance": _rows_table(provenance),
        "derived": _rows_table(derived),
        "fields": _rows_table(fields),
    }
    return (
        f'<p><span class="im-kind im-kind-{kind}">{kind}</span> Result '
        f"<code>{esc(result.id)}</code> · "
        f'<a href="../{esc(result.id)}.json">the file</a> · '
        f'<a href="../../gpus/{esc(identity.gpu.id)}/">GPU</a> · '
        f'<a href="../../models/{esc(identity.model.id)}/">model</a></p>\n'
        + correction_html(rows)
        + citation_html(result)
        + replicates_html(rows, replicates or {})
        + "".join(_heading(2, anchor, name) + tables[anchor] for anchor, name in SECTIONS)
    )


def fill(
    shell: str,
    result: Result,
    rows: list[IndexRow],
    replicates: Mapping[str, list[IndexRow]] | None = None,
    gpu_names: Mapping[str, str] | None = None,
    model_names: Mapping[str, str] | None = None,
) -> str:
    """The shell's HTML with this result's title, address and body (its model and GPUs by the
    names in `model_names` and `gpu_names`: catalog id → name)."""
    if shell.count(BODY_MARK) != 1 or TITLE_MARK not in shell or HEADING_MARK not in shell:
        raise ValueError(f"{SHELL_URI}: the rendered shell lost its markers")
    page = shell.replace(TITLE_MARK, esc(title(result, gpu_names, model_names))).replace(
        HEADING_MARK, esc(heading(result, gpu_names, model_names))
    )
    page = page.replace(f"{SHELL_DIR}/", f"results/{result.id}/")  # the canonical address
    return page.replace(BODY_MARK, result_body(result, rows, replicates))


def write_pages(
    site_dir: Path,
    shell: str,
    results: Mapping[str, Result],
    rows: Mapping[str, list[IndexRow]],
    replicates: Mapping[str, list[IndexRow]] | None = None,
    gpu_names: Mapping[str, str] | None = None,
    model_names: Mapping[str, str] | None = None,
) -> None:
    """Write `results/<id>/index.html` for every result, drop the shell, list them in the
    sitemap (Material's instant navigation follows only the links the sitemap lists).
    `rows`: result id → its index rows; `replicates`: replicate key → index rows; the names:
    catalog id → the name a page's title and heading show."""
    for result_id, result in results.items():
        folder = site_dir / "results" / result_id
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "index.html").write_text(
            fill(shell, result, rows.get(result_id, []), replicates, gpu_names, model_names),
            encoding="utf-8",
        )
    shell_page = site_dir / SHELL_DIR / "index.html"
    shell_page.unlink(missing_ok=True)
    if (site_dir / SHELL_DIR).is_dir():
        (site_dir / SHELL_DIR).rmdir()
    _update_sitemap(site_dir, sorted(results))


_SHELL_ENTRY = re.compile(
    r"\s*<url>\s*<loc>[^<]*/" + re.escape(SHELL_DIR) + r"/</loc>.*?</url>", re.S
)


def _update_sitemap(site_dir: Path, result_ids: list[str]) -> None:
    sitemap = site_dir / "sitemap.xml"
    if not sitemap.is_file():
        return
    text = sitemap.read_text(encoding="utf-8")
    found = _SHELL_ENTRY.search(text)
    if found is None:
        return
    entries = "".join(
        found.group(0).replace(f"{SHELL_DIR}/", f"results/{xml_escape(result_id)}/")
        for result_id in result_ids
    )
    text = text[: found.start()] + entries + text[found.end() :]
    sitemap.write_text(text, encoding="utf-8")
    # mkdocs writes a gzipped copy beside it; keep the two the same.
    (site_dir / "sitemap.xml.gz").write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
