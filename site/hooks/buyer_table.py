"""The buyer's minimal table of a compare page's workload × scenario, laid out as the buyer's
guide lays it out: one column per candidate GPU × count (its best load point by $ per 1M
accepted, else output, tokens), side by side, and one row per figure a purchase turns on.

The effective hourly cost is `calculators.cost.effective_cost` at full use with the point's
failed requests retried: idle hours raise it further (divide by your utilization), which only
the reader knows. Prices are the usable ones (`registry.prices`): a price the catalog flags is
never used, and the notes say when a GPU has one. Strings from result files are HTML-escaped."""

from collections.abc import Callable, Collection, Iterable, Mapping

from catalog_pages import esc
from gpu_labels import gpus_link
from price_notes import linked_price_cell, row_price_phrase
from wide_tables import is_empty, more_columns

from infermeter.calculators.errors import CalculatorError
from infermeter.calculators.hourly_cost import effective_cost
from infermeter.registry.charts import lowest_usd_per_million
from infermeter.registry.index_row import IndexRow
from infermeter.registry.tables import number_text, usd_text

# What every buyer's table holds, said once on a compare page (above its tables).
BUYER_INTRO = (
    "Each table opens with the buyer's table: each candidate GPU × count at its cheapest load "
    "point, side by side, cheapest first. The effective hourly cost assumes full use: divide it "
    "by your utilization for the idle hours you pay too."
)


def _num(value: float | None) -> str:
    return number_text(value, 0)


def candidates(rows: Iterable[IndexRow]) -> list[IndexRow]:
    """Per GPU × count × weight format the row with the lowest $ per 1M accepted (else output)
    tokens, cheapest first; GPUs without a usable price last. FP8 weights on a GPU are another
    candidate than BF16 on it, never its cheaper point."""
    best: dict[tuple[str, int, str | None], IndexRow] = {}
    for row in rows:
        key = (row.gpu, row.gpu_count, row.quantization)
        current = best.get(key)
        usd = lowest_usd_per_million(row)
        if current is None:
            best[key] = row
            continue
        current_usd = lowest_usd_per_million(current)
        if usd is not None and (current_usd is None or usd < current_usd):
            best[key] = row
    return sorted(
        best.values(),
        key=lambda r: (lowest_usd_per_million(r) is None, lowest_usd_per_million(r) or 0, r.gpu),
    )


def effective_usd_per_hour(row: IndexRow) -> float | None:
    """The on-demand hourly price at full use with the point's failed requests retried."""
    if row.on_demand.usd_per_hour is None:
        return None
    try:
        return effective_cost(
            row.on_demand.usd_per_hour, retry_rate=min(row.failure_rate or 0.0, 0.99)
        ).effective_usd_per_hour
    except CalculatorError:
        return None


def _hourly(row: IndexRow) -> str:
    if row.on_demand.usd_per_hour is None:
        return "no usable price"
    # linked to the price's row on the GPU page, with its provider, tier, date and confidence
    phrase = row_price_phrase(row, "on_demand")
    return linked_price_cell(row, usd_text(row.on_demand.usd_per_hour, 2), phrase)


def _e2e(row: IndexRow) -> str:
    return f"{_num(row.e2e_ms_p95)} / {_num(row.e2e_ms_p99)}"


def _failure(row: IndexRow) -> str:
    return "–" if row.failure_rate is None else f"{row.failure_rate * 100:,.1f} %"


def _utilization(row: IndexRow) -> str:
    return "–" if row.gpu_utilization_pct is None else f"{row.gpu_utilization_pct:,.0f} %"


FIGURES: list[tuple[str, Callable[[IndexRow], str]]] = [
    ("Hourly price (on-demand)", _hourly),
    (
        "Effective hourly cost (full use, failures retried)",
        lambda r: usd_text(effective_usd_per_hour(r), 2),
    ),
    ("Accepted output tokens/hour", lambda r: _num(r.accepted_output_tokens_per_hour)),
    (
        "$/1M accepted output tokens",
        lambda r: usd_text(r.on_demand.usd_per_million_accepted_tokens),
    ),
    (
        "$/1M output tokens (all, SLO or not)",
        lambda r: usd_text(r.on_demand.usd_per_million_output_tokens),
    ),
    ("TTFT p95 ms", lambda r: _num(r.ttft_ms_p95)),
    ("E2E p95 / p99 ms", _e2e),
    ("Failure (retry) rate", _failure),
    ("GPU utilization (mean)", _utilization),
]


def _notes(row: IndexRow, flagged_gpus: Collection[str]) -> str:
    notes = [f"{esc(row.source_kind)}, {esc(row.load_label)}"]
    if row.gpu in flagged_gpus:
        notes.append("a catalog price of this GPU is flagged and not used")
    notes.append(f'<a href="../../results/{esc(row.result_id)}/">result</a>')
    return "; ".join(notes)


def weights(row: IndexRow, mixed: bool = False) -> str:
    """A column's weight format under its GPU; unquantized weights named (16-bit) only where
    another column is quantized (`mixed`), so one GPU's two columns never read as one."""
    if row.quantization:
        return f"<br>{esc(row.quantization)} weights"
    return "<br>16-bit weights" if mixed else ""


def buyer_table(
    rows: Iterable[IndexRow],
    flagged_gpus: Collection[str] = (),
    gpu_names: Mapping[str, str] | None = None,
) -> str:
    """The table (see the module docstring); empty without rows. `flagged_gpus`: GPUs with a
    price the catalog flags, named in the notes; `gpu_names` (catalog id → name) heads each
    column with its GPU's name (`gpu_labels`)."""
    chosen = candidates(rows)
    if not chosen:
        return ""
    mixed = len({r.quantization for r in chosen}) > 1
    head = "".join(
        f'<th scope="col">{gpus_link(r.gpu_count, r.gpu, gpu_names, "../../")}'
        f"{weights(r, mixed)}</th>"
        for r in chosen
    )
    figures = [(name, [f"<td>{cell(r)}</td>" for r in chosen]) for name, cell in FIGURES]
    # A figure no candidate states is left out (this table's columns are its candidates).
    body = "".join(
        f'<tr><th scope="row">{esc(name)}</th>{"".join(cells)}</tr>'
        for name, cells in figures
        if not all(map(is_empty, cells))
    )
    notes = "".join(f"<td>{_notes(r, flagged_gpus)}</td>" for r in chosen)
    table = (
        '<div class="im-scroll"><table class="im-table im-buyer"><thead><tr>'
        f'<th scope="col">Figure</th>{head}</tr></thead><tbody>{body}'
        f'<tr><th scope="row">Notes</th>{notes}</tr></tbody></table></div>'
    )
    return (
        # the candidates after the cheapest wait behind "more" (the cut counts the Figure column)
        "<p><strong>The buyer's table</strong>, cheapest first:</p>"
        + more_columns(table, 1 + len(chosen), noun="candidates")
    )
