"""The terms the registry's data is published under: infermeter's own data, and each imported
source's terms as that source states them (each harvest source's in its declaration,
`registry/harvest/sources.py`). Gathered here; the Downloads page and
`data/licences.json` render it, and `registry/results/README.md` points to it.
"""

import html
from dataclasses import asdict, dataclass
from typing import Any

from infermeter.registry.harvest.sources import SOURCES


@dataclass(frozen=True)
class Licence:
    """The terms of one part of the data."""

    data: str
    """Which data: a source, a lane or a catalog, in a reader's words."""
    terms: str
    """The terms, as the source states them."""
    where: str
    """The public address where the source states them."""


DATA_LICENCE = (
    "infermeter's own data: Apache-2.0. Imported results and prices keep the terms their sources "
    "state (MLCommons, NVIDIA, AMD, InferenceX, SkyPilot's catalog, …): see licences.json beside "
    "this file on the site, or registry/licences.py."
)
"""The one line the data files carry (the index's `licence` key)."""

LICENCES: tuple[Licence, ...] = (
    Licence(
        "infermeter's own data: results measured with infermeter, the GPU, model and price "
        "catalogs as compiled here, the index and every derived figure",
        "Apache License 2.0, the project's licence (pyproject.toml `license`). Cite infermeter "
        "and the result file or catalog entry.",
        "https://www.apache.org/licenses/LICENSE-2.0",
    ),
    *(Licence(source.data, source.terms, source.terms_url) for source in SOURCES),
    Licence(
        "Other cloud prices (provider pages, price trackers, articles)",
        "Facts quoted with the address and date of the page they were read on; the pages' own "
        "terms apply to the pages, and no page's text is copied.",
        "each price's source.url (data/prices.json)",
    ),
)


def licences_data() -> list[dict[str, Any]]:
    """The licences as plain data (for `data/licences.json`)."""
    return [asdict(licence) for licence in LICENCES]


def _text(text: str) -> str:
    return html.escape(text, quote=False)  # `inference_results_v<round>` is text, not a tag


def _where(text: str) -> str:
    return f"<{text}>" if text.startswith("https://") else text


def licences_markdown() -> str:
    """The licences as a Markdown table (for the Downloads page)."""
    rows = "\n".join(
        f"| {_text(licence.data)} | {_text(licence.terms)} | {_where(licence.where)} |"
        for licence in LICENCES
    )
    return "| Data | Terms | Where stated |\n|---|---|---|\n" + rows + "\n"
