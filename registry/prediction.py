"""The estimate the answer pages show where no evidence qualifies: one call from catalog
entries to a prediction (`calculators.predict`) with its measured error, or to the roofline
bound where the prediction's kind missed its target (`calculators.perf_labels`).

    estimate(model, gpu, gpu_count=8, precision="fp8", input_tokens=1000, output_tokens=1000,
             slo=Slo(ttft_ms=2000, tpot_ms=200), usd_per_gpu_hour=2.5)

With an SLO the figure is the throughput at the highest rate whose predicted p99 meets it (kind
`server`); without, offline throughput (kind `offline`). Never a measurement, never ranked with
evidence: its `label` says what it is.
"""

from dataclasses import dataclass, replace
from typing import Any

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import CalculatorError
from infermeter.calculators.perf_api import PerfRequest, perf
from infermeter.calculators.perf_labels import error_label, missed_target
from infermeter.calculators.predict import Deployment, Slo, smallest_tensor_parallel
from infermeter.registry.models import GpuEntry, ModelEntry
from infermeter.registry.perf_cases import QUANTIZATION_BY_PRECISION, gpu_for_prediction


@dataclass(frozen=True)
class Estimate:
    """What an answer page shows for a deployment without evidence."""

    gpu: str
    gpu_count: int
    tensor_parallel_size: int
    output_tokens_per_s: float  # the prediction, or the bound where `shown` is `bound`
    shown: str  # `prediction` or `bound`
    kind: str  # offline or server
    label: str  # e.g. "predicted: median error 14 % over 212 held-out results (…)"
    missed_target: str | None  # which target the kind missed, and by how much
    usd_per_million_output_tokens: float | None


def _perf(
    model: ModelEntry,
    gpu: GpuEntry,
    gpu_count: int,
    precision: str | None,
    input_tokens: int,
    output_tokens: int,
    slo: Slo | None,
    usd_per_gpu_hour: float | None,
) -> tuple[dict[str, Any], Deployment] | None:
    """`calc perf`'s payload for the deployment, and the deployment; None where the calculators
    cannot plan it."""
    try:
        quantization = QUANTIZATION_BY_PRECISION.get((precision or "").lower())
        deployment = Deployment(
            arch=parse_config(model.config),
            gpu=gpu_for_prediction(gpu),
            quantization=quantization,
            kv_cache_dtype="fp8" if quantization else None,
        )
        tensor = smallest_tensor_parallel(deployment, gpu_count)
        deployment = replace(
            deployment, tensor_parallel_size=tensor, data_parallel_size=max(1, gpu_count // tensor)
        )
        request = PerfRequest(
            model=model.id,
            deployment=deployment,
            input_len=input_tokens,
            output_len=output_tokens,
            dataset=None,
            concurrency=None,
            request_rate=None,
            offline=True,
            static_batch=None,
            slo_ttft_ms=None if slo is None else slo.ttft_ms,
            slo_tpot_ms=None if slo is None else slo.tpot_ms,
            price_per_hour=usd_per_gpu_hour,
        )
        return perf(request, None), deployment
    except CalculatorError:
        return None


def predicted_tokens_per_s(
    model: ModelEntry,
    gpu: GpuEntry,
    gpu_count: int,
    precision: str | None,
    input_tokens: int,
    output_tokens: int,
    slo: Slo | None = None,
) -> float | None:
    """The predictor's output tokens/s (never the bound): offline without `slo`, else at the
    highest rate whose predicted p99 TTFT and TPOT meet it; None where it predicts nothing (the
    model does not fit, no rate meets the SLO) or the deployment is not `gpu_count` GPUs."""
    found = _perf(model, gpu, gpu_count, precision, input_tokens, output_tokens, slo, None)
    if found is None or found[1].gpu_count != gpu_count:
        return None
    payload = found[0]
    tokens = (
        payload["output_tokens_per_s"] if slo is None else payload["output_tokens_per_s_at_slo"]
    )
    return float(tokens) if tokens else None


def estimate(
    model: ModelEntry,
    gpu: GpuEntry,
    gpu_count: int,
    precision: str | None,
    input_tokens: int,
    output_tokens: int,
    slo: Slo | None = None,
    usd_per_gpu_hour: float | None = None,
) -> Estimate | None:
    """The estimate for `gpu_count` × `gpu` serving `model` at `precision` (bf16 when None or
    `bf16`); None where the calculators cannot plan it (the model does not fit …)."""
    found = _perf(
        model, gpu, gpu_count, precision, input_tokens, output_tokens, slo, usd_per_gpu_hour
    )
    if found is None:
        return None
    payload, deployment = found
    kind = "offline" if slo is None else "server"
    at_slo = payload["output_tokens_per_s_at_slo"]
    predicted = payload["output_tokens_per_s"] if slo is None else at_slo
    missed = missed_target(kind)
    tokens = payload["roofline_bound_tokens_per_s"] if missed else predicted
    usd = None
    if usd_per_gpu_hour is not None and tokens:
        usd = usd_per_gpu_hour * deployment.gpu_count / (tokens * 3600) * 1e6
    return Estimate(
        gpu=gpu.id,
        gpu_count=deployment.gpu_count,
        tensor_parallel_size=deployment.tensor_parallel_size,
        output_tokens_per_s=tokens or 0.0,
        shown="bound" if missed else "prediction",
        kind=kind,
        label="roofline bound: no run exceeds it" if missed else error_label(kind),
        missed_target=missed,
        usd_per_million_output_tokens=usd,
    )
