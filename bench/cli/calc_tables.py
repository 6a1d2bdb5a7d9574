"""The text tables of `infermeter calc vram|cost|fit`, made from the calculators' payloads.

`format_vram`, `format_cost` and `format_fit` each return what the command prints without
`--json`; `format_rows` lines up label/value rows. Memory shows in GiB here, at the edge.
"""

from typing import Any

import infermeter.calculators.api as api
from infermeter.calculators.api import as_of_words
from infermeter.calculators.memory import MemoryReport
from infermeter.calculators.price_tiers import RESERVED_AGAINST, pays_off_above
from infermeter.registry.prices import TIERS

GIB = 1024**3


def gib(value: int | None) -> str:
    """`value` bytes as `1,234.56 GiB`, or `-` when there is none."""
    return "-" if value is None else f"{value / GIB:,.2f} GiB"


def format_rows(rows: list[tuple[str, str]]) -> str:
    """Label/value rows, the labels padded to one width."""
    width = max(len(label) for label, _ in rows)
    return "\n".join(f"{label.ljust(width)}  {value}" for label, value in rows)


def _bound_rows(bound: dict[str, Any] | None, concurrency: int) -> list[tuple[str, str]]:
    if bound is None:
        return []
    return [
        (
            "decode bound",
            f"<= {bound['tokens_per_second']:,.0f} output tok/s at {concurrency} concurrent "
            f"in all ({bound['limited_by']}-bound, {bound['interconnect']}; a ceiling, not an "
            "estimate)",
        )
    ]


def format_vram(request: api.VramRequest, report: MemoryReport, payload: dict[str, Any]) -> str:
    """The memory plan per GPU, the simple model's headroom, the verdict, then vLLM's notes."""
    plan, simple, plan_json = report.plan, report.simple, payload["vllm_plan"]
    concurrency = request.concurrency
    table = format_rows(
        [
            ("model", f"{request.model} ({plan.weight_format})"),
            ("GPU memory", f"{gib(plan.settings.gpu_memory_bytes)} per GPU"),
            (
                "GPUs",
                f"{plan_json['gpus']} (tensor {request.tensor_parallel_size} x pipeline "
                f"{request.pipeline_parallel_size} x data {request.engine.data_parallel_size}; "
                f"expert parallel {plan_json['expert_parallel_size']})",
            ),
            (
                "vLLM budget",
                f"{gib(plan.requested_bytes)} ({plan.gpu_memory_utilization:g} utilization)",
            ),
            ("weights", gib(plan.weights_bytes)),
            ("activation peak", gib(plan.activation_peak_bytes)),
            ("non-torch", gib(plan.non_torch_bytes)),
            (
                "all-to-all buffers",
                f"{gib(plan.all2all_buffer_bytes)} ({plan.all2all_backend or 'none'})",
            ),
            ("runner buffers", gib(plan.runner_buffer_bytes)),
            (
                "CUDA graphs",
                f"{gib(plan.cuda_graph_bytes)} "
                f"({'in' if plan.cuda_graph_in_budget else 'not in'} the KV budget)",
            ),
            ("free (vLLM 0.34+)", gib(plan.extensible_reserve_bytes)),
            ("KV cache", gib(plan.kv_cache_bytes)),
            ("KV cache per token", f"{plan.kv_cache_bytes_per_token:,} bytes"),
            ("KV cache tokens", f"{plan.kv_cache_tokens:,}"),
            (
                "max concurrency",
                f"{plan.max_concurrency:.2f}x at {plan.max_model_len:,} tokens per replica; "
                f"{plan_json['deployment_max_concurrency']:.2f}x in all",
            ),
            (
                "required (simple)",
                f"{gib(simple.required_bytes)} per GPU for {simple.concurrency_per_replica} "
                f"x {simple.context_tokens:,} tokens per replica ({concurrency} in all)",
            ),
            (
                "headroom",
                f"{gib(simple.headroom_bytes)} ({simple.headroom_state.replace('_', ' ')})",
            ),
            ("fits", "yes" if report.fits else f"no: {report.reason}"),
            *_bound_rows(payload["throughput_bound"], concurrency),
        ]
    )
    return "\n".join([table, *(f"note: {note}" for note in plan.notes)])


def format_cost(payload: dict[str, Any], tier: str) -> str:
    """The prices used (`tier` is the one --price-per-hour stands for), the cost per token,
    each tier's cost, the break-evens and the comparison with an API."""
    labels = {
        option: f"price ({tier.replace('_', '-')})"
        if option_tier is None
        else f"{option_tier} price"
        for option, option_tier in api.CATALOG_PRICE_FIELDS
    }
    rows = [
        (
            labels[option],
            f"{price['id']}: ${price['usd_per_gpu_hour']:,.4f}/GPU-hour, "
            f"{as_of_words(price['as_of'])}",
        )
        for option, price in payload["prices"].items()
        if price is not None
    ]
    rows += [
        ("$ / 1M tokens", f"{payload['usd_per_million_tokens']:.4f}"),
        ("tokens per $", f"{payload['tokens_per_dollar']:,.0f}"),
        ("effective $/hour", f"{payload['effective_usd_per_hour']:.4f}"),
        ("effective $ / 1M tokens", f"{payload['effective_usd_per_million_tokens']:.4f}"),
    ]
    if payload["usd_per_million_accepted_tokens"] is not None:
        rows.append(("$ / 1M accepted tokens", f"{payload['usd_per_million_accepted_tokens']:.4f}"))
    for each_tier in (*TIERS, "serverless"):
        tier_cost = payload["tiers"].get(each_tier)
        if tier_cost:
            rows.append(
                (
                    f"{each_tier.replace('_', '-')} $ / 1M",
                    f"{tier_cost['effective_usd_per_million_tokens']:.4f}",
                )
            )
    for label, key, against in (
        ("reserved pays off above", "reserved_break_even_utilization", RESERVED_AGAINST),
        ("always-on beats serverless above", "serverless_break_even_utilization", ""),
    ):
        if payload["tiers"].get(key) is not None:
            above = pays_off_above(payload["tiers"][key])
            shown = "never" if above is None else f"{above:.0%} utilization"
            rows.append((label, shown + (f", {against}" if against else "")))
    versus = payload.get("versus_api")
    if versus:
        rows.append(("self-hosted $/month", f"{versus['self_hosted_usd_per_month']:,.2f}"))
        rows.append(("API $/month", f"{versus['api_usd_per_month']:,.2f}"))
        rows.append(("cheaper", versus["winner"].replace("_", "-")))
    return format_rows(rows)


def format_fit(payload: dict[str, Any]) -> str:
    """One line per GPU count that fits, then the GPUs that fit on none of 1, 2, 4 or 8."""
    rows = payload["options"]
    lines = [
        f"{'GPU':<18} {'count':>5} {'GPUs':>5} {'$/hour':>8} {'$/GB-h':>8} {'headroom':<16} "
        f"{'max conc.':>9} {'in all':>9}"
    ]
    for row in rows:
        if not row["fits"]:
            continue
        price = "-" if row["usd_per_hour"] is None else f"{row['usd_per_hour']:.2f}"
        per_gb = "-" if row["usd_per_gb_hour"] is None else f"{row['usd_per_gb_hour']:.4f}"
        lines.append(
            f"{row['gpu']:<18} {row['gpu_count']:>5} {row['gpus']:>5} {price:>8} {per_gb:>8} "
            f"{row['headroom_state'].replace('_', ' '):<16} {row['max_concurrency']:>9.1f} "
            f"{row['deployment_max_concurrency']:>9.1f}"
        )
    misfits = [row for row in rows if not row["fits"]]
    too_big = [row["gpu"] for row in misfits if row["served"]]
    if too_big:
        lines.append(f"does not fit on 8 or fewer: {', '.join(too_big)}")
    # a GPU refused for another reason (its vLLM does not serve the weights) says why
    lines += [f"{row['gpu']}: {row['reason']}" for row in misfits if row["gpu"] not in too_big]
    return "\n".join(lines)
