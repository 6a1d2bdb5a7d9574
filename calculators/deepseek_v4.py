"""DeepSeek-V4 (`model_type` deepseek_v4) as vLLM 0.29.0 serves it (`vllm/models/deepseek_v4`):
its parameters by how they are stored, its KV caches, and how `v1/core/kv_cache_utils.py` packs
them into groups. The config reader keeps the config on `ModelArch.deepseek_v4`; the parameter
count (`rank_parameters`, per tensor-parallel rank), the weight format and the vLLM plan's KV
blocks (`model_groups`) read it; a KV size per token (`kv_cache.kv_cache_shape`) is refused.

Parameters (`nvidia/model.py`, `attention.py`, `compressor.py`), per decoder layer:
- attention: `fused_wqa_wkv` hidden -> q_lora_rank + head_dim, `wq_b` q_lora_rank -> heads x
  head_dim, the grouped output `wo_a` (heads x head_dim / o_groups -> o_groups x o_lora_rank)
  and `wo_b` (o_groups x o_lora_rank -> hidden), RMSNorms of q_lora_rank and head_dim, a float32
  sink per head;
- a compressor where the ratio r > 1: `fused_wkv_wgate` hidden -> 2 x coff x head_dim (not
  quantized), a float32 `ape` of r x coff x head_dim, an RMSNorm of head_dim;
- the indexer where r is 4: `wq_b` q_lora_rank -> index_n_heads x index_head_dim,
  `weights_proj` hidden -> index_n_heads (not quantized) and a compressor of index_head_dim;
- the MoE: router hidden -> n_routed_experts, a float32 correction bias per expert (noaux_tc) or,
  in the first `num_hash_layers`, an int32 token -> experts table (vocab x experts per token),
  routed experts and `n_shared_experts` shared ones of `moe_intermediate_size`;
- hyper-connections over hc_mult streams, float32 (`calculators.hyper_connections`,
  manifold-constrained); two RMSNorms of hidden.
Beside the layers: embedding and lm_head, the final norm, the hyper-connections' head. MTP
layers (`num_nextn_predict_layers`) are not loaded.

KV caches. Every layer (`compress_ratios[i]`, 0 read as 1)
holds:
- a sliding-window cache of the last `sliding_window` tokens (`DeepseekV4SWACache`,
  `v1/attention/backends/mla/sparse_swa.py`): blocks of 64 tokens, one `head_dim` latent per
  token; in the `fp8_ds_mla` layout (FlashMLA, fp8 KV) 584 bytes (448 FP8 NoPE + 128 RoPE + 8
  scale bytes), pages padded to a multiple of 576 bytes, else `head_dim` values of the KV dtype
  and pages padded to 512;
and a layer with ratio r > 1 (`attention.py`, `compressor.py`) also:
- its compressed cache, one latent per r tokens in blocks of 256 tokens (`MLAAttentionSpec`
  with `tokens_per_state` r; the DeepSeek-V4 backends take only block size 256);
- its compressor's state (`CompressorStateCache`): float32 kv and score rows of
  `2 * coff * head_dim` values (coff 2 when r is 4, else 1) per token of a window of
  `coff * r` tokens, in blocks of 4 (r 4) or 8 (r 128) tokens;
and a layer with ratio 4 (the only ones with the lightning indexer) also:
- the indexer's keys, one per 4 tokens in blocks of 256: `index_head_dim` FP8 bytes plus a
  float32 scale per 128 (132 bytes), or MXFP4 (64 + 4 bytes);
- the indexer compressor's state: as above with `index_head_dim`, window 8, blocks of 4.
Its sparse MLA backends lay the cache out block-outermost, so `kv_cache_utils` packs these
caches with `_get_packed_kv_cache_groups` (`calculators.cache_specs.packed_groups`).
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from infermeter.calculators.cache_specs import (
    CacheGroup,
    CacheSpec,
    packed_groups,
)
from infermeter.calculators.config_fields import int_field, optional_int
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.hyper_connections import manifold_constrained

FULL_BLOCK = 256  # tokens of a compressed-cache block (sparse_mla.py, flashinfer_sparse.py)
SWA_BLOCK = 64  # tokens of a sliding-window block (sparse_swa.py)
FP8_DS_MLA_BYTES = 584  # bytes of one latent in the fp8_ds_mla layout
PLAN_NOTE = (
    "DeepSeek-V4: the KV cache is planned through its packed groups (a sliding window per "
    "layer, latents compressed 4x or 128x, the indexer's keys, float32 compressor states; "
    "vLLM 0.29.0's kv_cache_utils), latents in the fp8_ds_mla layout unless --kv-cache-dtype "
    "bfloat16 (FlashMLA turns auto into fp8); the per-token KV figures count the growing "
    "caches only (compressed latents, indexer keys), an approximation; no decode throughput bound "
    "(its reads are not modelled); the activation peak and CUDA graphs are estimated as for "
    "a plain MoE (DeepSeek-V4's mHC warm-up and compressor buffers are not read)"
)


def _page(states: int, state_bytes: int, fp8_ds_mla: bool) -> int:
    """`_apply_alignment_padding`: the page rounded up to 576 bytes (fp8_ds_mla) or 512."""
    alignment = 576 if fp8_ds_mla else 512
    return math.ceil(states * state_bytes / alignment) * alignment


def layer_specs(
    ratio: int,
    head_dim: int,
    index_head_dim: int,
    window: int,
    kv_bytes: int,
    fp4_indexer: bool = False,
) -> list[CacheSpec]:
    """The caches of one layer with compression ratio `ratio`; `kv_bytes`: 1 for fp8 KV (the
    fp8_ds_mla layout), 2 for bfloat16 rows."""
    fp8 = kv_bytes == 1
    latent = FP8_DS_MLA_BYTES if fp8 else head_dim * kv_bytes
    specs = [CacheSpec("sliding", SWA_BLOCK, _page(SWA_BLOCK, latent, fp8), window)]
    if ratio <= 1:
        return specs
    coff = 2 if ratio == 4 else 1
    state_block = 4 if ratio == 4 else 8
    specs += [
        CacheSpec("compressed", FULL_BLOCK, _page(FULL_BLOCK // ratio, latent, fp8)),
        CacheSpec(
            "compressor_state",
            state_block,
            _page(state_block, 2 * coff * head_dim * 4, fp8),
            coff * ratio,
        ),
    ]
    if ratio == 4:
        key = index_head_dim // 2 + index_head_dim // 32 if fp4_indexer else index_head_dim + 4
        specs += [
            CacheSpec("indexer", FULL_BLOCK, _page(FULL_BLOCK // ratio, key, fp8)),
            CacheSpec("indexer_state", 4, _page(4, 2 * 2 * index_head_dim * 4, fp8), 8),
        ]
    return specs


@dataclass(frozen=True)
class Parameters:
    """Parameters by how vLLM stores them: routed experts, the other quantizable linears, the
    linears and norms left in the model dtype, float32 tensors and the int32 hash tables."""

    routed_experts: int
    linear: int
    unquantized: int
    float32: int
    int32: int

    @property
    def total(self) -> int:
        return self.routed_experts + self.linear + self.unquantized + self.float32 + self.int32


def compress_ratios(config: Mapping[str, Any], where: str = "") -> list[int]:
    """The ratio of each decoder layer: `compress_ratios[i]`, 0 read as 1 (`attention.py`); the
    list may run past num_hidden_layers (the MTP layers)."""
    layers = int_field(config, "num_hidden_layers", where)
    ratios = config.get("compress_ratios")
    if not isinstance(ratios, list) or len(ratios) < layers:
        raise ConfigError(
            f"{where}compress_ratios: expected a list of at least {layers} integers "
            f"(num_hidden_layers), got {ratios!r}"
        )
    ratios = [max(1, ratio) if isinstance(ratio, int) else -1 for ratio in ratios[:layers]]
    if any(ratio not in (1, 4, 128) for ratio in ratios):
        raise ConfigError(f"{where}compress_ratios: expected 0, 1, 4 or 128 for each layer")
    return ratios


def _compressor(hidden: int, head_dim: int, ratio: int) -> tuple[int, int]:
    """(unquantized linear + norm, float32) parameters of one compressor."""
    coff = 2 if ratio == 4 else 1
    return hidden * 2 * coff * head_dim + head_dim, ratio * coff * head_dim


def _attention(
    config: Mapping[str, Any], ratio: int, where: str, tp: int = 1
) -> tuple[int, int, int]:
    """(quantizable linear, unquantized, float32) parameters of one layer's attention on one of
    `tp` ranks: `wq_b`, `wo_a` (column) and `wo_b` (row) split, `fused_wqa_wkv` and the
    indexer replicated (attention.py: disable_tp, ReplicatedLinear)."""
    hidden = int_field(config, "hidden_size", where)
    heads = int_field(config, "num_attention_heads", where)
    head_dim = int_field(config, "head_dim", where)
    q_rank = int_field(config, "q_lora_rank", where)
    o_rank = int_field(config, "o_lora_rank", where)
    groups = int_field(config, "o_groups", where)
    if groups == 0:
        raise ConfigError(f"{where}o_groups: expected an integer > 0, got 0")
    sharded = q_rank * heads * head_dim + heads * head_dim // groups * groups * o_rank
    linear = hidden * (q_rank + head_dim) + (sharded + groups * o_rank * hidden) // tp
    # attn_sink: float32, padded to FlashMLA's 64 or 128 heads (attention.py padded_heads).
    unquantized, float32 = q_rank + head_dim, 64 if heads // tp <= 64 else 128
    if ratio > 1:
        extra, ape = _compressor(hidden, head_dim, ratio)
        unquantized, float32 = unquantized + extra, float32 + ape
    if ratio == 4:
        index_heads = int_field(config, "index_n_heads", where)
        index_dim = int_field(config, "index_head_dim", where)
        linear += q_rank * index_heads * index_dim
        extra, ape = _compressor(hidden, index_dim, 4)
        unquantized += hidden * index_heads + extra
        float32 += ape
    return linear, unquantized, float32


def parameters(config: Mapping[str, Any], where: str = "") -> Parameters:
    """Every parameter vLLM loads for a deepseek_v4 config."""
    hidden = int_field(config, "hidden_size", where)
    vocab = int_field(config, "vocab_size", where)
    experts = int_field(config, "n_routed_experts", where)
    per_token = int_field(config, "num_experts_per_tok", where)
    width = int_field(config, "moe_intermediate_size", where)
    shared = optional_int(config, "n_shared_experts", where, 0)
    hash_layers = optional_int(config, "num_hash_layers", where, 0)
    connections = manifold_constrained(int_field(config, "hc_mult", where))
    routed = linear = float32 = int32 = 0
    unquantized = 2 * vocab * hidden + hidden  # embedding, lm_head, final norm
    float32 += connections.head_params(hidden)  # the head's hyper-connection mixer
    for index, ratio in enumerate(compress_ratios(config, where)):
        attention = _attention(config, ratio, where)
        linear += attention[0] + 3 * hidden * width * shared
        unquantized += attention[1] + hidden * experts + 2 * hidden
        float32 += attention[2] + connections.layer_params(hidden)
        routed += experts * 3 * hidden * width
        if index < hash_layers:
            int32 += vocab * per_token
        elif config.get("topk_method") == "noaux_tc":
            float32 += experts
    return Parameters(routed, linear, unquantized, float32, int32)


@dataclass(frozen=True)
class RankParameters:
    """One tensor-parallel rank's parameters by the roles `calculators.param_count` uses:
    routed experts (all, and a token's), shared experts and the other quantizable linears
    (`linear`), the router, the unquantized rest (`small`: norms, compressors, the indexer's
    weights_proj), embedding and lm_head, and the 4-byte tensors (float32 and int32)."""

    embedding: int
    lm_head: int
    linear: int
    experts: int
    experts_active: int
    shared_experts: int
    router: int
    small: int
    four_byte: int


def rank_parameters(config: Mapping[str, Any], tp: int = 1, where: str = "") -> RankParameters:
    """Every parameter vLLM loads for a deepseek_v4 config, on one of `tp` tensor-parallel
    ranks: embedding and lm_head split by vocabulary, routed and shared experts by width, the
    attention as `_attention`; router, hyper-connections, norms and hash tables replicated."""
    whole = parameters(config, where)
    hidden = int_field(config, "hidden_size", where)
    vocab = -(-int_field(config, "vocab_size", where) // tp) * hidden
    experts = int_field(config, "n_routed_experts", where)
    width = int_field(config, "moe_intermediate_size", where)
    shared = optional_int(config, "n_shared_experts", where, 0)
    ratios = compress_ratios(config, where)
    layers = len(ratios)
    linear = small = four_byte = 0
    for ratio in ratios:
        attention = _attention(config, ratio, where, tp)
        linear, small, four_byte = (
            linear + attention[0],
            small + attention[1] + 2 * hidden,
            four_byte + attention[2],
        )
    # What `parameters` counts beside the attention: hyper-connections, the router's bias or
    # hash table, the final norm and the head's mixer, all replicated.
    _, whole_small, whole_four = _outside_attention(config, ratios, where)
    per_expert = 3 * hidden * width // tp
    return RankParameters(
        embedding=vocab,
        lm_head=vocab,
        linear=linear,
        experts=layers * experts * per_expert,
        experts_active=layers * int_field(config, "num_experts_per_tok", where) * per_expert,
        shared_experts=layers * 3 * hidden * width * shared // tp,
        router=layers * hidden * experts,
        small=small + whole_small,
        four_byte=four_byte + whole_four + whole.int32,
    )


def _outside_attention(
    config: Mapping[str, Any], ratios: Sequence[int], where: str
) -> tuple[int, int, int]:
    """(0, unquantized, float32) outside the attention and experts: the final norm, the
    hyper-connection mixers, the routers' float32 correction biases."""
    hidden = int_field(config, "hidden_size", where)
    connections = manifold_constrained(int_field(config, "hc_mult", where))
    hash_layers = optional_int(config, "num_hash_layers", where, 0)
    float32 = connections.head_params(hidden) + len(ratios) * connections.layer_params(hidden)
    if config.get("topk_method") == "noaux_tc":
        float32 += max(0, len(ratios) - hash_layers) * int_field(config, "n_routed_experts", where)
    return 0, hidden, float32


def deepseek_v4_fields(config: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """`ModelArch` fields of a deepseek_v4 config: the config itself, checked here so that a
    bad field is named when the config is read (its ratios, the parameters' fields)."""
    parameters(config, where)
    optional_int(config, "qk_rope_head_dim", where, 0)  # the rotary cache's width
    return {"deepseek_v4": dict(config)}


def model_specs(config: Mapping[str, Any], kv_bytes: int, where: str = "") -> list[CacheSpec]:
    """The caches of every layer of a deepseek_v4 config, in layer order, `kv_bytes` 1 (fp8:
    the fp8_ds_mla layout FlashMLA uses) or 2 (bfloat16 rows)."""
    head_dim = int_field(config, "head_dim", where)
    index_dim = optional_int(config, "index_head_dim", where, 0)
    window = int_field(config, "sliding_window", where)
    return [
        spec
        for ratio in compress_ratios(config, where)
        for spec in layer_specs(ratio, head_dim, index_dim, window, kv_bytes)
    ]


def model_groups(config: Mapping[str, Any], kv_bytes: int, where: str = "") -> list[CacheGroup]:
    """The packed KV cache groups of a deepseek_v4 config (`model_specs`)."""
    return packed_groups(model_specs(config, kv_bytes, where))


def kv_bytes(kv_cache_dtype: str | None) -> int:
    """Bytes of a latent element: 1 (the fp8_ds_mla layout) for fp8 and for `auto`, which
    DeepSeek-V4's FlashMLA attention turns into fp8 (attention.py: "auto" -> "fp8" ->
    "fp8_ds_mla"; FlashMLA is the backend on every GPU but SM 12.x); 2 for bfloat16/float16
    rows (the FlashInfer path)."""
    dtype = kv_cache_dtype or "auto"
    return 1 if dtype == "auto" or dtype.startswith("fp8") else 2
