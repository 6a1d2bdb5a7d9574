"""What one decode step of a replica runs: its parallel layout, the sequences it decodes at once
and the context each attends to. The roofline bounds (`calculators.roofline`), the pipeline
stages (`calculators.pipeline_stages`) and the link traffic (`calculators.interconnect`) of a
step all read these together.
"""

from dataclasses import dataclass, field

from infermeter.calculators.parallel import ParallelLayout


@dataclass(frozen=True)
class DecodeBatch:
    """One replica's decode step: `batch` sequences of `context_tokens` each, on the tensor x
    pipeline parallel GPUs of `layout` (each data-parallel replica decodes its own batch, so a
    step reads no data parallel size)."""

    layout: ParallelLayout = field(default_factory=ParallelLayout)
    context_tokens: int = 0
    batch: int = 1
