"""MiniMax-M3 (`model_type` minimax_m3_text, transformers' minimax_m3_vl_text) as vLLM serves it
(`vllm/models/minimax_m3/nvidia/model.py`, 0.34.0; 0.29.0 where it differs): which layers run
block-sparse attention with a lightning indexer, its parameters beside a GQA MoE's, its caches.

Config. vLLM 0.29's MiniMaxM3TextConfig reads `moe_layer_freq` (1: MoE) and
`sparse_attention_config` (`sparse_attention_freq`, `sparse_num_index_heads`,
`sparse_index_dim`); 0.34 reads transformers' MiniMaxM3VLTextConfig: `mlp_layer_types`
("sparse"), `layer_types` ("minimax_m3_sparse"), `index_n_heads`, `index_head_dim`, which that
class derives from the older keys a checkpoint carries. Both spellings are read here; a config
that names neither takes 0.29's class defaults (the first 3 of 60 layers dense and not sparse).

Parameters beside the GQA MoE decoder the config reader builds (q/k/v and o_proj split by heads,
per-head q/k RMSNorms, `num_local_experts` routed experts of `intermediate_size`,
`n_shared_experts` shared ones of that width, dense MLPs of `dense_intermediate_size`):
- a sparse layer's fused `qkv_proj` also emits the index queries, one head of `index_head_dim`
  per KV head, split as the KV heads are (one a rank at least), and one index key of
  `index_head_dim` on every rank (`MinimaxM3QKVParallelLinearWithIndexer`); two RMSNorms;
- the router (`GateLinear`, params_dtype float32) and its `e_score_correction_bias`: float32.
MTP modules (`num_mtp_modules`) are skipped on load ("mtp." weights). 0.29 gives the shared
expert `intermediate_size` x `n_shared_experts`, 0.34 one of `intermediate_size` whatever
`n_shared_experts` says: the same for the published config (one); the count reads 0.29's.
0.34 adds an NVFP4 main cache (--kv-cache-dtype) and an NVFP4 indexer cache
(`indexer_kv_dtype`), both for SM100-class GPUs, which the plan does not read.

KV caches, per rank: every layer's K and V (`FullAttentionSpec`, the KV heads split, one a rank
at least) and, on a sparse layer, its indexer's keys (`MiniMaxM3IndexerCache`: one head of
`index_head_dim`, bfloat16 unless `--attention-config '{"indexer_kv_dtype": "fp8"}'`, which the
plan does not read; --kv-cache-dtype leaves it alone). On NVIDIA every sparse layer has its own
(the ROCm model's opt-in `use_index_cache` shares top-k selections: not modelled). The sparse
backend and the indexer take blocks of 128 tokens only (`get_supported_kernel_block_sizes`), so
every cache has 128-token blocks and one kind of spec: one group, a block holding every layer's
page (`cache_specs.uniform_type_group`).
"""

from collections.abc import Mapping
from typing import Any

from infermeter.calculators.cache_specs import CacheGroup, CacheSpec, uniform_type_group
from infermeter.calculators.config_fields import int_field
from infermeter.calculators.errors import ConfigError

MINIMAX_M3_TYPES = ("minimax_m3_text", "minimax_m3_vl_text")
BLOCK = 128  # tokens of a block: the sparse backend's and the indexer's only kernel block size
INDEXER_BYTES = 2  # the indexer's keys: bfloat16 (indexer_kv_dtype "bf16", the default)
PLAN_NOTE = (
    "MiniMax-M3: every layer's K/V and, on its sparse layers, the lightning indexer's keys "
    "(one head of index_head_dim, bfloat16 whatever --kv-cache-dtype; an fp8 indexer cache from "
    "--attention-config is not read) in one group of 128-token blocks (the sparse backend's only "
    "block size); no decode throughput bound (its block-sparse reads are not modelled)"
)
# MiniMaxM3TextConfig's defaults (vllm/transformers_utils/configs/minimax_m3.py, 0.29.0).
_DEFAULTS: dict[str, Any] = {
    "vocab_size": 200064, "hidden_size": 6144, "intermediate_size": 3072,
    "dense_intermediate_size": 12288, "num_hidden_layers": 60, "num_attention_heads": 64,
    "num_key_value_heads": 4, "head_dim": 128, "max_position_embeddings": 524288,
    "num_local_experts": 128, "num_experts_per_tok": 4, "n_shared_experts": 1,
    "tie_word_embeddings": False, "use_qk_norm": True,
}  # fmt: skip
_DENSE_FIRST = 3  # 0.29's default: the first 3 layers dense and not sparse
# The index shape's flat names, their names in sparse_attention_config and the defaults.
_INDEX_KEYS = {
    "index_n_heads": ("sparse_num_index_heads", 4),
    "index_head_dim": ("sparse_index_dim", 128),
    "index_block_size": ("sparse_block_size", BLOCK),
}


def _flags(values: Any, where: str, key: str, layers: int, marks: tuple[Any, ...]) -> list[int]:
    if not isinstance(values, list) or len(values) != layers:
        raise ConfigError(f"{where}{key}: expected a list of {layers} entries (num_hidden_layers)")
    return [index for index, value in enumerate(values) if value in marks]


def minimax_m3_defaults(config: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """The config with MiniMaxM3TextConfig's defaults, the index shape under its flat names and
    `moe_layers` (the MoE layers) from whichever spelling it uses."""
    merged = {**_DEFAULTS, **config}
    sparse = merged.get("sparse_attention_config") or {}
    if not isinstance(sparse, Mapping):
        raise ConfigError(f"{where}sparse_attention_config: expected a JSON object")
    for flat, (legacy, default) in _INDEX_KEYS.items():
        merged.setdefault(flat, sparse.get(legacy, default))
    layers = int_field(merged, "num_hidden_layers", where)
    dense = [0] * _DENSE_FIRST + [1] * (layers - _DENSE_FIRST)
    if "mlp_layer_types" in merged:
        moe = _flags(merged["mlp_layer_types"], where, "mlp_layer_types", layers, ("sparse",))
    else:
        moe = _flags(merged.get("moe_layer_freq", dense), where, "moe_layer_freq", layers, (1,))
    merged["moe_layers"] = moe
    merged.pop("moe_layer_freq", None)
    # Every layer attends to every token; the sparse ones are listed apart.
    merged["sparse_layer_ids"] = _sparse_layers(merged, layers, where)
    merged["layer_types"] = ["full_attention"] * layers
    return merged


def _sparse_layers(config: Mapping[str, Any], layers: int, where: str) -> list[int]:
    """The layers with block-sparse attention and an indexer: `layer_types` "minimax_m3_sparse"
    (0.34), else `sparse_attention_config.sparse_attention_freq` (0.29)."""
    if "layer_types" in config:
        marks = ("minimax_m3_sparse",)
        return _flags(config["layer_types"], where, "layer_types", layers, marks)
    sparse = config.get("sparse_attention_config") or {}
    freq = sparse.get("sparse_attention_freq", [0] * _DENSE_FIRST + [1] * (layers - _DENSE_FIRST))
    return _flags(freq, where + "sparse_attention_config.", "sparse_attention_freq", layers, (1,))


def minimax_m3_fields(config: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """`ModelArch` fields of a MiniMax-M3 config: the config, its sparse layers checked."""
    if int_field(config, "index_n_heads", where) != int_field(config, "num_key_value_heads", where):
        raise ConfigError(
            f"{where}index_n_heads: vLLM's fused qkv_proj takes as many index heads as KV heads "
            "(MinimaxM3QKVParallelLinearWithIndexer); expected num_key_value_heads"
        )
    return {"minimax_m3": dict(config), "float32_router": True}


def indexer_parameters(config: Mapping[str, Any], tp: int) -> tuple[int, int]:
    """(linear, norms) the indexer adds to the sparse layers on one of `tp` ranks."""
    hidden = int_field(config, "hidden_size", "")
    dim = int_field(config, "index_head_dim", "")
    heads = max(1, int_field(config, "index_n_heads", "") // tp)
    count = len(config["sparse_layer_ids"])
    return count * hidden * (heads + 1) * dim, count * 2 * dim


def model_groups(config: Mapping[str, Any], kv_bytes: int, tp: int) -> list[CacheGroup]:
    """The one KV cache group of a MiniMax-M3 config on one of `tp` ranks, `kv_bytes` a K/V
    element's bytes."""
    kv_heads = max(1, int_field(config, "num_key_value_heads", "") // tp)
    head_dim = int_field(config, "head_dim", "")
    main = CacheSpec("full", BLOCK, BLOCK * kv_heads * 2 * head_dim * kv_bytes)
    index_key = int_field(config, "index_head_dim", "") * INDEXER_BYTES
    index = CacheSpec("indexer", BLOCK, BLOCK * index_key)
    sparse = set(config["sparse_layer_ids"])
    layers = int_field(config, "num_hidden_layers", "")
    specs = [spec for i in range(layers) for spec in ([main, index] if i in sparse else [main])]
    return uniform_type_group(specs)
