"""Print the memory plan beside the public vLLM startup logs it is tested against.

    .venv/bin/python benchmarks/plan_accuracy.py

One line per case of tests/data/vllm_startup_logs.yaml: predicted / logged, and the error.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "accuracy"))

from cases import GIB, load_cases


def _cell(predicted: float, observed: float | None) -> str:
    if observed is None:
        return "-"
    error = (predicted / observed - 1) * 100 if observed else 0.0
    return f"{predicted:,.4g} / {observed:,.4g} ({error:+.1f}%)"


def main() -> None:
    print("| case | weights GiB | KV cache GiB | KV tokens | max concurrency | note |")
    print("|---|---|---|---|---|---|")
    for case in load_cases():
        plan = case.plan()
        observed = case.observed
        note = case.raw.get("excluded") or case.raw.get("excluded_kv") or (
            "V0 engine: weights only" if case.is_v0 else ""
        )
        print(
            f"| [{case.id}]({case.source}) "
            f"| {_cell(plan.weights_bytes / GIB, observed.get('model_loading_gib'))} "
            f"| {_cell(plan.kv_cache_bytes / GIB, observed.get('available_kv_cache_gib'))} "
            f"| {_cell(plan.kv_cache_tokens, observed.get('kv_cache_tokens'))} "
            f"| {_cell(plan.max_concurrency, observed.get('max_concurrency'))} "
            f"| {'excluded: ' if case.raw.get('excluded') else ''}{note[:70]} |"
        )


if __name__ == "__main__":
    main()
