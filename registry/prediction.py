"""The predictor's figure for a catalog deployment, as the answers' estimate uses it
(`registry.answers.AnswerEstimator`, which shows it with its measured error or the roofline
bound in its place): one call from catalog entries to `calculators.perf`.

    predicted_tokens_per_s(model, gpu, gpu_count=8, precision="fp8", input_tokens=1000,
                           output_tokens=1000, slo=Slo(ttft_ms=2000, tpot_ms=200))

With an SLO the figure is the throughput at the highest rate whose predicted p99 meets it;
without, offline throughput. Never a measurement.
"""

from dataclasses import replace

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import CalculatorError
from infermeter.calculators.perf_api import PerfRequest, perf
from infermeter.calculators.predict import Deployment, Slo, smallest_tensor_parallel
from infermeter.registry.models import GpuEntry, ModelEntry
from infermeter.registry.perf_cases import QUANTIZATION_BY_PRECISION, gpu_for_prediction


def predicted_tokens_per_s(
    model: ModelEntry,
    gpu: GpuEntry,
    gpu_count: int,
    precision: str | None,
    input_tokens: int,
    output_tokens: int,
    slo: Slo | None = None,
) -> float | None:
    """The predictor's output tokens/s (never the bound) for `gpu_count` × `gpu` serving `model`
    at `precision` (bf16 when None or `bf16`): offline without `slo`, else at the highest rate
    whose predicted p99 TTFT and TPOT meet it; None where it predicts nothing (the model does not
    fit, no rate meets the SLO) or the deployment is not `gpu_count` GPUs."""
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
            price_per_hour=None,
        )
        payload = perf(request, None)
    except CalculatorError:
        return None
    if deployment.gpu_count != gpu_count:
        return None
    tokens = (
        payload["output_tokens_per_s"] if slo is None else payload["output_tokens_per_s_at_slo"]
    )
    return float(tokens) if tokens else None
