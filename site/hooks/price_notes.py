"""The price behind every $ figure, in a reader's words: provider, tier, date and confidence
(`price_phrase`), and the list of prices a table's figures rest on (`prices_used`), each linked
to its row on the GPU page (its source and notes are there)."""

from collections.abc import Iterable, Mapping

from catalog_pages import esc
from price_links import price_href

from infermeter.calculators.price_tiers import PRICE_TIERS
from infermeter.registry.index_row import IndexRow


def price_phrase(
    provider: str, tier: str, as_of: str | None, confidence: str | None, usd_per_gpu_hour: float
) -> str:
    """`oci on-demand $10.00/GPU-h, 2026-09-18, medium confidence` (`undated` for a price whose
    source states no date)."""
    return (
        f"{provider} {tier.replace('_', '-')} ${usd_per_gpu_hour:,.2f}/GPU-h, "
        f"{as_of or 'undated'}, {confidence or 'no'} confidence"
    )


def row_price_phrase(row: IndexRow, tier: str) -> str | None:
    """The phrase of the price a row's `tier` figures use; None when the row has none."""
    price = row.tier(tier)
    if price.price_id is None or price.price_provider is None or price.usd_per_hour is None:
        return None
    return price_phrase(
        price.price_provider,
        tier,
        price.price_as_of,
        price.price_confidence,
        price.usd_per_hour / row.gpu_count,
    )


def linked_price_cell(row: IndexRow, text: str, line: str | None) -> str:
    """A table cell of a row's on-demand price: `text` (HTML) linked to the price's row on its
    GPU page, and `line` (plain text; None: –) under it; `text` alone when the row names no
    price."""
    if row.on_demand.price_id is None:
        return text
    href = price_href(row.gpu, row.on_demand.price_id, "../../gpus/")
    return f'<a href="{esc(href)}">{text}</a><br><small class="im-price">{esc(line)}</small>'


def prices_used(rows: Iterable[IndexRow], gpu_names: Mapping[str, str] | None = None) -> str:
    """A paragraph naming, per GPU, the price of each tier the rows' $ figures rest on."""
    seen: dict[str, dict[str, tuple[str, str]]] = {}
    for row in rows:
        tiers = seen.setdefault(row.gpu, {})
        for tier in PRICE_TIERS:
            price_id, phrase = row.tier(tier).price_id, row_price_phrase(row, tier)
            if price_id is not None and phrase is not None and tier not in tiers:
                tiers[tier] = (price_id, phrase)
    if not seen:
        return ""
    names = gpu_names or {}
    items = []
    for gpu in sorted(seen):
        links = [
            f'<a href="{esc(price_href(gpu, price_id, "../../gpus/"))}">{esc(phrase)}</a>'
            for price_id, phrase in seen[gpu].values()
        ]
        text = "; ".join(links) if links else "no sourced price exists, so no $ figure"
        items.append(f"<li><strong>{esc(names.get(gpu, gpu))}</strong>: {text}</li>")
    return (
        '<details class="im-prices"><summary>Prices behind the $ figures (provider, tier, date, '
        "confidence)</summary><ul>" + "".join(items) + "</ul></details>"
    )
