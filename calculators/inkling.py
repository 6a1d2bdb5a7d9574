"""Inkling (`model_type` inkling_model; the inkling_mm_model wrapper's text_config) as vLLM
serves it (`vllm/models/inkling/nvidia`, unchanged from 0.29.0 to 0.34.0 in what holds memory):
its parameters by how they are stored and its KV caches.

Config: vLLM's InklingModelConfig (`vllm/models/inkling/configs.py`): `intermediate_size` is the
routed experts' width and `dense_intermediate_size` the dense MLPs' (a config with
`moe_intermediate_size` names them the other way round, as that class reads it);
`local_layer_ids` are the sliding-window layers (`sliding_window_size`, their own
`swa_num_attention_heads`, `swa_num_key_value_heads`, `swa_head_dim`), the others attend to
every token; the first `dense_mlp_idx` layers have a dense MLP, the others the MoE.

Parameters of a layer (`model.py`, `attention.py`, `moe.py`, `short_conv.py`), per rank:
- attention: one `qkvr` projection (hidden -> heads x head_dim for queries, K and V of
  max(kv_heads, tp) heads, `d_rel` per head for the relative branch), split by heads; `wo_ud`
  split; q/k RMSNorms of head_dim; `rel_logits_proj` (d_rel x rel_extent, or x
  sliding_window_size on a sliding layer), replicated;
- four short convolutions of `sconv_kernel_size` taps: on the rank's K and V heads and on
  its hidden / tp share of the attention and MLP outputs;
- the MLP: a dense one (gate_up and down, `dense_intermediate_size`, and a global scale where
  `use_global_scale`), or the MoE: `n_routed_experts` routed experts (FusedMoE, quantizable), the
  `n_shared_experts` sink experts (always bfloat16: plain parameters, the checkpoints exclude
  them from quantization), split by width; the gate (routed + sink experts rounded up to 8
  rows, replicated) with a float32 bias per routed expert and a float32 global scale;
- two RMSNorms of hidden.
Beside the layers: the embedding, replicated on every rank (`InklingReplicatedEmbedding`: the
whole `padded_vocab_size` x hidden table), the lm_head split by vocabulary, an RMSNorm after
the embedding (`use_embed_norm`) and the final one. The MTP heads are a separate draft model
(`InklingMTP`): not loaded.

The inkling_mm_model wrapper (InklingForConditionalGeneration, `common/towers.py`) adds, where
its sub-config sets `decoder_dmodel`, an audio tower (one embedding of n_mel_bins x
mel_vocab_size rows, a final RMSNorm) and a vision tower: an HMLP patch encoder of `n_layers`
bias-free linear maps, each but the last followed by an RMSNorm, through the patch-folding
scales `plan_out_scales` picks (`tower_parameters`).

KV caches of a layer, per rank (`attention.py`, `sconv_swa_attn.py`): its attention's K and V
(`FullAttentionSpec`, or `SlidingWindowSpec` of sliding_window_size on a sliding layer), and the
short convolutions' state as the cache of a virtual sliding-window layer (`InklingConvState`:
window and block `sconv_kernel_size`, the layer's KV heads of the rank, each
K + V + 2 x hidden / kv_heads channels rounded up to a power of two, bfloat16). vLLM asserts
tp <= the KV heads of each kind of layer. `unify_kv_cache_spec_page_size` gives every cache the
largest page and `_get_kv_cache_groups_uniform_page_size` groups them
(`cache_specs.uniform_page_groups`).
"""

import math
from collections.abc import Mapping
from itertools import combinations, pairwise
from typing import Any

from infermeter.calculators.cache_specs import CacheGroup, CacheSpec, uniform_page_groups
from infermeter.calculators.config_fields import int_field, optional_int
from infermeter.calculators.errors import ConfigError, InputError
from infermeter.calculators.model_arch import AttentionShape

INKLING_TYPE = "inkling_model"
PLAN_NOTE = (
    "Inkling: each layer's K/V (full attention, or a sliding window of sliding_window_size) and "
    "its short convolutions' state as the cache of a sliding-window layer of sconv_kernel_size "
    "tokens, grouped with every page grown to the largest (vLLM's "
    "unify_kv_cache_spec_page_size); no decode throughput bound (its relative-attention and "
    "convolution reads are not modelled); the activation peak and CUDA graphs are estimated as "
    "for a plain MoE"
)
# InklingModelConfig's defaults (vllm/models/inkling/configs.py, 0.29.0 and 0.34.0).
_DEFAULTS: dict[str, Any] = {
    "vocab_size": 201024, "hidden_size": 1536, "intermediate_size": 768,
    "num_hidden_layers": 16, "num_attention_heads": 12, "num_key_value_heads": 4, "d_rel": 16,
    "rel_extent": 1024, "local_layer_ids": [], "sliding_window_size": 512, "q_bias": False,
    "o_bias": False, "use_embed_norm": False, "dense_mlp_idx": 0, "n_routed_experts": 0,
    "n_shared_experts": 0, "num_experts_per_tok": 1, "use_gate_bias": False,
    "use_global_scale": False, "tie_word_embeddings": False,
}  # fmt: skip


def inkling_defaults(config: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """The config as InklingModelConfig reads it, with the names the config reader uses:
    `moe_intermediate_size` (the experts' width), `first_k_dense_replace` (`dense_mlp_idx`),
    `layer_types` (from `local_layer_ids`), `sliding_window` and the sliding layers' shape."""
    merged = {**_DEFAULTS, **config}
    dense = merged.get("dense_intermediate_size")
    if merged.get("moe_intermediate_size") is not None and dense is None:
        dense = merged["intermediate_size"]
        merged["intermediate_size"] = merged["moe_intermediate_size"]
    merged["dense_intermediate_size"] = dense or merged["intermediate_size"]
    merged["moe_intermediate_size"] = merged["intermediate_size"]
    heads = int_field(merged, "num_attention_heads", where)
    merged.setdefault("head_dim", int_field(merged, "hidden_size", where) // max(1, heads))
    merged.setdefault("v_head_dim", merged["head_dim"])
    for swa, main in (("swa_num_attention_heads", "num_attention_heads"),
                      ("swa_num_key_value_heads", "num_key_value_heads"),
                      ("swa_head_dim", "head_dim")):  # fmt: skip
        merged.setdefault(swa, merged[main])
    merged.setdefault("swa_v_head_dim", merged["swa_head_dim"])
    merged.setdefault("sconv_kernel_size", merged.get("conv_kernel_size") or 4)
    if merged.get("padded_vocab_size") is None:
        # The tables hold padded_vocab_size rows; the logits stop at unpadded_vocab_size.
        merged["padded_vocab_size"] = int_field(merged, "vocab_size", where)
        unpadded = merged.get("unpadded_vocab_size")
        if isinstance(unpadded, int) and unpadded < merged["vocab_size"]:
            merged["vocab_size"] = unpadded
    merged["first_k_dense_replace"] = merged["dense_mlp_idx"]
    merged["sliding_window"] = merged["sliding_window_size"]
    local = merged["local_layer_ids"]
    if not isinstance(local, list) or not all(isinstance(i, int) for i in local):
        raise ConfigError(f"{where}local_layer_ids: expected a list of layer indices")
    layers = int_field(merged, "num_hidden_layers", where)
    merged["layer_types"] = [
        "sliding_attention" if i in set(local) else "full_attention" for i in range(layers)
    ]
    _check_read_fields(merged, where)
    return merged


# The fields rank_parameters, model_groups and _conv_spec read as the config gives them: whole
# numbers, the head counts, head sizes and kernel above 0, the flags true or false.
_COUNTS = (
    "padded_vocab_size", "intermediate_size", "dense_intermediate_size", "d_rel", "rel_extent",
    "sliding_window_size", "dense_mlp_idx", "n_routed_experts", "n_shared_experts",
    "num_experts_per_tok",
)  # fmt: skip
_SIZES = (
    "hidden_size", "num_key_value_heads", "head_dim", "swa_num_attention_heads",
    "swa_num_key_value_heads", "swa_head_dim", "sconv_kernel_size",
)  # fmt: skip
_FLAGS = ("q_bias", "o_bias", "use_embed_norm", "use_gate_bias", "use_global_scale")


def _check_read_fields(config: Mapping[str, Any], where: str) -> None:
    for name in _COUNTS + _SIZES:
        if int_field(config, name, where) == 0 and name in _SIZES:
            raise ConfigError(f"{where}{name}: expected an integer > 0, got 0")
    for name in _FLAGS:
        if not isinstance(config[name], bool):
            raise ConfigError(f"{where}{name}: expected true or false, got {config[name]!r}")


def inkling_fields(config: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """`ModelArch` fields of an Inkling config: the config, its MoE checked as vLLM asserts."""
    if optional_int(config, "n_routed_experts", where, 0) and not (
        optional_int(config, "n_shared_experts", where, 0) and config.get("shared_expert_sink")
    ):
        raise ConfigError(
            f"{where}shared_expert_sink: vLLM's InklingMoE takes sink experts only "
            "(n_shared_experts > 0, shared_expert_sink true)"
        )
    heads, kv_heads, head_dim = _shape(config, True)
    return {
        "inkling": dict(config),
        "sliding_attention": AttentionShape(heads, kv_heads, head_dim, head_dim),
    }


def check_tensor_parallel(config: Mapping[str, Any], tp: int) -> None:
    """vLLM's InklingConvState asserts tp_size <= the KV heads of every kind of layer."""
    heads = min(config["num_key_value_heads"], config["swa_num_key_value_heads"])
    if tp > heads:
        raise InputError(
            f"tensor_parallel_size: Inkling's short-convolution cache keeps whole KV heads on a "
            f"rank (vLLM's InklingConvState); expected at most {heads}, got {tp}"
        )


def _shape(config: Mapping[str, Any], local: bool) -> tuple[int, int, int]:
    """(query heads, KV heads, head size) of a sliding (`local`) or full-attention layer."""
    prefix = "swa_" if local else ""
    return (
        config[f"{prefix}num_attention_heads"],
        config[f"{prefix}num_key_value_heads"],
        config[f"{prefix}head_dim"],
    )


def _attention(config: Mapping[str, Any], local: bool, tp: int) -> tuple[int, int]:
    """(linear, small) parameters of one layer's attention and short convolutions on a rank."""
    hidden, kernel = config["hidden_size"], config["sconv_kernel_size"]
    heads, kv_heads, head_dim = _shape(config, local)
    rows = heads * head_dim + 2 * max(kv_heads, tp) * head_dim + config["d_rel"] * heads
    linear = (hidden * rows + heads * head_dim * hidden) // tp
    small = rows // tp if config["q_bias"] else 0
    small += hidden if config["o_bias"] else 0
    extent = config["sliding_window_size"] if local else config["rel_extent"]
    small += 2 * head_dim + config["d_rel"] * extent
    small += kernel * (2 * max(1, kv_heads // tp) * head_dim + 2 * hidden // tp)
    return linear, small + 2 * hidden


def rank_parameters(config: Mapping[str, Any], tp: int = 1) -> dict[str, int]:
    """Parameters on one of `tp` ranks by `param_count.ParamCounts` role: the sink experts as
    `shared_experts` (quantization leaves them alone), float32 scales and biases as `four_byte`."""
    hidden, layers = config["hidden_size"], config["num_hidden_layers"]
    local = set(config["local_layer_ids"])
    experts, sinks = config["n_routed_experts"], config["n_shared_experts"]
    per_expert = 3 * hidden * config["intermediate_size"] // tp
    moe_layers = max(0, layers - config["dense_mlp_idx"]) if experts else 0
    attention = small = 0
    for layer in range(layers):
        linear, extra = _attention(config, layer in local, tp)
        attention, small = attention + linear, small + extra
    scales = int(config["use_global_scale"])
    vocab = config["padded_vocab_size"]
    # The final norm, the one after the embedding, the dense MLPs' global scales.
    small += hidden * (1 + int(config["use_embed_norm"])) + (layers - moe_layers) * scales
    return {
        "embedding": vocab * hidden,
        "lm_head": 0 if config["tie_word_embeddings"] else math.ceil(vocab / tp) * hidden,
        "attention": attention,
        "dense_mlp": (layers - moe_layers) * 3 * hidden * config["dense_intermediate_size"] // tp,
        "experts": moe_layers * experts * per_expert,
        "experts_active": moe_layers * config["num_experts_per_tok"] * per_expert,
        "shared_experts": moe_layers * sinks * per_expert,
        "router": moe_layers * math.ceil((experts + sinks) / 8) * 8 * hidden,
        "small": small,
        "vision": 0,  # the wrapper's towers: `tower_parameters`
        "four_byte": moe_layers * (scales + experts * int(config["use_gate_bias"])),
    }


def _conv_spec(config: Mapping[str, Any], local: bool, tp: int) -> CacheSpec:
    """`InklingConvState.get_kv_cache_spec`: a sliding window of the kernel's taps, bfloat16."""
    _, kv_heads, head_dim = _shape(config, local)
    width = 2 * head_dim + 2 * (config["hidden_size"] // kv_heads)
    kernel = config["sconv_kernel_size"]
    page = kernel * (kv_heads // tp) * (1 << (width - 1).bit_length()) * 2
    return CacheSpec("sconv", kernel, page, kernel)


def model_groups(
    config: Mapping[str, Any], kv_bytes: int, tp: int, block_size: int
) -> list[CacheGroup]:
    """The KV cache groups of an Inkling config on one of `tp` ranks, `kv_bytes` a K/V element's
    bytes, `block_size` tokens per attention block before the pages are unified."""
    check_tensor_parallel(config, tp)
    local = set(config["local_layer_ids"])
    specs = []
    for layer in range(config["num_hidden_layers"]):
        _, kv_heads, head_dim = _shape(config, layer in local)
        page = block_size * max(1, kv_heads // tp) * 2 * head_dim * kv_bytes
        window = config["sliding_window_size"] if layer in local else 0
        specs += [CacheSpec("sliding" if window else "full", block_size, page, window)]
        specs += [_conv_spec(config, layer in local, tp)]
    return uniform_page_groups(specs)


def _prime_factors(n: int) -> list[int]:
    factors, p = [], 2
    while p * p <= n:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    return factors + ([n] if n > 1 else [])


# The HMLP's shape in its config (`_hmlp_scales`' arguments, in order); the most choices of
# scales for its layers that `_hmlp_scales` compares (a real one: 15).
_HMLP_SHAPE = ("temporal_patch_size", "patch_size", "n_layers", "n_channels")
_MAX_SCALE_CHOICES = 100_000


def _hmlp_scales(temporal: int, patch: int, layers: int, channels: int) -> list[tuple[int, ...]]:
    """`plan_out_scales`: the (t, h, w, channels) after each HMLP layer, channels rounded up to
    64; the scales closest in log size reduction to an even spacing over `layers` steps (each
    its own scale, in order, when there are more scales than steps). ConfigError where there
    are more than `_MAX_SCALE_CHOICES` ways to choose them."""
    scales, h, t = [(1, 1, 1, channels)], 1, 1
    for factor in reversed(_prime_factors(patch)):
        h *= factor
        scales.append((1, h, h, -(-h * h * channels // 64) * 64))
    for factor in reversed(_prime_factors(temporal)):
        t *= factor
        scales.append((t, h, h, -(-h * h * channels * t // 64) * 64))
    top = math.log(patch * patch * temporal * channels)
    cost = [
        [abs(top * step / layers - math.log(a * b * c)) for a, b, c, _ in scales]
        for step in range(layers + 1)
    ]
    choices = math.comb(len(scales), layers + 1)
    if layers < len(scales) and choices > _MAX_SCALE_CHOICES:
        raise ConfigError(
            f"vision_config.n_layers: {layers} HMLP layers over the {len(scales)} scales of "
            f"patch_size {patch} and temporal_patch_size {temporal} are {choices:,} choices of "
            f"scales; the calculators compare at most {_MAX_SCALE_CHOICES:,}"
        )
    if layers >= len(scales):
        picked = [min(range(len(scales)), key=row.__getitem__) for row in cost]
    else:
        chosen = min(
            combinations(range(len(scales)), layers + 1),
            key=lambda cols: sum(cost[row][col] for row, col in enumerate(cols)),
        )
        picked = list(chosen)
    picked[0], picked[-1] = 0, len(scales) - 1
    return [scales[i] for i in picked]


def tower_parameters(wrapper: Mapping[str, Any]) -> int:
    """The audio and vision towers an inkling_mm_model config enables (`decoder_dmodel` set)."""
    params = 0
    audio = wrapper.get("audio_config") or {}
    if audio.get("decoder_dmodel"):
        width = int_field(audio, "decoder_dmodel", "audio_config.")
        rows = int_field(audio, "n_mel_bins", "audio_config.") * int_field(
            audio, "mel_vocab_size", "audio_config."
        )
        params += rows * width + (width if audio.get("use_audio_norm") else 0)
    vision = wrapper.get("vision_config") or {}
    if not vision.get("decoder_dmodel"):
        return params
    where = "vision_config."
    width = int_field(vision, "decoder_dmodel", where)
    shape = {name: int_field(vision, name, where) for name in _HMLP_SHAPE}
    for name, value in shape.items():
        if value == 0:
            raise ConfigError(f"{where}{name}: expected an integer > 0, got 0")
    scales = _hmlp_scales(*shape.values())
    layers = shape["n_layers"]
    for index, (start, end) in enumerate(pairwise(scales)):
        fold = (end[0] // start[0]) * (end[1] // start[1]) * (end[2] // start[2])
        out = width if index == layers - 1 else end[3]
        params += start[3] * fold * out + (0 if index == layers - 1 else end[3])
    return params + (width if vision.get("use_vision_norm") else 0)
