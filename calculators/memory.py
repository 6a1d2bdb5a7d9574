"""The VRAM report: vLLM's own memory plan beside the buyer's guide's simple model.

The guide's simple model sizes a deployment for a target context and concurrency:

    required = weights + KV cache (context × concurrency per replica) + runtime overhead
               + safety margin

with the runtime overhead taken from the vLLM plan (profiling peak, non-torch memory, the
all-to-all buffers of expert parallelism, and CUDA graphs where vLLM counts them in its budget)
and the safety margin the memory vLLM leaves outside its budget, (1 − gpu_memory_utilization).
The headroom state reads what is left over: `enough_headroom` (at least `NEAR_LIMIT_FRACTION`
of the GPU's memory free), `near_limit` (less than that, but it fits), `over_limit`.

The concurrency is the whole deployment's, as a user's traffic is. vLLM runs one engine per
data-parallel rank with its own KV cache, and `--max-num-seqs` applies per rank; its API server
balances requests over the engines by their running and waiting queues
(vllm-project/vllm docs/serving/data_parallel_deployment.md at 01e4fce07). So each of the
`data_parallel_size` replicas holds ceil(concurrency / data_parallel_size) requests.
"""

from dataclasses import dataclass
from typing import Any

from infermeter.calculators.cache_specs import bytes_per_block, request_blocks
from infermeter.calculators.kv_blocks import in_flight_tokens
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.layer_caches import layer_caches
from infermeter.calculators.limits import at_least_one
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.quantization import model_dtype_bytes
from infermeter.calculators.vllm_plan import VllmPlan, plan_vllm
from infermeter.calculators.vllm_settings import VllmSettings, release_block_size

ENOUGH_HEADROOM = "enough_headroom"
NEAR_LIMIT = "near_limit"
OVER_LIMIT = "over_limit"
NEAR_LIMIT_FRACTION = 0.10


@dataclass(frozen=True)
class SimplePlan:
    """The guide's simple model for one GPU of the deployment."""

    context_tokens: int
    concurrency: int  # the whole deployment's, over every data-parallel replica
    memory_bytes: int
    weights_bytes: int
    kv_cache_bytes: int
    runtime_overhead_bytes: int
    safety_margin_bytes: int
    data_parallel_size: int = 1

    @property
    def concurrency_per_replica(self) -> int:
        """The requests the most loaded replica holds: ceil(concurrency / data_parallel_size)."""
        return -(-self.concurrency // self.data_parallel_size)

    @property
    def breakdown(self) -> dict[str, int]:
        """The parts of the required memory, by name."""
        return {
            "weights_bytes": self.weights_bytes,
            "kv_cache_bytes": self.kv_cache_bytes,
            "runtime_overhead_bytes": self.runtime_overhead_bytes,
            "safety_margin_bytes": self.safety_margin_bytes,
        }

    @property
    def required_bytes(self) -> int:
        return sum(self.breakdown.values())

    @property
    def headroom_bytes(self) -> int:
        return self.memory_bytes - self.required_bytes

    @property
    def headroom_state(self) -> str:
        return headroom_state(self.headroom_bytes, self.memory_bytes)

    @property
    def fits(self) -> bool:
        return self.headroom_bytes >= 0


def headroom_state(headroom_bytes: int, memory_bytes: int) -> str:
    """Enough headroom, near the limit, or over the limit (the guide's three memory states)."""
    if headroom_bytes < 0:
        return OVER_LIMIT
    if headroom_bytes < NEAR_LIMIT_FRACTION * memory_bytes:
        return NEAR_LIMIT
    return ENOUGH_HEADROOM


@dataclass(frozen=True)
class MemoryReport:
    """What `infermeter calc vram` reports: the vLLM plan and the simple model, per GPU."""

    plan: VllmPlan
    simple: SimplePlan

    @property
    def fits(self) -> bool:
        return self.plan.fits and self.simple.fits and not self.too_long

    @property
    def too_long(self) -> bool:
        """Whether the requests are longer than max_model_len, which vLLM refuses to serve."""
        return self.simple.context_tokens > self.plan.max_model_len

    @property
    def reason(self) -> str | None:
        if self.plan.error is not None:
            return "vLLM would refuse to start: " + self.plan.error
        if self.too_long:
            context, longest = self.simple.context_tokens, self.plan.max_model_len
            return (
                f"requests of {context} tokens are longer than max_model_len {longest}: vLLM "
                f"refuses them (a max_model_len of at least {context} serves them)"
            )
        if not self.simple.fits:
            simple = self.simple
            replicas = (
                f" ({simple.concurrency_per_replica} on each of {simple.data_parallel_size} "
                "replicas)"
                if simple.data_parallel_size > 1
                else ""
            )
            return (
                f"{simple.concurrency} concurrent requests{replicas} of {simple.context_tokens} "
                f"tokens need {self.simple.required_bytes} bytes per GPU, "
                f"{-self.simple.headroom_bytes} more than the {self.simple.memory_bytes} it has"
            )
        return None

    def as_dict(self) -> dict[str, Any]:
        """One JSON object; every figure per GPU, bytes as integers."""
        plan = self.plan
        simple = self.simple
        return {
            "weights_bytes": plan.weights_bytes,
            "kv_cache_bytes_per_token": plan.kv_cache_bytes_per_token,
            "kv_cache_bytes": plan.kv_cache_bytes,
            "kv_cache_tokens": plan.kv_cache_tokens,
            "max_concurrency": round(plan.max_concurrency, 4),
            "max_model_len": plan.max_model_len,
            "context_tokens": simple.context_tokens,
            "concurrency": simple.concurrency,
            "concurrency_per_replica": simple.concurrency_per_replica,
            "required_bytes": simple.required_bytes,
            "headroom_bytes": simple.headroom_bytes,
            "headroom_state": simple.headroom_state,
            "fits": self.fits,
            "reason": self.reason,
            "vllm_error": plan.error,
            "breakdown": simple.breakdown,
            "vllm_plan": plan.as_dict(),
        }


def _sequence_bytes(arch: ModelArch, plan: VllmPlan, tokens: int) -> int:
    """KV bytes of one sequence of `tokens` tokens; where the caches are grouped layer by layer
    (calculators.layer_caches), which no per-token size expresses, its blocks in every group."""
    settings = plan.settings
    arch = arch.at_release(plan.vllm_version)
    tp, dtype_bytes = settings.tensor_parallel_size, model_dtype_bytes(arch, settings.dtype)
    block_size = release_block_size(settings)
    caches = layer_caches(arch, settings.kv_cache_dtype, tp, block_size, dtype_bytes)
    if caches is not None:
        in_flight = in_flight_tokens(plan.max_num_batched_tokens, plan.vllm_version, 1)
        return request_blocks(caches.groups, tokens, in_flight) * bytes_per_block(caches.groups)
    return kv_cache_shape(arch, settings.kv_cache_dtype, tp, dtype_bytes).bytes_for_sequence(tokens)


def simple_plan(
    arch: ModelArch, plan: VllmPlan, context_tokens: int, concurrency: int
) -> SimplePlan:
    """The guide's simple model, using the vLLM plan's weights and overheads, for `concurrency`
    requests over the whole deployment (each replica holds its share, rounded up)."""
    at_least_one("context", context_tokens)
    at_least_one("concurrency", concurrency)
    settings = plan.settings
    stages = settings.pipeline_parallel_size
    per_replica = -(-concurrency // settings.data_parallel_size)
    kv_bytes = -(-per_replica * _sequence_bytes(arch, plan, context_tokens) // stages)
    # Before vLLM 0.20 (or with VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0) the CUDA graphs live
    # in the memory left outside the utilization budget, which the safety margin already holds;
    # counting them again would double them.
    graphs = plan.cuda_graph_bytes if plan.cuda_graph_in_budget else 0
    overhead = (
        plan.activation_peak_bytes
        + plan.non_torch_bytes
        + plan.all2all_buffer_bytes
        + plan.runner_buffer_bytes
        + graphs
    )
    margin = settings.gpu_memory_bytes - plan.requested_bytes
    return SimplePlan(
        context_tokens=context_tokens,
        concurrency=concurrency,
        memory_bytes=settings.gpu_memory_bytes,
        weights_bytes=plan.weights_bytes,
        kv_cache_bytes=kv_bytes,
        runtime_overhead_bytes=overhead,
        safety_margin_bytes=margin,
        data_parallel_size=settings.data_parallel_size,
    )


def memory_report(
    arch: ModelArch,
    settings: VllmSettings,
    context_tokens: int | None = None,
    concurrency: int = 1,
) -> MemoryReport:
    """vLLM's plan for `settings` and the simple model for `concurrency` requests of
    `context_tokens` tokens (default: max_model_len) over the whole deployment."""
    plan = plan_vllm(arch, settings)
    context = context_tokens if context_tokens is not None else plan.max_model_len
    return MemoryReport(plan=plan, simple=simple_plan(arch, plan, context, concurrency))
