"""A workload's typical request in tokens: what the answers' estimate
(`calculators.answer_estimate`) and the predictor's cases are worked out for; where a workload
states its lengths only as a data set's, the data set they are (`calculators.perf_datasets`
knows some of their mean lengths)."""

from infermeter.registry.models import Result
from infermeter.registry.models.identity import LengthDistribution, Workload


def typical_tokens(length: LengthDistribution) -> int | None:
    """A length distribution's typical value in tokens (fixed, the range's middle, the mean);
    None when the source states none (a dataset's own lengths)."""
    if length.kind == "fixed":
        return length.value
    if length.kind == "uniform":
        return (length.min + length.max) // 2
    return None if length.mean is None else round(length.mean)


def shortest_tokens(length: LengthDistribution) -> int | None:
    """The shortest length a distribution states (fixed: its value; a range or a clipped
    distribution: its min); None where it states none (a data set's, an unclipped one)."""
    if length.kind == "fixed":
        return length.value
    return None if length.kind == "dataset" else length.min


def workload_tokens(workload: Workload) -> tuple[int, int] | None:
    """(input, output) tokens of a workload's typical request, or None when not stated."""
    prompt, output = typical_tokens(workload.input_len), typical_tokens(workload.output_len)
    if prompt is None or output is None or output < 1:
        return None
    return prompt, output


def workload_dataset(result: Result) -> str | None:
    """The data set whose lengths a result's workload states as its own (an input or output
    length of kind `dataset`): MLPerf's benchmark (`llama2-70b-99.9`), else the workload's
    data set name ("" where it names none); None where the workload states its lengths."""
    workload = result.identity.workload
    if workload.input_len.kind != "dataset" and workload.output_len.kind != "dataset":
        return None
    mlperf = getattr(result.source, "mlperf", None)
    return mlperf.benchmark if mlperf is not None else (workload.dataset or "")
