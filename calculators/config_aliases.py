"""Config keys under other names, per model type, read the way vLLM's model code reads them.

transformers' `attribute_map` is the convention: `n_embd` is `hidden_size`, `moe_k` is
`num_experts_per_tok`. Each model type below names its config keys under the names the rest of
the calculators read (an alias may be a dotted path into a nested block: DBRX's
`attn_config.kv_n_heads`), and `normalised` adds the values vLLM derives from other keys: which
layers hold experts (ERNIE 4.5's start/end/interval, Step 3's `moe_layers_enum`, Cohere's and
HY-V3's `mlp_layer_types`) and GPT-2/BLOOM's MLP width. The modules read are those of vLLM
0.29.0 (vllm/model_executor/models/<file>.py, PyPI source package); the defaults are those of
the config class vLLM loads (transformers 5.24.0 or vllm/transformers_utils/configs).
"""

from collections.abc import Mapping
from typing import Any

from infermeter.calculators.config_fields import int_field, optional_int
from infermeter.calculators.decilm import DECILM, decilm_shape
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.limits import check_field
from infermeter.calculators.mistral_large4 import large4_moe_layers
from infermeter.calculators.step3p5 import STEP3P5_DEFAULTS, step3p5_layer_types
from infermeter.calculators.step5 import STEP5_DEFAULTS, STEP5_TYPE, step5_layer_types

# alias → the name the calculators read, per model type.
CONFIG_KEY_ALIASES: dict[str, dict[str, str]] = {
    # Granite 4.0-H: its shared expert (or, without experts, its only MLP).
    "granitemoehybrid": {"shared_intermediate_size": "shared_expert_intermediate_size"},
    # Kimi Linear (vLLM's KimiLinearConfig): its expert keys under the names read elsewhere.
    "kimi_linear": {"num_experts_per_token": "num_experts_per_tok"},
    # GPT-J (gpt_j.py) and GPT-2: `n_inner` null means 4 × n_embd (GPTJMLP, GPT2Block).
    "gptj": {
        "n_embd": "hidden_size", "n_layer": "num_hidden_layers", "n_head": "num_attention_heads",
        "n_positions": "max_position_embeddings", "n_inner": "intermediate_size",
    },
    # BLOOM (bloom.py: BloomConfig's attribute_map; `n_embed` is its older name of hidden_size).
    "bloom": {
        "n_embed": "hidden_size", "n_layer": "num_hidden_layers", "n_head": "num_attention_heads",
    },
    # TeleChat2 (telechat2.py sets this attribute_map on the config, then builds Llama's model).
    "telechat": {
        "n_layer": "num_hidden_layers", "n_head": "num_attention_heads",
        "ffn_hidden_size": "intermediate_size",
    },
    # DBRX (dbrx.py; DbrxConfig's attribute_map and its attn_config / ffn_config blocks).
    "dbrx": {
        "d_model": "hidden_size", "n_heads": "num_attention_heads", "n_layers": "num_hidden_layers",
        "max_seq_len": "max_position_embeddings", "attn_config.kv_n_heads": "num_key_value_heads",
        "ffn_config.moe_num_experts": "num_local_experts",
        "ffn_config.moe_top_k": "num_experts_per_tok",
        "ffn_config.ffn_hidden_size": "moe_intermediate_size",
    },
    # ERNIE 4.5 MoE (ernie45_moe.py; Ernie4_5_MoeConfig's attribute_map).
    "ernie4_5_moe": {
        "moe_num_experts": "num_experts", "moe_k": "num_experts_per_tok",
        "moe_num_shared_experts": "n_shared_experts",
    },
    # HY-V3 (hy_v3.py; vLLM's HYV3Config): the experts' width, and its q/k RMSNorm flag.
    "hy_v3": {"expert_hidden_dim": "moe_intermediate_size", "qk_norm": "use_qk_norm"},
    # LongCat-Flash (longcat_flash.py's FlashConfig; transformers' attribute_map).
    "longcat_flash": {
        "num_layers": "num_hidden_layers", "moe_topk": "num_experts_per_tok",
        "ffn_hidden_size": "intermediate_size", "expert_ffn_hidden_size": "moe_intermediate_size",
    },
    # ChatGLM / GLM-4 (chatglm.py; vLLM's ChatGLMConfig): its Megatron-style names.
    "chatglm": {
        "num_layers": "num_hidden_layers", "ffn_hidden_size": "intermediate_size",
        "padded_vocab_size": "vocab_size", "seq_length": "max_position_embeddings",
    },
    # Falcon (falcon.py): RWConfig's names of the older checkpoints.
    "falcon": {
        "n_embed": "hidden_size", "n_layer": "num_hidden_layers", "n_head": "num_attention_heads",
        "n_head_kv": "num_kv_heads",
    },
    # AFMoE (afmoe.py) and LFM2-MoE (lfm2_moe.py): their dense first layers.
    "afmoe": {"num_dense_layers": "first_k_dense_replace"},
    "lfm2_moe": {"num_dense_layers": "first_k_dense_replace"},
    # EXAONE 3.x (exaone.py; ExaoneConfig's attribute_map): the layer count.
    "exaone": {"num_layers": "num_hidden_layers"},
    # OPT (opt.py): the MLP width is `ffn_dim`; `enable_bias` puts biases on every projection.
    "opt": {"ffn_dim": "intermediate_size", "enable_bias": "attention_bias"},
    # Step 3 / Step 3.5 (step3_text.py, step3p5.py).
    # Step 3 keeps one KV head whatever num_attention_groups says (Step3TextAttention).
    "step3_text": {
        "moe_num_experts": "num_experts", "moe_top_k": "num_experts_per_tok",
        "num_attention_groups": "num_key_value_heads",
        "max_position_embedding": "max_position_embeddings",
    },
    "step3p5": {
        "moe_num_experts": "num_experts", "moe_top_k": "num_experts_per_tok",
        "num_attention_groups": "num_key_value_heads",
    },
}  # fmt: skip

# GPT-2 (gpt2.py: GPT2Config's attribute_map) names its shape as GPT-J does.
CONFIG_KEY_ALIASES["gpt2"] = CONFIG_KEY_ALIASES["gptj"]
# Step5 (vllm/models/step5): Step 3.5's names.
CONFIG_KEY_ALIASES[STEP5_TYPE] = CONFIG_KEY_ALIASES["step3p5"]
# LongCat-Flash with n-gram embeddings (longcat_flash_ngram.py): the same names.
CONFIG_KEY_ALIASES["longcat_flash_ngram"] = CONFIG_KEY_ALIASES["longcat_flash"]

# Defaults of the config class vLLM loads, where config.json may omit a field that changes a
# count: transformers 5.24.0's (models/<type>/configuration_<type>.py) or vLLM's own config
# class, else the default vLLM's module passes to getattr.
CONFIG_DEFAULTS: dict[str, dict[str, Any]] = {
    "gpt2": {"n_positions": 1024, "tie_word_embeddings": True},
    "bloom": {"tie_word_embeddings": True},
    # DbrxAttentionConfig / DbrxFFNConfig defaults.
    "dbrx": {"tie_word_embeddings": False},
    "ernie4_5_moe": {
        "tie_word_embeddings": True, "moe_k": 6, "moe_num_experts": 64,
        "moe_num_shared_experts": 2, "moe_intermediate_size": 1536,
        "moe_layer_start_index": 1, "moe_layer_end_index": -1, "moe_layer_interval": 1,
    },
    "hy_v3": {
        "qk_norm": True, "num_shared_experts": 1, "first_k_dense_replace": 1,
        "moe_router_enable_expert_bias": True,
    },
    "longcat_flash": {"zero_expert_num": 0},
    # bailing_moe.py / sarvam.py / param2moe.py getattr defaults.
    "param2moe": {"first_k_dense_replace": 1, "num_shared_experts": 1,
                  "moe_router_enable_expert_bias": True},
    "sarvam_mla": {"first_k_dense_replace": 1, "num_shared_experts": 1,
                   "moe_router_enable_expert_bias": True},
    "cohere2_moe": {"tie_word_embeddings": True, "num_shared_experts": 0},
    # GPTNeoXConfig / OPTConfig / PhiConfig / NemotronConfig (transformers 5.24.0).
    "gpt_neox": {"attention_bias": True, "tie_word_embeddings": False},
    "opt": {"enable_bias": True, "tie_word_embeddings": True},
    "phi": {"tie_word_embeddings": False},
    # Jais2Config (transformers 5.24.0): biases on attention and MLP.
    "jais2": {"attention_bias": True, "mlp_bias": True, "tie_word_embeddings": False},
    # FalconConfig (transformers 5.24.0).
    "falcon": {"multi_query": True, "parallel_attn": True, "bias": False, "alibi": False,
               "new_decoder_architecture": False, "tie_word_embeddings": True},
    # HrmTextConfig (transformers 5.24.0).
    "hrm_text": {"H_cycles": 2, "L_cycles": 3, "head_dim": 128, "tie_word_embeddings": False},
    # vLLM's ChatGLMConfig (transformers_utils/configs/chatglm.py).
    "chatglm": {"multi_query_attention": False, "multi_query_group_num": 1, "rmsnorm": True,
                "add_bias_linear": False, "add_qkv_bias": False, "tie_word_embeddings": False},
    "nemotron": {"tie_word_embeddings": False},
    "step3_text": {"num_attention_groups": 1},
    "step3p5": STEP3P5_DEFAULTS,
    STEP5_TYPE: STEP5_DEFAULTS,
    # bailing_moe_linear.py's MLA getattr defaults (BailingMoeV25MLAAttention).
    "bailing_moe_linear": {"kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
                           "v_head_dim": 128, "layer_group_size": 1},
}  # fmt: skip
CONFIG_DEFAULTS["longcat_flash_ngram"] = CONFIG_DEFAULTS["longcat_flash"]


def _nested(config: Mapping[str, Any], path: str) -> Any:
    value: Any = config
    for part in path.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def with_aliases(config: Mapping[str, Any], model_type: str, where: str) -> dict[str, Any]:
    """`config` with each alias's value under the name the calculators read as well, within
    that name's bounds (`calculators.limits`: GPT-J's n_layer is num_hidden_layers)."""
    merged = dict(config)
    for alias, name in CONFIG_KEY_ALIASES.get(model_type, {}).items():
        value = _nested(merged, alias)
        if value is not None and name not in merged:
            check_field(name, value, f"{where}{alias}")
            merged[name] = value
    return merged


def alias_keys(model_type: str) -> frozenset[str]:
    """The top-level config keys `model_type` names a read field with."""
    return frozenset(alias.split(".")[0] for alias in CONFIG_KEY_ALIASES.get(model_type, {}))


def _layer_list(indices: list[int], num_layers: int, where: str, name: str) -> list[int]:
    if any(not 0 <= index < num_layers for index in indices):
        raise ConfigError(f"{where}{name}: a layer index outside 0..{num_layers - 1}")
    return indices


def _ernie_moe_layers(config: Mapping[str, Any], num_layers: int, where: str) -> list[int]:
    """ernie45_moe.py: start ≤ i ≤ end and (i + 1) % interval == 0 (end -1: the last layer)."""
    start = optional_int(config, "moe_layer_start_index", where, 0)
    end_value = config.get("moe_layer_end_index", -1)
    last = num_layers - 1
    end = last if end_value == -1 else optional_int(config, "moe_layer_end_index", where, last)
    interval = optional_int(config, "moe_layer_interval", where, 1) or 1
    return [i for i in range(num_layers) if start <= i <= end and (i + 1) % interval == 0]


def _step3_moe_layers(config: Mapping[str, Any], num_layers: int, where: str) -> list[int]:
    """step3_text.py / step3p5.py: `moe_layers_enum` "1,2,…" lists them; absent: all but layer 0."""
    listed = config.get("moe_layers_enum")
    if listed is None:
        return list(range(1, num_layers))
    parts = listed if isinstance(listed, list) else str(listed).strip().split(",")
    try:
        indices = [int(part) for part in parts]
    except ValueError:
        raise ConfigError(
            f"{where}moe_layers_enum: expected comma-separated layer indices, got {listed!r}"
        ) from None
    return _layer_list(indices, num_layers, where, "moe_layers_enum")


def _typed_moe_layers(config: Mapping[str, Any], num_layers: int, where: str) -> list[int]:
    """cohere2_moe.py, mellum.py, transformers' HY-V3: `mlp_layer_types` ("dense" / "sparse"),
    else the first `first_k_dense_replace` layers dense."""
    types = config.get("mlp_layer_types")
    if types is None:
        first_dense = optional_int(config, "first_k_dense_replace", where, 0)
        return list(range(first_dense, num_layers))
    if not isinstance(types, list) or len(types) != num_layers:
        raise ConfigError(
            f"{where}mlp_layer_types: expected {num_layers} entries (num_hidden_layers), "
            f"got {types!r}"
        )
    return [i for i, kind in enumerate(types) if kind == "sparse"]


def _sarvam_moe_layers(config: Mapping[str, Any], num_layers: int, where: str) -> list[int]:
    """sarvam.py: i ≥ first_k_dense_replace, (i − first_k_dense_replace) % moe_layer_freq == 0."""
    first = optional_int(config, "first_k_dense_replace", where, 1)
    frequency = optional_int(config, "moe_layer_freq", where, 1) or 1
    return [i for i in range(first, num_layers) if (i - first) % frequency == 0]


_MOE_LAYERS = {
    "ernie4_5_moe": _ernie_moe_layers,
    "step3_text": _step3_moe_layers,
    "step3p5": _step3_moe_layers,
    STEP5_TYPE: _step3_moe_layers,
    "cohere2_moe": _typed_moe_layers,
    "sarvam_mla": _sarvam_moe_layers,
    "mistral_large_4": large4_moe_layers,
}


def _longcat_sublayers(merged: dict[str, Any], where: str) -> None:
    """LongCat-Flash (longcat_flash.py's FlashDecoderLayer): each layer runs two MLA attention
    blocks, each followed by a dense MLP, and one MoE beside them, four norms. Read as twice the
    layers, every other one holding the MoE with that sub-layer's dense MLP as its always-active
    shared expert: the same tensors, KV caches and norms (`num_layers`, the config's count, is
    kept for the plan's notes)."""
    layers = int_field(merged, "num_hidden_layers", where)
    merged["num_layers"] = layers
    merged["num_hidden_layers"] = 2 * layers
    merged["moe_layers"] = list(range(0, 2 * layers, 2))
    merged["shared_expert_intermediate_size"] = int_field(merged, "intermediate_size", where)


def _falcon_shape(merged: dict[str, Any], where: str) -> None:
    """falcon.py's FalconAttention and FalconMLP: KV heads `num_kv_heads` with the new decoder
    architecture (Falcon-40B/180B), one with `multi_query` (Falcon-7B), else one a head; the MLP
    4 x hidden_size whatever ffn_hidden_size says."""
    if "hidden_size" not in merged or "num_attention_heads" not in merged:
        return
    heads = int_field(merged, "num_attention_heads", where)
    if merged.get("new_decoder_architecture"):
        merged["num_key_value_heads"] = optional_int(merged, "num_kv_heads", where, heads)
    else:
        merged["num_key_value_heads"] = 1 if merged.get("multi_query") else heads
    merged["intermediate_size"] = 4 * int_field(merged, "hidden_size", where)


def _hrm_stacks(merged: dict[str, Any], where: str) -> None:
    """HRM-Text (hrm_text.py): an L and an H stack of `num_layers_per_stack` layers each, the L
    stack run H_cycles x L_cycles times and the H stack H_cycles times, every run of a layer an
    Attention with a cache of its own. A config with num_layers_per_stack has the inflated
    per_stack x H_cycles x (L_cycles + 1) in num_hidden_layers; an older one the per-stack count
    (HrmTextConfig). Read as 2 x per_stack layers of weights (`num_hidden_layers`) and the other
    caches (`hrm_extra_caches`)."""
    per_stack = optional_int(merged, "num_layers_per_stack", where, 0) or optional_int(
        merged, "num_hidden_layers", where, 0
    )
    cycles = optional_int(merged, "H_cycles", where, 2) * (
        optional_int(merged, "L_cycles", where, 3) + 1
    )
    merged["num_hidden_layers"] = 2 * per_stack
    merged["hrm_extra_caches"] = per_stack * cycles - 2 * per_stack


def falcon_block(config: Mapping[str, Any]) -> dict[str, Any]:
    """Falcon's decoder block (falcon.py's FalconDecoderLayer): LayerNorms with biases, two
    (ln_attn, ln_mlp) with the new decoder architecture or `num_ln_in_parallel_attn` 2, one
    for a parallel block, two for a sequential one; `bias` on every projection; ALiBi or
    rotary."""
    parallel = bool(config.get("parallel_attn", True))
    norms = config.get("num_ln_in_parallel_attn") or (
        2 if config.get("new_decoder_architecture") else 1
    )
    bias = bool(config.get("bias", False))
    return {
        "gated_mlp": False, "mlp_bias": bias, "qkv_bias": bias, "o_bias": bias,
        "norm_bias": True, "norms_per_layer": norms if parallel else 2,
        "rotary": not config.get("alibi", False),
    }  # fmt: skip


def ngram_embedding(config: Mapping[str, Any], where: str) -> tuple[int, int]:
    """LongCat-Flash n-gram's NgramEmbedding (longcat_flash_ngram.py): (the table's values, split
    by vocabulary rows over the ranks; the stacked projections back to hidden_size, replicated).
    k = emb_split_num, n = emb_neighbor_num, m = ngram_vocab_size_ratio x vocab_size:
    k(n-1) tables of m + 2i + 1 rows each, hidden_size / k(n-1) wide, each projected to
    hidden_size. (0, 0) without ngram_vocab_size_ratio."""
    ratio = config.get("ngram_vocab_size_ratio")
    if ratio is None:
        return 0, 0
    hidden = int_field(config, "hidden_size", where)
    tables = optional_int(config, "emb_split_num", where, 0) * (
        optional_int(config, "emb_neighbor_num", where, 0) - 1
    )
    if tables <= 0:
        raise ConfigError(
            f"{where}emb_neighbor_num: expected emb_split_num x (emb_neighbor_num - 1) > 0 "
            "n-gram tables"
        )
    rows_each = int(ratio * int_field(config, "vocab_size", where))
    rows = sum(rows_each + 2 * i + 1 for i in range(tables))
    width = hidden // tables
    return rows * width, tables * width * hidden


def normalised(config: Mapping[str, Any], model_type: str, where: str) -> dict[str, Any]:
    """The config with its model type's defaults and aliases, and the values vLLM derives:
    `moe_layers` (the layers that hold experts) and GPT-2/BLOOM's MLP width (4 × hidden)."""
    merged = dict(CONFIG_DEFAULTS.get(model_type, {}))
    merged.update({key: value for key, value in config.items() if value is not None})
    merged = with_aliases(merged, model_type, where)
    mlp_width_missing = "intermediate_size" not in merged and "hidden_size" in merged
    if model_type in {"gpt2", "bloom", "gptj"} and mlp_width_missing:
        merged["intermediate_size"] = 4 * int_field(merged, "hidden_size", where)
    if model_type == "opt" and merged.get("word_embed_proj_dim", merged.get("hidden_size")) != (
        merged.get("hidden_size")
    ):
        raise ConfigError(
            f"{where}word_embed_proj_dim: embeddings narrower than hidden_size, with opt.py's "
            "project_in/project_out (OPT-350m), are not modelled; expected hidden_size"
        )
    if model_type == "chatglm" and merged.get("multi_query_attention"):
        # chatglm.py: multi_query_group_num KV heads with multi_query_attention, else MHA.
        merged.setdefault("num_key_value_heads", merged.get("multi_query_group_num"))
    if model_type == "falcon":
        _falcon_shape(merged, where)
    if model_type == DECILM:
        decilm_shape(merged)
    if model_type == "hrm_text":
        _hrm_stacks(merged, where)
    if model_type == "phi" and "hidden_size" in merged:
        # phi.py's PhiMLP: `n_inner`, else 4 × hidden_size (PhiConfig's intermediate_size unread).
        width = optional_int(merged, "n_inner", where, 0)
        merged["intermediate_size"] = width or 4 * int_field(merged, "hidden_size", where)
    if model_type == "longcat_flash_ngram" and "num_layers" in merged:
        # FlashNgramModel: its config's num_hidden_layers counts attention blocks; vLLM builds
        # num_layers decoder layers.
        merged["num_hidden_layers"] = merged["num_layers"]
    if model_type in ("longcat_flash", "longcat_flash_ngram"):
        _longcat_sublayers(merged, where)
    if model_type == STEP5_TYPE:
        step5_layer_types(merged)
    if model_type in ("step3p5", STEP5_TYPE):
        step3p5_layer_types(merged)
        if "share_expert_dim" not in merged and "moe_intermediate_size" in merged:
            # Step3p5Config: no share_expert_dim means moe_intermediate_size × moe_top_k.
            merged["share_expert_dim"] = int_field(merged, "moe_intermediate_size", where) * (
                int_field(merged, "num_experts_per_tok", where)
            )
    layers = _MOE_LAYERS.get(model_type)
    if layers is None and isinstance(merged.get("mlp_layer_types"), list):
        layers = _typed_moe_layers  # Mellum, HY-V3 and others: "dense" / "sparse" per layer
    if layers is not None and "num_hidden_layers" in merged and "moe_layers" not in merged:
        merged["moe_layers"] = layers(merged, int_field(merged, "num_hidden_layers", where), where)
    return merged
