"""Closed loop: a closed loop's throughput against its own latencies (Little's law).

A closed loop of C streams keeps C requests in flight and sends the next as one finishes, so it
completes at most C requests per mean E2E: its output tokens/s is at most C × the mean output
length ÷ the mean E2E (`little_tokens_per_s`). A point stated more than `LITTLE_SLACK` above
that is impossible for any closed loop. A point far below it (under `LITTLE_FLOOR`) lost time
to requests its figures do not hold: failed or stalled ones. That is refused only where the
point counts no requests (a source that states no failures), every request produced its full
length (`ignore_eos`) and no think time paused a stream; a point that counts its requests
states its failures, and its throughput already pays for them.

Only lengths whose mean the workload fixes are judged (fixed, or uniform in [min, max]); a
trace replay takes its lengths from the trace, and a DAG's subagents run beside its roots. Where
the point counts its output tokens and completed requests, their mean is the length (a short
run's draws from a range are not the range's mean); else the workload's.
"""

from infermeter.calculators.units import MS_PER_S
from infermeter.registry.checks import Finding, whole
from infermeter.registry.models import LoadPoint, Result
from infermeter.registry.models.identity import Workload

LITTLE_SLACK = 1.2
"""How far above C × mean output tokens ÷ mean E2E a closed loop's output tokens/s may go before
it fails (rounding, a window's edges), as the decode bound's `DECODE_SLACK`."""

LITTLE_FLOOR = 0.5
"""The share of C × mean output tokens ÷ mean E2E below which a closed loop that counts no
requests lost requests it does not count; the registry's lowest such point that lost none is
at 0.877 of it (InferenceX, 406 points)."""


def mean_output_tokens(workload: Workload) -> float | None:
    """The mean output length the workload fixes (fixed, or uniform in [min, max]); None where
    it does not (a distribution clipped, a dataset, a trace)."""
    length = workload.output_len
    if workload.trace is not None:
        return None
    if length.kind == "fixed":
        return float(length.value)
    if length.kind == "uniform":
        return (length.min + length.max) / 2
    return None


def little_tokens_per_s(concurrency: int, output_tokens: float, e2e_ms: float) -> float:
    """Output tokens/s of a closed loop of `concurrency` streams whose requests of
    `output_tokens` each take `e2e_ms` on average (Little's law)."""
    return concurrency * output_tokens / (e2e_ms / MS_PER_S)


def _output_tokens(point: LoadPoint, workload: Workload) -> tuple[float, str] | None:
    """The mean output tokens of the point's requests and where they come from; None where the
    workload does not fix the mean, or fixes it at nothing."""
    fixed = mean_output_tokens(workload)
    output, completed = point.tokens.output, point.requests.completed
    if not fixed:
        return None
    if not output or not completed:
        return fixed, "the workload's mean"
    return output / completed, "tokens.output ÷ requests.completed"


def _counts_no_requests(point: LoadPoint) -> bool:
    requests = point.requests
    stated = (requests.sent, requests.completed, requests.failed, point.failures)
    return all(count is None for count in stated)


def closed_loop_problem(point: LoadPoint, workload: Workload) -> str | None:
    """What is wrong with a closed-loop point's output tokens/s against its own concurrency,
    mean E2E and mean output length (see the module docstring); None when nothing is, or the
    point does not state them all."""
    concurrency, rate = point.load.concurrency, point.throughput.output_tokens_per_s
    e2e_ms = point.e2e_ms.mean if point.e2e_ms is not None else None
    mean = _output_tokens(point, workload)
    if point.load.arrival != "closed" or not (concurrency and rate and e2e_ms and mean):
        return None
    tokens, told = mean
    bound = little_tokens_per_s(concurrency, tokens, e2e_ms)
    ratio = rate / bound
    loop = (
        f"{whole(rate)} output tok/s at concurrency {concurrency} is {ratio:.3g}× the "
        f"{whole(bound)} tok/s that {concurrency} streams of {tokens:.4g} output tokens "
        f"({told}) in {e2e_ms / MS_PER_S:.3g} s each (e2e_ms.mean) complete (Little's law)"
    )
    if ratio > LITTLE_SLACK:
        return f"{loop}: more than {LITTLE_SLACK:g}×, impossible for any closed loop"
    honoured = workload.ignore_eos is True and not workload.think_time_s
    if ratio < LITTLE_FLOOR and honoured and _counts_no_requests(point):
        return (
            f"{loop}: under {LITTLE_FLOOR:g}×, and the point counts no requests: requests the "
            "source does not count failed or stalled"
        )
    return None


def closed_loop_findings(file: str, result: Result) -> list[Finding]:
    """Every closed-loop point of `result` whose throughput its own latencies do not allow."""
    findings = []
    workload = result.identity.workload
    for index, point in enumerate(result.points):
        problem = closed_loop_problem(point, workload)
        if problem is not None:
            path = f"points[{index}].throughput.output_tokens_per_s"
            findings.append(Finding(file, path, problem, "closed-loop"))
    return findings
