"""The slowest pipeline stage of one decode step: under pipeline parallelism each stage holds,
and reads, only its own layers' weights and KV cache.

A stage is a contiguous run of layers on `tensor_parallel_size` GPUs; the last one also holds the
lm_head and the final norm (a tied embedding table is the lm_head; the first stage's embedding
lookup reads one row and is left out). Every layer costs the reads of its own weights (its kind's
attention or recurrent mixer, its dense MLP or the experts a token picks) and of its KV cache (a
full or chunked layer the whole context, a sliding layer at most its window, a Mamba or linear
attention layer one state per sequence), and, with a link, its two tensor-parallel all-reduces;
each stage but the last then sends the batch's activations to the next
(`calculators.interconnect`).

Which model of time: with micro-batching (vLLM runs as many micro-batches as stages) the stages
work on different micro-batches at once, so in steady state the pipeline emits `batch` tokens per
time of its slowest stage: `batch / max(stage time)`. The unpipelined sum of the stages' times is
slower; the steady-state figure is the upper bound, so the bound takes it, counting each stage's
weights once per step of the whole batch (micro-batches that read them again only slow it).

Which split: engines split the layers their own way (vLLM gives the stages before the last one
more layer each of the remainder, and `VLLM_PP_LAYER_PARTITION` sets any split), so the bound
takes the split whose slowest stage is the fastest: no split beats it. One stream still passes
every stage in turn for each token, so its speed is bounded by the sum of the stages' times at
one sequence as well (`stream_seconds_per_token`).

A checkpoint that keeps some layers unquantized by index (`WeightFormat.unquantized_layers`) has
no per-layer byte figure here: its stages are taken as equal shares of the whole reads (each
1/PP, no activations sent), a mean no slowest stage is below.
"""

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from infermeter.calculators.decode_batch import DecodeBatch
from infermeter.calculators.decode_reads import touched_params
from infermeter.calculators.errors import InputError
from infermeter.calculators.interconnect import Link, decode_step_traffic
from infermeter.calculators.kv_cache import KVCacheShape
from infermeter.calculators.model_arch import MIXER_FREE_KINDS, SLIDING, STATE_KINDS, ModelArch
from infermeter.calculators.param_count import param_counts


@dataclass(frozen=True)
class StageReads:
    """One pipeline stage's work for one decode step of the whole batch, on one of its GPUs."""

    first_layer: int
    layers: int
    weight_bytes: int
    kv_cache_bytes: int
    interconnect_bytes: float  # its TP all-reduces and, but on the last stage, its send
    seconds: float  # reads over the memory bandwidth, plus traffic over the link


@dataclass(frozen=True)
class PipelineStep:
    """The slowest stage of the fastest split, and one stream's time through all stages."""

    slowest: StageReads
    stages: tuple[StageReads, ...]
    stream_seconds_per_token: float


@dataclass(frozen=True)
class _Costs:
    weight_bytes: tuple[float, ...]  # per layer
    kv_bytes_per_sequence: tuple[float, ...]  # per layer, at the context
    allreduce_bytes_per_sequence: float  # per layer, 0 without a link
    send_bytes_per_sequence: float  # per stage boundary, 0 without a link
    end_weight_bytes: float  # lm_head and final norm, on the last stage


# A layer's kind, whether it holds experts, and its own MLP width (DeciLM's; -1: the model's).
_Signature = tuple[str, bool, int]


def _layer_signature(arch: ModelArch, index: int) -> _Signature:
    moe_layers = arch.moe.moe_layers if arch.moe is not None else ()
    width = arch.mlp_widths[index] if arch.mlp_widths else -1
    return arch.layer_kinds[index], index in moe_layers, width


def _model_of(arch: ModelArch, signature: _Signature, layers: int) -> ModelArch:
    kind, sparse, width = signature
    moe = arch.moe
    if moe is not None:
        moe = dataclasses.replace(moe, moe_layers=tuple(range(layers)) if sparse else ())
    return dataclasses.replace(
        arch,
        num_layers=layers,
        layer_kinds=(kind,) * layers,
        moe=moe,
        vision=None,
        mlp_widths=(width,) * layers if width >= 0 else (),
    )


def _layer_weight_bytes(
    arch: ModelArch, signature: _Signature, rates: dict[str, float], tp: int
) -> float:
    """Bytes one layer of this kind reads: the parameters of a two-layer model of it less those of
    a one-layer one (what is not a layer cancels), at the whole model's bytes per parameter."""
    two = touched_params(param_counts(_model_of(arch, signature, 2), tp), arch)
    one = touched_params(param_counts(_model_of(arch, signature, 1), tp), arch)
    return sum(rates[role] * (two[role] - one[role]) for role in two)


def _costs(
    arch: ModelArch,
    fmt_rates: dict[str, float],
    total_weight_bytes: float,
    kv: KVCacheShape,
    decode: DecodeBatch,
    activation_bytes: int,
    link: Link | None,
) -> _Costs:
    context_tokens, layout = decode.context_tokens, decode.layout
    tp, pp = layout.tensor_parallel_size, layout.pipeline_parallel_size
    by_signature: dict[_Signature, float] = {}
    weights: list[float] = []
    kv_bytes: list[float] = []
    window = kv.sliding_window if kv.sliding_window is not None else context_tokens
    for index, kind in enumerate(arch.layer_kinds):
        signature = _layer_signature(arch, index)
        if signature not in by_signature:
            by_signature[signature] = _layer_weight_bytes(arch, signature, fmt_rates, tp)
        weights.append(by_signature[signature])
        if kind in STATE_KINDS:
            kv_bytes.append(kv.state_bytes_per_sequence_per_layer)
        elif kind in MIXER_FREE_KINDS:
            kv_bytes.append(0)  # Nemotron-H's MLP layers hold no KV
        elif kind == SLIDING:
            kv_bytes.append(kv.bytes_per_token_per_layer * min(context_tokens, window))
        else:
            kv_bytes.append(kv.bytes_per_token_per_layer * context_tokens)
    traffic = decode_step_traffic(arch, layout, 1, activation_bytes)
    return _Costs(
        weight_bytes=tuple(weights),
        kv_bytes_per_sequence=tuple(kv_bytes),
        allreduce_bytes_per_sequence=traffic.tensor_parallel_bytes * pp / arch.num_layers
        if link is not None
        else 0.0,
        send_bytes_per_sequence=traffic.pipeline_bytes if link is not None else 0.0,
        end_weight_bytes=max(0.0, total_weight_bytes - sum(weights)),
    )


def _stage(
    costs: _Costs, start: int, end: int, batch: int, bandwidth: float, link: Link | None
) -> StageReads:
    last = end == len(costs.weight_bytes)
    weights = sum(costs.weight_bytes[start:end]) + (costs.end_weight_bytes if last else 0.0)
    kv = batch * sum(costs.kv_bytes_per_sequence[start:end])
    traffic = batch * (
        costs.allreduce_bytes_per_sequence * (end - start)
        + (0.0 if last else costs.send_bytes_per_sequence)
    )
    link_seconds = traffic / (link.gb_s_per_direction * 1e9) if link is not None else 0.0
    return StageReads(
        first_layer=start,
        layers=end - start,
        weight_bytes=round(weights),
        kv_cache_bytes=round(kv),
        interconnect_bytes=traffic,
        seconds=(weights + kv) / bandwidth + link_seconds,
    )


def _split(times: Sequence[float], send: float, stages: int, limit: float) -> list[int]:
    """Starts of the fewest stages (at most `stages`) whose times stay within `limit`, each but
    the last taking as many layers as fit beside its send; [] when none does. `times` holds the
    last stage's own load in its last layer. The greedy cut is optimal: any split's k-th cut lies
    at or before the greedy one."""
    suffix = [0.0] * (len(times) + 1)
    for index in range(len(times) - 1, -1, -1):
        suffix[index] = suffix[index + 1] + times[index]
    starts: list[int] = []
    index = 0
    while len(starts) < stages:
        starts.append(index)
        if suffix[index] <= limit:
            return starts  # the rest fits in one last stage
        spent, stop = send, index
        while spent + times[stop] <= limit:  # stops before the end: the rest did not fit
            spent += times[stop]
            stop += 1
        if stop == index:
            return []  # one layer alone exceeds it
        index = stop
    return []


def _fastest_split(
    costs: _Costs, batch: int, bandwidth: float, link_rate: float, stages: int
) -> list[int]:
    """Starts of the split into at most `stages` whose slowest stage is fastest: a bisection on
    the slowest stage's time, each probe a greedy `_split`."""
    times = [
        (costs.weight_bytes[i] + batch * costs.kv_bytes_per_sequence[i]) / bandwidth
        + batch * costs.allreduce_bytes_per_sequence / link_rate
        for i in range(len(costs.weight_bytes))
    ]
    times[-1] += costs.end_weight_bytes / bandwidth
    send = batch * costs.send_bytes_per_sequence / link_rate
    low, high = 0.0, sum(times) + send
    while high - low > high * 1e-12:
        middle = (low + high) / 2
        if _split(times, send, stages, middle):
            high = middle
        else:
            low = middle
    return _split(times, send, stages, high)


def pipeline_step(
    arch: ModelArch,
    fmt_rates: dict[str, float],
    total_weight_bytes: int,
    kv: KVCacheShape,
    decode: DecodeBatch,
    *,
    memory_bandwidth_bytes_per_s: float,
    activation_bytes: int,
    link: Link | None,
    quantized_by_layer: bool = False,
) -> PipelineStep:
    """The slowest stage of the split of `arch`'s layers into the layout's pipeline parallel
    size of stages whose slowest stage is fastest, for one decode step of the `decode` batch
    (module docstring). `fmt_rates` are `bytes_per_touched_param`; with `quantized_by_layer`
    the stages are equal shares of the whole."""
    pp, batch = decode.layout.pipeline_parallel_size, decode.batch
    if not 1 < pp <= arch.num_layers:
        raise InputError(
            f"pipeline_parallel_size: expected 2 to the model's {arch.num_layers} layers, got {pp}"
        )
    costs = _costs(arch, fmt_rates, total_weight_bytes, kv, decode, activation_bytes, link)
    bandwidth = memory_bandwidth_bytes_per_s
    link_rate = link.gb_s_per_direction * 1e9 if link is not None else 1.0
    layers = len(costs.weight_bytes)
    whole_one = _stage(costs, 0, layers, 1, bandwidth, link)
    sends_one = (pp - 1) * costs.send_bytes_per_sequence / link_rate
    stream = whole_one.seconds + sends_one
    if quantized_by_layer:
        whole = _stage(costs, 0, layers, batch, bandwidth, link)
        share = StageReads(
            first_layer=0,
            layers=layers // pp,
            weight_bytes=whole.weight_bytes // pp,
            kv_cache_bytes=whole.kv_cache_bytes // pp,
            interconnect_bytes=whole.interconnect_bytes / pp,
            seconds=whole.seconds / pp,
        )
        return PipelineStep(slowest=share, stages=(share,) * pp, stream_seconds_per_token=stream)
    starts = _fastest_split(costs, batch, bandwidth, link_rate, pp)
    bounds = [*starts, layers]
    stages = tuple(
        _stage(costs, bounds[k], bounds[k + 1], batch, bandwidth, link) for k in range(len(starts))
    )
    slowest = max(stages, key=lambda stage: stage.seconds)
    return PipelineStep(slowest=slowest, stages=stages, stream_seconds_per_token=stream)
