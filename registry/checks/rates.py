"""Rates: every output tokens/s a cost is worked out from lies where the calculators price it.

The index and the answers price a point from its stated output tokens/s, a fixed-length static
batch's tokens/s worked out from the batch's time (batch × output tokens ÷ e2e mean) and its
accepted tokens/s at its own SLO (`registry.evidence`, `calculators.accepted`). The calculators
take a rate from `MIN_POSITIVE` to `MAX_INPUT` tokens/s (`calculators.cost_inputs`): a file
whose rate lies outside (1e300 tokens/s stated, a batch of 2,048 tokens in 1e-297 ms) is refused
here, naming the field, by the gate and by every reader of the registry, not with a calculator's
error when its figures are priced. So is a file from which the index works out a figure no float
holds (`index_rows.derived_columns`: 5e-324 J of energy gives infinite tokens per joule, which
no JSON holds).
"""

import math
from collections.abc import Iterator

from infermeter.calculators.accepted import accepted_at_own_slo, static_batch_tokens_per_s
from infermeter.calculators.cost_inputs import MAX_INPUT, MIN_POSITIVE
from infermeter.registry.checks import Finding
from infermeter.registry.evidence import point_evidence
from infermeter.registry.index_rows import derived_columns
from infermeter.registry.models import Result


def _rates(result: Result, index: int) -> Iterator[tuple[str, str, float | None]]:
    """(path, what, tokens/s) of each rate point `index` is priced from."""
    point = point_evidence(result, index)
    where = f"points[{index}]"
    yield f"{where}.throughput.output_tokens_per_s", "", point.output_tokens_per_s
    if point.static_batch_size and not point.output_tokens_per_s:
        what = "the static batch's output tokens/s from its time: "
        yield f"{where}.e2e_ms.mean", what, static_batch_tokens_per_s(point)
    own = accepted_at_own_slo(point)
    if own is not None:
        yield where, "accepted output tokens/s at its own SLO: ", own.accepted_tokens_per_s


def _beyond_a_float(file: str, result: Result, index: int) -> Iterator[Finding]:
    """The figures the index works out from point `index` (`index_rows.derived_columns`) that
    no float holds: an energy of 5e-324 J gives infinite tokens per joule."""
    point = result.points[index]
    own = accepted_at_own_slo(point_evidence(result, index))
    accepted = None if own is None else own.accepted_tokens_per_s
    for name, value in derived_columns(point, result.identity.gpu.count, accepted).items():
        if isinstance(value, float) and not math.isfinite(value):
            message = f"its {name} works out beyond any number"
            yield Finding(file, f"points[{index}]", message, "rates")


def rate_findings(file: str, result: Result) -> list[Finding]:
    """Every rate of `result` a cost is worked out from that the calculators cannot price,
    and every figure the index works out from it that no float holds."""
    findings = []
    for index in range(len(result.points)):
        named: set[float] = set()  # a rate the point's accepted tokens/s repeats is named once
        for path, what, rate in _rates(result, index):
            if rate is None or rate == 0 or MIN_POSITIVE <= rate <= MAX_INPUT or rate in named:
                continue
            named.add(rate)
            message = (
                f"{what}{rate:.6g} tokens/s; a cost is worked out from {MIN_POSITIVE:g} to "
                f"{MAX_INPUT:g} tokens/s"
            )
            findings.append(Finding(file, path, message, "rates"))
        findings.extend(_beyond_a_float(file, result, index))
    return findings
