"""A model's architecture, read from its Hugging Face `config.json` (given as a dict).

Covers dense MHA/GQA models, mixture-of-experts (routed + shared experts, dense first layers,
Llama 4's interleaved MoE), DeepSeek's multi-head latent attention (MLA) and V3.2's sparse
indexer, sliding-window and chunked-attention layer patterns (Mistral v0.1, Gemma 2/3, gpt-oss,
Llama 4), hybrids whose other layers keep a recurrent state (Jamba's Mamba layers, Qwen3-Next's
Gated DeltaNet, see `mixers`) and multimodal wrappers whose language model sits in `text_config`.
Fields a config file leaves out take the defaults transformers gives that model type, so a
config reads here as it does in transformers; a field without such a default is an error
naming it. A `model_type`, layer kind or mixture-of-experts key the calculators do not read is an
error naming it, never a silent number.
"""

import json
from collections.abc import Iterable, Mapping
from typing import Any

from infermeter.calculators.alice_ai import (
    ALICE_AI_DEFAULTS,
    ALICE_AI_NOTE,
    alice_ai_fields,
    alice_ai_mixer,
    check_alice_ai,
)
from infermeter.calculators.bailing_moe_v3 import (
    BAILING_V3_DEFAULTS,
    bailing_v3_fields,
    bailing_v3_mixer,
)
from infermeter.calculators.beam import BEAM_DEFAULTS, BEAM_NOTE, beam_fields
from infermeter.calculators.config_aliases import (
    CONFIG_KEY_ALIASES,
    falcon_block,
    ngram_embedding,
    normalised,
)
from infermeter.calculators.config_fields import int_field, optional_int, optional_mapping
from infermeter.calculators.decilm import DECILM, decilm_layers
from infermeter.calculators.deepseek_v4 import deepseek_v4_fields
from infermeter.calculators.domyn_edge import (
    DOMYN_EDGE_TYPE,
    domyn_edge_defaults,
    domyn_edge_fields,
)
from infermeter.calculators.dory import DORY_NOTE, DORY_TYPE, dory_defaults, dory_fields
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.gemma3n import gemma3n_defaults, gemma3n_fields
from infermeter.calculators.gemma4 import GEMMA4_TYPES, gemma4_fields, gemma4_moe
from infermeter.calculators.glm5_next import (
    GLM5_NEXT_NOTE,
    GLM5_NEXT_TYPE,
    glm5_next_defaults,
    glm5_next_fields,
    glm5_next_indexer,
)
from infermeter.calculators.hy_v4 import HY_V4_DEFAULTS, HY_V4_NOTE, hy_v4_fields, hy_v4_indexer
from infermeter.calculators.index_cache import index_cache_indexer
from infermeter.calculators.inkling import INKLING_TYPE, inkling_defaults, inkling_fields
from infermeter.calculators.json_text import json_loads
from infermeter.calculators.k2_horizon import K2_HORIZON_NOTE, k2_horizon_fields
from infermeter.calculators.kda import check_kimi_linear, kda_mixer
from infermeter.calculators.laguna import LAGUNA_DEFAULTS, laguna_fields
from infermeter.calculators.layer_kinds import layer_kinds
from infermeter.calculators.lfm2 import LFM2_DEFAULTS, LFM2_MOE_DEFAULTS, LFM2_TYPES, lfm2_defaults
from infermeter.calculators.lfm3 import LFM3_DEFAULTS, lfm3_fields
from infermeter.calculators.lightning import LIGHTNING, LightningMixer, lightning_mixer
from infermeter.calculators.limits import MAX_CONFIG_BYTES, check_config
from infermeter.calculators.mamba2 import MAMBA2, Mamba2Mixer, mamba2_mixer
from infermeter.calculators.mimo_v2 import MIMO_V2_TYPES, mimo_v2_defaults, mimo_v2_fields
from infermeter.calculators.minimax_m3 import (
    MINIMAX_M3_TYPES,
    minimax_m3_defaults,
    minimax_m3_fields,
)
from infermeter.calculators.mistral_large4 import (
    MISTRAL_LARGE4_NOTE,
    MISTRAL_LARGE4_TYPE,
    large4_fields,
    large4_indexer,
)
from infermeter.calculators.mixers import (
    KDA,
    LINEAR_ATTENTION,
    MAMBA,
    SHORT_CONV,
    RecurrentMixer,
    gated_delta_net_mixer,
    jamba_mixer,
    mamba_mixer,
    short_conv_mixer,
)
from infermeter.calculators.model_arch import (
    CHUNKED,
    LatentAttention,
    MixtureOfExperts,
    ModelArch,
    SparseIndexer,
    VisionTower,
)
from infermeter.calculators.moe_config import check_moe_keys, read_moe
from infermeter.calculators.olmo_hybrid import olmo_hybrid_defaults
from infermeter.calculators.qwen4_exp import QWEN4_EXP_DEFAULTS, QWEN4_EXP_NOTE, qwen4_exp_fields
from infermeter.calculators.state_space import ATTENTION_FREE_TYPES
from infermeter.calculators.step3p5 import step3p5_fields
from infermeter.calculators.step5 import STEP5_NOTE, STEP5_TYPE, step5_fields
from infermeter.calculators.unlimited_ocr import DASH_NOTE, dash_config, unlimited_ocr2_fields
from infermeter.calculators.vision import VisionCount, count_vision, vision_family
from infermeter.calculators.zamba2 import zamba2_fields, zamba2_mixer, zamba2_shape
from infermeter.calculators.zaya import ZAYA_NOTE, ZAYA_TYPE, zaya_defaults, zaya_fields

# Language-model types whose layers the calculators model by name. A config of another type is
# read generically from the common conventions (`hidden_size`, `num_hidden_layers`, attention
# heads, `head_dim`, `intermediate_size`, the usual MoE keys, `layer_types`, `text_config` and
# `vision_config` nesting) and the plan says so; it is refused only where it declares a mechanism
# those conventions do not cover (`_UNMODELLED_KEYS`), naming the key.
KNOWN_MODEL_TYPES = frozenset(
    {
        "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "qwen3_next",
        "deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2", "gpt_oss", "gemma", "gemma2",
        "gemma3_text", "phi3", "olmo2", "glm4_moe", "llama4_text", "jamba", "gptj",
        "qwen3_vl_text", "qwen3_vl_moe_text", "qwen3_5_text", "qwen3_5_moe_text", "qwen2_5_vl",
        "qwen2_5_vl_text", "qwen2_vl", "qwen2_vl_text", "glm_moe_dsa", "minimax_m2",
        "ministral3", "mistral3", "nemotron_h", "granitemoehybrid", "falcon_h1", "gemma4_text",
        "gemma4_unified_text", "kimi_k25", "glm4_moe_lite", "kimi_linear", "mamba",
        "falcon_mamba", "mamba2", "zamba2", "olmo_hybrid", "mimo_v2", "mimo_v2_flash",
        "laguna", "gemma3n_text", "bailing_moe_v3", "deepseek_v4", "hy_v4", "qwen4_exp_text",
        "minimax_m3_text", "minimax_m3_vl_text", "inkling_model", "beam", "dory", "lfm3",
        "lfm2", "lfm2_moe",
        "alice_ai", "zaya", "domyn_edge", "glm5_next_text", "k2_horizon", STEP5_TYPE,
        MISTRAL_LARGE4_TYPE,
        # Config aliases and MoE variants (calculators.config_aliases; vLLM 0.29.0's modules).
        "gpt2", "bloom", "telechat", "dbrx", "ernie4_5_moe", "hy_v3", "bailing_moe",
        "bailing_moe_v2", "sarvam_moe", "sarvam_mla", "param2moe", "cohere2_moe",
        "longcat_flash", "step3_text", "step3p5", "bailing_moe_linear", "gpt_neox", "opt",
        "phi", "nemotron", "chatglm", "falcon", "longcat_flash_ngram", "apertus", "arcee",
        "jais2", "afmoe", "nemotron-nas", "cohere", "cohere2", "iquestloopcoder", "hrm_text",
    }
)  # fmt: skip
# Model types whose language model has the layout of an older type, as vLLM's model files show
# (vllm/model_executor/models): Qwen3-VL's text model is Qwen3's (qwen3_vl.py) or Qwen3-MoE's
# (qwen3_vl_moe.py); Qwen3.5's is Qwen3-Next's gated attention + Gated DeltaNet hybrid
# (qwen3_5.py); Qwen2.5-VL's is Qwen2's (qkv biases); GLM-5 (glm_moe_dsa) is DeepSeek-V3.2's MLA
# with the sparse indexer (deepseek_v2.py serves GlmMoeDsaForCausalLM through vLLM 0.28,
# vllm/models/deepseek_v32 from 0.29); Ministral 3 is Mistral's.
MODEL_TYPE_FAMILIES = {
    "qwen3_vl_text": "qwen3",
    "qwen3_vl_moe_text": "qwen3_moe",
    "qwen3_5_text": "qwen3_next",
    "qwen3_5_moe_text": "qwen3_next",
    # Qwen4-Exp's text model is Qwen3-Next's hybrid, with what calculators.qwen4_exp adds.
    "qwen4_exp_text": "qwen3_next",
    "qwen2_5_vl": "qwen2",
    "qwen2_5_vl_text": "qwen2",
    "qwen2_vl": "qwen2",
    "qwen2_vl_text": "qwen2",
    "glm_moe_dsa": "deepseek_v32",
    "ministral3": "mistral",
    "mistral3": "mistral",
    "gemma4_unified_text": "gemma4_text",
    # Kimi K2.5 wraps Kimi K2's DeepSeek-V3 language model (vLLM's kimi_k25.py); GLM-4.7-Flash
    # (glm4_moe_lite.py) is MLA attention with DeepSeek-style experts.
    "kimi_k25": "deepseek_v3",
    # DeepSeek-MoE (v1): vLLM serves it from deepseek_v2.py, MHA without MLA's kv_lora_rank.
    "deepseek": "deepseek_v2",
    "glm4_moe_lite": "deepseek_v3",
    # Ling 2.0 and Sarvam-MoE: bailing_moe.py serves BailingMoeV2ForCausalLM, and sarvam.py's
    # SarvamMoEForCausalLM is BailingMoeForCausalLM with its router bias normalised on load.
    "bailing_moe_v2": "bailing_moe",
    "sarvam_moe": "bailing_moe",
    # LongCat-Flash with n-gram embeddings (longcat_flash_ngram.py's FlashNgramModel).
    "longcat_flash_ngram": "longcat_flash",
    # Step5's layers are Step 3.5's, with what calculators.step5 adds.
    STEP5_TYPE: "step3p5",
    # transformers' MiniMaxM3VLTextConfig: MiniMax-M3's text model under its newer key names.
    "minimax_m3_vl_text": "minimax_m3_text",
}
# The language model's type where a multimodal wrapper's text_config names none.
_TEXT_TYPES = {
    "glm5_next": GLM5_NEXT_TYPE,
    "minimax_m3_vl": "minimax_m3_vl_text", "inkling_mm_model": INKLING_TYPE,
    # Unlimited-OCR (vLLM's UnlimitedOCRConfig, a DeepseekVLV2Config): DeepseekVLV2TextConfig.
    "unlimited-ocr": "deepseek_v2",
    # transformers' Lfm2VlConfig: an LFM2 text model (calculators.lfm2).
    "lfm2_vl": "lfm2", "lfm2-vl": "lfm2",
}  # fmt: skip
# Wrappers whose language model sits in `language_config` (and repeats at the top level).
_LANGUAGE_CONFIG_WRAPPERS = {"unlimited-ocr"}
# Keys that declare a mechanism the common conventions do not describe: a config of an unknown
# model type that has one is refused, naming it (a state-space mixer, a hybrid layer pattern).
_UNMODELLED_KEYS = (
    "hybrid_override_pattern", "layers_block_type", "mamba_", "ssm_", "linear_attn_config",
    "rwkv", "attn_type_list", "num_kv_shared_layers", "hidden_size_per_layer_input",
    "global_head_dim", "enable_moe_block", "compress_ratios", "hc_mult", "o_lora_rank",
    # State-space and linear-attention layers under other names (Mamba/Mamba-2 configs,
    # LFM2's and Inkling's short convolutions, OLMo-hybrid's Gated DeltaNet), attention with
    # per-layer or separate sliding-window head counts (Laguna, MiMo-V2), a sparse indexer.
    "state_size", "conv_kernel", "time_step_rank", "conv_L_cache", "short_conv_kernel_size",
    "sconv_kernel_size", "linear_conv_kernel_dim", "linear_num_", "swa_num_attention_heads",
    "num_attention_heads_per_layer", "index_n_heads", "indexer_n_heads",
    # Step 3.5's sliding layers with their own head counts and head size.
    "attention_other_setting",
    # Block-sparse attention with an indexer and its own key cache on the layers it lists
    # (MiniMax-M3's, read by name: calculators.minimax_m3).
    "sparse_attention_config",
)  # fmt: skip
# Families first registered in vLLM 0.30-0.34 whose config may carry only conventional keys
# while their vLLM 0.34.0 module builds a cache or layer the conventions do not describe: the key
# that declares it, and the mechanism, named in the refusal (none left in vLLM 0.34.0).
_UNMODELLED_MODEL_TYPES: dict[str, tuple[str, str]] = {}
_QWEN3_5_DEFAULTS: dict[str, Any] = {
    "linear_num_key_heads": 16,
    "linear_num_value_heads": 32,
    "linear_key_head_dim": 128,
    "linear_value_head_dim": 128,
    "linear_conv_kernel_dim": 4,
    "head_dim": 256,
    "tie_word_embeddings": False,
}
# Defaults transformers applies when config.json omits a field, per model_type. Only fields that
# matter for parameter counts and the KV cache are listed.
_TRANSFORMERS_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma3_text": {
        "head_dim": 256,
        "vocab_size": 262208,
        "sliding_window": 4096,
        "sliding_window_pattern": 6,
        "tie_word_embeddings": True,
        "num_key_value_heads": 4,
        "max_position_embeddings": 131072,
    },
    "gemma2": {"head_dim": 256, "tie_word_embeddings": True, "sliding_window": 4096},
    "gemma": {"tie_word_embeddings": True},
    # transformers' Qwen3_5TextConfig / Qwen3_5MoeTextConfig defaults (Gated DeltaNet shapes).
    "qwen3_5_text": _QWEN3_5_DEFAULTS,
    "qwen3_5_moe_text": _QWEN3_5_DEFAULTS,
    "laguna": LAGUNA_DEFAULTS,
    "bailing_moe_v3": BAILING_V3_DEFAULTS,
    # DeepSeek-V4 (vllm/models/deepseek_v4): one latent "KV head" of head_dim shared by the
    # 64 query heads; its caches are calculators.deepseek_v4's.
    "deepseek_v4": {"num_key_value_heads": 1},
    "hy_v4": HY_V4_DEFAULTS,
    "qwen4_exp_text": QWEN4_EXP_DEFAULTS,
    "beam": BEAM_DEFAULTS,
    "lfm3": LFM3_DEFAULTS,
    "lfm2": LFM2_DEFAULTS,
    "lfm2_moe": LFM2_MOE_DEFAULTS,
    # AliceAIConfig is Qwen3NextConfig, whose Gated DeltaNet defaults are Qwen3.5's, with its own.
    "alice_ai": {**_QWEN3_5_DEFAULTS, **ALICE_AI_DEFAULTS},
    # transformers' MambaConfig / FalconMambaConfig tie the embeddings; Mamba2Config does not.
    "mamba": {"tie_word_embeddings": True},
    "falcon_mamba": {"tie_word_embeddings": True},
    "mamba2": {"num_heads": 128, "head_dim": 64, "n_groups": 8, "state_size": 128},
    "siglip_vision_model": {
        "hidden_size": 768,
        "intermediate_size": 3072,
        "num_hidden_layers": 12,
        "num_attention_heads": 12,
        "num_channels": 3,
        "image_size": 224,
        "patch_size": 16,
    },
}
# Model types whose transformers config class defaults to tied embeddings.
_TIED_BY_DEFAULT = {"gemma", "gemma2", "gemma3_text", "gemma4_text", "gemma3n_text"}
# (GPT-2, BLOOM, ERNIE 4.5 MoE and Cohere tie too: their defaults are in config_aliases.)
# Model types with a bias on the q/k/v projections even though config.json does not say so.
_QKV_BIAS_TYPES = {"qwen2", "qwen2_moe", "qwen2_vl"}
# Model types with per-head RMSNorm on queries and keys (q_norm / k_norm). Llama 4's
# `use_qk_norm` is an L2 norm without weights, so it is not here.
_QK_NORM_TYPES = {
    "qwen3", "qwen3_moe", "qwen3_next", "gemma3_text", "gemma4_text", "olmo2", "minimax_m2",
    "olmo_hybrid", "laguna", "gemma3n_text", "step3p5", "beam", "lfm3", "alice_ai",
    "lfm2", "lfm2_moe",
}  # fmt: skip
# Model types with four norms per decoder layer (pre/post attention, pre/post feed-forward);
# LFM3's unless its config sets use_sandwich_norm false.
_FOUR_NORM_TYPES = {"gemma2", "gemma3_text", "gemma4_text", "gemma3n_text", "beam", "lfm3"}
# Shape fields under other names (GPT-2, BLOOM, Falcon-7B, DBRX, TeleChat): read only where
# CONFIG_KEY_ALIASES maps them; elsewhere the conventional field is missing.
_OTHER_SHAPE_NAMES = {
    "n_embd": "hidden_size", "n_embed": "hidden_size", "d_model": "hidden_size",
    "n_layer": "num_hidden_layers", "n_layers": "num_hidden_layers",
    "n_head": "num_attention_heads", "n_heads": "num_attention_heads",
}  # fmt: skip


def _with_defaults(config: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    model_type = str(config.get("model_type", ""))
    merged = dict(_TRANSFORMERS_DEFAULTS.get(model_type, {}))
    merged.update({key: value for key, value in config.items() if value is not None})
    if model_type == "olmo_hybrid":
        merged = olmo_hybrid_defaults(merged)
    if model_type in MIMO_V2_TYPES:
        merged = mimo_v2_defaults(merged)
    if model_type == "gemma3n_text":
        merged = gemma3n_defaults(merged)
    if model_type in MINIMAX_M3_TYPES:
        merged = minimax_m3_defaults(merged, where)
    if model_type == INKLING_TYPE:
        merged = inkling_defaults(merged, where)
    if model_type == DORY_TYPE:
        merged = dory_defaults(merged, where)
    if model_type == ZAYA_TYPE:
        merged = zaya_defaults(merged, where)
    if model_type == DOMYN_EDGE_TYPE:
        merged = domyn_edge_defaults(merged, where)
    if model_type == GLM5_NEXT_TYPE:
        merged = glm5_next_defaults(merged, where)
    if model_type in LFM2_TYPES:
        merged = lfm2_defaults(merged, where)
    return normalised(merged, model_type, where)


def _language_config(config: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """The language model's config and the prefix that locates it in the file."""
    if not isinstance(config, Mapping):
        raise ConfigError("config.json: expected a JSON object")
    nested = config.get("model_type") in _LANGUAGE_CONFIG_WRAPPERS
    name = "language_config" if nested else "text_config"
    text = config.get(name)
    if isinstance(text, Mapping) and (nested or "hidden_size" not in config):
        if "model_type" not in text and config.get("model_type") in _TEXT_TYPES:
            text = {"model_type": _TEXT_TYPES[str(config["model_type"])], **text}
        merged = _with_defaults(text, f"{name}.")
        # Fields that multimodal wrappers keep at the top level apply to the language model
        # (Unlimited-OCR-2's DASH settings too: vLLM copies them onto its text config).
        for key in (
            "quantization_config", "torch_dtype", "tie_word_embeddings", "sparse_attention_config",
        ):  # fmt: skip
            if key in config and key not in text:
                merged[key] = config[key]
        return merged, f"{name}."
    return _with_defaults(config), ""


def family_of(model_type: str) -> str:
    """The model type whose layout `model_type`'s language model shares (itself if none)."""
    return MODEL_TYPE_FAMILIES.get(model_type, model_type)


def key_verdict(model_type: str, keys: Iterable[str]) -> tuple[str, str]:
    """What the reader does with a config of `model_type` that sets `keys`, judged on the key
    names alone: ("by name", ""), ("generic", "") or ("refused", the error's text)."""
    if family_of(model_type) in KNOWN_MODEL_TYPES:
        return "by name", ""
    try:
        _check_known_keys({**dict.fromkeys(keys, 1), "model_type": model_type}, "")
    except ConfigError as error:
        return "refused", str(error)
    # A config that names its shape GPT-2 style (n_embd, n_layer, d_model …) lacks the
    # conventional field, which only the alias tables (CONFIG_KEY_ALIASES) supply.
    for key in sorted(set(keys) & set(_OTHER_SHAPE_NAMES)):
        if model_type not in CONFIG_KEY_ALIASES:
            return "refused", (
                f"{_OTHER_SHAPE_NAMES[key]}: required field missing from config.json "
                f"(the config names it {key})"
            )
    return "generic", ""


def _check_known_keys(config: Mapping[str, Any], where: str) -> bool:
    """Whether the config's model type is read generically; refuse an unknown model type that
    declares a mechanism the conventions do not cover, and an expert/MoE/router key the
    calculators do not read."""
    if "model_type" not in config:
        raise ConfigError(f"{where}model_type: required field missing from config.json")
    model_type = config["model_type"]
    generic = model_type not in KNOWN_MODEL_TYPES
    if generic and model_type in _UNMODELLED_MODEL_TYPES:
        key, mechanism = _UNMODELLED_MODEL_TYPES[str(model_type)]
        raise ConfigError(
            f"{where}{key}: model_type {model_type!r} is not one the calculators know by name, "
            f"and its vLLM module builds what reading it generically does not model ({mechanism})"
        )
    if generic:
        for key in sorted(config):
            if any(key.startswith(prefix) for prefix in _UNMODELLED_KEYS):
                raise ConfigError(
                    f"{where}{key}: model_type {model_type!r} is not one the calculators know "
                    "by name, and this key declares a mechanism that reading it generically "
                    "does not model"
                )
    if model_type == "kimi_linear":
        check_kimi_linear(config, where)
    if model_type == "alice_ai":
        check_alice_ai(config, where)
    check_moe_keys(config, where, family_of(str(model_type)))
    return generic


def _mla(config: Mapping[str, Any], where: str) -> LatentAttention | None:
    if not config.get("kv_lora_rank"):
        return None
    return LatentAttention(
        kv_lora_rank=int_field(config, "kv_lora_rank", where),
        q_lora_rank=optional_int(config, "q_lora_rank", where, 0),
        qk_rope_head_dim=int_field(config, "qk_rope_head_dim", where),
        qk_nope_head_dim=int_field(config, "qk_nope_head_dim", where),
        v_head_dim=int_field(config, "v_head_dim", where),
    )


def _siglip(raw: Mapping[str, Any], text_hidden: int) -> VisionTower:
    vision = _with_defaults(raw)
    where = "vision_config."
    hidden = int_field(vision, "hidden_size", where)
    # Gemma 3's projector: an RMSNorm over vision features, then a linear map to text width.
    projector = hidden * text_hidden + hidden
    return VisionTower(
        hidden_size=hidden,
        intermediate_size=int_field(vision, "intermediate_size", where),
        num_layers=int_field(vision, "num_hidden_layers", where),
        num_channels=optional_int(vision, "num_channels", where, 3),
        image_size=int_field(vision, "image_size", where),
        patch_size=int_field(vision, "patch_size", where),
        projector_params=projector,
    )


def _vision(config: Mapping[str, Any], text_hidden: int) -> tuple[VisionTower | None, VisionCount]:
    """The vision tower: a SigLIP tower (Gemma 3) as a `VisionTower`, any other counted by
    `calculators.vision`."""
    none = VisionCount(0, "", True)
    raw = config.get("vision_config")
    if not isinstance(raw, Mapping):
        return None, none
    wrapper_type = str(config.get("model_type", ""))
    vision_type = str(raw.get("model_type", ""))
    if vision_family(wrapper_type, vision_type) is None and (
        vision_type.startswith("siglip") or wrapper_type == "gemma3"
    ):
        return _siglip(raw, text_hidden), none
    return None, count_vision(config, raw, text_hidden)


def _shape(language: Mapping[str, Any], where: str) -> tuple[int, int, int, int, int]:
    """(hidden size, layers, attention heads, KV heads, head size) of the language model; an
    attention-free model (`calculators.state_space`) has no heads: 0, 0, 0."""
    if language.get("model_type") == "zamba2":
        return zamba2_shape(language, where)
    hidden = int_field(language, "hidden_size", where)
    num_layers = int_field(language, "num_hidden_layers", where)
    if language.get("model_type") in ATTENTION_FREE_TYPES:
        if hidden == 0 or num_layers == 0:
            raise ConfigError(f"{where}hidden_size/num_hidden_layers: must be > 0")
        return hidden, num_layers, 0, 0, 0
    num_heads = int_field(language, "num_attention_heads", where)
    if num_heads == 0 or hidden == 0 or num_layers == 0:
        raise ConfigError(f"{where}hidden_size/num_hidden_layers/num_attention_heads: must be > 0")
    num_kv_heads = optional_int(language, "num_key_value_heads", where, num_heads)
    if num_kv_heads == 0 or num_heads % num_kv_heads:
        raise ConfigError(
            f"{where}num_key_value_heads: {num_kv_heads} does not divide num_attention_heads "
            f"{num_heads}; expected a divisor > 0 (grouped-query attention)"
        )
    head_dim = optional_int(language, "head_dim", where, 0) or hidden // num_heads
    if head_dim == 0:
        raise ConfigError(
            f"{where}head_dim: hidden_size {hidden} / num_attention_heads {num_heads} "
            "gives 0; expected a head size > 0"
        )
    return hidden, num_layers, num_heads, num_kv_heads, head_dim


def _max_positions(language: Mapping[str, Any], where: str) -> int | None:
    """max_position_embeddings (None when absent); 0 is no model's: a model holds a position."""
    value = optional_int(language, "max_position_embeddings", where, -1)
    if value == 0:
        raise ConfigError(f"{where}max_position_embeddings: expected an integer > 0, got 0")
    return None if value < 0 else value


# The keys vLLM derives the model's length from (model_arch_config_convertor.py
# derive_max_model_len_and_key in 0.16-0.29, config.py _get_and_verify_max_len in 0.10): the
# smallest present wins, and `model_max_length` (Command-R, Kimi Linear) overrides them all.
_LENGTH_KEYS = (
    "max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
    "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len",
)  # fmt: skip


def derived_max_len(language: Mapping[str, Any], where: str) -> int | None:
    """vLLM's derived max_model_len when a key other than max_position_embeddings sets it."""
    found = {key: optional_int(language, key, where, 0) for key in _LENGTH_KEYS}
    present = [value for value in found.values() if value > 0]
    if not present:
        return None
    length = found["model_max_length"] or min(present)
    return None if length == found["max_position_embeddings"] else length


def _rope_scaling(language: Mapping[str, Any], where: str) -> Mapping[str, Any] | None:
    """`rope_scaling`, or transformers 5's `rope_parameters` when it is one flat set."""
    scaling = optional_mapping(language, "rope_scaling", where)
    parameters = language.get("rope_parameters")
    if scaling is None and isinstance(parameters, Mapping) and "rope_type" in parameters:
        return parameters
    return scaling


_TYPE_NOTES = {
    "qwen4_exp_text": QWEN4_EXP_NOTE, "beam": BEAM_NOTE, MISTRAL_LARGE4_TYPE: MISTRAL_LARGE4_NOTE,
    DORY_TYPE: DORY_NOTE, "alice_ai": ALICE_AI_NOTE, "k2_horizon": K2_HORIZON_NOTE,
    STEP5_TYPE: STEP5_NOTE, ZAYA_TYPE: ZAYA_NOTE, GLM5_NEXT_TYPE: GLM5_NEXT_NOTE,
}  # fmt: skip
"""The reading note of each model type that has one of its own (none of these types is of the
hy_v4 or deepseek_v2 family, whose notes go by family)."""


def _reading_notes(config: Mapping[str, Any], model_type: str, generic: bool,
                   vision: VisionCount) -> tuple[str, ...]:  # fmt: skip
    notes = []
    if generic:
        notes.append(
            f"model_type {model_type!r} is not one the calculators know by name: its language "
            "model was read generically from the common config conventions (hidden_size, "
            "num_hidden_layers, attention and KV heads, head_dim, intermediate_size, the usual "
            "MoE keys, layer_types), as a pre-norm decoder with a gated MLP"
        )
    if family_of(model_type) == "hy_v4":
        notes.append(HY_V4_NOTE)
    if model_type in _TYPE_NOTES:
        notes.append(_TYPE_NOTES[model_type])
    if family_of(model_type) == "deepseek_v2" and dash_config(config, "") is not None:
        notes.append(DASH_NOTE)
    if family_of(model_type) == "longcat_flash":
        notes.append(
            "LongCat-Flash's layers each hold two attention blocks and two dense MLPs beside one "
            "MoE: planned as twice num_layers sub-layers (pipeline stages split sub-layers, "
            "where vLLM splits whole layers)"
        )
    if not vision.recognised:
        vision_type = config.get("vision_config", {}).get("model_type", "?")
        notes.append(
            f"the vision tower ({vision_type!r}) was counted as a generic ViT: its layout is "
            "not one the calculators know by name"
            if vision.params
            else f"the vision tower ({vision_type!r}) is not counted: its config names no "
            "hidden_size, intermediate_size and layer count the calculators can read"
        )
    return tuple(notes)


def config_from_text(text: str) -> dict[str, Any]:
    """The object of a `config.json`'s text (a file's, or one pasted into a page); ConfigError
    for text that is not JSON or not an object, or longer than a config file may be."""
    if len(text) > MAX_CONFIG_BYTES // 4 and len(text.encode("utf-8")) > MAX_CONFIG_BYTES:
        size, limit = len(text.encode("utf-8")) / 2**20, MAX_CONFIG_BYTES / 2**20
        raise ConfigError(f"{size:.1f} MiB is above the limit of {limit:g} MiB for a model config")
    try:
        config = json_loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(f"line {error.lineno}: not valid JSON: {error.msg}") from None
    if not isinstance(config, dict):
        raise ConfigError("expected a JSON object (a config.json)")
    return config


def parse_config(config: Mapping[str, Any]) -> ModelArch:
    """Read a Hugging Face `config.json` (as a dict) into a `ModelArch`.

    Raises `ConfigError` naming the missing or bad field, e.g.
    `text_config.num_hidden_layers: required field missing from config.json`; values no
    model has (10^8 layers, NaN, 100 levels of nesting) too (`calculators.limits`).
    """
    check_config(config)
    language, where = _language_config(config)
    hidden, num_layers, num_heads, num_kv_heads, head_dim = _shape(language, where)
    generic = _check_known_keys(language, where)
    model_type = str(language.get("model_type", ""))
    family = family_of(model_type)
    # The readers below key their per-family behaviour on the family's own model type.
    as_family = {**language, "model_type": family}
    moe, intermediate = _moe_and_dense_width(language, as_family, num_layers, where)
    kinds = layer_kinds(as_family, num_layers, where)
    siglip, vision = _vision(config, hidden)
    return ModelArch(
        model_type=model_type,
        hidden_size=hidden,
        num_layers=num_layers,
        num_attention_heads=num_heads,
        num_kv_heads=num_kv_heads,
        head_dim=head_dim,
        intermediate_size=intermediate,
        vocab_size=int_field(language, "vocab_size", where),
        layer_kinds=kinds,
        sliding_window=optional_int(language, "sliding_window", where, 0) or None,
        max_position_embeddings=_max_positions(language, where),
        derived_max_len=derived_max_len(language, where),
        torch_dtype=str(language.get("torch_dtype") or language.get("dtype") or "bfloat16"),
        moe=moe,
        mla=_mla(language, where),
        vision=siglip,
        quantization_config=optional_mapping(language, "quantization_config", where),
        rope_scaling=_rope_scaling(language, where),
        mixer=_mixer(language, hidden, kinds, where, parallel=family == "falcon_h1"),
        attention_chunk_size=(
            optional_int(language, "attention_chunk_size", where, 0) or None
            if CHUNKED in kinds
            else None
        ),
        indexer=_family_indexer(language, family, num_layers, where),
        mtp_layers=_mtp_layers(language, family, where),
        vision_params=vision.params,
        vision_encoder=vision.encoder,
        reading_notes=_reading_notes(config, model_type, generic, vision),
        **_block_flags(language, family),
        **_family_fields(language, family, num_layers, hidden, where),
        **(qwen4_exp_fields(language, kinds, where) if model_type == "qwen4_exp_text" else {}),
        **unlimited_ocr2_fields(language, family, where),
        **(step5_fields(language, kinds, where) if model_type == STEP5_TYPE else {}),
    )


def _family_fields(
    language: Mapping[str, Any], family: str, num_layers: int, hidden: int, where: str
) -> dict[str, Any]:
    """The `ModelArch` fields a family's own module reads from its config."""
    if family in GEMMA4_TYPES:
        return gemma4_fields(language, num_layers, where)
    if family in MIMO_V2_TYPES:
        return mimo_v2_fields(language, where)
    readers = {
        "zamba2": lambda: zamba2_fields(language, hidden, where),
        "laguna": lambda: laguna_fields(language, num_layers, where),
        "gemma3n_text": lambda: gemma3n_fields(language, num_layers, where),
        "step3p5": lambda: step3p5_fields(language, where),
        "bailing_moe_v3": lambda: bailing_v3_fields(language, where),
        "deepseek_v4": lambda: deepseek_v4_fields(language, where),
        "minimax_m3_text": lambda: minimax_m3_fields(language, where),
        INKLING_TYPE: lambda: inkling_fields(language, where),
        DORY_TYPE: lambda: dory_fields(language, where),
        ZAYA_TYPE: lambda: zaya_fields(language, where),
        DOMYN_EDGE_TYPE: lambda: domyn_edge_fields(language, where),
        GLM5_NEXT_TYPE: lambda: glm5_next_fields(language, where),
        "hy_v4": lambda: hy_v4_fields(language, where),
        "beam": lambda: beam_fields(language, where),
        "lfm3": lambda: lfm3_fields(language),
        "alice_ai": lambda: alice_ai_fields(language),
        "k2_horizon": lambda: k2_horizon_fields(language, where),
        MISTRAL_LARGE4_TYPE: lambda: large4_fields(language, where),
    }
    reader = readers.get(family)
    return reader() if reader is not None else {}


def _mtp_layers(language: Mapping[str, Any], family: str, where: str) -> int:
    """The multi-token-prediction layers a checkpoint ships (AliceAI's vLLM drops them on load:
    calculators.alice_ai)."""
    if family == "alice_ai":
        return 0
    return (
        optional_int(language, "num_nextn_predict_layers", where, 0)
        or optional_int(language, "mtp_num_hidden_layers", where, 0)
        or optional_int(language, "num_mtp_modules", where, 0)
    )


def _family_indexer(
    language: Mapping[str, Any], family: str, num_layers: int, where: str
) -> SparseIndexer | None:
    """The lightning indexer: DeepSeek-V4's and MiniMax-M3's are their modules' own, HY-V4's on
    its sparse layers only (calculators.hy_v4), V3.2's on the layers IndexCache's keys leave
    one (every layer without them; calculators.index_cache)."""
    if family in ("deepseek_v4", "minimax_m3_text"):
        return None
    if family == "hy_v4":
        return hy_v4_indexer(language, num_layers, where, _indexer(language, where))
    if family == MISTRAL_LARGE4_TYPE:
        return large4_indexer(language, num_layers, where)
    if family == GLM5_NEXT_TYPE:
        return glm5_next_indexer(language, num_layers, where)
    return index_cache_indexer(language, num_layers, where, _indexer(language, where))


def _moe_and_dense_width(
    language: Mapping[str, Any], as_family: Mapping[str, Any], num_layers: int, where: str
) -> tuple[MixtureOfExperts | None, int]:
    """The routed experts, and the dense MLP's width (0 when every layer is MoE and the config
    names none)."""
    family = as_family["model_type"]
    if family in ATTENTION_FREE_TYPES:
        return None, 0  # one mixer per layer, no MLP: intermediate_size is the mixer's width
    if family == "zamba2":  # the shared blocks' MLP (calculators.zamba2)
        hidden = int_field(language, "hidden_size", where)
        return None, optional_int(language, "intermediate_size", where, 0) or 4 * hidden
    moe = (
        gemma4_moe(language, num_layers, where)
        if family in GEMMA4_TYPES
        else read_moe(as_family, num_layers, where)
    )
    dense_width_key = {
        "llama4_text": "intermediate_size_mlp",
        "granitemoehybrid": "shared_intermediate_size",
        "minimax_m3_text": "dense_intermediate_size",
        INKLING_TYPE: "dense_intermediate_size",
    }.get(family, "intermediate_size")
    if family == "cohere2_moe" and language.get("prefix_dense_intermediate_size") is not None:
        dense_width_key = "prefix_dense_intermediate_size"  # cohere2_moe.py's dense prefix
    if moe is not None and len(moe.moe_layers) == num_layers:
        return moe, optional_int(language, dense_width_key, where, 0)
    return moe, int_field(language, dense_width_key, where)


# Decoder-block layouts other than the pre-norm, bias-free gated one, by family (vLLM 0.29.0):
# GPT-2 (gpt2.py) and BLOOM (bloom.py) have LayerNorms with biases, biases on every projection
# and an ungated MLP; BLOOM a LayerNorm after the word embeddings. TeleChat2 (telechat2.py) keeps
# o_proj's and down_proj's biases only. Cohere's parallel block has one norm.
_BLOCK_LAYOUTS: dict[str, dict[str, Any]] = {
    "gptj": {"norms_per_layer": 1, "gated_mlp": False, "mlp_bias": True, "norm_bias": True,
             "lm_head_bias": True},
    "gpt2": {"gated_mlp": False, "mlp_bias": True, "norm_bias": True, "qkv_bias": True,
             "o_bias": True, "rotary": False},
    "bloom": {"gated_mlp": False, "mlp_bias": True, "norm_bias": True, "qkv_bias": True,
              "o_bias": True, "embedding_norm": True, "rotary": False},
    "telechat": {"o_bias": True, "mlp_bias": True, "mlp_input_bias": False},
    # GPT-NeoX (gpt_neox.py), OPT (opt.py), Phi-1/2 (phi.py): LayerNorms with biases and an
    # ungated MLP with biases; Phi one norm for its parallel block and an lm_head bias; OPT
    # learned positions (opt_positions). Nemotron-4 (nemotron.py): LayerNorm1P with biases and
    # an up/down squared-ReLU MLP.
    "gpt_neox": {"gated_mlp": False, "mlp_bias": True, "norm_bias": True},
    "opt": {"gated_mlp": False, "mlp_bias": True, "norm_bias": True, "rotary": False},
    "phi": {"norms_per_layer": 1, "gated_mlp": False, "mlp_bias": True, "norm_bias": True,
            "qkv_bias": True, "o_bias": True, "lm_head_bias": True},
    "nemotron": {"gated_mlp": False, "norm_bias": True},
    # Apertus (apertus.py: xIELU) and Arcee AFM (arcee.py: ReLU²): up and down projections
    # only, Apertus with q/k norms; Jais 2 (jais2.py) too, with LayerNorms with biases. AFMoE
    # (afmoe.py): a sigmoid gate per query channel, q/k norms, four norms a layer.
    "apertus": {"gated_mlp": False, "qk_norm": True},
    "arcee": {"gated_mlp": False},
    "jais2": {"gated_mlp": False, "norm_bias": True},
    "afmoe": {"attention_output_gate": True, "qk_norm": True, "norms_per_layer": 4},
    # Beam (calculators.beam): its output gate projects one value a query channel.
    "beam": {"attention_output_gate": True},
    # Mistral Large 4 (calculators.mistral_large4) always builds its own lm_head.
    "mistral_large_4": {"tie_word_embeddings": False},
    # HRM-Text (hrm_text.py): a gate per query channel in its fused gqkv projection, RMSNorms
    # without weights.
    "hrm_text": {"attention_output_gate": True, "norms_per_layer": 0},
    "cohere2_moe": {"norms_per_layer": 1},
    # Command R / R+ / A (commandr.py): the same parallel block; no lm_head, the logits come
    # from the embedding table whatever tie_word_embeddings says.
    "cohere": {"norms_per_layer": 1, "tie_word_embeddings": True},
    "cohere2": {"norms_per_layer": 1, "tie_word_embeddings": True},
    # Dory (dory.py): single-purpose layers (attention or MLP), weightless nGPT norms, a g_proj
    # output gate per query channel (calculators.dory).
    "dory": {"norms_per_layer": 0, "single_purpose_layers": True, "attention_output_gate": True},
    # step3_text.py always builds its own lm_head.
    "step3_text": {"tie_word_embeddings": False},
    # lfm2.py and lfm2_moe.py tie the lm_head to the embedding whatever the config says.
    "lfm2": {"tie_word_embeddings": True},
    "lfm2_moe": {"tie_word_embeddings": True},
}  # fmt: skip


# Families whose ungated MLP takes its biases from `mlp_bias` (their vLLM modules).
_UNGATED_MLP_BIAS_FLAG = ("nemotron_h", "nemotron", "apertus", "arcee", "jais2")


def _loop_layers(language: Mapping[str, Any], family: str) -> dict[str, int]:
    """IQuest LoopCoder (iquest_loopcoder.py): `loop_num` passes (default 2); the later ones
    attend within `loop_window_size` tokens (default 64), each with its own cache."""
    if family != "iquestloopcoder":
        return {}
    loops = optional_int(language, "loop_num", "", 2)
    layers = int(language["num_hidden_layers"])
    return {
        "loop_sliding_layers": max(0, loops - 1) * layers,
        "loop_window": optional_int(language, "loop_window_size", "", 64),
    }


def _learned_positions(language: Mapping[str, Any], family: str) -> int:
    """Rows of a learned position table: GPT-2's wpe (n_positions), OPT's embed_positions
    (max_position_embeddings + 2: OPTLearnedPositionalEmbedding's offset); 0 for the rest."""
    positions = _max_positions(language, "") or 0
    return {"gpt2": positions, "opt": positions + 2 if positions else 0}.get(family, 0)


def _bias_flags(language: Mapping[str, Any], family: str) -> dict[str, bool]:
    """Biases on q/k/v and on the output projection, from the flags each family's module reads:
    `attention_bias`; Ling's (bailing_moe.py) `use_bias`/`use_qkv_bias`; Param2's `use_qkv_bias`
    (q/k/v) and `use_bias` (output); ERNIE 4.5's `use_bias` (q/k/v only)."""
    attention_bias = bool(language.get("attention_bias", False))
    use_bias = bool(language.get("use_bias", False))
    use_qkv_bias = bool(language.get("use_qkv_bias", False))
    if family in {"bailing_moe", "bailing_moe_linear", "param2moe"}:
        qkv = use_qkv_bias or (use_bias and family != "param2moe")
        return {"qkv_bias": attention_bias or qkv, "o_bias": attention_bias or use_bias}
    if (
        family == "chatglm"
    ):  # chatglm.py: add_bias_linear on every projection, add_qkv_bias on q/k/v
        linear = bool(language.get("add_bias_linear", False))
        return {"qkv_bias": linear or bool(language.get("add_qkv_bias")), "o_bias": linear}
    if family == "ernie4_5_moe":
        return {"qkv_bias": attention_bias or use_bias, "o_bias": attention_bias}
    return {
        "qkv_bias": attention_bias or family in _QKV_BIAS_TYPES,
        "o_bias": attention_bias,
    }


def _block_flags(language: Mapping[str, Any], family: str) -> dict[str, Any]:
    """The decoder block's biases, norms, gates and layout, by family and config flags."""
    # Nemotron-H: single-purpose layers, one norm each, a squared-ReLU MLP without a gate;
    # Mamba and Mamba-2 models: one norm and one mixer per layer, no MLP.
    nemotron = family == "nemotron_h"
    # Zamba2: one norm and a Mamba-2 mixer per layer, its attention and MLP in shared blocks.
    mixer_only = family in ATTENTION_FREE_TYPES or family == "zamba2"
    flags: dict[str, Any] = {
        # Zamba2: vLLM's zamba2.py ties the lm_head whatever the config says.
        "tie_word_embeddings": family == "zamba2"
        or bool(language.get("tie_word_embeddings", family in _TIED_BY_DEFAULT)),
        **_bias_flags(language, family),
        "qk_norm": family in _QK_NORM_TYPES or bool(language.get("use_qk_norm", False)),
        "norms_per_layer": 4
        if family in _FOUR_NORM_TYPES and language.get("use_sandwich_norm", True)
        else 1
        if nemotron or mixer_only
        else 2,
        "attention_sinks": family in ("gpt_oss", "deepseek_v4")
        or (family == "hy_v4" and bool(language.get("learnable_sink"))),
        "attention_output_gate": family in ("qwen3_next", "alice_ai")
        or bool(language.get("attn_output_gate", False)),
        "gated_mlp": not nemotron,
        "mlp_bias": family in _UNGATED_MLP_BIAS_FLAG and bool(language.get("mlp_bias", False)),
        "single_purpose_layers": nemotron or mixer_only,
        "parallel_mixer": family in ("falcon_h1", "zamba2"),
        # ChatGLM without rmsnorm: torch's LayerNorm, with a bias (chatglm.py).
        "norm_bias": family == "chatglm" and language.get("rmsnorm") is False,
        # GPT-2's wpe holds a row per position (n_positions); Step 3's shared query width.
        "position_embeddings": _learned_positions(language, family),
        "ngram_embedding": ngram_embedding(language, "") if family == "longcat_flash" else (0, 0),
        **_loop_layers(language, family),
        # HRM-Text's caches beyond one a layer (Dory's are calculators.dory's).
        **(
            {"extra_full_caches": optional_int(language, "hrm_extra_caches", "", 0)}
            if family == "hrm_text"
            else {}
        ),
        # DeciLM: each layer's MLP width, 0 where its FFN is a no-op (calculators.decilm).
        "mlp_widths": decilm_layers(language, int(language["num_hidden_layers"]))[1]
        if family == DECILM
        else (),
        "shared_q_dim": optional_int(language, "share_q_dim", "", 0)
        if family == "step3_text"
        else 0,
    }
    flags.update(_BLOCK_LAYOUTS.get(family, {}))
    if family == "falcon":
        flags.update(falcon_block(language))
    return flags


def _mixer(
    config: Mapping[str, Any], hidden: int, kinds: tuple[str, ...], where: str, parallel: bool
) -> RecurrentMixer | Mamba2Mixer | LightningMixer | None:
    if LIGHTNING in kinds:
        return lightning_mixer(config, hidden, where)
    if SHORT_CONV in kinds:
        return short_conv_mixer(config, hidden, where)
    if config.get("model_type") == "zamba2":
        return zamba2_mixer(config, hidden, where)
    if MAMBA2 in kinds or parallel:
        return mamba2_mixer(config, hidden, where)
    if MAMBA in kinds:
        if config.get("model_type") in ATTENTION_FREE_TYPES:
            return mamba_mixer(config, hidden, where)
        return jamba_mixer(config, hidden, where)
    if LINEAR_ATTENTION in kinds:
        return gated_delta_net_mixer(config, hidden, where)
    if KDA in kinds:
        if config.get("model_type") == "bailing_moe_v3":
            return bailing_v3_mixer(config, hidden, where)
        if config.get("model_type") == "alice_ai":
            return alice_ai_mixer(config, hidden, where)
        return kda_mixer(config, hidden, where)
    return None


def _indexer(config: Mapping[str, Any], where: str) -> SparseIndexer | None:
    if not config.get("index_n_heads"):
        return None
    if not config.get("kv_lora_rank"):
        raise ConfigError(f"{where}index_n_heads: a sparse indexer needs MLA (kv_lora_rank)")
    return SparseIndexer(
        num_heads=int_field(config, "index_n_heads", where),
        head_dim=int_field(config, "index_head_dim", where),
        top_k=int_field(config, "index_topk", where),
    )
