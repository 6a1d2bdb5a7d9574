"""Print where the registry stands against issue 21's counts: results, GPU models and LLMs (with
the ones the issue names), and server-at-SLO points carrying p99 TTFT and TPOT.

Counted from the index (`registry.index.build_index`), so a result that a correction replaced or
withdrew is not counted, and every count is of what the site shows:

- results: current results with at least one index row (CPU-only results have none);
- GPU models and LLMs: the catalog ids of those results' GPUs and models;
- server-at-SLO points: load points found by a rate search under a p99 bound (MLPerf's Server
  and Interactive, `bench run --search`) that carry a measured p99 TTFT and p99 TPOT.

    .venv/bin/python benchmarks/record_counts.py               # this checkout
    .venv/bin/python benchmarks/record_counts.py --registry .

Exit status 0 when every goal holds, 1 when not.
"""

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from infermeter.registry.index import build_index
from infermeter.registry.index_row import IndexRow

GOALS = {"results": 3000, "GPU models": 20, "LLMs": 18, "server-at-SLO points": 800}
NAMED_GPUS = ("b300", "gb300", "mi355x")
NAMED_LLMS = ("gpt-oss-120b", "deepseek-r1", "llama-3.1-405b-instruct")


def server_at_slo(row: IndexRow) -> bool:
    """A point found under a p99 bound that carries p99 TTFT and p99 TPOT."""
    return (
        row.rate_search_percentile is not None
        and row.ttft_ms_p99 is not None
        and row.tpot_ms_p99 is not None
    )


def counts(rows: Sequence[IndexRow]) -> dict[str, set[str] | int]:
    """The four counted quantities of the current (uncorrected) rows."""
    current = [row for row in rows if row.correction is None]
    return {
        "results": len({row.result_id for row in current}),
        "GPU models": {row.gpu for row in current},
        "LLMs": {row.model for row in current},
        "server-at-SLO points": sum(1 for row in current if server_at_slo(row)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--registry", type=Path, default=Path("."), help="registry checkout")
    arguments = parser.parse_args()
    rows, files = build_index(arguments.registry)
    found = counts(rows)
    print(f"registry: {files} result files, {len(rows)} index rows")
    holds = True
    for name, goal in GOALS.items():
        value = found[name]
        number = value if isinstance(value, int) else len(value)
        holds = holds and number >= goal
        print(f"{name:<22} {number:>6}  (goal ≥ {goal}){'' if number >= goal else '  short'}")
    for label, named, have in (
        ("named GPUs", NAMED_GPUS, found["GPU models"]),
        ("named LLMs", NAMED_LLMS, found["LLMs"]),
    ):
        assert isinstance(have, set)
        missing = [item for item in named if item not in have]
        holds = holds and not missing
        print(f"{label:<22} {', '.join(named)}: {missing or 'all present'}")
    by_round = Counter(
        row.mlperf_round or row.source_kind
        for row in rows
        if row.correction is None and server_at_slo(row)
    )
    print(
        "server-at-SLO points by source: "
        + ", ".join(f"{k} {v}" for k, v in sorted(by_round.items()))
    )
    print("goals hold" if holds else "goals do NOT hold")
    return 0 if holds else 1


if __name__ == "__main__":
    sys.exit(main())
