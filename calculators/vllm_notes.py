"""The words of vLLM's memory plan: the error vLLM raises when a request does not fit, and the
notes that say what the plan leaves out or where it departs from the defaults
(`calculators.vllm_plan` puts them together)."""

from infermeter.calculators.all2all import All2AllBuffers
from infermeter.calculators.mla_copies import MlaCopies
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.vllm_settings import (
    GIB,
    VllmSettings,
    default_max_model_len,
    settings_layout,
)


def format_gib(value: int, version: tuple[int, int]) -> str:
    """GiB as the release prints them."""
    gib = value / GIB
    return str(round(gib, 2)) if version >= (0, 18) else f"{gib:.2f}"


def refusal(
    version: tuple[int, int], max_len: int, needed: int, available: int, largest: int
) -> str:
    """The error text vLLM raises when one request at max_model_len does not fit."""
    model = "model's" if version >= (0, 27) else "models's"
    estimate = (
        f" Based on the available memory, the estimated maximum model length is {largest}."
        if largest > 0
        else ""
    )
    return (
        f"To serve at least one request with the {model} max seq len ({max_len}), "
        f"({format_gib(needed, version)} GiB KV cache is needed, which is larger than the "
        f"available KV cache memory ({format_gib(available, version)} GiB).{estimate} "
        "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
        "initializing the engine."
    )


def load_refusal(version: tuple[int, int], weights: int, total: int) -> str:
    """Why a plan whose weights per GPU exceed the GPU's whole memory does not start: the
    weights are allocated in `load_model`, before gpu_memory_utilization or the KV cache play
    any part, and PyTorch runs out of memory there (vllm-project/vllm#5714, #28143); vLLM's
    "No available memory for the cache blocks. Try increasing `gpu_memory_utilization`" is
    the refusal of weights that load but leave no budget, advice no utilization meets here."""
    return (
        f"CUDA out of memory loading the weights: {format_gib(weights, version)} GiB of "
        f"weights per GPU, more than the GPU's {format_gib(total, version)} GiB in all; vLLM "
        "fails in load_model, whatever `gpu_memory_utilization`. Try more GPUs "
        "(--tensor-parallel-size, --pipeline-parallel-size) or a smaller weight format "
        "(--quantization)."
    )


CAPTURE_OOM = "CUDA out of memory capturing CUDA graphs"  # how `capture_refusal` begins


def capture_refusal(
    version: tuple[int, int], graph_bytes: int, left_bytes: int, utilization: float
) -> str:
    """Why a plan whose CUDA graphs outgrow the memory left outside the budget does not start."""
    return (
        f"{CAPTURE_OOM}: they need about "
        f"{format_gib(graph_bytes, version)} GiB, more than the "
        f"{format_gib(max(0, left_bytes), version)} GiB left outside gpu_memory_utilization "
        f"({utilization:g}), where vLLM {version[0]}.{version[1]} captures them after the KV cache "
        "is allocated. Try decreasing `gpu_memory_utilization`, capturing fewer sizes "
        "(--max-cudagraph-capture-size) or --enforce-eager."
    )


def compiled_list_refusal(release: tuple[int, int, int], largest: int, batched: int) -> str:
    """Why a release before 0.11.1 does not start with a --compilation-config capture list that
    goes above max_num_batched_tokens (`vllm_overheads.CAPTURE_SIZES_CUT_SINCE`)."""
    return (
        f"AssertionError capturing CUDA graphs: compilation_config.cudagraph_capture_sizes goes "
        f"up to {largest}, above max_num_batched_tokens ({batched}); vLLM "
        f"{'.'.join(map(str, release))} captures every size listed (0.11.1 drops the larger "
        "ones), and GPUModelRunner._dummy_run asserts num_tokens <= max_num_batched_tokens. Try "
        "sizes up to max_num_batched_tokens or a larger `max_num_batched_tokens`."
    )


def length_notes(arch: ModelArch, max_len: int) -> list[str]:
    """A max_model_len beyond what the model declares."""
    derived_len = default_max_model_len(arch)
    if max_len <= derived_len:
        return []
    return [
        f"max_model_len {max_len} exceeds the model's {derived_len}; vLLM refuses this "
        "unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"
    ]


def layout_notes(arch: ModelArch, settings: VllmSettings, all2all: All2AllBuffers) -> list[str]:
    """What the model's layers and the parallel layout leave out of the plan."""
    notes: list[str] = []
    if arch.num_chunked_layers:
        notes.append(
            f"{arch.num_chunked_layers} chunked-attention layers are counted as full attention: "
            "vLLM turns its hybrid KV cache manager off for them unless "
            "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1"
        )
    if settings.enable_expert_parallel and arch.moe is None:
        notes.append("enable_expert_parallel changes nothing: the model has no routed experts")
    if all2all.note:
        notes.append(all2all.note)
    elif settings_layout(settings).expert_parallel_size > 1:
        notes.append(
            "expert parallelism without data parallelism keeps no all-to-all buffer: vLLM "
            "makes its all-to-all manager only with data_parallel_size > 1"
        )
    if arch.mtp_layers:
        notes.append(
            f"the checkpoint ships {arch.mtp_layers} multi-token-prediction layer(s) that vLLM "
            "loads only for speculative decoding; they are not counted"
        )
    return notes


def memory_notes(
    version: tuple[int, int], copies: MlaCopies, cuda_graph_bytes: int, cuda_graph_in_budget: bool
) -> list[str]:
    """What the weights hold besides the checkpoint, and memory spent outside the budget."""
    notes: list[str] = []
    if copies.bytes:
        kept = (
            "the absorbed W_Q_UK and W_UV_O, W_QR and a dequantized kv_b_proj"
            if copies.absorbed
            else "a dequantized kv_b_proj for W_UK_T and W_UV"
        )
        notes.append(
            f"the weights include {format_gib(copies.bytes, version)} GiB of MLA copies vLLM "
            f"keeps after loading ({kept}, in the model dtype)"
            + (
                "; an estimate: absorption came with 0.7.1, so 0.7.0 keeps none"
                if copies.estimated
                else ""
            )
        )
    if not cuda_graph_in_budget and cuda_graph_bytes:
        notes.append(
            "CUDA graphs are captured after the KV cache is allocated: they need "
            f"{format_gib(cuda_graph_bytes, version)} GiB of the memory left outside "
            "gpu_memory_utilization"
        )
    return notes
