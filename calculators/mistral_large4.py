"""Mistral Large 4 (`model_type` mistral_large_4) as vLLM serves it: added in 0.34.0
(`vllm/models/mistral/mistral_large4/nvidia/model.py`, with `vllm/models/mistral/nvidia`'s
`attention.py`, `indexer.py`, `moe.py`, `ssmax.py` and `common/layer_spec.py`). Mistral ships
params.json; vLLM's `adapt_config_dict` (`vllm/transformers_utils/configs/mistral.py`,
`_remap_mistral_large_4_args`) turns it into the config read here, with per-layer lists:
`nope_layer_flags`, `kv_source_layers`, `index_sharing`.

Latent attention without a query LoRA, every layer sparse (DSA) when `index_topk` is set. Per
layer, on a rank (`MistralMLAAttention`):
- q_proj (hidden -> heads x (qk_nope + qk_rope)) and o_proj, split by heads, quantizable;
- kv_b_proj, split by heads and never quantized (quant_config=None): kv_lora_rank -> heads x
  (qk_nope + v_head_dim), where a NoPE layer (`nope_layer_flags`) spends the rope dims on nope
  (its qk_nope is qk_nope + qk_rope);
- a layer that owns its latent (`kv_source_layers[i] == i`): kv_a_proj_with_mqa, replicated and
  never quantized, hidden -> kv_lora_rank + qk_rope (kv_lora_rank alone on a NoPE layer, the
  narrower projection), its kv_a_layernorm, and the latent cache: kv_lora_rank + qk_rope values a
  token (NoPE layers keep the 576-wide layout), FlashMLA's fp8_ds_mla layout (656 bytes) with an
  fp8 cache, which `fp8_kv_cache` makes the default (`verify_and_update_config` turns "auto"
  into fp8_ds_mla). A layer that shares another's latent holds neither projection nor cache;
- `ssmax_scaling`: s and b per head, split by heads;
- the layers `index_sharing` marks "full" (every layer without the list) build the indexer:
  q_input_norm (a LayerNorm with a bias), wq_b hidden -> index_n_heads x index_head_dim
  (replicated, quantizable), wk_weights_proj hidden -> index_head_dim + index_n_heads
  (replicated, never quantized), the key's float32 LayerNorm (counted in the model dtype, 2 x
  index_head_dim values), SSMax s and b per indexer head with `indexer_ssmax_scaling`, and its
  FP8 key cache (index_head_dim bytes + a float32 scale per 128); "shared" layers reuse the
  top-k and hold neither.
The MoE (`MistralMoE`): softmax routing, a router in the model dtype, `n_shared_experts` shared
experts of moe_intermediate_size each; layer i is MoE where i >= first_k_dense_replace and
i % moe_layer_freq == 0 (`get_layer_specs`). The lm_head is never tied; the MTP (`mtp_`) and
DSpark weights belong to the draft model and are skipped; the Pixtral host's vision tower is
the multimodal checkpoint's, not this model's.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from infermeter.calculators.config_fields import int_field, layer_list, optional_int
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.model_arch import SparseIndexer

if TYPE_CHECKING:
    from infermeter.calculators.model_arch import ModelArch

MISTRAL_LARGE4_TYPE = "mistral_large_4"
MISTRAL_LARGE4_NOTE = (
    "Mistral Large 4: latent caches on the layers that own one (kv_source_layers), the "
    "indexer's FP8 keys on its 'full' layers, fp8_ds_mla latents when the config's "
    "fp8_kv_cache makes 'auto' fp8; kv_a/kv_b and the indexer's wk_weights_proj in the model "
    "dtype whatever the quantization; the sparse-attention top-k and zero-KV buffers and the "
    "activation peak as for a plain MoE"
)


@dataclass(frozen=True)
class Large4Layers:
    """Per layer, what `get_layer_specs` resolves from the config."""

    rope: tuple[bool, ...]  # False: a NoPE layer
    kv_sources: tuple[int, ...]  # the layer whose latent cache each layer reads
    indexers: tuple[bool, ...]  # whether each layer builds its own indexer
    ssmax: bool
    indexer_ssmax: bool

    def attention_params(self, arch: "ModelArch", tp: int, layer: int) -> tuple[int, int]:
        """(quantizable linear weights, tensors kept in the model dtype) of layer `layer`'s
        attention and indexer on one of `tp` ranks."""
        mla, hidden, heads = arch.mla, arch.hidden_size, arch.num_attention_heads
        assert mla is not None
        nope = mla.qk_nope_head_dim if self.rope[layer] else mla.qk_head_dim
        linear = hidden * heads * mla.qk_head_dim // tp + heads * mla.v_head_dim * hidden // tp
        kept = mla.kv_lora_rank * heads * (nope + mla.v_head_dim) // tp  # kv_b_proj
        if self.kv_sources[layer] == layer:  # kv_a_proj_with_mqa and kv_a_layernorm
            latent = mla.kv_latent_dim if self.rope[layer] else mla.kv_lora_rank
            kept += hidden * latent + mla.kv_lora_rank
        kept += 2 * heads // tp if self.ssmax else 0
        if self.indexers[layer] and arch.indexer is not None:
            index = arch.indexer
            linear += hidden * index.num_heads * index.head_dim  # wq_b
            kept += (
                hidden * (index.head_dim + index.num_heads)  # wk_weights_proj
                + 2 * hidden  # q_input_norm
                + 2 * index.head_dim  # k_norm
                + (2 * index.num_heads if self.indexer_ssmax else 0)
            )
        return linear, kept


def _kv_sources(config: Mapping[str, Any], num_layers: int, where: str) -> tuple[int, ...]:
    if config.get("kv_source_layers") is None:
        return tuple(range(num_layers))
    sources = layer_list(config, "kv_source_layers", num_layers, where)
    for layer, source in enumerate(sources):
        if not isinstance(source, int) or not 0 <= source <= layer or sources[source] != source:
            raise ConfigError(
                f"{where}kv_source_layers[{layer}]: expected an earlier layer that keeps its own "
                f"latent (or {layer} itself), got {source!r}"
            )
    return tuple(sources)


def large4_layers(config: Mapping[str, Any], num_layers: int, where: str) -> Large4Layers:
    """The per-layer choices of a mistral_large_4 config."""
    nope = config.get("nope_layer_flags") or [False] * num_layers
    nope = layer_list({"nope_layer_flags": nope}, "nope_layer_flags", num_layers, where)
    sharing = config.get("index_sharing") or ["full"] * num_layers
    sharing = layer_list({"index_sharing": sharing}, "index_sharing", num_layers, where)
    if set(sharing) - {"full", "shared"}:
        raise ConfigError(f"{where}index_sharing: expected 'full' or 'shared' for each layer")
    sparse = config.get("index_topk") is not None
    return Large4Layers(
        rope=tuple(not flag for flag in nope),
        kv_sources=_kv_sources(config, num_layers, where),
        indexers=tuple(sparse and kind == "full" for kind in sharing),
        ssmax=bool(config.get("ssmax_scaling", False)),
        indexer_ssmax=bool(config.get("indexer_ssmax_scaling", False)),
    )


def large4_moe_layers(config: Mapping[str, Any], num_layers: int, where: str) -> list[int]:
    """`get_layer_specs`' MoE layers: from first_k_dense_replace, every moe_layer_freq-th."""
    first = optional_int(config, "first_k_dense_replace", where, 0)
    frequency = optional_int(config, "moe_layer_freq", where, 1) or 1
    return [i for i in range(num_layers) if i >= first and i % frequency == 0]


def large4_indexer(config: Mapping[str, Any], num_layers: int, where: str) -> SparseIndexer | None:
    """The DSA indexer: its own on the "full" layers, the sparse latent on the layers that own
    one; None without `index_topk`."""
    if config.get("index_topk") is None:
        return None
    layers = large4_layers(config, num_layers, where)
    return SparseIndexer(
        num_heads=int_field(config, "index_n_heads", where),
        head_dim=int_field(config, "index_head_dim", where),
        top_k=int_field(config, "index_topk", where),
        layers=tuple(i for i, own in enumerate(layers.indexers) if own),
        sparse_layers=tuple(i for i, source in enumerate(layers.kv_sources) if source == i),
    )


def large4_fields(config: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """`ModelArch` fields of a mistral_large_4 config beyond the latent attention and the MoE."""
    if optional_int(config, "q_lora_rank", where, 0):
        raise ConfigError(f"{where}q_lora_rank: vLLM's Mistral Large 4 supports no query LoRA")
    if int_field(config, "kv_lora_rank", where) == 0:
        raise ConfigError(
            f"{where}kv_lora_rank: Mistral Large 4's attention is latent (MLA); expected an "
            "integer > 0, got 0"
        )
    num_layers = int_field(config, "num_hidden_layers", where)
    layers = large4_layers(config, num_layers, where)
    owners = sum(1 for i, source in enumerate(layers.kv_sources) if source == i)
    return {
        "mistral_large4": layers,
        # Every layer is latent attention: the count of those that read another's latent is
        # what the cache needs, wherever they sit.
        "kv_shared_layers": num_layers - owners,
        "default_kv_cache_dtype": "fp8" if config.get("fp8_kv_cache") else "",
    }
