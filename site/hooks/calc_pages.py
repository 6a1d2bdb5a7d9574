"""The calculator pages: a form whose fields are the CLI's options, and the default result
rendered at build time by `calc_api` (the same code the browser runs later)."""

import html
import json
from collections.abc import Mapping
from typing import Any

import calc_api

import infermeter.calculators.fields
from infermeter.calculators import inputs
from infermeter.calculators.fields import LEFT_OUT, LINK_CHARS

PAGES = {
    "vram": (
        "VRAM plan",
        "The memory plan vLLM makes when it starts a model on a GPU: weights, activation peak, "
        "KV cache, and how many requests of `max_model_len` tokens fit at once. "
        "Same numbers as `infermeter calc vram --json`.",
    ),
    "cost": (
        "Cost per token",
        "Dollars per million tokens from an hourly price and a throughput, the effective cost "
        "with idle time, retries and overheads, price tiers, and the break-even against an API. "
        "Same numbers as `infermeter calc cost --json`.",
    ),
    "fit": (
        "GPU fit",
        "Which catalog GPUs serve a model at a context length and concurrency, with the fewest "
        "GPUs (1, 2, 4 or 8 under tensor parallelism), cheapest first. "
        "Same numbers as `infermeter calc fit --json`.",
    ),
    "perf": (
        "Predicted performance",
        "Output tokens/s, TTFT and TPOT (p50, p99), the highest rate meeting an SLO and $ per 1M "
        "output tokens of a deployment at one load, predicted where no result measures it, with "
        "the prediction's measured error ([Prediction error](../prediction-error.md)). Where "
        "that error misses its target, the figure to rely on is the roofline bound, and the page "
        "says so. Same numbers as `infermeter calc perf --json`.",
    ),
}


def _input(field: infermeter.calculators.fields.Field) -> str:
    name = html.escape(field.name)
    ident = f"im-{name}"
    default = html.escape(field.prefill)
    group = f' data-group="{html.escape(field.group)}"' if field.group else ""
    common = f'id="{ident}" name="{name}" data-default="{default}"{group}'
    if field.kind == "bool":
        checked = " checked" if field.prefill else ""
        control = f'<input type="checkbox" {common} value="1"{checked}>'
    elif field.kind == "choice":
        options = "".join(
            f'<option value="{html.escape(choice)}"'
            f"{' selected' if choice == field.prefill else ''}>"
            f"{html.escape(choice or field.blank)}</option>"
            for choice in field.choices
        )
        control = f"<select {common}>{options}</select>"
    elif field.kind == "json":
        control = (
            f'<textarea {common} rows="3" spellcheck="false" '
            f'placeholder="{{&quot;model_type&quot;: &quot;llama&quot;, …}}"></textarea>'
        )
    else:
        numeric = field.kind not in ("text", "id")
        mode = ' inputmode="decimal"' if numeric else ""
        listed = f' list="im-{field.catalog}"' if field.catalog else ""
        control = f'<input type="text" {common} value="{default}"{mode}{listed}>'
    required = ' <abbr title="required">*</abbr>' if field.page_required else ""
    hint = f"<small>{html.escape(field.help)}</small>" if field.help else ""
    return (
        f'<div class="im-field im-field-{html.escape(field.kind)}">'
        f'<label for="{ident}">{html.escape(field.label)}{required}</label>{control}{hint}'
        f'<span class="im-error" data-error-for="{name}" role="alert"></span></div>'
    )


def _datalists(catalog: Mapping[str, Any]) -> str:
    lists = []
    for kind in ("models", "gpus"):
        options = "".join(
            f'<option value="{html.escape(entry_id)}">{html.escape(entry["name"])}</option>'
            for entry_id, entry in sorted(catalog[kind].items())
        )
        lists.append(f'<datalist id="im-{kind}">{options}</datalist>')
    return "".join(lists)


def calculator_page(kind: str, catalog: Mapping[str, Any]) -> str:
    """Markdown (with one raw HTML block) of a calculator page."""
    title, intro = PAGES[kind]
    fields = inputs.FIELDS[kind]
    defaults = {field.name: field.prefill for field in fields}
    result = calc_api.render(kind, defaults, catalog)
    if "errors" in result:  # the defaults are ours: a failure here is a bug in the build
        raise ValueError(f"calculator {kind}: default inputs fail: {result['errors']}")
    form = "".join(_input(field) for field in fields)
    # The cost page shows each GPU's catalog prices as the price fields' placeholders.
    prices = (
        {gpu_id: gpu["prices"] for gpu_id, gpu in sorted(catalog["gpus"].items())}
        if kind == "cost"
        else None
    )
    prices_attr = (
        ""
        if prices is None
        else f' data-gpu-prices="{html.escape(json.dumps(prices, separators=(",", ":")))}"'
    )
    block = (
        f'<div class="im-calc" data-calc="{kind}" data-base="../../" data-state="static"'
        f' data-link-chars="{LINK_CHARS}" data-left-out="{LEFT_OUT}"{prices_attr}>'
        f'<form class="im-form" autocomplete="off" onsubmit="return false">{form}</form>'
        '<p class="im-link-note" data-link-note aria-live="polite"></p>'
        '<p class="im-status" data-status aria-live="polite">Pre-rendered default, computed when '
        "the site was built; the live calculator recomputes it in your browser (it needs "
        "JavaScript).</p>"
        '<p class="im-error" data-error-for="" role="alert"></p>'
        f'<div class="im-output" data-outputs data-search-exclude>{result["html"]}</div>'
        f"{_datalists(catalog)}</div>"
    )
    return (
        f"---\ntitle: {title}\n---\n\n# {title}\n\n{intro}\n\n"
        "Every input is in the address bar (the CLI's option names, `_` for `-`), so a result can "
        "be shared as a link. The calculation runs in your browser: the same Python as the "
        "command line, on Pyodide served by this site.\n\n"
        f"{block}\n"
    )
