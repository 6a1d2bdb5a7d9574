"""The calculators' estimate where no result answers the buyer yet: per GPU of the catalog, the
smallest deployment whose vLLM memory plan fits the model at the workload's context
(`calculators.fit`), its roofline bound on output tokens/s with as many sequences as the plan
holds (`calculators.roofline`), and the on-demand $ per 1M output tokens at that bound.

An estimate, never a measurement: the bound is what no run can beat (real results reach a
fraction of it, see the index's `roofline_pct`), so the $ figure is the least a token could
cost on that deployment, not what it costs. Pages show it apart from measured and reported
figures and say so. Only usable catalog prices count (`registry.lookup.cheapest_prices`).
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import CalculatorError
from infermeter.calculators.fit import GPU_COUNTS, GpuOption, fit_gpu
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.quantization import weight_bytes, weight_format
from infermeter.calculators.roofline import ThroughputBound, plan_throughput_bound
from infermeter.calculators.token_cost import usd_per_million_tokens
from infermeter.calculators.vllm_plan import VllmPlan
from infermeter.calculators.vllm_settings import VllmSettings
from infermeter.registry.catalog import gpu_links
from infermeter.registry.checks.physics import gpu_memory_bytes
from infermeter.registry.models import GpuEntry, ModelEntry, PriceEntry
from infermeter.registry.models.identity import LengthDistribution, Workload


@dataclass(frozen=True)
class CostEstimate:
    """The least $ per 1M output tokens one deployment could reach: at its roofline bound."""

    gpu: str
    gpu_count: int
    usd_per_hour: float
    price_id: str
    batch: int  # sequences the memory plan holds at the workload's context
    bound_tokens_per_s: float
    limited_by: str  # `bandwidth`, `interconnect` or `compute`
    interconnect: str  # what the bound counts of the traffic between GPUs
    usd_per_million_output_tokens: float


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


def cost_estimates(
    model: ModelEntry,
    gpus: Mapping[str, GpuEntry],
    cheapest: Mapping[str, Mapping[str, PriceEntry]],
    input_tokens: int,
    output_tokens: int,
) -> list[CostEstimate]:
    """Per priced GPU whose plan fits, the estimate (see the module docstring), cheapest
    first; empty when the calculators cannot read the model's config."""
    try:
        arch = parse_config(model.config)
    except CalculatorError:
        return []
    context = input_tokens + output_tokens
    try:
        weights = weight_bytes(arch, weight_format(arch, None, None)).total
    except CalculatorError:
        return []
    estimates = []
    for gpu in gpus.values():
        price = cheapest.get(gpu.id, {}).get("on_demand")
        if price is None:
            continue
        option = GpuOption(
            gpu.id, gpu.name, int(gpu_memory_bytes(gpu)), gpu.memory_gb, price.usd_per_gpu_hour
        )
        try:
            # Fewer GPUs than hold the weights cannot fit: no plan is worked out for them.
            fewest = math.ceil(weights / option.memory_bytes)
            if fewest > max(GPU_COUNTS):
                continue
            settings = VllmSettings(gpu_memory_bytes=option.memory_bytes)
            fit = fit_gpu(arch, option, settings, context, 1, min_gpu_count=fewest)
            if fit.gpu_count is None or fit.report is None:
                continue
            batch, bound = bound_at_plan(arch, gpu, fit.report.plan, input_tokens, output_tokens)
        except CalculatorError:
            continue
        usd_per_hour = price.usd_per_gpu_hour * fit.gpu_count
        estimates.append(
            CostEstimate(
                gpu=gpu.id,
                gpu_count=fit.gpu_count,
                usd_per_hour=usd_per_hour,
                price_id=price.id,
                batch=batch,
                bound_tokens_per_s=bound.tokens_per_second,
                limited_by=bound.limited_by,
                interconnect=bound.interconnect,
                usd_per_million_output_tokens=usd_per_million_tokens(
                    usd_per_hour, bound.tokens_per_second
                ),
            )
        )
    return sorted(estimates, key=lambda e: (e.usd_per_million_output_tokens, e.gpu))


class Estimates:
    """The cheapest `cost_estimates` entry per model and workload, each worked out once."""

    def __init__(
        self,
        gpus: Mapping[str, GpuEntry],
        models: Mapping[str, ModelEntry],
        cheapest: Mapping[str, Mapping[str, PriceEntry]],
    ) -> None:
        self._gpus, self._models, self._cheapest = gpus, models, cheapest
        self._memo: dict[tuple[str, int, int], list[CostEstimate]] = {}

    def ranked(self, model_id: str, input_tokens: int, output_tokens: int) -> list[CostEstimate]:
        """Every fitting GPU's estimate, cheapest first; empty for a model outside the catalog."""
        key = (model_id, input_tokens, output_tokens)
        if key not in self._memo:
            model = self._models.get(model_id)
            self._memo[key] = (
                []
                if model is None
                else cost_estimates(model, self._gpus, self._cheapest, input_tokens, output_tokens)
            )
        return self._memo[key]

    def cheapest(self, model_id: str, workload: Workload) -> CostEstimate | None:
        """The cheapest estimate for the workload's typical request; None when its lengths
        are not stated or nothing fits."""
        tokens = workload_tokens(workload)
        ranked = self.ranked(model_id, *tokens) if tokens is not None else []
        return ranked[0] if ranked else None


def bound_at_plan(
    arch: ModelArch, gpu: GpuEntry, plan: VllmPlan, input_tokens: int, output_tokens: int
) -> tuple[int, ThroughputBound]:
    """The decode roofline bound of `gpu` at the most sequences the vLLM `plan` holds, and that
    batch: the estimate the answer pages and the model pages show where nothing qualifies."""
    batch = max(1, min(plan.max_num_seqs, math.floor(plan.max_concurrency)))
    bound = plan_throughput_bound(
        arch,
        plan.settings,
        gpu.memory_bandwidth_gb_s,
        gpu.tflops_dense.model_dump(),
        input_tokens + output_tokens // 2,  # the mean context of an output token
        batch,
        gpu_links(gpu),
    )
    return batch, bound
