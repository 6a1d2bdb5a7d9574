"""The `vllm serve` options that shape the memory plan, their defaults per vLLM release and GPU,
and the checks vLLM makes on them before it starts."""

import re
from dataclasses import dataclass

from infermeter.calculators.errors import InputError
from infermeter.calculators.gpu_traits import UNKNOWN_GPU, GpuTraits
from infermeter.calculators.limits import (
    MAX_CONCURRENCY,
    MAX_GPU_MEMORY_BYTES,
    MAX_GPUS,
    MAX_TOKENS,
    at_least_one,
    bounded_int,
)
from infermeter.calculators.mamba2 import Mamba2Mixer
from infermeter.calculators.mixers import MAMBA, RecurrentMixer
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.parallel import ParallelLayout

GIB = 1024**3
MIB = 1024**2
BLOCK_SIZE = 16
# vLLM's default --block-size, `CacheConfig.DEFAULT_BLOCK_SIZE` in vllm/config/cache.py of the
# PyPI sdists: 16 through 0.33.0, 64 in 0.34.0 (an attention backend that prefers another size
# still picks it, platforms/interface.py; the plan aligns MLA and hybrid blocks on its own).
BLOCK_SIZE_64_SINCE = (0, 34)
RELEASE_BLOCK_SIZE_FROM_0_34 = 64
DEFAULT_VLLM_VERSION = "0.19"
# The releases the plan reads: from 0.7 (the oldest release fact it holds, calculators.mla_copies;
# the held-out V0 logs are planned as 0.7) to 0.34, the newest release whose sources it was read
# against. A release outside is refused rather than planned as its nearest one.
OLDEST_VLLM_VERSION = (0, 7)
NEWEST_VLLM_VERSION = (0, 34)
# GlmMoeDsaForCausalLM's verify_and_update_config (vllm/model_executor/models/config.py of the
# PyPI sdists 0.32.0-0.34.0; 0.29.0-0.31.0 set only the DCP defaults) turns --kv-cache-dtype
# auto into fp8_e4m3 on CUDA devices of compute capability 10.x (is_device_capability_family(100):
# B200 and GB200 are sm_100, B300 and GB300 sm_103).
GLM_DSA_FP8_KV_SINCE = (0, 32)
GLM_DSA_FP8_KV_CAPABILITY_MAJOR = 10
GLM_DSA_FP8_KV_NOTE = (
    "GLM-5 (GlmMoeDsaForCausalLM) on an SM10x GPU: vLLM 0.32+ turns --kv-cache-dtype auto into "
    "fp8_e4m3, so the KV cache is planned in FP8 (--kv-cache-dtype bfloat16 keeps 16-bit latents)"
)
# 0.11, v0.10.1.1, 0.11.0rc1, 0.9.1+cu121, 0.10.2.dev45
# major.minor, the patch release, then a release's own suffix (.1, rc1, .dev12+g3ab, .post1,
# +cu128); not an exponent: 0.9e9 is a number, not a release.
_VERSION = re.compile(
    r"v?(\d{1,4})\.(\d{1,4})(?:\.(\d{1,4}))?(?:(?:[.+-]|a|b|rc|dev|post)[0-9A-Za-z.+-]{0,40})?"
)


@dataclass(frozen=True)
class VllmSettings:
    """The `vllm serve` options that shape the memory plan. None means vLLM's default."""

    gpu_memory_bytes: int
    gpu_memory_utilization: float | None = None
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    data_parallel_size: int = 1  # replicas: more GPUs, the same plan per GPU
    enable_expert_parallel: bool = False  # routed experts spread whole over TP x DP ranks
    max_model_len: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    kv_cache_dtype: str | None = None
    quantization: str | None = None
    dtype: str | None = None
    enforce_eager: bool = False
    block_size: int | None = None  # None: the release's default (`release_block_size`)
    gpu: GpuTraits = UNKNOWN_GPU  # its catalog facts (`calculators.gpu_traits`)
    vllm_version: str = DEFAULT_VLLM_VERSION
    # VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS: None is the release's default (on from 0.20).
    estimate_cudagraphs: bool | None = None
    # FlashInfer's top-k/top-p sampler (VLLM_USE_FLASHINFER_SAMPLER, and whether flashinfer is
    # installed): None is the release's default (`calculators.vllm_overheads.sampler_sorts`).
    flashinfer_sampler: bool | None = None
    # VLLM_USE_V2_MODEL_RUNNER: None is the release's choice (`calculators.model_runner`).
    use_v2_model_runner: bool | None = None
    # --all2all-backend (VLLM_ALL2ALL_BACKEND before 0.11.1): None is the release's default.
    all2all_backend: str | None = None
    deepep_buffer_size_mb: int | None = None  # VLLM_DEEPEP_BUFFER_SIZE_MB; None: 1024
    # The CUDA graph capture list (`calculators.cudagraph_capture`): the list itself, or the
    # default pattern's largest size; None: vLLM's default
    # (`vllm_overheads.default_largest_capture_size`).
    cudagraph_capture_sizes: tuple[int, ...] | None = None
    cudagraph_capture_sizes_compiled: bool = False  # the list is --compilation-config's own
    max_cudagraph_capture_size: int | None = None
    compilation_config_unread: tuple[str, ...] = ()  # --compilation-config keys not modelled
    cudagraph_mode: str | None = None  # CUDAGraphMode name; None: the release's default


def settings_layout(settings: VllmSettings) -> ParallelLayout:
    """The GPUs of the deployment: tensor x pipeline x data parallel, experts spread or not."""
    return ParallelLayout(
        settings.tensor_parallel_size,
        settings.pipeline_parallel_size,
        settings.data_parallel_size,
        settings.enable_expert_parallel,
    )


def release_block_size(settings: VllmSettings) -> int:
    """The KV cache block size: --block-size, or the release's default (see BLOCK_SIZE)."""
    if settings.block_size is not None:
        return settings.block_size
    if parse_version(settings.vllm_version) >= BLOCK_SIZE_64_SINCE:
        return RELEASE_BLOCK_SIZE_FROM_0_34
    return BLOCK_SIZE


def release_kv_cache_dtype(arch: ModelArch, settings: VllmSettings) -> str | None:
    """--kv-cache-dtype as the release applies it: GLM-5's `auto` is fp8_e4m3 on SM10x GPUs from
    0.32 (GLM_DSA_FP8_KV_SINCE); any other as given."""
    if (
        settings.kv_cache_dtype in (None, "auto")
        and arch.model_type == "glm_moe_dsa"
        and settings.gpu.capability_major == GLM_DSA_FP8_KV_CAPABILITY_MAJOR
        and parse_version(settings.vllm_version) >= GLM_DSA_FP8_KV_SINCE
    ):
        return "fp8_e4m3"
    return settings.kv_cache_dtype


def parse_version(text: str) -> tuple[int, int]:
    """'0.10.1.1' → (0, 10): the minor release, which most of the plan's release facts name
    (`parse_release` where a patch release changed what vLLM does)."""
    major, minor, _patch = parse_release(text)
    return major, minor


def parse_release(text: str) -> tuple[int, int, int]:
    """'0.11.1' → (0, 11, 1); '0.11', '0.11rc1' and '0.11.0rc1' → (0, 11, 0). Development builds
    and release candidates count as the release they precede. A release the plan does not read
    (before OLDEST_VLLM_VERSION, after NEWEST_VLLM_VERSION, its patches included) is refused.
    Release facts are compared as tuples, so a minor fact such as (0, 11) holds for every patch
    of 0.11 and a patch fact such as (0, 11, 1) from that patch on."""
    match = _VERSION.fullmatch(text.strip())
    if match is None:
        raise InputError(
            f"vllm_version: expected a vLLM release such as 0.11 or 0.10.1.1, got {text[:40]!r}"
        )
    release = int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)
    if not OLDEST_VLLM_VERSION <= release[:2] <= NEWEST_VLLM_VERSION:
        raise InputError(
            f"vllm_version: the plan models vLLM {modelled_releases()}, got {text.strip()[:40]!r}"
        )
    return release


def modelled_releases() -> str:
    """The releases the plan models, as the help and the refusal say them: '0.7 to 0.34'."""
    oldest, newest = (
        f"{major}.{minor}" for major, minor in (OLDEST_VLLM_VERSION, NEWEST_VLLM_VERSION)
    )
    return f"{oldest} to {newest}"


def beyond_the_model(arch: ModelArch, tokens: int) -> str | None:
    """Why vLLM refuses requests of `tokens` in all (prompt and output) for `arch`: longer than
    the length it derives from the config ('User-specified max_model_len … is greater than the
    derived max_model_len') unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, which no plan assumes; the
    words follow the count ("201,000 tokens " + them). None where it serves them."""
    longest = default_max_model_len(arch)
    if tokens <= longest:
        return None
    return (
        f"is longer than the model's {longest:,} (vLLM's max_model_len for its config), which "
        "vLLM refuses unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"
    )


def default_max_model_len(arch: ModelArch) -> int:
    """vLLM's default max_model_len: the config's position limit, stretched by RoPE scaling."""
    length = arch.derived_max_len or arch.max_position_embeddings or 2048
    scaling = arch.rope_scaling or {}
    rope_type = str(scaling.get("rope_type") or scaling.get("type") or "")
    factor = scaling.get("factor")
    if not isinstance(factor, int | float) or isinstance(factor, bool) or factor <= 0:
        return length
    if rope_type in ("", "su", "longrope", "llama3", "default", "mrope"):
        return length
    if arch.model_type.startswith("gemma3"):
        return length
    original = scaling.get("original_max_position_embeddings")
    if rope_type == "yarn" and isinstance(original, int) and original > 0:
        return int(original * factor)
    return int(length * factor)


def batch_defaults(settings: VllmSettings, version: tuple[int, int]) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) defaults of `vllm serve` for this GPU."""
    memory = settings.gpu_memory_bytes
    is_a100 = "a100" in settings.gpu.name.lower() and version >= (0, 9)
    if version >= (0, 28) and memory >= 160 * GIB:
        return 16384, 1024
    if memory >= 70 * GIB and not is_a100:
        return 8192, 1024
    return 2048, 256


def check_settings(settings: VllmSettings) -> None:
    if settings.gpu_memory_bytes <= 0:
        raise InputError(
            f"gpu_memory_bytes: expected a number > 0, got {settings.gpu_memory_bytes}"
        )
    utilization = settings.gpu_memory_utilization
    if utilization is not None and not 0 < utilization <= 1:
        raise InputError(
            f"gpu_memory_utilization: expected a fraction in (0, 1], got {utilization}"
        )
    for name in (
        "tensor_parallel_size",
        "pipeline_parallel_size",
        "data_parallel_size",
    ):
        at_least_one(name, getattr(settings, name))
    for name in ("max_model_len", "max_num_seqs", "max_num_batched_tokens", "block_size"):
        value = getattr(settings, name)
        if value is not None:
            at_least_one(name, value)
    check_settings_bounds(settings)


def check_settings_bounds(settings: VllmSettings) -> None:
    """Refuse settings no deployment has (`calculators.limits`): the answers stay finite."""
    bounded_int("gpu_memory_bytes", settings.gpu_memory_bytes, 1, MAX_GPU_MEMORY_BYTES)
    bounded_int("tensor_parallel_size", settings.tensor_parallel_size, 1, MAX_GPUS)
    bounded_int("pipeline_parallel_size", settings.pipeline_parallel_size, 1, MAX_GPUS)
    bounded_int("data_parallel_size", settings.data_parallel_size, 1, MAX_GPUS)
    gpus = settings_layout(settings).gpus
    bounded_int(
        "tensor_parallel_size x pipeline_parallel_size x data_parallel_size", gpus, 1, MAX_GPUS
    )
    bounded_int("block_size", release_block_size(settings), 1, 1 << 20)
    if settings.deepep_buffer_size_mb is not None:
        bounded_int("deepep_buffer_size_mb", settings.deepep_buffer_size_mb, 0, 1 << 20)
    for name, high in (
        ("max_model_len", MAX_TOKENS),
        ("max_num_batched_tokens", MAX_TOKENS),
        ("max_num_seqs", MAX_CONCURRENCY),
    ):
        value = getattr(settings, name)
        if value is not None:
            bounded_int(name, value, 1, high)


def check_tensor_parallel(arch: ModelArch, tensor_parallel_size: int) -> None:
    """vLLM's own rule: the attention heads split evenly, and the KV heads split evenly or are
    replicated whole (MLA has no KV heads to split)."""
    tp = tensor_parallel_size
    if arch.max_tensor_parallel and tp > arch.max_tensor_parallel:
        raise InputError(
            f"tensor_parallel_size: vLLM serves model_type {arch.model_type!r} on at most "
            f"{arch.max_tensor_parallel} rank(s); got {tp}"
        )
    if arch.num_attention_heads % tp:
        raise InputError(
            f"tensor_parallel_size: {tp} does not divide the model's "
            f"{arch.num_attention_heads} attention heads"
        )
    kv_heads = arch.num_kv_heads
    if arch.mla is None and kv_heads % tp and tp % kv_heads:
        raise InputError(
            f"tensor_parallel_size: {tp} neither divides nor is a multiple of the model's "
            f"{kv_heads} KV heads"
        )
    split = _state_split(arch)
    if split is not None and split[0] % tp:
        raise InputError(
            f"tensor_parallel_size: {tp} does not divide the model's {split[0]} {split[1]}"
        )


def _state_split(arch: ModelArch) -> tuple[int, str] | None:
    """What vLLM splits a state layer by across ranks (mamba_utils' `divide`): a Mamba layer's
    inner channels, a Gated DeltaNet or KDA layer's value heads, a Mamba-2 or lightning-attention
    layer's heads."""
    mixer = arch.mixer
    if mixer is None or not arch.num_state_layers:
        return None
    if isinstance(mixer, RecurrentMixer):
        if mixer.kind == MAMBA:
            return mixer.inner_size, "Mamba inner channels"
        return mixer.value_heads, "linear-attention heads"
    # Mamba-2 and lightning attention split by heads.
    return mixer.num_heads, "Mamba-2 heads" if isinstance(mixer, Mamba2Mixer) else "heads"


# What CUDA (and so vLLM) reports as total memory is 0.4-0.75 GiB less than nvidia-smi's total in
# public vLLM logs: H100 SXM 81559 MiB → 79.22 GiB, RTX 3090 24576 MiB → 23.58 GiB, A100 80GB
# 81920 MiB → ~79.26 GiB.
DRIVER_RESERVED_BYTES = 512 * MIB


def gpu_total_bytes(reported_mib: int | None, marketed_gb: float) -> int:
    """Total bytes vLLM sees on a GPU whose nvidia-smi total is `reported_mib`.

    Without a reported total, the marketed capacity read as decimal gigabytes is used: it is
    below what the driver reports on every GPU whose total is known, so the plan stays safe.
    """
    if reported_mib is None:
        return int(marketed_gb * 1e9)
    return reported_mib * MIB - DRIVER_RESERVED_BYTES
