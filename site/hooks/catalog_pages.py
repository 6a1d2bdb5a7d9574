"""Pages from the catalogs: one per GPU (specs with sources, prices with dates and sources), one
per model (architecture, parameter counts, memory needs computed by `calculators`), and the two
list pages. Every string from a catalog is HTML-escaped."""

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from price_links import price_anchor, price_href
from wide_tables import filled_columns, more_columns

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.kv_cache import KVCacheShape, kv_cache_shape
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.param_count import param_counts
from infermeter.calculators.price_tiers import PRICE_TIERS
from infermeter.calculators.quantization import model_dtype_bytes, weight_bytes, weight_format
from infermeter.registry.models import GpuEntry, ModelEntry, PriceEntry
from infermeter.registry.plain_text import html_text, plain_text
from infermeter.registry.prices import above_market, confidence, dated, tier_prices

GIB = 1024**3
MEMORY_CONTEXTS = (4096, 32768, 131072)


def esc(value: Any) -> str:
    """`value` as HTML text: escaped, and with no control character (NUL, ESC…), bidirectional
    control or lone surrogate left (validation refuses them; a page never shows one)."""
    return html_text("–" if value is None else str(value))


# What Python-Markdown reads as syntax within a line (its escapable characters, which a
# backslash makes literal, but `>`, which `esc` writes as `&gt;`; `|` with the tables
# extension): a value written into a page's Markdown has each escaped.
_MARKDOWN_SYNTAX = re.compile(r"([\\`*_{}\[\]()#+\-.!|])")


def md_text(value: Any) -> str:
    """`value` as text of one line of a page's Markdown (a heading, a list item, a table
    cell): `esc`, with Markdown's syntax escaped first and a line break made a space, so a
    name `[x](javascript:…)` or `![i](https://…)` stays text, not a link the reader may click
    or an image the page fetches, and a `|` or a line break ends no cell or line."""
    text = " ".join(("–" if value is None else str(value)).splitlines())
    return esc(_MARKDOWN_SYNTAX.sub(r"\\\1", text))


def front_matter_string(text: str) -> str:
    """`text` as a YAML scalar of a page's front matter (a JSON string is one), with no angle
    brackets: the theme writes a title raw into the navigation (so it would be markup) and
    through `striptags`, which unescapes entities, into <title> (so escaping would not help)."""
    return json.dumps(plain_text(text).replace("<", "\u2039").replace(">", "\u203a"))


def scrolled(table: str) -> str:
    """`table` (HTML) in the box every table of the site scrolls in: a phone scrolls the
    table, not the page."""
    return f'<div class="im-scroll">{table}</div>'


def _table(head: Iterable[str], rows: Iterable[Iterable[str]], exclude: bool = False) -> str:
    """An HTML table in the box every table of the site scrolls in (a phone scrolls the table,
    not the page), without its columns of dashes and with its columns past the first ten
    behind "more columns" (`wide_tables`); cells are already-escaped HTML. `exclude` keeps it
    out of search."""
    attr = " data-search-exclude" if exclude else ""
    heads, cells = list(head), [list(row) for row in rows]
    shown = filled_columns(cells, len(heads))  # a column of dashes only says no row states it
    header = "".join(f"<th>{heads[index]}</th>" for index in shown)
    body = "".join(
        "<tr>" + "".join(f"<td>{row[index]}</td>" for index in shown) + "</tr>" for row in cells
    )
    table = scrolled(
        f'<table class="im-table"{attr}><thead><tr>{header}</tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )
    return more_columns(table, len(shown))


def _link(url: str | None, text: str) -> str:
    if not url:
        return esc(text)
    return f'<a href="{esc(url)}" rel="noopener">{esc(text)}</a>'


def price_link(price: PriceEntry, href_to_gpus: str, text: str) -> str:
    """`text` (a price) linked to its row, with date and source, on the GPU's page;
    `href_to_gpus` is the relative URL of the `gpus/` folder."""
    return (
        f'<a href="{esc(price_href(price.gpu, price.id, href_to_gpus))}" '
        f'title="{esc(price.id)}, as of {esc(price.as_of)}">{esc(text)}</a>'
    )


_STORED_COPY = re.compile(r"^reference/[\w.-]+:\s*")


def _price_source(price: PriceEntry) -> str:
    if price.source.url:
        return _link(price.source.url, price.source.title)
    # The catalog names the project's stored copy of the page by its file; readers get the page.
    title = _STORED_COPY.sub("", price.source.title)
    return f"{esc(title[:1].upper() + title[1:])} (no public address)"


CAUTION_WORDS = {
    "anomaly": "not used: the source's own figures contradict each other",
    "doubtful": "not used: looks wrong against other sources",
}


def _tier_cell(price: PriceEntry) -> str:
    tier = esc(price.tier.replace("_", "-"))
    if price.derived is None:
        return tier
    return f"{tier} (derived: {esc(price.derived.rule)})"


def price_use(price: PriceEntry, chosen: Mapping[str, PriceEntry]) -> str:
    """Whether the site's figures use this price, in a reader's words."""
    if price.caution is not None:
        return CAUTION_WORDS[price.caution]
    tiers = [tier.replace("_", "-") for tier, used in chosen.items() if used.id == price.id]
    return f"yes ({', '.join(tiers)})" if tiers else "–"


def number(value: float | int | None, digits: int = 0) -> str:
    """A figure with thousands separators; whole numbers without a decimal tail."""
    if value is None:
        return "–"
    if digits == 0 or float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:,.{digits}f}"


# The search weight of a GPU's or a model's own page (Material's `search: boost:`). Material
# weighs a title match 1000 times a text match and ignores a title's length, so a compare page
# whose title names a GPU twice (h200-nvl, h200-sxm) outranked the GPU's page. Lunr's BM25 lets
# a repeated word weigh at most k1 + 1 = 2.2 times one occurrence: a boost above that puts the
# own page first among pages that match the same words, while a page whose title matches more
# of the query ("compare llama 8b") still comes before the other models' pages.
OWN_PAGE_SEARCH_BOOST = 3


def _front(title: str, description: str, search_boost: float | None = None) -> str:
    # The theme writes the description raw into an attribute (<meta name="description"
    # content="…">), where a name's quote would end it: escaped, quotes too.
    title, description = front_matter_string(title), front_matter_string(esc(description))
    search = "" if search_boost is None else f"search:\n  boost: {search_boost}\n"
    return f"---\ntitle: {title}\ndescription: {description}\n{search}---\n\n"


# --------------------------------------------------------------------------------- GPUs


def _source_marks(entry: GpuEntry) -> dict[str, str]:
    """Field name → footnote-style marks ([1], [2]) of the sources that state it."""
    marks: dict[str, list[str]] = {}
    for number, source in enumerate(entry.sources, start=1):
        for field in source.fields:
            marks.setdefault(field, []).append(f'<a href="#source-{number}">[{number}]</a>')
    return {field: " ".join(links) for field, links in marks.items()}


def market_note(gpu_id: str, prices: list[PriceEntry], chosen: Mapping[str, PriceEntry]) -> str:
    """A sentence for a GPU whose on-demand figures use a price more than 25 % above the market
    floor (`registry.prices.market_floor`): what several providers ask, dated or not."""
    used = chosen.get("on_demand")
    floor = None if used is None else above_market(used, prices)
    if floor is None or used is None:
        return ""
    price, names = floor
    return (
        f'\n\n!!! warning "The on-demand figures use a price above what the market asks"\n'
        f"    They use {md_text(used.provider)}'s ${used.usd_per_gpu_hour:,.2f}/GPU-hour "
        f"({md_text(dated(used) or 'undated')}), the price the rule gives: a dated official list "
        "first, so that GPUs are compared on one basis (see Methodology). "
        f"{len(names)} providers ({md_text(', '.join(names))}) ask from "
        f"${price.usd_per_gpu_hour:,.2f}/GPU-hour ({md_text(price.provider)}, "
        f"{md_text(dated(price) or 'undated')}): what renting it can cost below that price, and "
        "what the $ figures would be at that price, in proportion.\n"
    )


def _spec_rows(entry: GpuEntry) -> list[tuple[str, str, str]]:
    """The specification table's rows: label, value, the marks of the sources that state it."""
    marks = _source_marks(entry)
    tflops = entry.tflops_dense
    specs = [
        ("Vendor", "vendor", entry.vendor),
        ("Architecture", "architecture", entry.architecture),
        ("Form factor", "form_factor", entry.form_factor),
        ("Segment", "segment", entry.segment),
        ("Launch", "launch", entry.launch),
        ("Memory", "memory_gb", f"{number(entry.memory_gb, 1)} GB"),
        ("Memory type", "memory_type", entry.memory_type),
        (
            "Memory the driver reports",
            "memory_reported_mib",
            None
            if entry.memory_reported_mib is None
            else f"{entry.memory_reported_mib / 1024:,.2f} GiB",
        ),
        (
            "Memory bandwidth",
            "memory_bandwidth_gb_s",
            None
            if entry.memory_bandwidth_gb_s is None
            else f"{number(entry.memory_bandwidth_gb_s, 1)} GB/s",
        ),
        *(
            (
                f"Dense {name.upper()}",
                "tflops_dense",
                None
                if getattr(tflops, name) is None
                else f"{number(getattr(tflops, name), 1)} {'TOPS' if name == 'int8' else 'TFLOPS'}",
            )
            for name in ("fp32", "bf16", "fp16", "fp8", "int8", "fp4")
        ),
        ("Board power", "tdp_w", None if entry.tdp_w is None else f"{number(entry.tdp_w)} W"),
        ("Interconnect", "interconnect", entry.interconnect),
    ]
    # A value no source states says so, or says it is the catalog's own classification,
    # rather than pass for a cited one.
    return [
        (esc(label), esc(value), marks.get(field) or _uncited(field, value))
        for label, field, value in specs
    ]


def _uncited(field: str, value: str | None) -> str:
    """What the sources cell of a field no source states says: nothing for no value, the
    catalog's classification where the field is one (its `classification` in the model), else
    "not cited"."""
    if value is None:
        return ""
    extra = GpuEntry.model_fields[field].json_schema_extra
    classification = extra.get("classification") if isinstance(extra, dict) else None
    return esc(classification) if isinstance(classification, str) else "not cited"


PRICE_COLUMNS = (
    "Provider",
    "Tier",
    "$/GPU-hour",
    "Date",
    "Confidence",
    "Used in figures",
    "Source",
    "Offering",
    "Instance",
    "GPUs",
    "Instance $/hour",
    "Region",
)
"""The reader's order: a table shows its first 10 columns until asked for the rest
(`wide_tables`), so what the price is, when, how sure and from where come first."""


def _prices_html(prices: list[PriceEntry], chosen: Mapping[str, PriceEntry]) -> str:
    """The GPU's price table, or why it has none."""
    rows = [
        (
            f'<span id="{esc(price_anchor(price.id))}">{esc(price.provider)}</span>',
            _tier_cell(price),
            f"${price.usd_per_gpu_hour:,.3f}",
            esc(dated(price) or f"undated (read {price.as_of})"),
            f'<span title="{esc(confidence(price, prices).reason())}">'
            f"{esc(confidence(price, prices).level)}</span>",
            esc(price_use(price, chosen)),
            _price_source(price),
            esc(price.offering),
            esc(price.instance),
            esc(price.gpus_per_instance),
            f"${price.usd_per_gpu_hour * price.gpus_per_instance:,.2f}",
            esc(price.region),
        )
        for price in sorted(prices, key=lambda p: (p.tier, p.usd_per_gpu_hour, p.id))
    ]
    if rows and all(price.derived is not None for price in prices):
        # Every price is another GPU's applied by a stated rule: the page says so first.
        return (
            "<p>No provider lists this GPU under its own name. Its $ figures use a related "
            "GPU's price by the rule the table states (tier column), and are labelled derived "
            "wherever they appear; a derived price never counts as official or corroborated.</p>"
            + _table(PRICE_COLUMNS, rows, exclude=True)
        )
    if rows:
        return _table(PRICE_COLUMNS, rows, exclude=True)
    return (
        "<p>No public price for this GPU was found: no provider lists it in the price "
        "sources read (those harvested, which the Downloads page lists with their terms, and "
        "the providers' pages in the price catalog), so its results show no $ figures. A related "
        "GPU's price is not used in its place: it would misstate what this GPU costs.</p>"
    )


PRICES_INTRO = (
    "Price per GPU per hour (the instance's price ÷ its GPUs), with its date (*undated* "
    "where the source states none and only the day it was read is known) and its "
    "confidence (how many providers and offers agree; see "
    "[Methodology](../methodology.md#prices)). Figures use, per tier, the cheapest official "
    "list price dated within 6 months (so GPUs are compared on lists), else the cheapest "
    "price dated within 6 months that at least 2 providers agree on, else the cheapest usable "
    "price; the other tiers come from the "
    "on-demand price's provider (another provider's only when below that on-demand price). "
    "A price the catalog doubts is listed but never used; a derived tier says so, with its "
    "rule.\n\n"
)


def gpu_page(entry: GpuEntry, prices: list[PriceEntry], results: str = "") -> str:
    """The GPU's page; `results` is the HTML list of its results (empty: none yet)."""
    chosen = tier_prices(entry.id, prices)
    sources = "".join(
        f'<li id="source-{number}">{_link(source.url, source.title)} ({esc(source.date)}): '
        f"{esc(', '.join(source.fields))}</li>"
        for number, source in enumerate(entry.sources, start=1)
    )
    # The catalog's notes are the curator's working notes; readers get what they imply.
    notes = (
        "\n\n!!! note\n    Some figures here are not yet checked against the vendor's own "
        "documents.\n"
        if entry.notes and "DOUBTFUL" in entry.notes
        else ""
    )
    return (
        _front(
            entry.name,
            f"{entry.name}: specifications and hourly prices",
            OWN_PAGE_SEARCH_BOOST,
        )
        + f"# {md_text(entry.name)}\n\n`{entry.id}` · {md_text(entry.architecture)} · "
        f"{esc(entry.memory_gb)} GB {md_text(entry.memory_type or '')}\n\n"
        f"[Plan a model on this GPU](../calculators/vram.md?gpu={entry.id}) · "
        f"[GPU fit](../calculators/fit.md)\n\n"
        "## Specifications\n\n"
        + _table(("Spec", "Value", "Sources"), _spec_rows(entry))
        + notes
        + f"\n\n## Sources\n\n<ol>{sources}</ol>\n\n## Prices\n\n"
        + PRICES_INTRO
        + _prices_html(prices, chosen)
        + market_note(entry.id, prices, chosen)
        + "\n\n## Results on this GPU\n\n"
        + (results or "No result on this GPU yet.")
        + "\n"
    )


def gpus_index(
    gpus: Mapping[str, GpuEntry], cheapest: Mapping[str, Mapping[str, PriceEntry]]
) -> str:
    """The GPU list; `cheapest`: GPU id → tier → the price its figures use
    (`registry.lookup.cheapest_prices`: not always the cheapest offer listed)."""

    def price(gpu_id: str, tier: str) -> str:
        entry = cheapest[gpu_id].get(tier)
        if entry is None:
            return "–"
        return price_link(entry, "", f"${entry.usd_per_gpu_hour:,.2f}")

    rows = [
        (
            f'<a href="{gpu.id}/">{esc(gpu.name)}</a>',
            esc(gpu.architecture),
            # figures as the GPU's own page writes them (`_spec_rows`)
            number(gpu.memory_gb, 1),
            number(gpu.memory_bandwidth_gb_s, 1),
            number(gpu.tflops_dense.bf16, 1),
            number(gpu.tflops_dense.fp8, 1),
            *(price(gpu.id, tier) for tier in PRICE_TIERS),
        )
        for gpu in sorted(gpus.values(), key=lambda g: (-g.memory_gb, g.id))
    ]
    links = "\n".join(
        f"- [{md_text(gpu.name)}]({gpu.id}.md)"
        for gpu in sorted(gpus.values(), key=lambda g: g.name)
    )
    return (
        _front("GPUs", "Every GPU in the catalog: memory, bandwidth, compute and prices")
        + "# GPUs\n\nSpecifications as published (dense, no sparsity) and, per tier, the price "
        "per GPU-hour the site's figures use (not always the cheapest offer: each GPU's page "
        "lists every offer and the rule that picks one).\n\n"
        + _table(
            (
                "GPU",
                "Architecture",
                "Memory GB",
                "Bandwidth GB/s",
                "BF16 TFLOPS",
                "FP8 TFLOPS",
                "On-demand $/h",
                "Interruptible $/h",
                "Reserved $/h",
            ),
            rows,
            exclude=True,
        )
        + f"\n\n## All GPUs\n\n{links}\n"
    )


# ------------------------------------------------------------------------------- models


def _gib(value: int) -> str:
    return f"{value / GIB:,.2f} GiB"


def _head_dim(arch: ModelArch) -> str:
    """The attention head's width; under latent attention (MLA) its query/key and value widths
    and the latent a token caches (hidden size / heads, 56 for DeepSeek-R1, is none of them)."""
    mla = arch.mla
    if mla is None:
        return esc(arch.head_dim)
    qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim
    return (
        f"query/key {qk} ({mla.qk_nope_head_dim} + {mla.qk_rope_head_dim} rotary), value "
        f"{mla.v_head_dim}; latent KV {mla.kv_lora_rank} + {mla.qk_rope_head_dim} rotary per "
        "token and layer"
    )


def _model_facts(entry: ModelEntry, arch: ModelArch) -> list[tuple[str, str]]:
    """The architecture table's rows."""
    return [
        (
            "Hugging Face repository",
            _link(f"https://huggingface.co/{entry.hf_repo}", entry.hf_repo),
        ),
        ("Family", esc(entry.family)),
        ("Model type", esc(arch.model_type)),
        ("Layers", esc(arch.num_layers)),
        ("Hidden size", esc(arch.hidden_size)),
        ("Attention heads / KV heads", f"{arch.num_attention_heads} / {arch.num_kv_heads}"),
        ("Head dimension", _head_dim(arch)),
        ("Vocabulary", f"{arch.vocab_size:,}"),
        ("Context length", f"{entry.context_length:,} tokens"),
        ("Sliding-window layers", esc(arch.num_sliding_layers)),
        ("Mixture of experts", "no" if arch.moe is None else "yes"),
        ("Latent attention (MLA)", "no" if arch.mla is None else "yes"),
        ("Vision tower", "no" if arch.vision is None else "yes"),
        ("Checkpoint dtype", esc(arch.torch_dtype)),
        ("Weight format", esc(weight_format(arch).method)),
    ]


def _param_rows(entry: ModelEntry, arch: ModelArch) -> list[tuple[str, str]]:
    """Published and computed parameter counts."""
    counts = param_counts(arch)
    published = entry.published_params
    return [
        ("Published total", f"{published.total_b:g} B"),
        ("Published active", "–" if published.active_b is None else f"{published.active_b:g} B"),
        ("Computed total", f"{counts.total / 1e9:,.2f} B"),
        ("Computed active per token", f"{counts.active / 1e9:,.2f} B"),
    ]


def _memory_rows(entry: ModelEntry, weights: int, kv: KVCacheShape) -> list[tuple[str, ...]]:
    """Weights and KV cache of one request at each context, with a link to the GPUs it fits."""
    contexts = sorted(
        {c for c in MEMORY_CONTEXTS if c <= entry.context_length} | {entry.context_length}
    )
    return [
        (
            f"{context:,}",
            _gib(kv.bytes_for_sequence(context)),
            _gib(weights + kv.bytes_for_sequence(context)),
            f'<a href="../../calculators/fit/?model={entry.id}'
            f'&amp;context={context}&amp;concurrency=1">'
            "which GPUs</a>",
        )
        for context in contexts
    ]


def _kv_sentence(kv: KVCacheShape) -> str:
    """The KV cache a token adds and, for a hybrid, the state a sequence holds whatever its
    length (Mamba, linear-attention and short-convolution layers)."""
    per_token = f"KV cache **{kv.bytes_per_token / 1024:,.0f} KiB per token**"
    window = kv.sliding_window
    if kv.sliding_layers and window:
        # What `bytes_for_sequence` (the table beside it) counts: beyond the window, only the
        # full-attention layers grow.
        full = kv.full_attention_bytes_per_token
        before = f"**{full / 1024:,.0f} KiB per token**" if full else "nothing"
        per_token += (
            f" of the last {window:,} tokens and {before} before them, its {kv.sliding_layers} "
            f"sliding-window layers keeping only the last {window:,}"
        )
    if not kv.state_layers:
        return f"{per_token} (model dtype, no parallelism). "
    state = kv.state_layers * kv.state_bytes_per_sequence_per_layer
    return (
        f"{per_token} and **{state / 1024:,.0f} KiB of state per sequence** in its "
        f"{kv.state_layers} state layers (model dtype, no parallelism). "
    )


def model_page(entry: ModelEntry, compare_links: str = "") -> str:
    """The model's page; `compare_links` is the Markdown list of its compare pages."""
    arch = parse_config(entry.config)
    weights = weight_bytes(arch, weight_format(arch)).total
    kv = kv_cache_shape(arch, "auto", 1, model_dtype_bytes(arch))
    sources = "".join(
        f"<li>{_link(source.url, source.title)} ({esc(source.date)}):"
        f" {esc(', '.join(source.fields))}</li>"
        for source in entry.sources
    )
    # The catalog's notes are the curator's working notes; readers get what they imply.
    notes = (
        "\n\n!!! note\n    Some figures here are not yet checked against the model's own "
        "configuration and card.\n"
        if entry.notes and "DOUBTFUL" in entry.notes
        else ""
    )
    return (
        _front(
            entry.name,
            f"{entry.name}: architecture, parameters and memory needs",
            OWN_PAGE_SEARCH_BOOST,
        )
        + f"# {md_text(entry.name)}\n\n`{entry.id}`\n\n"
        f"[VRAM plan](../calculators/vram.md?model={entry.id}) · "
        f"[GPU fit](../calculators/fit.md?model={entry.id})\n\n"
        "## Architecture\n\n"
        + _table(("", ""), _model_facts(entry, arch))
        + "\n\n## Parameters\n\n"
        + _table(("", ""), _param_rows(entry, arch))
        + "\n\n## Memory needs\n\n"
        f"Weights in the checkpoint's format: **{_gib(weights)}**; {_kv_sentence(kv)}"
        "One request at each context, before vLLM's runtime overheads:\n\n"
        + _table(
            ("Context, tokens", "KV cache", "Weights + KV cache", "Fit"),
            _memory_rows(entry, weights, kv),
            exclude=True,
        )
        + notes
        + "\n\n## Compare GPUs for this model\n\n"
        + (compare_links or "No result for this model yet.\n")
        + f"\n\n## Sources\n\n<ul>{sources}</ul>\n"
    )


def _active_text(entry: ModelEntry) -> str:
    """The parameters a token uses: as published, else for a mixture of experts as computed
    from its configuration (said so: a dash read as a dense model's); "–" for a dense model."""
    if entry.published_params.active_b is not None:
        return f"{entry.published_params.active_b:g} B"
    counts = param_counts(parse_config(entry.config))
    if counts.active >= counts.total:
        return "–"
    return f"{counts.active / 1e9:,.1f} B (computed)"


def models_index(models: Mapping[str, ModelEntry]) -> str:
    rows = [
        (
            f'<a href="{model.id}/">{esc(model.name)}</a>',
            esc(model.family),
            f"{model.published_params.total_b:g} B",
            _active_text(model),
            f"{model.context_length:,}",
        )
        for model in sorted(models.values(), key=lambda m: (m.family, m.published_params.total_b))
    ]
    links = "\n".join(
        f"- [{md_text(m.name)}]({m.id}.md)" for m in sorted(models.values(), key=lambda m: m.name)
    )
    return (
        _front("Models", "Every model in the catalog")
        + "# Models\n\n"
        + _table(("Model", "Family", "Parameters", "Active", "Context"), rows, exclude=True)
        + f"\n\n## All models\n\n{links}\n"
    )
