"""GPU-to-GPU traffic of one decode step, and the least time it takes on the link between them.

Under tensor parallelism (TP = N) every transformer layer ends its attention and its MLP with
an all-reduce of the batch's activations: two per layer, each of
`batch × hidden_size × activation bytes`. A ring all-reduce makes every GPU send (and receive)
`2 (N − 1) / N` of that, the least any all-reduce moves without reducing inside the network.
Under pipeline parallelism (PP = P) each stage boundary sends the batch's activations once
(`batch × hidden_size × activation bytes`, split over the TP ranks), and every GPU holds, and
all-reduces for, only 1/P of the layers. One GPU's bytes per step, in both directions at once:

    tp_bytes = 2 × (num_layers / P) × batch × hidden_size × a × 2 (N − 1) / N
    pp_bytes = batch × hidden_size × a / N                   (0 when P = 1)
    seconds ≥ (tp_bytes + pp_bytes) / link bandwidth in one direction

where `a` is the model dtype's bytes (engines all-reduce in it, whatever the weights' format).
This stays a bound: link latency (hundreds of small all-reduces a step), the embedding and
lm_head collectives, and GeForce cards' lack of peer-to-peer transfers (their traffic takes a
detour through host memory) are left out. NVLink SHARP, which reduces inside NVSwitch and moves
about half the ring's bytes, is outside the model, as speculative decoding is for the weights'
reads: on switched NVLink the term may overstate the traffic up to twice, where it is small
beside the weights' reads.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from infermeter.calculators.limits import at_least_one
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.parallel import ParallelLayout


@dataclass(frozen=True)
class Link:
    """A GPU-to-GPU link as the catalog states it."""

    name: str  # e.g. `NVLink 4`, `PCIe 5.0 x16`
    gb_s_per_direction: float  # peak, one GPU, one direction (vendors' NVLink figures: half)
    max_gpus: int | None = None  # the most GPUs it joins (a bridge: 2); None: all of a server


def link_joining(links: Sequence[Link], gpu_count: int) -> Link | None:
    """The fastest of `links` that joins `gpu_count` GPUs; None when none does (a GPU the
    catalog states no link for, or more GPUs than any of its links joins)."""
    joining = [link for link in links if link.max_gpus is None or gpu_count <= link.max_gpus]
    return max(joining, key=lambda link: link.gb_s_per_direction, default=None)


def ring_allreduce_bytes_per_gpu(payload_bytes: float, gpus: int) -> float:
    """Bytes each of `gpus` GPUs sends (and receives) in a ring all-reduce of `payload_bytes`."""
    return 2 * (gpus - 1) / gpus * payload_bytes


@dataclass(frozen=True)
class StepTraffic:
    """What one GPU sends (and receives as much) per decode step of the whole batch."""

    tensor_parallel_bytes: float
    pipeline_bytes: float

    @property
    def bytes_per_step(self) -> float:
        return self.tensor_parallel_bytes + self.pipeline_bytes


def decode_step_traffic(
    arch: ModelArch, layout: ParallelLayout, batch: int, activation_bytes: int
) -> StepTraffic:
    """One GPU's bytes per decode step of `batch` sequences under the layout's TP × PP
    (formula in the module docstring)."""
    at_least_one("batch", batch)
    tensor_parallel_size = layout.tensor_parallel_size
    pipeline_parallel_size = layout.pipeline_parallel_size
    at_least_one("tensor_parallel_size", tensor_parallel_size)
    at_least_one("pipeline_parallel_size", pipeline_parallel_size)
    activations = batch * arch.hidden_size * activation_bytes
    layers = arch.num_layers / pipeline_parallel_size
    tensor = ring_allreduce_bytes_per_gpu(2 * layers * activations, tensor_parallel_size)
    pipeline = activations / tensor_parallel_size if pipeline_parallel_size > 1 else 0.0
    return StepTraffic(tensor_parallel_bytes=tensor, pipeline_bytes=pipeline)


def interconnect_label(gpu_count: int, tensor: int, link: Link | None) -> str:
    """What a bound counts of the traffic between GPUs: `includes TP all-reduce over
    PCIe 5.0 x16`; for a GPU whose link the catalog does not state, that it is not counted."""
    if gpu_count <= 1:
        return "one GPU: no traffic between GPUs"
    what = (
        "PP transfers"
        if tensor == 1
        else ("TP all-reduce" if gpu_count == tensor else "TP all-reduce and PP transfers")
    )
    if link is None:
        return f"{what} not included: no sourced interconnect figure for {gpu_count} GPUs"
    return f"includes {what} over {link.name}"
