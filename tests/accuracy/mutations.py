"""Double one overhead term of the memory plan at a time and see which logged figures break.

Shared by benchmarks/overhead_mutations.py (which prints the result) and
tests/accuracy/test_overhead_terms_pinned.py (which keeps it true): a term whose doubling breaks
no logged figure is not pinned by any log.
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import infermeter.calculators.vllm_overheads as plan_module

# Each term, and the names in calculators.vllm_overheads that make it up (constants or functions).
TERMS = {
    "activation peak (forward pass)": ("forward_peak_bytes",),
    "sampler logits": ("SAMPLER_BYTES_PER_LOGIT",),
    "non-torch memory": ("NON_TORCH_BYTES", "NON_TORCH_TP_BYTES", "NON_TORCH_NVLS_BYTES"),
    "CUDA graphs": ("cuda_graph_bytes",),
}


@contextmanager
def doubled(*names: str) -> Iterator[None]:
    """Within the block, each named constant is twice its value, each named function returns
    twice its result."""
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


def broken_by_doubling(failures: Callable[[], list[str]]) -> dict[str, list[str]]:
    """For each term, the failure lines that doubling it adds to the unpatched ones."""
    baseline = set(failures())
    broken = {}
    for term, names in TERMS.items():
        with doubled(*names):
            broken[term] = [line for line in failures() if line not in baseline]
    return broken
