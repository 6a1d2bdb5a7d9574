"""Print the memory plan beside the public vLLM startup logs it is tested against.

    .venv/bin/python benchmarks/plan_accuracy.py

One line per case of tests/data/vllm_startup_logs.yaml: predicted / logged, and the error; then
a summary per split (fit: cases any constant may be set from; holdout: never used for fitting):
median absolute error of the weights and of the KV cache tokens, and the share of all checked
figures (weights, KV tokens, maximum concurrency) within 10 %, counted two ways: every case
alike, and one vote per source (each source's figures weighted 1 / its cases, so the llm-d-planner
sweep's 37 logs count as much as one thread's one); then the same per source on the held-out
split; then, per split, each logged overhead term (activation peak, non-torch, CUDA graphs)
against the plan's estimate.
"""

import statistics

from infermeter.registry.plan_accuracy import (
    EVIDENCE_HEAD,
    GIB,
    SPLITS,
    Figure,
    Summary,
    evidence_rows,
    figures,
    load_cases,
    summarise,
)


def _cell(predicted: float, observed: float | None) -> str:
    if observed is None:
        return "-"
    error = (predicted / observed - 1) * 100 if observed else 0.0
    return f"{predicted:,.4g} / {observed:,.4g} ({error:+.1f}%)"


def _median(values: list[float]) -> str:
    return f"{statistics.median(values) * 100:.1f} % (n={len(values)})" if values else "-"


def _summary(split: str, checked: list[Figure]) -> str:
    weights = [abs(f.error) for f in checked if f.name == "weights_gib"]
    tokens = [abs(f.error) for f in checked if f.name == "kv_cache_tokens"]
    counted = [
        f for f in checked if f.name in ("weights_gib", "kv_cache_tokens", "max_concurrency")
    ]
    within = sum(abs(f.error) <= 0.10 for f in counted)
    share = f"{within}/{len(counted)} = {within / len(counted) * 100:.0f} %" if counted else "-"
    return f"| {split} | {_median(weights)} | {_median(tokens)} | {share} |"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f} %"


def _weighted_row(label: str, summary: Summary) -> str:
    return (
        f"| {label} | {summary.sources} | {summary.figures} | {_percent(summary.weights_median)} "
        f"| {_percent(summary.kv_tokens_median)} | {_percent(summary.within_10_percent)} |"
    )


def main() -> None:
    cases = load_cases()
    print("| case | split | weights GiB | KV cache GiB | KV tokens | max concurrency | note |")
    print("|---|---|---|---|---|---|---|")
    for case in cases:
        plan = case.plan()
        observed = case.observed
        note = (
            case.raw.get("excluded")
            or case.raw.get("excluded_kv")
            or ("V0 engine: weights only" if case.is_v0 else "")
        )
        print(
            f"| [{case.id}]({case.source}) | {case.split} "
            f"| {_cell(plan.weights_bytes / GIB, observed.get('model_loading_gib'))} "
            f"| {_cell(plan.kv_cache_bytes / GIB, observed.get('available_kv_cache_gib'))} "
            f"| {_cell(plan.kv_cache_tokens, observed.get('kv_cache_tokens'))} "
            f"| {_cell(plan.max_concurrency, observed.get('max_concurrency'))} "
            f"| {'excluded: ' if case.raw.get('excluded') else ''}{note[:70]} |"
        )
    print()
    print("| split | weights, median error | KV tokens, median error | figures within 10 % |")
    print("|---|---|---|---|")
    for split in SPLITS:
        checked = [f for case in cases if case.split == split for f in figures(case)]
        print(_summary(split, checked))
    print(_summary("all", [f for case in cases for f in figures(case)]))
    print()
    print(
        "| split, counted | sources | figures | weights, median error "
        "| KV tokens, median error | figures within 10 % |"
    )
    print("|---|---|---|---|---|---|")
    for split in (*SPLITS, "all"):
        chosen = [case for case in cases if split in ("all", case.split)]
        print(_weighted_row(f"{split}, every case alike", summarise(chosen, per_source=False)))
        print(_weighted_row(f"{split}, one vote per source", summarise(chosen, per_source=True)))
    print()
    print("| " + " | ".join(EVIDENCE_HEAD) + " |")
    print("|" + "---|" * len(EVIDENCE_HEAD))
    for row in evidence_rows(cases):
        print("| " + " | ".join(row) + " |")
    print()
    print(
        "| held-out source | cases | weights, median error | KV tokens, median error "
        "| figures within 10 % |"
    )
    print("|---|---|---|---|---|")
    holdout = [case for case in cases if case.split == "holdout"]
    for group in sorted({case.source_group for case in holdout}):
        members = [case for case in holdout if case.source_group == group]
        summary = summarise(members, per_source=False)
        print(
            f"| {group} | {len(members)} | {_percent(summary.weights_median)} "
            f"| {_percent(summary.kv_tokens_median)} | {_percent(summary.within_10_percent)} |"
        )
    print()
    print("| split | overhead term | median error | within 50 % or 0.2 GiB |")
    print("|---|---|---|---|")
    for split in (*SPLITS, "all"):
        checked = [
            f for case in cases if split in ("all", case.split) for f in figures(case) if f.is_term
        ]
        for name in sorted({f.name for f in checked}):
            terms = [f for f in checked if f.name == name]
            within = sum(f.ok for f in terms)
            print(
                f"| {split} | {name} | {_median([abs(f.error) for f in terms])} "
                f"| {within}/{len(terms)} |"
            )


if __name__ == "__main__":
    main()
