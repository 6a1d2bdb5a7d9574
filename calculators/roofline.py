"""Roofline bounds: speeds no honest measurement can beat, from a GPU's peak bandwidth and compute.

Decoding one token of one sequence must bring every weight the token passes through from GPU
memory into the chip, plus the sequence's KV cache. A GPU cannot do that faster than its peak
memory bandwidth, so one stream decodes at most `bandwidth / bytes read per step` tokens per
second. Under tensor parallelism each GPU holds and reads one shard, in parallel. Under
pipeline parallelism each stage holds and reads only its own layers (and their KV cache), and
a pipelined step takes its slowest stage's time (`calculators.pipeline_stages`).
Every output token also costs two floating-point operations (a multiply and an add) per
parameter it touches, and its attention over the context before it, which bounds the tokens per
second a GPU can produce at its peak compute.

Under tensor or pipeline parallelism every step also moves the batch's activations between
the GPUs (`calculators.interconnect`: two ring all-reduces per layer over the GPU's link), and a
GPU cannot read weights for the next layer's matmul before the all-reduce of the last one has
arrived, so a step takes at least

    seconds per step = bytes read / memory bandwidth + bytes sent / link bandwidth (one way)

and a deployment whose GPU states no link counts no traffic, and says so (`interconnect`).

These are bounds, not estimates: wherever a choice exists they take the smaller cost (only the
routed experts a token picks, attention over the shortest context the workload allows, the
embedding table read as one row, no prefill), so a real result stays below them. Speculative
decoding, which emits several tokens per weight pass, is outside the model: a result that uses
it can exceed the decode bound (not the compute bound: every token still passes the weights).
"""

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from infermeter.calculators.decode_batch import DecodeBatch
from infermeter.calculators.decode_reads import (
    bytes_per_touched_param,
    decode_weight_bytes_per_step,
    touched_params,
)
from infermeter.calculators.errors import InputError
from infermeter.calculators.interconnect import (
    Link,
    decode_step_traffic,
    interconnect_label,
    link_joining,
)
from infermeter.calculators.kv_cache import KVCacheShape, kv_cache_shape
from infermeter.calculators.limits import above_zero, at_least_one
from infermeter.calculators.model_arch import CHUNKED, FULL, SLIDING, ModelArch
from infermeter.calculators.param_count import param_counts
from infermeter.calculators.pipeline_stages import pipeline_step
from infermeter.calculators.quantization import WeightFormat, weight_format
from infermeter.calculators.vllm_settings import VllmSettings, parse_release, settings_layout

# The decode step the bounds take where none is given: one sequence, no context, on one GPU.
ONE_SEQUENCE = DecodeBatch()


@dataclass(frozen=True)
class DecodeBound:
    """The bandwidth bound of one decode step on one GPU of the deployment: its memory reads,
    then its traffic to the other GPUs over their link (none counted without a link). Under
    pipeline parallelism, the slowest stage's GPU (`calculators.pipeline_stages`)."""

    weight_bytes_per_step: int  # weights one GPU reads for one decode step
    kv_cache_bytes_per_step: int  # KV cache one GPU reads for the batch's sequences
    memory_bandwidth_bytes_per_s: float
    batch: int
    interconnect_bytes_per_step: float = 0.0  # one GPU's TP all-reduce and PP sends, one way
    link: Link | None = None  # the link they take; None: not counted
    pipeline_parallel_size: int = 1
    # One sequence's time through every pipeline stage per token; 0: one stage (the step's own).
    stream_seconds_per_token: float = 0.0

    @property
    def bytes_per_step(self) -> int:
        """Bytes one GPU must read from memory for one decode step of the whole batch."""
        return self.weight_bytes_per_step + self.kv_cache_bytes_per_step

    @property
    def memory_seconds_per_step(self) -> float:
        return self.bytes_per_step / self.memory_bandwidth_bytes_per_s

    @property
    def interconnect_seconds_per_step(self) -> float:
        """The least time the step's traffic takes on the link (0 where none is counted)."""
        if self.link is None:
            return 0.0
        return self.interconnect_bytes_per_step / (self.link.gb_s_per_direction * 1e9)

    @property
    def steps_per_second(self) -> float:
        return 1 / (self.memory_seconds_per_step + self.interconnect_seconds_per_step)

    @property
    def tokens_per_second_per_stream(self) -> float:
        """Each sequence gains one token per step: the fastest any one stream can decode; under
        pipeline parallelism no faster than one pass of its token through every stage."""
        if self.stream_seconds_per_token > 0:
            return min(self.steps_per_second, 1 / self.stream_seconds_per_token)
        return self.steps_per_second

    @property
    def tokens_per_second(self) -> float:
        """Tokens per second of the whole batch (one replica)."""
        return self.steps_per_second * self.batch


@dataclass(frozen=True)
class ComputeBound:
    """The compute bound on output tokens per second of one GPU."""

    flops_per_token: float  # 2 × parameters one token passes through, plus its attention
    dense_tflops: float

    @property
    def tokens_per_second_per_gpu(self) -> float:
        return self.dense_tflops * 1e12 / self.flops_per_token


def decode_tokens_per_second_bound(
    arch: ModelArch,
    fmt: WeightFormat,
    memory_bandwidth_bytes_per_s: float,
    decode: DecodeBatch = ONE_SEQUENCE,
    kv_cache_dtype: str | None = None,
    *,
    link: Link | None = None,
) -> DecodeBound:
    """The bandwidth bound on decode speed per stream.

    One step reads the weights a token touches once for the whole batch (one GPU's shard under
    tensor parallelism) and the KV cache of the `decode` batch's sequences, each of its
    context.
    Routed experts are counted as if every sequence picked the same ones: the smallest read.
    With more than one GPU and a `link`, the step also sends its TP all-reduces and PP
    activations over it (`calculators.interconnect.decode_step_traffic`), after the reads.
    Under pipeline parallelism each stage reads only its own layers' weights and KV cache, and
    the pipelined step takes the slowest stage's time (`calculators.pipeline_stages`).
    """
    _check_decode_inputs(memory_bandwidth_bytes_per_s, decode)
    layout, batch = decode.layout, decode.batch
    weights = decode_weight_bytes_per_step(arch, fmt, layout.tensor_parallel_size)
    kv_shape = kv_cache_shape(
        arch,
        kv_cache_dtype=kv_cache_dtype,
        tensor_parallel_size=layout.tensor_parallel_size,
        model_dtype_bytes=fmt.unquantized_bytes_per_param,
    )
    if layout.pipeline_parallel_size > 1:
        return _pipelined_decode_bound(
            arch, fmt, weights, kv_shape, memory_bandwidth_bytes_per_s, decode, link
        )
    traffic = decode_step_traffic(arch, layout, batch, fmt.unquantized_bytes_per_param)
    return DecodeBound(
        weight_bytes_per_step=weights,
        kv_cache_bytes_per_step=batch * kv_shape.bytes_for_sequence(decode.context_tokens),
        memory_bandwidth_bytes_per_s=memory_bandwidth_bytes_per_s,
        batch=batch,
        interconnect_bytes_per_step=traffic.bytes_per_step if link is not None else 0.0,
        link=link,
    )


def _check_decode_inputs(memory_bandwidth_bytes_per_s: float, decode: DecodeBatch) -> None:
    above_zero("memory_bandwidth_bytes_per_s", memory_bandwidth_bytes_per_s)
    at_least_one("batch", decode.batch)
    if decode.context_tokens < 0:
        raise InputError(f"context_tokens: expected an integer >= 0, got {decode.context_tokens}")


def _pipelined_decode_bound(
    arch: ModelArch,
    fmt: WeightFormat,
    weights: int,
    kv_shape: KVCacheShape,
    memory_bandwidth_bytes_per_s: float,
    decode: DecodeBatch,
    link: Link | None,
) -> DecodeBound:
    """The bound of a pipelined step: the slowest stage's reads and sends
    (`calculators.pipeline_stages`)."""
    step = pipeline_step(
        arch,
        bytes_per_touched_param(arch, fmt, decode.layout.tensor_parallel_size),
        weights,
        kv_shape,
        decode,
        memory_bandwidth_bytes_per_s=memory_bandwidth_bytes_per_s,
        activation_bytes=fmt.unquantized_bytes_per_param,
        link=link,
        quantized_by_layer=bool(fmt.unquantized_layers),
    )
    return DecodeBound(
        weight_bytes_per_step=step.slowest.weight_bytes,
        kv_cache_bytes_per_step=step.slowest.kv_cache_bytes,
        memory_bandwidth_bytes_per_s=memory_bandwidth_bytes_per_s,
        batch=decode.batch,
        interconnect_bytes_per_step=step.slowest.interconnect_bytes,
        link=link,
        pipeline_parallel_size=decode.layout.pipeline_parallel_size,
        stream_seconds_per_token=step.stream_seconds_per_token,
    )


def attention_flops_per_token(arch: ModelArch, context_tokens: int) -> float:
    """FLOPs of one token's attention over `context_tokens` earlier tokens, summed over layers.

    Per query head and attended token: the score (q·k, `qk` multiply-adds) and the weighted
    value (`v` multiply-adds), two FLOPs each. A sliding or chunked layer attends to at most its
    window, DeepSeek-V3.2's indexer to its top-k, a recurrent layer (Mamba, linear attention) to
    nothing that grows with the context. Under MLA the smaller of the absorbed (latent) and the
    expanded head sizes is taken: the bound keeps the cheaper kernel.
    """
    if context_tokens < 0:
        raise InputError(f"context_tokens: expected an integer >= 0, got {context_tokens}")
    if arch.mla is not None:
        mla = arch.mla
        qk = mla.qk_rope_head_dim + min(mla.qk_nope_head_dim, mla.kv_lora_rank)
        v = min(mla.v_head_dim, mla.kv_lora_rank)
    else:
        qk = v = arch.head_dim
    context = context_tokens
    if arch.indexer is not None:
        context = min(context, arch.indexer.top_k)
    attended = 0
    for kind in arch.layer_kinds:
        if kind == FULL:
            attended += context
        elif kind == SLIDING:
            attended += min(context, arch.sliding_window or context)
        elif kind == CHUNKED:
            attended += min(context, arch.attention_chunk_size or context)
    return 2.0 * arch.num_attention_heads * (qk + v) * attended


def flops_per_output_token(arch: ModelArch, context_tokens: int = 0) -> float:
    """Two FLOPs per parameter a token passes through, plus its attention over
    `context_tokens` (`attention_flops_per_token`)."""
    counts = param_counts(arch)
    weights = 2.0 * sum(touched_params(counts, arch).values())
    return weights + attention_flops_per_token(arch, context_tokens)


def output_tokens_per_second_per_gpu_bound(
    arch: ModelArch, dense_tflops: float, context_tokens: int = 0
) -> ComputeBound:
    """The compute bound on output tokens per second per GPU at `dense_tflops` peak, for
    output tokens that attend to `context_tokens` on average (the prompt and the tokens
    generated before them).

    Prefill work is left out (a prefix cache may skip it), which only loosens the bound.
    """
    above_zero("dense_tflops", dense_tflops)
    return ComputeBound(
        flops_per_token=flops_per_output_token(arch, context_tokens), dense_tflops=dense_tflops
    )


def dense_tflops_for(fmt: WeightFormat, rates: Mapping[str, float | None]) -> float | None:
    """The highest dense tensor rate the format's kernels might use, from a GPU's rates by data
    type (`bf16`, `fp16`, `fp8`, `int8`, `fp4`): generous, so the bound stays a bound
    (W4A8 or FP8 activations run at the 8-bit rate). None when the GPU states none."""
    candidates = [rates.get("bf16"), rates.get("fp16")]
    if fmt.quantized_roles:
        candidates += [rates.get("fp8"), rates.get("int8")]
    if fmt.method in ("nvfp4", "mxfp4"):
        candidates.append(rates.get("fp4"))
    known = [rate for rate in candidates if rate]
    return max(known) if known else None


def prefill_seconds_bound(
    arch: ModelArch,
    settings: VllmSettings,
    dense_tflops_by_dtype: Mapping[str, float | None],
    input_tokens: int,
) -> float | None:
    """The least time a memory plan's deployment takes to prefill one prompt of `input_tokens`:
    two FLOPs per parameter each prompt token passes through, at the peak dense rate of one
    replica's GPUs (a prompt goes to one replica). Attention over the prompt is left out, which
    only shortens it. None where the GPU states no rate."""
    fmt = weight_format(
        arch, settings.quantization, settings.dtype, parse_release(settings.vllm_version)
    )
    tflops = dense_tflops_for(fmt, dense_tflops_by_dtype)
    if tflops is None:
        return None
    gpus = settings_layout(settings).replica_gpus
    return input_tokens * flops_per_output_token(arch) / (tflops * 1e12 * gpus)


@dataclass(frozen=True)
class ThroughputBound:
    """An upper bound on a deployment's decode output tokens per second at a batch size: the
    smaller of the bandwidth bound (every step reads the weights and the batch's KV cache,
    then, on more than one GPU, sends its all-reduces over the link) and the compute bound
    (2 FLOPs per parameter per token, at peak dense rate). `limited_by` is `interconnect` when
    the link's share of the bandwidth bound's step is the larger one."""

    batch: int
    context_tokens: int
    gpu_count: int
    bandwidth_tokens_per_second: float  # whole deployment, this batch
    bandwidth_tokens_per_second_per_stream: float
    compute_tokens_per_second: float | None  # whole deployment; None: the GPU states no rate
    tokens_per_second: float
    limited_by: Literal["bandwidth", "interconnect", "compute"]
    memory_seconds_per_step: float  # one GPU's reads
    interconnect_seconds_per_step: float  # its traffic on the link; 0: one GPU, or no link
    interconnect: str  # what the bound counts of the GPUs' traffic, in a reader's words
    data_parallel_size: int = 1  # replicas sharing `batch`; each reads its own weights

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def deployment_throughput_bound(
    arch: ModelArch,
    fmt: WeightFormat,
    memory_bandwidth_bytes_per_s: float,
    dense_tflops: float | None,
    decode: DecodeBatch = ONE_SEQUENCE,
    *,
    kv_cache_dtype: str | None = None,
    links: Sequence[Link] = (),
) -> ThroughputBound:
    """No replica of the `decode` batch's layout decodes its batch faster.

    The bandwidth bound is the replica's (tensor-parallel GPUs read their shards in parallel,
    then exchange their all-reduces over the fastest of the GPU's `links` that joins the
    replica's GPUs, `calculators.interconnect`); the compute bound is per GPU × the replica's
    GPUs. Under pipeline parallelism: the batch's tokens per time of the slowest stage, as in
    steady state with micro-batches in flight on every stage.
    """
    gpu_count = decode.layout.replica_gpus
    at_least_one("gpu_count", gpu_count)
    link = link_joining(links, gpu_count) if gpu_count > 1 else None
    reads = decode_tokens_per_second_bound(
        arch, fmt, memory_bandwidth_bytes_per_s, decode, kv_cache_dtype, link=link
    )
    compute = (
        None
        if dense_tflops is None
        else output_tokens_per_second_per_gpu_bound(
            arch, dense_tflops, decode.context_tokens
        ).tokens_per_second_per_gpu
        * gpu_count
    )
    bandwidth = reads.tokens_per_second
    return ThroughputBound(
        batch=decode.batch,
        context_tokens=decode.context_tokens,
        gpu_count=gpu_count,
        bandwidth_tokens_per_second=bandwidth,
        bandwidth_tokens_per_second_per_stream=reads.tokens_per_second_per_stream,
        compute_tokens_per_second=compute,
        tokens_per_second=min(bandwidth, compute) if compute is not None else bandwidth,
        limited_by=_limited_by(reads, compute),
        memory_seconds_per_step=reads.memory_seconds_per_step,
        interconnect_seconds_per_step=reads.interconnect_seconds_per_step,
        interconnect=interconnect_label(gpu_count, decode.layout.tensor_parallel_size, link),
    )


def _limited_by(
    decode: DecodeBound, compute_tokens_per_second: float | None
) -> Literal["bandwidth", "interconnect", "compute"]:
    """Which bound is the lowest: compute, else the link when its traffic outlasts the reads."""
    compute = compute_tokens_per_second
    if compute is not None and compute < decode.tokens_per_second:
        return "compute"
    if decode.interconnect_seconds_per_step > decode.memory_seconds_per_step:
        return "interconnect"
    return "bandwidth"


def plan_throughput_bound(
    arch: ModelArch,
    settings: VllmSettings,
    memory_bandwidth_gb_s: float,
    dense_tflops_by_dtype: Mapping[str, float | None],
    context_tokens: int,
    concurrency: int,
    links: Sequence[Link] = (),
) -> ThroughputBound:
    """The decode throughput bound of a memory plan's deployment at `concurrency` requests in
    all: the settings' weight format, KV cache dtype and parallelism on a GPU of these specs and
    links.

    Each data-parallel replica decodes its share of the requests (vLLM balances them over its
    engines; the first `concurrency % data_parallel_size` replicas take one more) on its own
    GPUs, so the deployment's bound is the sum of the replicas' bounds, and a replica without a
    request adds nothing.
    """
    at_least_one("concurrency", concurrency)
    fmt = weight_format(
        arch, settings.quantization, settings.dtype, parse_release(settings.vllm_version)
    )
    layout = settings_layout(settings)
    dp = layout.data_parallel_size
    shares = [concurrency // dp + (1 if index < concurrency % dp else 0) for index in range(dp)]
    by_share = {
        share: deployment_throughput_bound(
            arch,
            fmt,
            memory_bandwidth_gb_s * 1e9,
            dense_tflops_for(fmt, dense_tflops_by_dtype),
            DecodeBatch(layout, context_tokens, share),
            kv_cache_dtype=settings.kv_cache_dtype,
            links=links,
        )
        for share in set(shares)
        if share
    }
    if dp == 1:
        return by_share[concurrency]
    return _replicas_bound([by_share[share] for share in shares if share], concurrency, dp)


def _replicas_bound(busy: list[ThroughputBound], concurrency: int, dp: int) -> ThroughputBound:
    """The sum of the data-parallel replicas' bounds (`busy`: those with a request, the
    fullest first); per-stream and per-step figures are the fullest replica's."""
    computes = [bound.compute_tokens_per_second for bound in busy]
    fullest = busy[0]
    replica_gpus = fullest.gpu_count
    return ThroughputBound(
        batch=concurrency,
        context_tokens=fullest.context_tokens,
        gpu_count=replica_gpus * dp,
        bandwidth_tokens_per_second=sum(bound.bandwidth_tokens_per_second for bound in busy),
        bandwidth_tokens_per_second_per_stream=fullest.bandwidth_tokens_per_second_per_stream,
        compute_tokens_per_second=None
        if any(compute is None for compute in computes)
        else sum(compute or 0.0 for compute in computes),
        tokens_per_second=sum(bound.tokens_per_second for bound in busy),
        limited_by=fullest.limited_by,
        data_parallel_size=dp,
        memory_seconds_per_step=fullest.memory_seconds_per_step,
        interconnect_seconds_per_step=fullest.interconnect_seconds_per_step,
        interconnect=fullest.interconnect
        if replica_gpus > 1
        else "replicas of one GPU each: no traffic between GPUs",
    )
