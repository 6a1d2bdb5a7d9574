"""KV cache bytes per token, per layer group (full vs sliding-window attention), per GPU.

Standard attention stores a K and a V vector per KV head; tensor parallelism splits the KV heads
across GPUs (each GPU keeps at least one). DeepSeek's latent attention stores one compressed
vector (kv_lora_rank + qk_rope_head_dim) per token and layer, replicated on every GPU.
Sliding-window layers never hold more than their window of tokens per sequence. Chunked local
attention layers (Llama 4) count as full attention: vLLM turns its hybrid KV cache manager off
for them unless VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1, so they keep every token.
Mamba and Gated DeltaNet layers hold no KV at all but one fixed-size state per sequence.
DeepSeek-V3.2's indexer adds its own FP8 key (plus one float32 scale per 128 values) per token
and layer, and V3.2's FP8 cache stores the latent in vLLM's `fp8_ds_mla` layout (656 bytes);
HY-V4 holds the key on the layers with their own indexer only, that layout on its sparse ones.
"""

from dataclasses import dataclass
from typing import Literal, get_args

from infermeter.calculators.errors import InputError
from infermeter.calculators.limits import at_least_one
from infermeter.calculators.model_arch import CHUNKED, FULL, SLIDING, AttentionShape, ModelArch
from infermeter.calculators.zaya import cache_fields

# The caches grouped layer by layer (calculators.layer_caches): the ModelArch field that holds
# the family's config, and what the refusal says of them.
_LAYER_CACHES = (
    ("deepseek_v4", "DeepSeek-V4's caches (a sliding window per layer, latents compressed 4x or "
     "128x, the indexer's keys, float32 compressor states) are packed into groups that"),
    ("minimax_m3", "MiniMax-M3's caches (K/V in every layer, the indexer's keys in the sparse "
     "ones, in 128-token blocks) are grouped layer by layer, which"),
    ("inkling", "Inkling's caches (K/V, a sliding window on most layers, short-convolution "
     "states beside every layer's attention) are grouped layer by layer, which"),
    ("domyn_edge", "DomynEdge's caches (a head size and a window per layer) are grouped layer by "
     "layer, which"),
)  # fmt: skip
KvCacheDtype = Literal["auto", "fp8", "fp8_e4m3", "fp8_e5m2", "bfloat16", "float16"]
"""The KV cache dtypes (vLLM's `--kv-cache-dtype` names) the memory plan knows: what `calc vram`
takes and what a result's `identity.model.kv_cache_dtype` may say (`registry.models.identity`)."""
KV_CACHE_DTYPES: tuple[str, ...] = get_args(KvCacheDtype)


@dataclass(frozen=True)
class KVCacheShape:
    """The KV cache of one model on one GPU."""

    bytes_per_token_per_layer: int
    full_layers: int
    sliding_layers: int
    sliding_window: int | None
    dtype_bytes: int
    state_layers: int = 0  # Mamba / Gated DeltaNet layers: one state per sequence, no KV
    state_bytes_per_sequence_per_layer: int = 0
    # Gemma 4's full-attention layers have their own head size and KV heads; 0: the same bytes
    # as the other layers (`bytes_per_token_per_layer`).
    full_layer_bytes_per_token: int = 0
    # Full-attention caches beyond one of `full_bytes_per_token_per_layer` a full layer (HY-V4:
    # the indexer keys of the layers with their own indexer, the sparse layers' wider latent),
    # in the same group of full-attention layers (vLLM's UniformTypeKVCacheSpecs).
    extra_bytes_per_token: int = 0

    @property
    def full_bytes_per_token_per_layer(self) -> int:
        return self.full_layer_bytes_per_token or self.bytes_per_token_per_layer

    @property
    def bytes_per_token(self) -> int:
        """Bytes per token across all layers, as if every layer attended to every token."""
        return (
            self.full_attention_bytes_per_token
            + self.bytes_per_token_per_layer * self.sliding_layers
        )

    @property
    def full_attention_bytes_per_token(self) -> int:
        return self.full_bytes_per_token_per_layer * self.full_layers + self.extra_bytes_per_token

    def bytes_for_sequence(self, tokens: int) -> int:
        """Bytes one sequence of `tokens` tokens occupies: sliding layers keep only the window."""
        window = self.sliding_window if self.sliding_window is not None else tokens
        return (
            self.full_attention_bytes_per_token * tokens
            + self.bytes_per_token_per_layer * self.sliding_layers * min(tokens, window)
            + self.state_layers * self.state_bytes_per_sequence_per_layer
        )


def _gqa_bytes(shape: AttentionShape, tensor_parallel_size: int, element: int) -> int:
    """A key and a value per KV head (each rank holds at least one), per token and layer."""
    heads = max(1, shape.kv_heads // tensor_parallel_size)
    return heads * (shape.head_dim + shape.v_head_dim) * element


def kv_dtype_bytes(kv_cache_dtype: str | None, model_dtype_bytes: int) -> int:
    """Bytes per KV element: `auto` follows the model dtype, fp8 variants take one byte."""
    if kv_cache_dtype is None or kv_cache_dtype == "auto":
        return model_dtype_bytes
    if kv_cache_dtype.startswith("fp8"):
        return 1
    if kv_cache_dtype in ("bfloat16", "float16"):
        return 2
    raise InputError(
        f"kv_cache_dtype: expected one of {', '.join(KV_CACHE_DTYPES)}; got {kv_cache_dtype!r}"
    )


def kv_cache_shape(
    arch: ModelArch,
    kv_cache_dtype: str | None = None,
    tensor_parallel_size: int = 1,
    model_dtype_bytes: int = 2,
) -> KVCacheShape:
    """The per-GPU KV cache layout of `arch` under tensor parallelism."""
    at_least_one("tensor_parallel_size", tensor_parallel_size)
    for field, what in _LAYER_CACHES:
        if getattr(arch, field) is not None:
            raise InputError(
                f"model_type {arch.model_type!r}: {what} one KV size per token cannot express; "
                "the vLLM plan (calc vram) models them"
            )
    if kv_cache_dtype in (None, "auto") and arch.default_kv_cache_dtype:
        kv_cache_dtype = arch.default_kv_cache_dtype
    element = kv_dtype_bytes(kv_cache_dtype, model_dtype_bytes)
    if arch.zaya is not None:  # every KV head on every rank, a CCA state beside each layer
        return KVCacheShape(**cache_fields(arch.zaya, element, model_dtype_bytes))
    extra = 0
    if arch.mla is not None and arch.indexer is not None:
        per_layer, extra = _sparse_mla_bytes(arch, element)
    elif arch.mla is not None:
        per_layer = arch.mla.kv_latent_dim * element
    else:
        shape = arch.attention_shape(False)
        per_layer = _gqa_bytes(shape, tensor_parallel_size, element)
        per_layer += arch.extra_kv_heads_per_rank * (shape.head_dim + shape.v_head_dim) * element
    full_per_layer = 0
    if (arch.global_head_dim or arch.sliding_attention) and arch.mla is None:
        # Gemma 4's full-attention layers, or MiMo-V2's other than its sliding ones.
        full_per_layer = _gqa_bytes(arch.attention_shape(True), tensor_parallel_size, element)
    # Gemma 4's KV-shared layers (the last ones) read an earlier layer's cache.
    own_kv = arch.layer_kinds[: arch.num_layers - arch.kv_shared_layers]
    state = 0
    if arch.mixer is not None and arch.num_state_layers:
        state = arch.mixer.state_bytes_per_sequence(tensor_parallel_size, model_dtype_bytes)
    sliding = own_kv.count(SLIDING) + arch.loop_sliding_layers + arch.extra_sliding_caches
    ple_states = 0
    if arch.qwen4_exp is not None:
        # QSA's compressed keys; a PLE layer's short-convolution state takes a state page.
        extra, ple_states = arch.qwen4_exp.extra_bytes_per_token, len(arch.qwen4_exp.ple_rows)
    if arch.step5 is not None:  # the DSA layers' FP8 summaries, beside their KV
        extra += arch.step5.summary_bytes_per_token
    return KVCacheShape(
        bytes_per_token_per_layer=per_layer,
        full_layers=own_kv.count(FULL) + own_kv.count(CHUNKED) + arch.extra_full_caches,
        sliding_layers=sliding,
        sliding_window=(arch.sliding_window or arch.loop_window or None) if sliding else None,
        dtype_bytes=element,
        state_layers=arch.num_state_layers + ple_states,
        state_bytes_per_sequence_per_layer=state,
        full_layer_bytes_per_token=full_per_layer if full_per_layer != per_layer else 0,
        extra_bytes_per_token=extra,
    )


def _sparse_mla_bytes(arch: ModelArch, element: int) -> tuple[int, int]:
    """(bytes per token of every layer, bytes beyond them) of latent attention with a lightning
    indexer: the sparse layers' latent (in the fp8_ds_mla layout with an fp8 cache: 512 FP8
    values, 4 float32 scales, 64 bf16 RoPE values), a dense layer's (`element` bytes a value),
    the indexer's FP8 key and a float32 scale per 128 values on the layers with their own."""
    assert arch.mla is not None
    assert arch.indexer is not None
    latent = arch.mla.kv_latent_dim
    sparse_latent = latent * element
    if element == 1:
        sparse_latent = arch.mla.kv_lora_rank + 4 * 4 + arch.mla.qk_rope_head_dim * 2
    key = arch.indexer.head_dim + arch.indexer.head_dim // 128 * 4
    own, sparse = arch.indexer.count(arch.num_layers)
    if own == sparse == arch.num_layers:  # V3.2: every layer sparse, with its own indexer
        return sparse_latent + key, 0
    keys = -(-own * key // arch.indexer.tokens_per_key)  # GLM-5-Next pools them
    return latent * element, sparse * (sparse_latent - latent * element) + keys
