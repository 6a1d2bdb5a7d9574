"""GLM-5-Next (`model_type` glm5_next_text, the text_config of the glm5_next wrapper: GLM-5.3)
as vLLM 0.34.0 serves it (vllm/models/glm5next/common: model.py, attention.py, kda.py; first
registered in 0.30.0, whose vllm/models/glm5next/nvidia builds the same pooled indexer cache,
mHC and bfloat16 MLA), with transformers' Glm5NextTextConfig (5.24).

Layers: `layer_types` "linear_attention" is Kimi Delta Attention (KDA, Kimi Linear's layer with
low-rank f/g gates, `linear_num_heads` heads of `linear_head_dim`, convolutions of
`linear_conv_kernel_dim`: `calculators.kda`); "indexed_attention" (also "full_attention",
"deepseek_sparse_attention") is DeepSeek-style MLA without RoPE (qk_rope_head_dim 0) with a DSA
indexer of its own on every such layer (vLLM 0.34 builds one whatever `indexer_types` says).
The default: every fourth layer (3, 7, ...) MLA, the others KDA. `mlp_layer_types` (default
three dense, then sparse) gives a dense SwiGLU MLP or the MoE (`n_routed_experts` of
`moe_intermediate_size`, `n_shared_experts`, an e_score_correction_bias with noaux_tc).

What this module adds to the common reading:
- the indexer's keys pooled over `index_kpool` tokens (`Glm5NextIndexerCache`: an
  MLAAttentionSpec with tokens_per_state = index_kpool; an FP8 key of index_head_dim and a
  float32 scale per 128 values), and its pooling weights (`index_kpool_compress_gate`
  index_head_dim x hidden, `index_kpool_compress_ape` index_kpool x index_head_dim); the tail
  ring of raw keys (`Glm5NextTailCache`, a CircularBufferSpec of a few KiB a request) is not
  counted;
- mHC (`mhc`, default on): DeepSeek-V4's manifold-constrained hyper-connections over `hc_mult`
  streams, float32, and no learned head (the streams are contracted before the final norm);
- the MLA and KDA projections stay in bfloat16 whatever the checkpoint's quantization (vLLM
  builds them with quant_config None).
Not modelled: vLLM 0.34 turns the KV cache to fp8 on Blackwell (SM100) when it is "auto"
(Glm5NextModelConfig); pass --kv-cache-dtype fp8 to plan that. An fp8 latent row is the
backend's (v1/attention/backends/mla): 528 bytes on SM120 (flashinfer_mla_sparse_sm120.py), 656
with a zero RoPE slot under FlashMLA on Hopper (flashmla_sparse.py); the plan takes 528. vLLM
gates pipeline parallelism off for it; the plan does not.
"""

from collections.abc import Mapping
from typing import Any

from infermeter.calculators.config_fields import int_field
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.hyper_connections import manifold_constrained
from infermeter.calculators.mixers import KDA
from infermeter.calculators.model_arch import FULL, SparseIndexer

GLM5_NEXT_TYPE = "glm5_next_text"
# Glm5NextTextConfig's defaults (transformers 5.24 models/glm5_next/configuration_glm5_next.py).
GLM5_NEXT_DEFAULTS: dict[str, Any] = {
    "vocab_size": 154880, "hidden_size": 4096, "intermediate_size": 12288,
    "moe_intermediate_size": 2048, "num_hidden_layers": 45, "num_attention_heads": 64,
    "num_key_value_heads": 64, "n_shared_experts": 1, "n_routed_experts": 288,
    "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 0, "v_head_dim": 256,
    "qk_nope_head_dim": 256, "num_experts_per_tok": 8, "max_position_embeddings": 1048576,
    "tie_word_embeddings": False, "index_topk": 2048, "index_head_dim": 128,
    "index_n_heads": 32, "linear_head_dim": 128, "linear_num_heads": 64,
    "linear_conv_kernel_dim": 4, "hc_mult": 4, "index_kpool": 16, "mhc": True,
}  # fmt: skip
GLM5_NEXT_NOTE = (
    "GLM-5-Next: KDA and MLA layers, a DSA indexer on every MLA layer with keys pooled over "
    "index_kpool tokens (planned as bytes beside the MLA latents; the tail ring is not counted), "
    "float32 mHC, MLA and KDA in bfloat16 whatever the quantization; vLLM's fp8 KV cache by "
    "default on Blackwell is not applied (pass --kv-cache-dtype fp8), and an fp8 latent is "
    "planned as 528 bytes (SM120's NoPE row; FlashMLA on Hopper keeps DeepSeek's 656)"
)
_MLA_TYPES = ("indexed_attention", "full_attention", "deepseek_sparse_attention")


def glm5_next_defaults(config: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """The config as Glm5NextTextConfig completes it: its defaults, `linear_attn_config` read
    into the linear_* fields (and back, for the KDA reader), the default layer pattern, and the
    MoE layers from `mlp_layer_types`."""
    merged = {**GLM5_NEXT_DEFAULTS, **config}
    layers = int_field(merged, "num_hidden_layers", where)
    linear = merged.get("linear_attn_config")
    if isinstance(linear, Mapping):
        for key, name in (("num_heads", "linear_num_heads"), ("head_dim", "linear_head_dim"),
                          ("short_conv_kernel_size", "linear_conv_kernel_dim")):  # fmt: skip
            merged[name] = linear.get(key, merged[name])
    merged["linear_attn_config"] = {
        "num_heads": merged["linear_num_heads"],
        "head_dim": merged["linear_head_dim"],
        "short_conv_kernel_size": merged["linear_conv_kernel_dim"],
    }
    if merged.get("layer_types") is None:
        merged["layer_types"] = [
            "linear_attention" if i % 4 != 3 else "indexed_attention" for i in range(layers)
        ]
    mlp = merged.get("mlp_layer_types") or ["dense"] * min(3, layers) + ["sparse"] * max(
        0, layers - 3
    )
    if not isinstance(mlp, list) or any(kind not in ("dense", "sparse") for kind in mlp):
        raise ConfigError(f"{where}mlp_layer_types: expected a list of dense, sparse")
    merged["moe_layers"] = [i for i, kind in enumerate(mlp) if kind == "sparse"]
    return merged


def glm5_next_layer_kinds(config: Mapping[str, Any], num_layers: int, where: str) -> list[str]:
    """KDA for "linear_attention", MLA (full attention) for the indexed ones."""
    types = config.get("layer_types")
    if not isinstance(types, list) or len(types) != num_layers:
        raise ConfigError(f"{where}layer_types: expected {num_layers} entries (num_hidden_layers)")
    kinds = []
    for index, kind in enumerate(types):
        if kind != "linear_attention" and kind not in _MLA_TYPES:
            raise ConfigError(
                f"{where}layer_types[{index}]: expected linear_attention or indexed_attention, "
                f"got {kind!r}"
            )
        kinds.append(KDA if kind == "linear_attention" else FULL)
    return kinds


def glm5_next_indexer(
    config: Mapping[str, Any], num_layers: int, where: str
) -> SparseIndexer | None:
    """The DSA indexer on every MLA layer, its keys pooled over `index_kpool` tokens."""
    if config.get("index_topk") is None:
        return None
    kpool = int_field(config, "index_kpool", where)
    if kpool < 2:
        raise ConfigError(f"{where}index_kpool: vLLM's pooled indexer cache expects > 1")
    mla = tuple(
        i for i, kind in enumerate(glm5_next_layer_kinds(config, num_layers, where)) if kind == FULL
    )
    return SparseIndexer(
        num_heads=int_field(config, "index_n_heads", where),
        head_dim=int_field(config, "index_head_dim", where),
        top_k=int_field(config, "index_topk", where),
        layers=mla,
        sparse_layers=mla,
        tokens_per_key=kpool,
    )


def glm5_next_fields(config: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """`ModelArch` fields of a GLM-5-Next config beyond the common reading: its mHC."""
    if config.get("qk_rope_head_dim"):
        raise ConfigError(f"{where}qk_rope_head_dim: GLM-5-Next's MLA has no RoPE; expected 0")
    streams = int_field(config, "hc_mult", where)
    if not config.get("mhc"):
        return {}
    return {"hyper_connections": manifold_constrained(streams, head=False)}
