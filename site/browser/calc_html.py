"""The calculator pages' output HTML: each calculator's payload as tables whose cells carry
`data-output` (the dotted path into the payload) and `data-value` (the raw value as JSON).

Part of the calculators archive the browser imports (see `calc_api`): the stdlib,
`calculators`, the other calc_* hooks and `wide_tables` (stdlib only) only.
"""

import html
import json
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any

from wide_tables import more_columns

import infermeter.calculators.api as api
from infermeter.calculators.errors import InputError
from infermeter.calculators.perf_api import predicted_throughput
from infermeter.calculators.price_tiers import PRICE_TIERS, RESERVED_AGAINST, pays_off_above

GIB = 1024**3


def _value_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _out(path: str, value: Any, text: str) -> str:
    return (
        f'<span data-output="{html.escape(path)}" data-value="{html.escape(_value_text(value))}">'
        f"{html.escape(text)}</span>"
    )


def _gib(value: Any) -> str:
    return "–" if value is None else f"{value / GIB:,.2f} GiB"


def _usd(value: Any, digits: int = 4) -> str:
    return "–" if value is None else f"${value:,.{digits}f}"


def _count(value: Any) -> str:
    return "–" if value is None else f"{value:,.0f}"


def _pays_off(value: Any) -> str:
    """A break-even utilization; one at or above 100 % is never reached."""
    above = pays_off_above(value)
    return "never" if above is None else f"above {above:.0%} utilization"


def _lookup(payload: Mapping[str, Any], path: str) -> Any:
    value: Any = payload
    for part in path.split("."):
        value = value[int(part)] if isinstance(value, list) else value.get(part)
        if value is None:
            return None
    return value


def _rows(payload: Mapping[str, Any], rows: list[tuple[str, str, Callable[[Any], str]]]) -> str:
    cells = "".join(
        f"<tr><th>{html.escape(label)}</th><td"
        f">{_out(path, _lookup(payload, path), fmt(_lookup(payload, path)))}</td></tr>"
        for label, path, fmt in rows
    )
    return f'<table class="im-results"><tbody>{cells}</tbody></table>'


def _text(value: Any) -> str:
    return "–" if value is None else str(value).replace("_", " ")


VRAM_ROWS: list[tuple[str, str, Callable[[Any], str]]] = [
    ("Weights per GPU", "weights_bytes", _gib),
    ("KV cache per GPU (vLLM)", "kv_cache_bytes", _gib),
    ("KV cache per token", "kv_cache_bytes_per_token", lambda v: f"{v:,} bytes"),
    ("KV cache tokens", "kv_cache_tokens", _count),
    ("Max concurrency at max_model_len", "max_concurrency", lambda v: f"{v:,.2f}×"),
    (
        "Max concurrency, all replicas",
        "vllm_plan.deployment_max_concurrency",
        lambda v: f"{v:,.2f}×",
    ),
    ("GPUs (TP × PP × DP)", "vllm_plan.gpus", _count),
    ("data_parallel_size", "vllm_plan.data_parallel_size", _count),
    ("Expert parallel size", "vllm_plan.expert_parallel_size", _count),
    ("max_model_len", "max_model_len", _count),
    ("GPU memory (as CUDA reports)", "vllm_plan.gpu_memory_bytes", _gib),
    ("gpu_memory_utilization", "vllm_plan.gpu_memory_utilization", str),
    ("vLLM budget", "vllm_plan.requested_bytes", _gib),
    ("Activation peak", "vllm_plan.activation_peak_bytes", _gib),
    ("Non-torch memory", "vllm_plan.non_torch_bytes", _gib),
    ("All-to-all backend", "vllm_plan.all2all_backend", _text),
    ("All-to-all buffers", "vllm_plan.all2all_buffer_bytes", _gib),
    ("Runner input buffers (vLLM >= 0.27)", "vllm_plan.runner_buffer_bytes", _gib),
    ("CUDA graphs", "vllm_plan.cuda_graph_bytes", _gib),
    (
        "Graphs and margin kept free (vLLM >= 0.34)",
        "vllm_plan.extensible_reserve_bytes",
        _gib,
    ),
    (
        "CUDA graphs in the KV budget",
        "vllm_plan.cuda_graph_in_budget",
        lambda v: "yes" if v else "no",
    ),
    ("KV cache blocks", "vllm_plan.num_blocks", _count),
    ("max_num_seqs", "vllm_plan.max_num_seqs", _count),
    ("max_num_batched_tokens", "vllm_plan.max_num_batched_tokens", _count),
    ("Weight format", "vllm_plan.weight_format", _text),
    ("Context per request (simple)", "context_tokens", _count),
    ("Concurrent requests, all replicas (simple)", "concurrency", _count),
    ("Concurrent requests per replica (simple)", "concurrency_per_replica", _count),
    ("KV cache needed (simple)", "breakdown.kv_cache_bytes", _gib),
    ("Runtime overhead (simple)", "breakdown.runtime_overhead_bytes", _gib),
    ("Safety margin (simple)", "breakdown.safety_margin_bytes", _gib),
    ("Required per GPU (simple)", "required_bytes", _gib),
    ("Headroom per GPU (simple)", "headroom_bytes", _gib),
    ("Headroom state", "headroom_state", _text),
]
"""The plan's table: label, the payload's field, how its value reads."""


def _memory_bar(plan: Mapping[str, Any]) -> tuple[str, str]:
    """The bar of one GPU's memory (weights, activations, KV cache, CUDA graphs), its legend."""
    bar_total = plan["gpu_memory_bytes"] or 1
    parts = [
        ("weights", plan["weights_bytes"]),
        ("activations", plan["activation_peak_bytes"] + plan["non_torch_bytes"]),
        ("KV cache", max(plan["kv_cache_bytes"], 0)),
        ("CUDA graphs", plan["cuda_graph_bytes"]),
    ]
    bar = "".join(
        f'<span class="im-bar-{index}"'
        f' style="width:{max(0.0, min(100.0, 100 * size / bar_total)):.2f}%" '
        f'title="{html.escape(label)}: {_gib(size)}"></span>'
        for index, (label, size) in enumerate(parts)
    )
    return bar, " · ".join(f"{label} {_gib(size)}" for label, size in parts)


def _vram_html(payload: Mapping[str, Any], base: str) -> str:
    plan = payload["vllm_plan"]
    verdict = "fits" if payload["fits"] else f"does not fit: {payload['reason']}"
    bar, legend = _memory_bar(plan)
    notes = "".join(f"<li>{html.escape(note)}</li>" for note in plan.get("notes") or [])
    return (
        f'<p class="im-verdict">{_out("fits", payload["fits"], verdict)}</p>'
        f'<div class="im-bar" aria-hidden="true">{bar}</div><p class="im-legend"'
        f">{html.escape(legend)}</p>"
        + _rows(payload, VRAM_ROWS)
        + (f'<ul class="im-notes">{notes}</ul>' if notes else "")
        + _bound_html(payload)
    )


def _bound_html(payload: Mapping[str, Any]) -> str:
    """The roofline bound beside the plan: a ceiling no run can pass, not an estimate."""
    bound = payload.get("throughput_bound")
    if not bound:
        return ""

    def tok_s(value: Any) -> str:
        return "–" if value is None else f"≤ {value:,.0f} tok/s"

    return (
        '<h3 id="throughput-bound">Upper bound on decode throughput</h3>'
        f"<p>At {bound['batch']:,} concurrent request(s) in all "
        f"(over {bound.get('data_parallel_size', 1):,} replica(s)) of "
        f"{bound['context_tokens']:,} tokens "
        "on this GPU's peak bandwidth and compute: a physical ceiling that no measurement can "
        "pass, not an estimate of what a run reaches. Bound, "
        f"{html.escape(bound['interconnect'])}.</p>"
        + _rows(
            payload,
            [
                ("Output tokens/s, bound", "throughput_bound.tokens_per_second", tok_s),
                ("Limited by", "throughput_bound.limited_by", _text),
                ("Traffic between GPUs", "throughput_bound.interconnect", _text),
                ("Bandwidth bound", "throughput_bound.bandwidth_tokens_per_second", tok_s),
                (
                    "Bandwidth bound per stream",
                    "throughput_bound.bandwidth_tokens_per_second_per_stream",
                    tok_s,
                ),
                ("Compute bound", "throughput_bound.compute_tokens_per_second", tok_s),
            ],
        )
    )


def _prices_used_html(payload: Mapping[str, Any]) -> str:
    """The catalog prices the figures use: id, price, date and a link to the source."""
    cells = []
    for name, field_tier in api.CATALOG_PRICE_FIELDS:
        price = payload["prices"][name]
        if price is None:
            continue
        path = f"prices.{name}"
        label = "Price" if field_tier is None else f"{field_tier.capitalize()} price"
        url, usd = price["source_url"], _usd(price["usd_per_gpu_hour"], 4)
        source = (
            f' · <a href="{html.escape(url)}" rel="noopener">source</a>'
            if url
            else " · no public address"
        )
        cells.append(
            f"<tr><th>{html.escape(label)} from the catalog</th><td>"
            f"{_out(path + '.id', price['id'], price['id'])}: "
            f"{_out(path + '.usd_per_gpu_hour', price['usd_per_gpu_hour'], usd)}"
            f"/GPU-hour, {_out(path + '.as_of', price['as_of'], api.as_of_words(price['as_of']))}"
            f"{source}"
            "</td></tr>"
        )
    if not cells:
        return ""
    return f'<table class="im-results im-prices-used"><tbody>{"".join(cells)}</tbody></table>'


def _cost_html(payload: Mapping[str, Any], base: str) -> str:
    rows: list[tuple[str, str, Callable[[Any], str]]] = [
        ("$ / 1M tokens", "usd_per_million_tokens", _usd),
        ("Tokens per $", "tokens_per_dollar", _count),
        ("Deployment $/hour", "deployment_usd_per_hour", _usd),
        ("Effective $/hour", "effective_usd_per_hour", _usd),
        ("  of which idle", "effective_cost.idle_usd_per_hour", _usd),
        ("  of which retries", "effective_cost.retry_usd_per_hour", _usd),
        ("Effective $ / 1M tokens", "effective_usd_per_million_tokens", _usd),
        ("Effective tokens per $", "effective_tokens_per_dollar", _count),
    ]
    if payload["usd_per_million_accepted_tokens"] is not None:
        rows.append(("$ / 1M accepted tokens", "usd_per_million_accepted_tokens", _usd))
    tiers = payload["tiers"]
    for tier in (*PRICE_TIERS, "serverless"):
        if tiers.get(tier):
            label = tier.replace("_", "-")
            rows.append(
                (
                    f"{label}: effective $ / 1M",
                    f"tiers.{tier}.effective_usd_per_million_tokens",
                    _usd,
                )
            )
    rows.append(
        (
            "serverless: billed $/hour (follows utilization)",
            "tiers.serverless.billed_usd_per_wall_hour",
            _usd,
        )
    )
    rows.append(("Cheapest tier", "tiers.cheapest", _text))
    if tiers.get("reserved_break_even_utilization") is not None:
        rows.append(
            (
                f"Reserved pays off, {RESERVED_AGAINST}",
                "tiers.reserved_break_even_utilization",
                _pays_off,
            )
        )
    if tiers.get("serverless_break_even_utilization") is not None:
        rows.append(
            ("Always-on beats serverless", "tiers.serverless_break_even_utilization", _pays_off)
        )
    if payload.get("versus_api"):
        rows += [
            ("Self-hosted $/month", "versus_api.self_hosted_usd_per_month", lambda v: _usd(v, 2)),
            ("API $/month", "versus_api.api_usd_per_month", lambda v: _usd(v, 2)),
            ("Replicas needed", "versus_api.replicas", _count),
            ("Break-even tokens/month", "versus_api.break_even_monthly_tokens", _count),
            ("Cheaper", "versus_api.winner", _text),
        ]
    return _basis_html(payload) + _rows(payload, rows) + _prices_used_html(payload)


def _basis_html(payload: Mapping[str, Any]) -> str:
    """Where the tokens per second came from, when the perf calculator gave them."""
    basis = payload["tokens_per_second_basis"]
    if basis["kind"] == "given":
        return ""
    on = "" if payload["gpu"] is None else f" on {payload['gpu_count']:,} × {payload['gpu']}"
    tokens = _out("tokens_per_second", payload["tokens_per_second"],
                  _count(payload["tokens_per_second"]))  # fmt: skip
    label = _out("tokens_per_second_basis.label", basis["label"], basis["label"])
    if basis["kind"] == "other_deployment":
        return (
            f'<p class="im-note im-basis">Tokens per second, {tokens}: from the perf calculator '
            f"{label}</p>"
        )
    return (
        f'<p class="im-note im-basis">Tokens per second, {tokens}: from the perf calculator'
        f"{html.escape(on)}, {label}</p>"
    )


def _cost_link(payload: Mapping[str, Any], base: str) -> str:
    """A link to the cost calculator at the figure shown, its GPUs and its label (what
    `calc cost --from-perf` takes from the same payload); none where it takes nothing."""
    try:
        shown = predicted_throughput(payload, "perf")
    except InputError:  # no request rate meets the SLO: nothing to cost
        return ""
    query = {
        "gpu": shown.gpu,
        "gpu_count": str(shown.gpu_count),
        "tokens_per_second": repr(shown.tokens_per_second),
        "tokens_per_second_basis": shown.basis,
        "tokens_per_second_gpu": shown.gpu,
        "tokens_per_second_gpu_count": str(shown.gpu_count),
    }
    href = f"{base}calculators/cost/?{urllib.parse.urlencode(query)}"
    return f'<p><a class="im-cost-link" href="{html.escape(href)}">Cost of this</a></p>'


def _concurrency(value: Any) -> str:
    return f"{value:,.1f}"


# The fit table's columns after the GPU: header, the option's key, how its value reads; in the
# reader's order (a table shows its first 10 columns until asked: `wide_tables`).
_FIT_COLUMNS: tuple[tuple[str, str, Callable[[Any], str]], ...] = (
    ("count", "gpu_count", str),
    ("GPUs", "gpus", str),
    ("$/GPU-hour", "usd_per_gpu_hour", lambda v: _usd(v, 3)),
    ("$/hour", "usd_per_hour", lambda v: _usd(v, 2)),
    ("memory/GPU", "memory_bytes_per_gpu", _gib),
    ("required/GPU", "required_bytes_per_gpu", _gib),
    ("headroom", "headroom_state", _text),
    ("max concurrency", "max_concurrency", _concurrency),
    ("in all", "deployment_max_concurrency", _concurrency),
    ("$/GB-hour", "usd_per_gb_hour", lambda v: _usd(v, 4)),
)
# A column that repeats another in every row says nothing more (one replica: its GPUs are the
# deployment's, its concurrency the deployment's).
_FIT_REPEATS = {"gpus": "gpu_count", "deployment_max_concurrency": "max_concurrency"}


def _fit_html(payload: Mapping[str, Any], base: str) -> str:
    fitting = [(index, row) for index, row in enumerate(payload["options"]) if row["fits"]]
    misfits = [(index, row) for index, row in enumerate(payload["options"]) if not row["fits"]]
    columns = [
        column
        for column in _FIT_COLUMNS
        if column[1] not in _FIT_REPEATS
        or any(row[column[1]] != row[_FIT_REPEATS[column[1]]] for _i, row in fitting)
    ]
    body = []
    for index, row in fitting:
        path = f"options.{index}"
        href = f"{html.escape(base)}gpus/{html.escape(row['gpu'])}/"
        link = f'<a href="{href}">{html.escape(row["name"])}</a>'
        cells = [f"{link} {_out(path + '.gpu', row['gpu'], '')}"] + [
            _out(f"{path}.{key}", row[key], text(row[key])) for _label, key, text in columns
        ]
        body.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>")
    table = (
        '<table class="im-results im-fit"><thead><tr>'
        + "".join(f"<th>{label}</th>" for label in ("GPU", *(c[0] for c in columns)))
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table>"
    )
    table = more_columns(table, 1 + len(columns))
    if not body:
        table = "<p>No catalog GPU serves this with 8 or fewer GPUs.</p>"
    return table + _misfits_html(misfits, True) + _misfits_html(misfits, False)


def _misfits_html(misfits: list[tuple[int, Any]], served: bool) -> str:
    """The GPUs too small for the model (`served`), or those whose vLLM does not serve its
    weights, apart, each with its reason (as `calc fit` prints them)."""
    rows = [(index, row) for index, row in misfits if row["served"] is served]
    if not rows:
        return ""
    summary = "Does not fit" if served else "Not served by their vLLM"
    items = "".join(
        f"<li>{html.escape(row['name'])}:"
        f" {_out(f'options.{index}.reason', row['reason'], row['reason'] or '')}</li>"
        for index, row in rows
    )
    return f"<details><summary>{summary} ({len(rows)})</summary><ul>{items}</ul></details>"


def _ms(value: Any) -> str:
    return "–" if value is None else f"{value:,.1f} ms"


def _per_s(value: Any) -> str:
    return "–" if value is None else f"{value:,.2f} /s"


def _error_rows(error: Mapping[str, Any]) -> list[tuple[str, str, Callable[[Any], str]]]:
    """The held-out median error on each split the target is judged on (the basis alone where
    the table predates the splits), so the rows say what the target note says."""

    def pct(value: Any) -> str:
        return "–" if value is None else f"{value} %"

    splits = error.get("splits") or {}
    if not splits:
        return [(f"Median error, held out ({error['basis']})", "error.median_pct", pct)]
    return [
        (f"Median error, held out: {split} split", f"error.splits.{split}", pct) for split in splits
    ]


def _perf_html(payload: Mapping[str, Any], base: str) -> str:
    """The prediction with its measured error; where its kind missed the target, the roofline
    bound instead, and which target was missed by how much."""
    label = _out("error_label", payload["error_label"], payload["error_label"])
    deployment: list[tuple[str, str, Callable[[Any], str]]] = [
        ("GPUs", "gpu_count", _count),
        ("Sequences one replica holds", "max_batch_per_replica", _count),
        ("Input tokens (mean)", "workload.input_tokens", _count),
        ("Output tokens (mean)", "workload.output_tokens", _count),
        ("Kind of figure", "kind", _text),
        ("Held-out results behind its error", "error.rows", _count),
        *_error_rows(payload["error"]),
        ("Target, on every held-out split", "error.target_pct", lambda v: f"≤ {v:g} %"),
    ]
    if payload["shown"] == "bound":
        missed = _out("missed_target", payload["missed_target"], payload["missed_target"])
        note = (
            f'<p class="im-note">Prediction not shown: its measured error misses the target '
            f"({missed}). The roofline bound below is a ceiling no run passes, not an "
            f"estimate. {label}</p>"
        )
        rows = [
            ("Roofline bound, output tokens/s", "roofline_bound_tokens_per_s", _count),
            (
                "$ / 1M output tokens, at best (the bound's)",
                "roofline_bound_usd_per_million_output_tokens",
                _usd,
            ),
        ]
        return note + _rows(payload, rows + deployment) + _cost_link(payload, base)
    rows = [
        ("Output tokens/s (predicted)", "output_tokens_per_s", _count),
        ("Requests/s", "requests_per_s", _per_s),
        ("TTFT p50", "ttft_ms.p50", _ms),
        ("TTFT p99", "ttft_ms.p99", _ms),
        ("TPOT p50", "tpot_ms.p50", _ms),
        ("TPOT p99", "tpot_ms.p99", _ms),
        ("Highest rate meeting the SLO", "max_request_rate_at_slo", _per_s),
        ("$ / 1M output tokens", "usd_per_million_output_tokens", _usd),
        ("$ / 1M accepted output tokens", "usd_per_million_accepted_tokens", _usd),
        ("Roofline bound, output tokens/s", "roofline_bound_tokens_per_s", _count),
    ]
    table = _rows(payload, rows + deployment)
    why = payload.get("ttft_not_predicted")  # offline: a wait the inputs do not give
    if why:
        label += f" TTFT not predicted: {_out('ttft_not_predicted', why, why)}"
    return f'<p class="im-note">{label}</p>' + table + _cost_link(payload, base)


RENDER = {"vram": _vram_html, "cost": _cost_html, "fit": _fit_html, "perf": _perf_html}
