"""Which overhead terms of the memory plan do the public vLLM logs pin?

    .venv/bin/python benchmarks/overhead_mutations.py

Patches one term x2 at a time inside calculators.vllm_plan (the profiling run's forward peak,
the sampler's logits, non-torch memory, CUDA graphs), reruns the checks the accuracy tests make
(tests/accuracy/cases.failures) and prints, per term, how many logged figures then fall outside
their tolerance. A term with 0 is not pinned by any log: doubling it passes every check. Exit
status 1 when any term is unpinned, so the script can gate a change that claims otherwise.
"""

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "accuracy"))

from cases import failures, load_cases

import calculators.vllm_plan as plan_module


@contextmanager
def _doubled(*names: str) -> Iterator[None]:
    saved = {name: getattr(plan_module, name) for name in names}
    try:
        for name, value in saved.items():
            if callable(value):
                function: Callable[..., int] = value

                def twice(*args: Any, _f: Callable[..., int] = function, **kwargs: Any) -> int:
                    return 2 * _f(*args, **kwargs)

                setattr(plan_module, name, twice)
            else:
                setattr(plan_module, name, 2 * value)
        yield
    finally:
        for name, value in saved.items():
            setattr(plan_module, name, value)


TERMS = {
    "activation peak (forward pass)": ("forward_peak_bytes",),
    "sampler logits": ("SAMPLER_BYTES_PER_LOGIT",),
    "non-torch memory": ("NON_TORCH_BYTES", "NON_TORCH_TP_BYTES"),
    "CUDA graphs": ("cuda_graph_bytes",),
}


def main() -> int:
    cases = load_cases()
    baseline = failures(cases)
    print(f"unpatched: {len(baseline)} figures outside tolerance")
    unpinned = 0
    for term, names in TERMS.items():
        with _doubled(*names):
            broken = failures(cases)
        new = [line for line in broken if line not in baseline]
        unpinned += not new
        verdict = "pinned" if new else "NOT PINNED by any log"
        print(f"{term} x2: {len(new)} figures break -> {verdict}")
        for line in new[:3]:
            print(f"    {line}")
    return 1 if unpinned else 0


if __name__ == "__main__":
    sys.exit(main())
