"""Rates: every output tokens/s a cost is worked out from lies where the calculators price it.

The index and the answers price a point from its stated output tokens/s, a fixed-length static
batch's tokens/s worked out from the batch's time (batch × output tokens ÷ e2e mean) and its
accepted tokens/s at its own SLO (`registry.evidence`, `calculators.accepted`). The calculators
take a rate from `MIN_POSITIVE` to `MAX_INPUT` tokens/s (`calculators.cost_inputs`): a file
whose rate lies outside (1e300 tokens/s stated, a batch of 2,048 tokens in 1e-297 ms) is refused
here, naming the field, by the gate and by every reader of the registry, not with a calculator's
error when its figures are priced.
"""

from collections.abc import Iterator

from infermeter.calculators.accepted import accepted_at_own_slo, static_batch_tokens_per_s
from infermeter.calculators.cost_inputs import MAX_INPUT, MIN_POSITIVE
from infermeter.registry.checks import Finding
from infermeter.registry.evidence import point_evidence
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


def rate_findings(file: str, result: Result) -> list[Finding]:
    """Every rate of `result` a cost is worked out from that the calculators cannot price."""
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
    return findings
