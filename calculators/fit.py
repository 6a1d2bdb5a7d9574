"""GPU fit: for a model, quantization, context and concurrency, which GPUs serve it, and how many.

Every candidate GPU is tried with 1, 2, 4 and 8 GPUs under tensor parallelism (a count vLLM
accepts: it divides the attention heads, and divides or is a multiple of the KV heads); the
smallest count whose memory report fits is kept. That count is one replica's: a data-parallel
deployment takes data_parallel_size times as many GPUs (`gpus`), and pays for all of them.
Fitting options are ranked by $/hour of the whole deployment and by price per GB.
"""

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from infermeter.calculators.errors import InputError
from infermeter.calculators.gpu_traits import UNKNOWN_GPU, GpuTraits
from infermeter.calculators.memory import MemoryReport, memory_report
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.served_formats import served_reason
from infermeter.calculators.vllm_settings import VllmSettings, check_tensor_parallel, parse_release

GPU_COUNTS = (1, 2, 4, 8)


@dataclass(frozen=True)
class GpuOption:
    """A GPU the fit may choose: its usable memory and, when known, its hourly price."""

    id: str
    name: str
    memory_bytes: int
    memory_gb: float
    usd_per_gpu_hour: float | None = None
    traits: GpuTraits = UNKNOWN_GPU  # its catalog facts (`registry.catalog.gpu_traits`)


@dataclass(frozen=True)
class FitResult:
    """The smallest deployment of one GPU type that fits, or why none does."""

    gpu: GpuOption
    gpu_count: int | None  # GPUs of one replica (its tensor parallel size)
    report: MemoryReport | None
    reason: str | None
    data_parallel_size: int = 1
    served: bool = True  # False: the GPU's vLLM does not serve the weights (`reason` says why)

    @property
    def gpus(self) -> int | None:
        """GPUs of the whole deployment: every data-parallel replica's."""
        return None if self.gpu_count is None else self.gpu_count * self.data_parallel_size

    @property
    def fits(self) -> bool:
        return self.gpu_count is not None

    @property
    def usd_per_hour(self) -> float | None:
        if self.gpus is None or self.gpu.usd_per_gpu_hour is None:
            return None
        return self.gpu.usd_per_gpu_hour * self.gpus

    @property
    def usd_per_gb_hour(self) -> float | None:
        if self.gpu.usd_per_gpu_hour is None:
            return None
        return self.gpu.usd_per_gpu_hour / self.gpu.memory_gb

    def as_dict(self) -> dict[str, Any]:
        report = self.report
        return {
            "gpu": self.gpu.id,
            "name": self.gpu.name,
            "fits": self.fits,
            "gpu_count": self.gpu_count,
            "data_parallel_size": self.data_parallel_size,
            "gpus": self.gpus,
            "memory_bytes_per_gpu": self.gpu.memory_bytes,
            "usd_per_gpu_hour": self.gpu.usd_per_gpu_hour,
            "usd_per_hour": self.usd_per_hour,
            "usd_per_gb_hour": self.usd_per_gb_hour,
            "headroom_state": report.simple.headroom_state if report is not None else None,
            "max_concurrency": round(report.plan.max_concurrency, 4) if report else None,
            "deployment_max_concurrency": round(
                report.plan.max_concurrency * self.data_parallel_size, 4
            )
            if report and self.fits
            else None,
            "required_bytes_per_gpu": report.simple.required_bytes if report else None,
            "reason": self.reason,
            "served": self.served,
        }


def _candidate_counts(arch: ModelArch) -> list[int]:
    counts = []
    for count in GPU_COUNTS:
        try:
            check_tensor_parallel(arch, count)
        except InputError:
            continue
        counts.append(count)
    return counts


def fit_gpu(
    arch: ModelArch,
    gpu: GpuOption,
    settings: VllmSettings,
    context_tokens: int,
    concurrency: int,
    min_gpu_count: int = 1,
) -> FitResult:
    """The smallest tensor-parallel count of `gpu` (from `min_gpu_count` up: fewer are known
    not to fit) whose plan fits, with its report; none, with vLLM's reason, where the GPU's vLLM
    does not serve the weights (`served_formats`)."""
    release = parse_release(settings.vllm_version)
    refused = served_reason(arch, settings.quantization, gpu.traits, release)
    if refused is not None:
        return FitResult(gpu, None, None, refused, settings.data_parallel_size, served=False)
    last: MemoryReport | None = None
    for count in [count for count in _candidate_counts(arch) if count >= min_gpu_count]:
        trial = replace(
            settings,
            gpu_memory_bytes=gpu.memory_bytes,
            tensor_parallel_size=count,
            gpu=gpu.traits,
            max_model_len=settings.max_model_len or context_tokens,
        )
        last = memory_report(arch, trial, context_tokens, concurrency)
        if last.fits:
            return FitResult(gpu, count, last, None, settings.data_parallel_size)
    counts = ", ".join(str(count) for count in _candidate_counts(arch))
    detail = f": with {counts} GPUs, {last.reason}" if last is not None and last.reason else ""
    reason = f"does not fit{detail}"
    return FitResult(gpu, None, last, reason, settings.data_parallel_size)


def fit_gpus(
    arch: ModelArch,
    gpus: Iterable[GpuOption],
    settings: VllmSettings,
    context_tokens: int,
    concurrency: int,
    rank_by: str = "usd_per_hour",
) -> list[FitResult]:
    """Every GPU with its smallest fitting count; fitting ones first, ranked by `rank_by`
    (`usd_per_hour` or `usd_per_gb_hour`; unpriced GPUs after priced ones), then the rest."""
    if rank_by not in ("usd_per_hour", "usd_per_gb_hour"):
        raise InputError(f"rank_by: expected usd_per_hour or usd_per_gb_hour, got {rank_by!r}")
    results = [fit_gpu(arch, gpu, settings, context_tokens, concurrency) for gpu in gpus]

    def order(result: FitResult) -> tuple[int, int, float, int, str]:
        price = getattr(result, rank_by)
        return (
            0 if result.fits else 1,
            0 if price is not None else 1,
            price if price is not None else 0.0,
            result.gpu_count or 0,
            result.gpu.id,
        )

    return sorted(results, key=order)
