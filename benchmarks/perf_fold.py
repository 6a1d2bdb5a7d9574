"""One leave-one-model-family-out fold of the performance predictor, looked at closely: its fit,
its held-out low-load latency error, and how flat the fit's loss is where that error is decided.

    .venv/bin/python benchmarks/perf_fold.py                           # the latency rows' family
    .venv/bin/python benchmarks/perf_fold.py --without-since 790009f^  # also without later rows

Fits the fold as benchmarks/perf_error.py does (registry.perf_error.fit on every other family's
rows) and prints the base factors, the fitting offline rows' loss (`fit_loss`) and the held-out
latency rows' median absolute error. `--without-since REV` fits it again without the results
added to registry/results since REV (git), and scores both fits on today's rows. Then a grid of
step overhead x memory share, every other factor held at the fit's: the loss barely moves along
a ridge over which the held-out latency error moves several-fold (PERF_PROTOCOL.md says why).
"""

import argparse
import statistics
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from infermeter.calculators.predict import Factors  # noqa: E402
from infermeter.registry.perf_error import (  # noqa: E402
    Ready,
    Scored,
    fit,
    fit_loss,
    predicted,
    ready_cases,
)

OVERHEADS_MS = (2.0, 3.0, 4.0, 5.0, 6.0, 8.0)
MEMORY_SHARES = (0.5, 0.55, 0.6, 0.65, 0.7)


def added_since(revision: str) -> set[str]:
    """The ids of the result files git says were added under registry/results since `revision`."""
    command = ["git", "diff", "--name-only", "--diff-filter=A", revision, "HEAD"]
    names = subprocess.run(
        [*command, "--", "registry/results"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return {Path(name).stem.rsplit("-", 1)[-1] for name in names}


def latency_error(rows: list[Ready], factors: Factors) -> float:
    return statistics.median(Scored(r.case, predicted(r, factors)).error_pct for r in rows)


def describe(label: str, factors: Factors, offline: list[Ready], held: list[Ready]) -> str:
    base = ", ".join(
        f"{name} {getattr(factors, name):.3f}"
        for name in ("memory", "compute", "tensor_parallel", "step_overhead_ms")
    )
    generations = ", ".join(f"{k} {v:.2f}" for k, v in sorted(factors.generation.items()))
    return (
        f"{label}: {base}; generation {generations}; loss on today's fitting offline rows "
        f"{fit_loss(offline, factors):.4f}; held-out latency median "
        f"{latency_error(held, factors):.1f} %"
    )


def ridge(factors: Factors, offline: list[Ready], held: list[Ready]) -> list[str]:
    lines = ["step overhead ms | memory | loss | held-out latency median %"]
    for overhead in OVERHEADS_MS:
        for memory in MEMORY_SHARES:
            moved = replace(factors, step_overhead_ms=overhead, memory=memory)
            lines.append(
                f"{overhead:g} | {memory:g} | {fit_loss(offline, moved):.4f} | "
                f"{latency_error(held, moved):.1f}"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", help="the held-out family (default: the latency rows')")
    parser.add_argument("--without-since", metavar="REV", help="also fit without later results")
    args = parser.parse_args()
    rows, _ = ready_cases(ROOT)
    families = sorted({r.case.family for r in rows if r.case.kind == "latency"})
    family = args.family or families[0]
    held = [r for r in rows if r.case.family == family and r.case.kind == "latency"]
    train = [r for r in rows if r.case.family != family]
    offline = [r for r in train if r.case.kind == "offline"]
    print(f"family {family}: {len(train)} fitting rows, {len(held)} held-out latency rows")
    factors = fit(train)
    print(describe("fitted on today's rows", factors, offline, held))
    if args.without_since:
        later = added_since(args.without_since)
        earlier = [r for r in train if r.case.case_id.split("#")[0] not in later]
        added = len(train) - len(earlier)
        print(f"without the {added} fitting rows added since {args.without_since}")
        print(describe("fitted without them", fit(earlier), offline, held))
    print("\n".join(ridge(factors, offline, held)))


if __name__ == "__main__":
    main()
