"""Physics: a valid result against what its GPU can do at all, with the bound in the message.

Per-stream decode speed against the memory-bandwidth bound (calculators.roofline), output
throughput per GPU against the compute bound (the model's active parameters and each output
token's attention over the shortest context the workload allows, at the GPU's peak dense rate),
memory in use and weights against the GPU's memory (the stated weight format's bytes against
all the result's GPUs together), mean power against the board's power
limit, and a vLLM result's stated weight format against what its release serves on its GPU
(`calculators.served_formats`). Bounds are generous by construction and a stated margin is
added on top: only results no real run could produce fail.

A quantization or dtype the calculators do not know is never a reason to skip: the result is
bounded by the most generous format they know (the fewest bytes per weight for the decode
bound, the fastest tensor rate of the GPU for the compute bound). A catalog model whose config
the calculators cannot read is a finding, not a silent pass.
"""

import functools
from collections.abc import Iterator

from infermeter.calculators.answer_estimate import most_memory_bytes
from infermeter.calculators.checkpoint_export import checkpoint_run
from infermeter.calculators.decode_batch import DecodeBatch
from infermeter.calculators.errors import CalculatorError, InputError
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.parallel import ParallelLayout
from infermeter.calculators.quantization import (
    QUANTIZATION_CHOICES,
    WeightFormat,
    weight_bytes,
    weight_format,
)
from infermeter.calculators.roofline import (
    decode_tokens_per_second_bound,
    output_tokens_per_second_per_gpu_bound,
)
from infermeter.calculators.served_formats import refusal, vllm_method
from infermeter.calculators.vllm_settings import parse_release
from infermeter.registry.catalog import catalog_arch, gpu_traits
from infermeter.registry.checks import Finding, whole
from infermeter.registry.models import GpuEntry, ModelEntry, Result
from infermeter.registry.models.identity import LengthDistribution

DECODE_SLACK = 1.2
"""How far above the bandwidth bound a decode speed may go before it fails (rounding, specs)."""

COMPUTE_MARGIN = 1.25
"""How far above the compute bound output throughput per GPU may go before it fails: the
catalog's peak rates are datasheet figures at the rated clock, rounded; no kernel runs above
peak. 2:4-sparse kernels (twice the dense rate) are outside the model, as speculative decoding
is for the decode bound. Ten times the registry's H100 Llama-3.1-8B FP8 figure is 1.7× the
bound, so it fails."""

POWER_SLACK = 1.5
"""How far above the board power limit the mean power per GPU may go before it fails."""

GIB = 2**30


def _finding(file: str, path: str, message: str) -> Finding:
    return Finding(file, path, message, "physics")


def gpu_memory_bytes(gpu: GpuEntry) -> float:
    """The most memory one GPU can have in use: the larger of marketed and reported size."""
    return most_memory_bytes(gpu.memory_gb, gpu.memory_reported_mib)


def _least_tokens(length: LengthDistribution, floor: int) -> int:
    """The fewest tokens a length distribution gives (`floor` where it sets no bound)."""
    if length.kind == "fixed":
        return length.value
    if length.kind == "uniform":
        return length.min
    if length.kind in ("normal", "lognormal"):
        return max(floor, length.min or floor)
    return floor


def smallest_prompt_tokens(result: Result) -> int:
    """The shortest prompt the workload can send: the least KV cache a stream must read."""
    return _least_tokens(result.identity.workload.input_len, 0)


def smallest_output_tokens(result: Result) -> int:
    """The fewest tokens a request of the workload generates (1 when it is not bounded)."""
    return _least_tokens(result.identity.workload.output_len, 1)


def decode_context_tokens(result: Result) -> int:
    """The least mean context an output token attends to: the shortest prompt plus half the
    tokens generated before it in the shortest request."""
    return smallest_prompt_tokens(result) + (smallest_output_tokens(result) - 1) // 2


def generous_dense_tflops(gpu: GpuEntry, fmt: WeightFormat | None) -> float | None:
    """The highest dense rate the format's kernels might use (W4A8, FP8 activations …), so a
    compute bound stays a bound; an unknown format (None) may use the GPU's fastest."""
    rates = gpu.tflops_dense
    candidates = [rates.bf16, rates.fp16]
    if fmt is None or fmt.quantized_roles:
        candidates += [rates.fp8, rates.int8]
    if fmt is None or fmt.method in ("nvfp4", "mxfp4"):
        candidates.append(rates.fp4)
    known = [rate for rate in candidates if rate]
    return max(known) if known else None


def known_formats(arch: ModelArch) -> list[WeightFormat]:
    """Every weight format the calculators know, as they would apply to `arch`."""
    formats = []
    for method in QUANTIZATION_CHOICES:
        try:
            formats.append(weight_format(arch, method, None))
        except CalculatorError:
            continue
    return formats


def result_format(
    arch: ModelArch, quantization: str | None, dtype: str | None
) -> tuple[ModelArch, WeightFormat | None]:
    """The result's weight format on the catalog's checkpoint, with that architecture; None
    where the calculators cannot read it there: a format they do not know (`fp4`, naming
    neither NVFP4 nor MXFP4) or one vLLM does not serve that checkpoint in (DeepSeek-R1's FP8
    one at nvfp4 or mxfp4), which the result ran as an export whose quantizer's layout no file
    states. Such a result is bounded generously, on the architecture of the checkpoint it ran
    (`checkpoint_export.checkpoint_run`: the catalog's quantization_config left out) in the
    most compact known format (`most_compact_format`) at the GPU's fastest rate
    (`generous_dense_tflops`): the FP8 checkpoint's one format read a byte a weight."""
    try:
        return arch, weight_format(arch, quantization, dtype)
    except CalculatorError:
        return checkpoint_run(arch, quantization), None


def most_compact_format(arch: ModelArch) -> WeightFormat:
    """The known format with the fewest bytes per weight: the most generous decode bound."""
    return min(known_formats(arch), key=lambda fmt: fmt.bytes_per_param)


def _memory_findings(file: str, result: Result, gpu: GpuEntry) -> Iterator[Finding]:
    capacity = gpu_memory_bytes(gpu)
    for index, point in enumerate(result.points):
        telemetry = point.telemetry.gpu if point.telemetry is not None else None
        if telemetry is None or telemetry.memory_used_bytes_max is None:
            continue
        used = telemetry.memory_used_bytes_max
        if used > capacity:
            message = (
                f"{used / 1e9:.1f} GB in use exceeds the {capacity / 1e9:.1f} GB of one {gpu.id}"
            )
            yield _finding(file, f"points[{index}].telemetry.gpu.memory_used_bytes_max", message)
    startup = result.startup
    weights_gib = startup.weights_gib if startup is not None else None
    if weights_gib is not None and weights_gib * GIB > capacity:
        message = (
            f"{weights_gib} GiB of weights per GPU do not fit the "
            f"{capacity / GIB:.1f} GiB of one {gpu.id}"
        )
        yield _finding(file, "startup.weights_gib", message)


def _weights_fit_findings(
    file: str, result: Result, gpu: GpuEntry, arch: ModelArch, fmt: WeightFormat
) -> Iterator[Finding]:
    """The stated weight format's bytes against the memory of all the result's GPUs: a format
    that cannot fit is not what ran (v4.1's `fp16`, the starting weights of FP8 runs)."""
    count = result.identity.gpu.count
    weights = weight_bytes(arch, fmt).total
    capacity = count * gpu_memory_bytes(gpu)
    if weights <= capacity:
        return
    identity = result.identity.model
    field = "quantization" if identity.quantization is not None else "dtype"
    stated = identity.quantization or identity.dtype or fmt.method
    message = (
        f"{weights / 1e9:.0f} GB of {identity.id} weights in {stated} do not fit the "
        f"{capacity / 1e9:.0f} GB of {count} × {gpu.id}: the stated weight format cannot be "
        "what ran"
    )
    yield _finding(file, f"identity.model.{field}", message)


def _served_findings(
    file: str, result: Result, gpu: GpuEntry, arch: ModelArch
) -> Iterator[Finding]:
    """A vLLM result whose stated weights its GPU's vLLM release refuses to serve
    (`calculators.served_formats`: nvfp4 on an MI300X under 0.19) is not what ran. A release the
    result does not state, or one outside those the calculators read, settles nothing."""
    engine = result.identity.engine
    if engine.name.lower() != "vllm" or not engine.version.split():
        return
    try:
        release = parse_release(engine.version.split()[0])
    except InputError:
        return
    stated = result.identity.model.quantization
    method = vllm_method(arch, stated)
    refused = refusal(method, gpu_traits(gpu), release)
    if refused is None:
        return
    label = ".".join(map(str, release))
    message = (
        f"vLLM {label} does not serve {method} weights on the {gpu.id}: '{refused}'; the stated "
        "weight format cannot be what ran"
    )
    yield _finding(file, "identity.model.quantization" if stated else "identity.gpu.id", message)


def _power_findings(file: str, result: Result, gpu: GpuEntry) -> Iterator[Finding]:
    if gpu.tdp_w is None:
        return
    count = result.identity.gpu.count
    for index, point in enumerate(result.points):
        telemetry = point.telemetry.gpu if point.telemetry is not None else None
        if telemetry is None or telemetry.power_w_mean is None:
            continue
        per_gpu = telemetry.power_w_mean / count
        if per_gpu > POWER_SLACK * gpu.tdp_w:
            message = (
                f"{whole(per_gpu)} W mean per GPU is more than {POWER_SLACK:g}× the "
                f"{gpu.tdp_w:g} W power limit of {gpu.id}"
            )
            yield _finding(file, f"points[{index}].telemetry.gpu.power_w_mean", message)


def _decode_findings(
    file: str, result: Result, gpu: GpuEntry, arch: ModelArch, fmt: WeightFormat
) -> Iterator[Finding]:
    identity = result.identity
    pipeline = identity.serving.pipeline_parallel_size or 1
    tensor = identity.serving.tensor_parallel_size or max(1, identity.gpu.count // pipeline)
    bandwidth = gpu.memory_bandwidth_gb_s * 1e9
    bound_at = functools.partial(
        decode_tokens_per_second_bound,
        arch,
        fmt,
        bandwidth,
        DecodeBatch(ParallelLayout(tensor), smallest_prompt_tokens(result)),
    )
    try:
        bound = bound_at(kv_cache_dtype=identity.model.kv_cache_dtype)
    except CalculatorError:
        # A KV cache layout the calculators do not know: bounded at the smallest (fp8).
        bound = bound_at(kv_cache_dtype="fp8")
    limit = bound.tokens_per_second_per_stream
    for index, point in enumerate(result.points):
        for name in ("tpot_ms", "itl_ms"):
            stats = getattr(point, name)
            if stats is not None and stats.mean is not None:
                break
        else:
            continue
        speed = 1000 / stats.mean if stats.mean > 0 else float("inf")
        if speed <= DECODE_SLACK * limit:
            continue
        sharding = f" on each of {tensor} GPUs" if tensor > 1 else ""
        message = (
            f"decode {whole(speed)} tok/s per stream ({name}.mean {stats.mean:g}) exceeds the "
            f"memory-bandwidth bound {whole(limit)} tok/s of {gpu.id} for {identity.model.id} in "
            f"{fmt.method} ({gpu.memory_bandwidth_gb_s:g} GB/s, "
            f"{bound.bytes_per_step / 1e9:.1f} GB read per token{sharding})"
        )
        yield _finding(file, f"points[{index}].{name}.mean", message)


def _compute_findings(
    file: str, result: Result, gpu: GpuEntry, arch: ModelArch, fmt: WeightFormat | None
) -> Iterator[Finding]:
    tflops = generous_dense_tflops(gpu, fmt)
    if tflops is None:
        return
    context = decode_context_tokens(result)
    bound = output_tokens_per_second_per_gpu_bound(arch, tflops, context_tokens=context)
    unknown = "" if fmt is not None else ", the fastest rate: its weight format is unknown"
    limit = bound.tokens_per_second_per_gpu
    count = result.identity.gpu.count
    for index, point in enumerate(result.points):
        rate = point.throughput.output_tokens_per_s
        if rate is None or rate / count <= COMPUTE_MARGIN * limit:
            continue
        message = (
            f"{whole(rate / count)} output tok/s per GPU is more than {COMPUTE_MARGIN:g}× the "
            f"compute bound {whole(limit)} tok/s of {gpu.id} for {result.identity.model.id} "
            f"({tflops:g} dense TFLOPS{unknown}, {bound.flops_per_token / 1e9:.2f} GFLOP per "
            f"token at {context} tokens of context)"
        )
        yield _finding(file, f"points[{index}].throughput.output_tokens_per_s", message)


def physics_findings(
    file: str, result: Result, gpu: GpuEntry | None, model: ModelEntry | None
) -> list[Finding]:
    """Every bound the result's figures break; unknown GPUs or models are skipped here (the
    references check reports them)."""
    if gpu is None:
        return []
    findings = [*_memory_findings(file, result, gpu), *_power_findings(file, result, gpu)]
    if model is None:
        return findings
    identity = result.identity.model
    try:
        arch = catalog_arch(model)
    except CalculatorError as error:
        message = f"the calculators cannot read the catalog config of {model.id}: {error}"
        return [*findings, _finding(file, "identity.model.id", message)]
    # A format unknown to the calculators (fmt None) is bounded at the most generous known one.
    planned, fmt = result_format(arch, identity.quantization, identity.dtype)
    findings.extend(_served_findings(file, result, gpu, arch))
    if fmt is not None:
        findings.extend(_weights_fit_findings(file, result, gpu, planned, fmt))
    compact = fmt or most_compact_format(planned)
    findings.extend(_decode_findings(file, result, gpu, planned, compact))
    findings.extend(_compute_findings(file, result, gpu, planned, fmt))
    return findings
