"""How `vllm serve`'s parallel options split a model over GPUs: what one GPU holds, and how many
GPUs a deployment takes.

    GPUs            = tensor_parallel_size × pipeline_parallel_size × data_parallel_size
    expert parallel = tensor_parallel_size × data_parallel_size ranks (with
                      --enable-expert-parallel), each holding whole routed experts

Data parallelism copies the model: each replica is split by tensor and pipeline parallelism as
without it and keeps its own KV cache, so it multiplies GPUs, not memory per GPU. The exception
is a mixture of experts: vLLM's `FusedMoEParallelConfig` puts the routed experts of all TP × DP
ranks of a stage in one group, sliced TP × DP ways (`flatten_tp_across_dp`), or, with
--enable-expert-parallel, spread whole: each rank holds `ceil(experts / EP)` of them (vLLM's
"linear" placement: the first `experts % EP` ranks take one more, e.g. "Local/global number of
experts: 32/128" on EP 4). Attention, shared experts, dense MLPs, embedding and lm_head stay
split by TP alone (replicated across DP ranks). The dispatch before the experts (vLLM's "naive"
and "allgather_reducescatter" all-to-all backends) gathers the tokens of every DP rank, so the
experts see DP times the tokens of one rank (`moe_tokens`). The buffers an all-to-all backend
keeps (DeepEP's) are `calculators.all2all`'s.

Read in the v0.10.1 release of vLLM: `FusedMoEParallelConfig.make` and its
`flatten_tp_across_dp` (vllm/model_executor/layers/fused_moe/config.py), `determine_expert_map`'s
`base_experts + 1` for the first `remainder` ranks (fused_moe/layer.py), `FusedMoE.forward_impl`'s
`get_ep_group().dispatch`, and VLLM_ALL2ALL_BACKEND's default "naive" (vllm/envs.py).
"""

import math
from dataclasses import dataclass

from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.quantization import WeightBytes, WeightFormat, weight_bytes


@dataclass(frozen=True)
class ParallelLayout:
    """The parallel options of one deployment."""

    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    data_parallel_size: int = 1
    enable_expert_parallel: bool = False

    @property
    def replica_gpus(self) -> int:
        """GPUs one data-parallel replica spans: tensor x pipeline parallel."""
        return self.tensor_parallel_size * self.pipeline_parallel_size

    @property
    def gpus(self) -> int:
        return self.replica_gpus * self.data_parallel_size

    @property
    def expert_group_size(self) -> int:
        """Ranks one pipeline stage's MoE layers span, tensor x data parallel: each expert is
        sliced over them, or, with expert parallelism, the whole experts are shared out."""
        return self.tensor_parallel_size * self.data_parallel_size

    @property
    def expert_parallel_size(self) -> int:
        """Ranks the routed experts are spread over (1: no expert parallelism)."""
        if not self.enable_expert_parallel:
            return 1
        return self.expert_group_size


def local_experts(arch: ModelArch, layout: ParallelLayout) -> int:
    """Routed experts per MoE layer on the most loaded expert-parallel rank."""
    if arch.moe is None:
        return 0
    return math.ceil(arch.moe.num_experts / layout.expert_parallel_size)


def moe_tokens(tokens: int, layout: ParallelLayout) -> int:
    """Tokens a rank's MoE layers see when each DP rank runs `tokens`: the dispatch gathers them
    from every DP rank."""
    return tokens * layout.data_parallel_size


def sharded_weight_bytes(arch: ModelArch, fmt: WeightFormat, layout: ParallelLayout) -> WeightBytes:
    """Weights one GPU of a pipeline stage holds (before pipeline stages split the layers)."""
    weights = weight_bytes(arch, fmt, layout.tensor_parallel_size)
    if arch.moe is None or layout.expert_group_size == 1:
        return weights
    by_role = dict(weights.by_role)
    if layout.expert_parallel_size == 1:
        # Every expert sliced over the TP x DP ranks of the stage.
        group = layout.expert_group_size
        by_role["experts"] = weight_bytes(arch, fmt, group).by_role["experts"]
    else:
        # Whole experts: every routed expert at full width (tensor parallel size 1), of which
        # this rank holds its share.
        every_expert = weight_bytes(arch, fmt, 1).by_role["experts"]
        by_role["experts"] = every_expert * local_experts(arch, layout) // arch.moe.num_experts
    return WeightBytes(weights.format, by_role, weights.rotary_cache_bytes)
