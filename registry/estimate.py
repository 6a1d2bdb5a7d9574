"""A workload's typical request in tokens: what the answers' estimate
(`calculators.answer_estimate`) and the predictor's cases are worked out for."""

from infermeter.registry.models.identity import LengthDistribution, Workload


def typical_tokens(length: LengthDistribution) -> int | None:
    """A length distribution's typical value in tokens (fixed, the range's middle, the mean);
    None when the source states none (a dataset's own lengths)."""
    if length.kind == "fixed":
        return length.value
    if length.kind == "uniform":
        return (length.min + length.max) // 2
    return None if length.mean is None else round(length.mean)


def workload_tokens(workload: Workload) -> tuple[int, int] | None:
    """(input, output) tokens of a workload's typical request, or None when not stated."""
    prompt, output = typical_tokens(workload.input_len), typical_tokens(workload.output_len)
    if prompt is None or output is None or output < 1:
        return None
    return prompt, output
