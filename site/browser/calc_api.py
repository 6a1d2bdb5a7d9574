"""The calculator pages' Python: form fields, input checks, one compute call, output HTML.

The same module runs twice: at build time (the mkdocs hook renders each page's default result)
and in the browser (the Pyodide worker imports it from the calculators archive). It imports only
the stdlib, `calculators` and its calc_* parts, and takes the catalogs as plain data
(`catalog.json`), so Pyodide needs no other package.

Each calculator reproduces the payload of `infermeter calc <kind> --json` for the same options;
an output element carries `data-output="<dotted path into that payload>"` (list items by index,
e.g. `options.0.usd_per_hour`) and its raw value as JSON text in `data-value`.

The pieces, one concept each: `calculators.inputs` (the inputs, declared once for the CLI and
the pages) and `calculators.fields` (how a field's text is read), `calc_compute` (field values
to the CLI's payload), `calc_html` (the payload as output HTML). This module joins them; the
calculators archive holds them all (`registry_pages.calculators_archive` follows their imports).
"""

import json
from collections.abc import Mapping
from typing import Any

from calc_compute import Catalog, compute
from calc_html import RENDER

__all__ = ["render", "render_json"]


def render(
    kind: str, query: Mapping[str, str], catalog: Catalog, base: str = "../../"
) -> dict[str, Any]:
    """What the page shows: {"errors": {...}} or {"html": outputs, "payload": the CLI's JSON}.

    `base` is the relative URL of the site root from the calculator page (for GPU links).
    """
    result = compute(kind, query, catalog)
    if "errors" in result:
        return result
    return {"html": RENDER[kind](result["payload"], base), "payload": result["payload"]}


def render_json(kind: str, query_json: str, catalog: Catalog, base: str = "../../") -> str:
    """`render` with JSON in and out: the worker's entry point."""
    return json.dumps(render(kind, json.loads(query_json), catalog, base))
