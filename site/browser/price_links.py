"""Where the site shows a price: its row on its GPU's page, `gpus/<gpu>/#price-<id>`, which says
its provider, tier, date, confidence and source. Every link to a price is made here, by the
build's pages and the answer page's browser runtime alike (the stdlib only)."""


def price_anchor(price_id: str) -> str:
    """The id of a price's row on its GPU's page."""
    return f"price-{price_id}"


def price_href(gpu: str, price_id: str, href_to_gpus: str) -> str:
    """The address of a price's row, not yet escaped; `href_to_gpus` is the relative URL of the
    `gpus/` folder from the page that links (`../../gpus/`, or the answer page's base + `gpus/`)."""
    return f"{href_to_gpus}{gpu}/#{price_anchor(price_id)}"
