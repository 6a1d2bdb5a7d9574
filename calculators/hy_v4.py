"""HY-V4 (`model_type` hy_v4) as vLLM serves it (0.29.0 and 0.34.0, `vllm/models/hy_v4/nvidia`):
DeepSeek-V3.2's latent attention with a lightning indexer, wrapped in independent
hyper-connections, with an output gate and a sink per head.

What it adds to the latent attention the calculators already plan (`model.py`, `attention.py`,
`hc.py`, `moe.py`; vLLM's `HYV4Config`, `transformers_utils/configs/hy_v4.py`, gives the
defaults a config.json may omit):
- `hc_mult` residual streams (`enable_ihc`): two float32 boundaries a layer and a head
  (`calculators.hyper_connections.independent`), replicated on every rank;
- `gated_mla`: `linear_gate` hidden -> heads x v_head_dim ("elementwise") or heads
  ("headwise"), split by heads; `learnable_sink`: a float32 sink per head, split by heads;
- sparse attention on the layers `layer_types` marks sparse ("sparse_attention", "sparse",
  "indexed_attention", "deepseek_sparse_attention"; none when it is absent); of those, the ones
  `indexer_types` marks "full" build an indexer (its weights and its FP8 key cache), the
  "shared" ones reuse the top-k of the last full one and hold neither (`utils.py`
  `compute_skip_topk_layers`; `HYV4Config` fills `indexer_types` with "full" at layer 0 and
  every fourth layer from 1);
- the router: a float32 gate and a float32 correction bias per expert.
The cache of a sparse layer is FlashMLA's: in the `fp8_ds_mla` layout (656 bytes) with an fp8
KV cache; a dense layer's is 576 FP8 bytes; both `kv_lora_rank + qk_rope_head_dim` values of
the model dtype with `auto` (no `verify_and_update_config` turns it into fp8 as for V3.2 on
SM10x). The MTP layers (`num_nextn_predict_layers`) are dropped when the model loads.
Between 0.29.0 and 0.34.0 only the indexer's key LayerNorm changes (float32 in 0.34; its 2 x
index_head_dim values are counted in the model dtype) and the pipeline stages pass the top-k
buffer on: no change to the memory plan.
"""

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from infermeter.calculators.config_fields import int_field, layer_list
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.hyper_connections import independent
from infermeter.calculators.index_cache import typed_layers
from infermeter.calculators.model_arch import SparseIndexer

# vLLM's HYV4Config defaults (0.34.0), those a count or a cache reads.
HY_V4_DEFAULTS: dict[str, Any] = {
    "vocab_size": 120832, "hidden_size": 2816, "intermediate_size": 6912,
    "moe_intermediate_size": 768, "num_hidden_layers": 34, "num_attention_heads": 32,
    "num_key_value_heads": 32, "max_position_embeddings": 262144, "tie_word_embeddings": False,
    "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
    "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 192, "qk_rope_head_dim": 64,
    "v_head_dim": 256, "index_topk": 2048, "index_head_dim": 128, "index_n_heads": 16,
    "enable_ihc": True, "hc_mult": 4, "gated_mla": True, "gating_type": "elementwise",
    "learnable_sink": True, "num_nextn_predict_layers": 1,
    # mlp_layer_types' default: one dense layer, then MoE; moe.py always builds expert_bias.
    "first_k_dense_replace": 1, "moe_router_enable_expert_bias": True,
}  # fmt: skip
SPARSE_LAYER_TYPES = (
    "sparse_attention",
    "sparse",
    "indexed_attention",
    "deepseek_sparse_attention",
)
HY_V4_NOTE = (
    "HY-V4: latent attention with FlashMLA's caches per layer kind (fp8_ds_mla on the sparse "
    "layers with an fp8 KV cache) and the indexer's FP8 keys on the layers whose "
    "indexer_types is 'full' only (the 'shared' ones reuse their top-k); hyper-connections, "
    "sinks and the router in float32; the indexer's wk/weights_proj projection counted as "
    "quantizable (vLLM keeps it in the model dtype); the activation peak and CUDA graphs as "
    "for a plain MoE (the hc_mult streams' activations are not read)"
)


def sparse_layers(config: Mapping[str, Any], num_layers: int, where: str) -> tuple[int, ...]:
    """The layers that run sparse attention (`attention.py` sparse_layer_ids)."""
    if config.get("layer_types") is None:
        return ()
    kinds = layer_list(config, "layer_types", num_layers, where)
    return tuple(i for i, kind in enumerate(kinds) if kind in SPARSE_LAYER_TYPES)


def indexer_layers(config: Mapping[str, Any], num_layers: int, where: str) -> tuple[int, ...]:
    """The sparse layers that build their own indexer: `indexer_types` "full" (HYV4Config's
    default where the config omits it)."""
    full = typed_layers(config, num_layers, where)
    if full is None:
        full = tuple(i for i in range(num_layers) if i == 0 or (i - 1) % 4 == 0)
    sparse = sparse_layers(config, num_layers, where)
    return tuple(i for i in sparse if i in full)


def hy_v4_indexer(
    config: Mapping[str, Any], num_layers: int, where: str, indexer: SparseIndexer | None
) -> SparseIndexer | None:
    """The indexer as the conventions read it, restricted to HY-V4's sparse and own layers;
    None when no layer is sparse."""
    sparse = sparse_layers(config, num_layers, where)
    if indexer is None or not sparse:
        return None
    own = indexer_layers(config, num_layers, where)
    return replace(indexer, layers=own, sparse_layers=sparse)


def hy_v4_fields(config: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """`ModelArch` fields of a hy_v4 config beyond the latent attention and the MoE."""
    gate = ""
    if config.get("gated_mla"):
        gating = config.get("gating_type")
        gate = {"elementwise": "element", "headwise": "head"}.get(str(gating), "")
        if not gate:
            raise ConfigError(
                f"{where}gating_type: expected 'elementwise' or 'headwise', got {gating!r}"
            )
    streams = int_field(config, "hc_mult", where) if config.get("enable_ihc") else 0
    if config.get("enable_ihc") and streams < 2:
        raise ConfigError(f"{where}hc_mult: expected at least 2 residual streams, got {streams}")
    return {
        "attention_gate": gate,
        "hyper_connections": independent(streams) if streams else None,
        "float32_router": True,
    }
