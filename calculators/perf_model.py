"""The physical model behind the performance predictor (`calculators.predict`): how long one decode
step and one prompt's prefill take on a deployment at peak speed, before any fitted efficiency.

A decode step of `batch` sequences on one replica takes the longer of
- its memory reads: the weights a token touches (one GPU's shard), the batch's KV cache at its
  mean context, and, for a mixture of experts, every further expert the batch's tokens pick (a
  batch of B tokens that each pick k of E experts touches about E × (1 − (1 − k/E)^B) of them per
  layer, where the roofline bound counts only k), then its traffic to the other GPUs over their
  link (`calculators.roofline`, `calculators.interconnect`);
- its compute: two FLOPs per touched parameter and the attention over the context, per token, at
  the GPU's peak dense rate for the weight format, times the replica's GPUs.

A prompt's prefill is compute: every prompt token passes every touched parameter and attends to
half the prompt on average, at the replica's peak dense rate.

These are speeds no engine reaches; `calculators.predict` divides every time by fitted
efficiency factors.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from infermeter.calculators.decode_batch import DecodeBatch
from infermeter.calculators.interconnect import Link
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.parallel import ParallelLayout
from infermeter.calculators.quantization import WeightFormat, weight_bytes
from infermeter.calculators.roofline import (
    attention_flops_per_token,
    dense_tflops_for,
    deployment_throughput_bound,
    flops_per_output_token,
)


@dataclass(frozen=True)
class Replica:
    """One replica of a deployment (the layout's tensor × pipeline GPUs), with its GPU's peak
    figures."""

    arch: ModelArch
    fmt: WeightFormat
    kv_cache_dtype: str | None
    layout: ParallelLayout
    memory_bandwidth_gb_s: float
    tflops_dense: Mapping[str, float | None]
    links: Sequence[Link]

    @property
    def peak_flops(self) -> float | None:
        """The replica's peak dense FLOP/s at the weight format's fastest rate; None unknown."""
        tflops = dense_tflops_for(self.fmt, self.tflops_dense)
        return None if tflops is None else tflops * 1e12 * self.layout.replica_gpus


def distinct_experts_share(num_experts: int, experts_per_token: int, tokens: float) -> float:
    """The expected share of a layer's routed experts that `tokens` tokens pick between them,
    each picking `experts_per_token` of `num_experts` uniformly."""
    miss: float = (1 - experts_per_token / num_experts) ** tokens
    return 1 - miss


def all_experts_seconds(replica: Replica) -> float:
    """The time to read every routed expert one GPU of a stage holds: 0 for a dense model."""
    if replica.arch.moe is None:
        return 0.0
    layout = replica.layout
    stored = weight_bytes(replica.arch, replica.fmt, layout.tensor_parallel_size).by_role
    per_stage = stored.get("experts", 0) / layout.pipeline_parallel_size
    return per_stage / (replica.memory_bandwidth_gb_s * 1e9)


@dataclass(frozen=True)
class StepTime:
    """One decode step of a replica's batch at given efficiencies, by what limits it. Per
    phase: the weights' matrix products take the longer of their reads and their compute; the
    attention then reads the batch's KV cache (memory-bound, not hidden by the products' compute);
    the link traffic comes after (no overlap counted)."""

    memory_s: float  # the weights' reads
    compute_s: float  # 0 where the GPU states no rate
    link_s: float
    kv_s: float = 0.0  # the attention's KV cache reads
    overhead_s: float = 0.0  # the engine's own time per step (scheduling, sampling, launches)

    @property
    def seconds(self) -> float:
        return max(self.memory_s, self.compute_s) + self.kv_s + self.link_s + self.overhead_s

    @property
    def limited_by(self) -> str:
        return "compute" if self.compute_s > self.memory_s + self.kv_s else "memory"


@dataclass(frozen=True)
class StepModel:
    """A replica's decode step time at one mean context, as a function of its batch: reads and
    link traffic grow linearly with the batch (a KV cache and an all-reduce share per sequence),
    the further experts with their distinct share, the compute linearly."""

    fixed_s: float  # the weights one token touches
    per_sequence_s: float  # one sequence's KV cache read
    link_per_sequence_s: float  # one sequence's share of the traffic over the link
    compute_per_sequence_s: float  # one token's FLOPs at peak; 0 where the GPU states no rate
    all_experts_s: float  # every routed expert read (a mixture of experts), else 0
    experts_per_token: int = 0
    num_experts: int = 0

    def memory_s(self, batch: float) -> float:
        """The weights' reads: what one token touches, and the further experts a batch picks."""
        memory = self.fixed_s
        if self.num_experts and batch > 1:
            share = distinct_experts_share(self.num_experts, self.experts_per_token, batch)
            least = self.experts_per_token / self.num_experts
            memory += self.all_experts_s * max(0.0, share - least)
        return memory

    def step(
        self,
        batch: float,
        memory_efficiency: float = 1.0,
        compute_efficiency: float = 1.0,
        overhead_s: float = 0.0,
    ) -> StepTime:
        """The step at these shares of peak bandwidth (reads and link) and of peak compute,
        with the engine's own `overhead_s`."""
        return StepTime(
            self.memory_s(batch) / memory_efficiency,
            self.compute_per_sequence_s * batch / compute_efficiency,
            self.link_per_sequence_s * batch / memory_efficiency,
            self.per_sequence_s * batch / memory_efficiency,
            overhead_s,
        )


def step_model(replica: Replica, context_tokens: int) -> StepModel:
    """The replica's `StepModel` at `context_tokens` of mean context, from its roofline bounds
    at batches of one and two (`calculators.roofline`)."""

    def bound(batch: int) -> tuple[float, float, float]:
        result = deployment_throughput_bound(
            replica.arch,
            replica.fmt,
            replica.memory_bandwidth_gb_s * 1e9,
            dense_tflops_for(replica.fmt, replica.tflops_dense),
            DecodeBatch(replica.layout, context_tokens, batch),
            kv_cache_dtype=replica.kv_cache_dtype,
            links=replica.links,
        )
        compute = result.compute_tokens_per_second
        step = batch / result.bandwidth_tokens_per_second
        link = result.interconnect_seconds_per_step
        return step - link, link, 0.0 if compute is None else 1 / compute

    one, _, compute = bound(1)
    two, link_two, _ = bound(2)
    moe = replica.arch.moe
    return StepModel(
        fixed_s=2 * one - two,
        per_sequence_s=two - one,
        link_per_sequence_s=link_two / 2,
        compute_per_sequence_s=compute,
        all_experts_s=all_experts_seconds(replica),
        experts_per_token=0 if moe is None else moe.experts_per_token,
        num_experts=0 if moe is None else moe.num_experts,
    )


def attention_peak_flops(replica: Replica) -> float | None:
    """The replica's peak dense FLOP/s for attention: its products run on the KV cache's data
    type (fp8 with an fp8 cache, else 16-bit), never the weights' 4-bit rate."""
    rates = replica.tflops_dense
    names = ("fp8", "bf16", "fp16") if replica.kv_cache_dtype == "fp8" else ("bf16", "fp16")
    known = [rate for rate in (rates.get(name) for name in names) if rate]
    return max(known) * 1e12 * replica.layout.replica_gpus if known else None


def prefill_seconds(replica: Replica, prompt_tokens: float) -> float:
    """One prompt's prefill at the replica's peak compute, per phase: the weights' products at
    the weight format's rate, the attention over half the prompt on average at the attention's
    (0 where the GPU states no rate: the weights' read of one step then bounds it)."""
    peak = replica.peak_flops
    if peak is None or prompt_tokens <= 0:
        return 0.0
    context = math.ceil(prompt_tokens / 2)
    attention = attention_flops_per_token(replica.arch, context)
    weights = flops_per_output_token(replica.arch, context) - attention
    attention_peak = attention_peak_flops(replica) or peak
    return prompt_tokens * (weights / peak + attention / attention_peak)
