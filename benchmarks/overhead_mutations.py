"""Which overhead terms of the memory plan do the public vLLM logs pin?

    .venv/bin/python benchmarks/overhead_mutations.py

Patches one term x2 at a time inside calculators.vllm_overheads (the profiling run's forward peak,
the sampler's logits, non-torch memory, CUDA graphs), reruns the checks the accuracy tests make
(registry.plan_accuracy.failures: KV figures and each logged overhead term) and prints, per term,
how many logged figures then fall outside their tolerance. A term with 0 is not pinned by any log:
doubling it passes every check. Exit status 1 when any term is unpinned. The same check runs in
the test suite (tests/accuracy/test_overhead_terms_pinned.py).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "accuracy"))

from mutations import broken_by_doubling

from infermeter.registry.plan_accuracy import failures, load_cases


def main() -> int:
    cases = load_cases()
    baseline = failures(cases)
    print(f"unpatched: {len(baseline)} figures outside tolerance")
    broken = broken_by_doubling(lambda: failures(cases))
    for term, new in broken.items():
        verdict = "pinned" if new else "NOT PINNED by any log"
        print(f"{term} x2: {len(new)} figures break -> {verdict}")
        for line in new[:3]:
            print(f"    {line}")
    return 1 if not all(broken.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
