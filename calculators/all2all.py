"""The buffers expert parallelism's all-to-all allocates on each GPU, per vLLM release.

What vLLM does, read in the release sdists of vllm-project/vllm (the commit each records in
vllm/_version.py: v0.10.2 26b999c71, v0.11.0 f71952c1c, v0.11.1 439368496, v0.14.0 b17039bcc,
v0.16.0 89a77b108, v0.17.0 b31e9326a, v0.18.0 bcf2be961, v0.19.1 b1388b1fb, v0.20.0 b8160878f,
v0.33.0 4ba787ec9; v0.9.0 to v0.10.1 record none); the files named are in each:

- An all-to-all manager exists only for the expert group of a data-parallel deployment
  (`base_device_communicator.py`: `use_all2all` needs data_parallel_size > 1), and the MoE
  layers take the all-to-all path only with --enable-expert-parallel as well
  (`fused_moe/config.py`: `use_all2all_kernels = dp_size > 1 and use_ep`). Without both, no
  all-to-all buffer exists at all.
- The backend is `VLLM_ALL2ALL_BACKEND` (`envs.py`), from v0.11.1 `--all2all-backend`
  (`config/parallel.py`). Its default is "naive" up to v0.10.2 and "allgather_reducescatter"
  from v0.11.0 on (still the default in v0.33.0). Neither keeps a buffer: naive broadcasts and
  allgather_reducescatter gathers the tokens into tensors of PyTorch's allocator for the one
  forward pass (`all2all.py`), which the profiling run's peak already holds. From v0.17.0
  (pplx) and v0.19 (naive) vLLM maps the removed backend onto allgather_reducescatter
  (`config/parallel.py`).
- DeepEP's buffers are allocated by `prepare_communication_buffer_for_model`, which
  `GPUModelRunner.load_model` calls right after the weights are measured and before the
  profiling run; DeepEP takes them with cudaMalloc and NVSHMEM, outside PyTorch's allocator,
  so they show in the profile's `non_torch_increase` (measured from the worker's first
  snapshot, `utils/mem_utils.py` `memory_profiling`) and come off the KV cache budget.
  `DeepEPHTAll2AllManager`: an NVLink buffer of VLLM_DEEPEP_BUFFER_SIZE_MB (default 1024; a
  fixed 1 GiB before v0.11.0) and, when the expert group spans nodes, an RDMA buffer of the
  same size. `DeepEPLLAll2AllManager`: the same NVLink buffer and an RDMA buffer of DeepEP's
  `get_low_latency_rdma_size_hint(max tokens per rank, hidden, ranks, experts)`, where the
  tokens per rank are the MoE config's `max_num_tokens`: VLLM_MOE_DP_CHUNK_SIZE (256) up to
  v0.19.1, max_num_batched_tokens from v0.20.0 (`fused_moe/layer.py`), whose default then
  drops to 256 for this backend (`ParallelConfig.use_batched_dp_moe`, `engine/arg_utils.py`:
  DEFAULT_MAX_NUM_BATCHED_TOKENS_FOR_BATCHED_DP).

DeepEP's sizes follow deepseek-ai/DeepEP `csrc/config.hpp` (`LowLatencyLayout`, at 3861241a5),
`csrc/kernels/configs.cuh` (NUM_BUFFER_ALIGNMENT_BYTES 128, NUM_WORKSPACE_BYTES 32 MiB,
NUM_MAX_NVL_PEERS 8) and `deep_ep/buffer.py` (at 04b06f7a2: NVSHMEM_CUMEM_GRANULARITY 2^29, the
512 MiB steps in which NVSHMEM's heap takes memory). Two parts are estimates and the plan says
so: that a node holds 8 GPUs (whether the expert group spans nodes), and the NVSHMEM heap
rounding.
"""

from dataclasses import dataclass

from infermeter.calculators.errors import InputError
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.parallel import ParallelLayout

MIB = 1024**2
NAIVE = "naive"
ALLGATHER_REDUCESCATTER = "allgather_reducescatter"
DEEPEP_HIGH_THROUGHPUT = "deepep_high_throughput"
DEEPEP_LOW_LATENCY = "deepep_low_latency"
PPLX = "pplx"
# Backends that keep no buffer: their gathered tokens are transient, inside the profiling peak.
NO_BUFFER_BACKENDS = (NAIVE, ALLGATHER_REDUCESCATTER)
MODELLED_BACKENDS = (NAIVE, ALLGATHER_REDUCESCATTER, DEEPEP_HIGH_THROUGHPUT, DEEPEP_LOW_LATENCY)
# The default is allgather_reducescatter from this release (envs.py at v0.11.0); naive before.
ALLGATHER_REDUCESCATTER_DEFAULT_SINCE = (0, 11)
DEEPEP_SINCE = (0, 10)  # DeepEP's managers first ship in v0.10.0 (all2all.py)
# The release from which vLLM maps a removed backend onto allgather_reducescatter
# (config/parallel.py): pplx from v0.17.0 (v0.16.0 still ships PPLXAll2AllManager), naive from
# v0.19 (v0.18.0 still builds NaiveAll2AllManager).
FALLS_BACK_SINCE = {PPLX: (0, 17), NAIVE: (0, 19)}
DEEPEP_BUFFER_SIZE_MB = 1024  # VLLM_DEEPEP_BUFFER_SIZE_MB's default (envs.py, v0.11.0 on)
MOE_DP_CHUNK_SIZE = 256  # VLLM_MOE_DP_CHUNK_SIZE's default: DeepEP LL's tokens per rank
LL_TOKENS_ARE_BATCHED_TOKENS_SINCE = (0, 20)
BATCHED_DP_MOE_TOKENS = 256  # SchedulerConfig.DEFAULT_MAX_NUM_BATCHED_TOKENS_FOR_BATCHED_DP
DEEPEP_WORKSPACE_BYTES = 32 * MIB  # NUM_WORKSPACE_BYTES, cudaMalloc'd by every DeepEP Buffer
DEEPEP_ALIGNMENT_BYTES = 128  # NUM_BUFFER_ALIGNMENT_BYTES
NVSHMEM_GRANULARITY_BYTES = 512 * MIB  # NVSHMEM_CUMEM_GRANULARITY as deep_ep/buffer.py sets it
GPUS_PER_NODE = 8  # an estimate: DeepEP's NUM_MAX_NVL_PEERS, the usual 8-GPU node


@dataclass(frozen=True)
class All2AllBuffers:
    """The all-to-all backend of one rank and the memory its buffers hold outside PyTorch."""

    backend: str | None  # None: no all-to-all at all (no data parallelism, or no EP)
    nvlink_bytes: int = 0
    rdma_bytes: int = 0
    workspace_bytes: int = 0
    estimated: bool = False  # True where the node size or NVSHMEM's rounding enters
    note: str = ""

    @property
    def total(self) -> int:
        return self.nvlink_bytes + self.rdma_bytes + self.workspace_bytes


def default_backend(version: tuple[int, int]) -> str:
    """vLLM's default all-to-all backend in this release."""
    return ALLGATHER_REDUCESCATTER if version >= ALLGATHER_REDUCESCATTER_DEFAULT_SINCE else NAIVE


def resolved_backend(version: tuple[int, int], backend: str | None) -> str:
    """The backend vLLM runs for `--all2all-backend backend` (None: the default)."""
    chosen = backend or default_backend(version)
    if chosen in FALLS_BACK_SINCE and version >= FALLS_BACK_SINCE[chosen]:
        return ALLGATHER_REDUCESCATTER
    return chosen


def batched_dp_moe_tokens(
    version: tuple[int, int],
    backend: str | None,
    data_parallel_size: int,
    enable_expert_parallel: bool,
) -> int | None:
    """vLLM's default max_num_batched_tokens under DeepEP low-latency with data and expert
    parallelism (from 0.20), or None where the GPU's default holds."""
    batched = (
        version >= LL_TOKENS_ARE_BATCHED_TOKENS_SINCE
        and resolved_backend(version, backend) == DEEPEP_LOW_LATENCY
        and enable_expert_parallel
        and data_parallel_size > 1
    )
    return BATCHED_DP_MOE_TOKENS if batched else None


def _align(value: int, step: int) -> int:
    return -(-value // step) * step


def low_latency_rdma_bytes(tokens_per_rank: int, hidden: int, num_experts: int) -> int:
    """DeepEP's `get_low_latency_rdma_size_hint`: two odd/even sets of send, receive and
    signalling buffers for BF16 dispatch (with FP8 scales) and combine messages."""
    scales = hidden // 128
    dispatch_message = 16 + max(hidden * 2, hidden + scales * 4)  # an int4 header, then data
    combine_message = scales * 4 + hidden * 2  # per-128-channel bf16x2 min/max, then data
    send = max(tokens_per_rank * dispatch_message, num_experts * tokens_per_rank * combine_message)
    receive = num_experts * tokens_per_rank * max(dispatch_message, combine_message)
    signalling = _align(num_experts * 4, 128)
    total = 2 * (send + receive + signalling)
    # DeepEP rounds (total + alignment) down to the alignment: always one step more.
    return (total + DEEPEP_ALIGNMENT_BYTES) // DEEPEP_ALIGNMENT_BYTES * DEEPEP_ALIGNMENT_BYTES


def _unbuffered(
    version: tuple[int, int], backend: str | None, chosen: str
) -> All2AllBuffers | None:
    """The plan of a backend that keeps no buffer (one the release replaced, or one whose
    gathered tokens are transient); None for DeepEP's; InputError for one not modelled or not
    shipped by `version`."""
    if backend is not None and chosen != backend:
        return All2AllBuffers(
            chosen,
            note=f"vLLM {version[0]}.{version[1]} replaces the removed {backend} all-to-all "
            "backend with allgather_reducescatter, which keeps no buffer",
        )
    if chosen not in MODELLED_BACKENDS:
        raise InputError(
            f"all2all_backend: {chosen[:40]!r}'s buffers are not modelled; expected one of "
            + ", ".join(MODELLED_BACKENDS)
        )
    if chosen == ALLGATHER_REDUCESCATTER and version < ALLGATHER_REDUCESCATTER_DEFAULT_SINCE:
        raise InputError(
            f"all2all_backend: allgather_reducescatter first ships in vLLM 0.11, not "
            f"{version[0]}.{version[1]}"
        )
    if chosen in NO_BUFFER_BACKENDS:
        return All2AllBuffers(
            chosen,
            note=f"all-to-all backend {chosen}"
            + (" (the release's default)" if backend is None else "")
            + " keeps no buffer: its gathered tokens are transient, inside the profiling peak",
        )
    return None


def _high_throughput_rdma_buffer(nvlink_bytes: int, ranks: int) -> tuple[int, str, str]:
    """DeepEP high-throughput's RDMA buffer, as large as the NVLink one across nodes: its bytes,
    how the note describes it, and what the estimate rests on."""
    internode = ranks > GPUS_PER_NODE
    where = "across nodes" if internode else "within one node"
    detail = f"an RDMA buffer of the same size {where}" if internode else f"no RDMA {where}"
    estimate = f"{GPUS_PER_NODE} GPUs per node decide whether RDMA is needed"
    return (nvlink_bytes if internode else 0), detail, estimate


def _low_latency_rdma_buffer(
    hidden_size: int, num_experts: int, version: tuple[int, int], max_num_batched_tokens: int
) -> tuple[int, str, str]:
    """DeepEP low-latency's RDMA buffer, sized by its hint: its bytes, how the note describes
    it, and what the estimate rests on."""
    tokens = (
        max_num_batched_tokens
        if version >= LL_TOKENS_ARE_BATCHED_TOKENS_SINCE
        else MOE_DP_CHUNK_SIZE
    )
    hint = low_latency_rdma_bytes(tokens, hidden_size, num_experts)
    detail = (
        f"an RDMA buffer of DeepEP's size hint for {tokens} tokens per rank "
        f"({hint / MIB:.0f} MiB, taken by NVSHMEM in 512 MiB steps)"
    )
    return _align(hint, NVSHMEM_GRANULARITY_BYTES), detail, "NVSHMEM's 512 MiB steps"


def all2all_buffers(
    arch: ModelArch,
    version: tuple[int, int],
    *,
    backend: str | None,
    layout: ParallelLayout,
    max_num_batched_tokens: int,
    deepep_buffer_size_mb: int | None = None,
) -> All2AllBuffers:
    """The all-to-all buffers vLLM allocates on one rank before its profiling run."""
    if backend is not None and backend != backend.strip().lower():
        raise InputError(f"all2all_backend: expected a lower-case name, got {backend[:40]!r}")
    if arch.moe is None or layout.data_parallel_size == 1 or not layout.enable_expert_parallel:
        return All2AllBuffers(None)
    chosen = resolved_backend(version, backend)
    unbuffered = _unbuffered(version, backend, chosen)
    if unbuffered is not None:
        return unbuffered
    if version < DEEPEP_SINCE:
        raise InputError(
            f"all2all_backend: {chosen} first ships in vLLM 0.10, not {version[0]}.{version[1]}"
        )
    size_mb = DEEPEP_BUFFER_SIZE_MB if deepep_buffer_size_mb is None else deepep_buffer_size_mb
    if size_mb < 0:
        raise InputError(f"deepep_buffer_size_mb: expected an integer >= 0, got {size_mb}")
    nvlink = size_mb * MIB
    ranks = layout.expert_group_size
    if chosen == DEEPEP_HIGH_THROUGHPUT:
        rdma, detail, estimate = _high_throughput_rdma_buffer(nvlink, ranks)
    else:
        rdma, detail, estimate = _low_latency_rdma_buffer(
            arch.hidden_size, arch.moe.num_experts, version, max_num_batched_tokens
        )
    total = nvlink + rdma + DEEPEP_WORKSPACE_BYTES
    note = (
        f"{chosen}: {size_mb} MiB NVLink buffer, {detail} and DeepEP's 32 MiB workspace, "
        f"{total / 1024**3:.2f} GiB per GPU allocated before the profiling run, so off the KV "
        f"cache (an estimate: {estimate})"
    )
    return All2AllBuffers(chosen, nvlink, rdma, DEEPEP_WORKSPACE_BYTES, estimated=True, note=note)
