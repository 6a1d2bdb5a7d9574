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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from calculators.errors import ConfigError
from calculators.limits import check_config
from calculators.mixers import (
    LINEAR_ATTENTION,
    MAMBA,
    RecurrentMixer,
    gated_delta_net_mixer,
    jamba_layer_kinds,
    jamba_mixer,
    jamba_moe_layers,
)

FULL = "full"
SLIDING = "sliding"
CHUNKED = "chunked"  # Llama 4's chunked local attention
STATE_KINDS = (MAMBA, LINEAR_ATTENTION)  # layers with a per-sequence state instead of KV

# Language-model types whose layers the calculators model. Any other is an error: a config of
# an unknown family would otherwise be counted as a Llama and give a confident wrong number.
KNOWN_MODEL_TYPES = frozenset(
    {
        "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "qwen3_next",
        "deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2", "gpt_oss", "gemma", "gemma2",
        "gemma3_text", "phi3", "olmo2", "glm4_moe", "llama4_text", "jamba", "gptj",
    }
)  # fmt: skip
# Config keys about experts and routing that the calculators read (the rest of the key names
# below only steer routing and change no tensor shape). An expert/MoE/router key outside both
# sets is an error naming it, because it may change how many parameters there are.
_MOE_KEYS_READ = frozenset(
    {
        "num_local_experts", "n_routed_experts", "num_experts", "num_experts_per_tok",
        "experts_per_token", "moe_intermediate_size", "n_shared_experts",
        "shared_expert_intermediate_size", "first_k_dense_replace", "moe_layer_freq",
        "decoder_sparse_step", "mlp_only_layers", "interleave_moe_layer_step",
        "expert_layer_period", "expert_layer_offset", "moe_layers",
    }
)  # fmt: skip
_MOE_KEYS_ROUTING_ONLY = frozenset(
    {
        "router_aux_loss_coef", "output_router_logits", "router_jitter_noise", "norm_topk_prob",
        "routed_scaling_factor", "scoring_func", "topk_method", "n_group", "topk_group",
        "moe_router_enable_expert_bias", "router_z_loss_coef", "aux_loss_alpha",
        "seq_aux", "use_expert_bias", "router_dtype", "num_experts_offload",
    }
)  # fmt: skip
_LAYER_TYPES = {
    "full_attention": FULL,
    "attention": FULL,
    "sliding_attention": SLIDING,
    "linear_attention": LINEAR_ATTENTION,
    "chunked_attention": CHUNKED,
    "mamba": MAMBA,
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
_TIED_BY_DEFAULT = {"gemma", "gemma2", "gemma3_text"}
# Model types with a bias on the q/k/v projections even though config.json does not say so.
_QKV_BIAS_TYPES = {"qwen2", "qwen2_moe", "qwen2_vl"}
# Model types with per-head RMSNorm on queries and keys (q_norm / k_norm). Llama 4's
# `use_qk_norm` is an L2 norm without weights, so it is not here.
_QK_NORM_TYPES = {"qwen3", "qwen3_moe", "qwen3_next", "gemma3_text", "olmo2"}
# Model types whose MoE layers gate the shared expert with a learned sigmoid (hidden → 1).
_SHARED_EXPERT_GATE_TYPES = {"qwen2_moe", "qwen3_next"}
# Model types with four norms per decoder layer (pre/post attention, pre/post feed-forward).
_FOUR_NORM_TYPES = {"gemma2", "gemma3_text"}
# GPT-2-style config names, per model type, for the names the calculators read (transformers'
# `attribute_map` does the same). GPT-J: `n_inner` null means 4 × n_embd (GPTJMLP).
CONFIG_KEY_ALIASES: dict[str, dict[str, str]] = {
    "gptj": {
        "n_embd": "hidden_size",
        "n_layer": "num_hidden_layers",
        "n_head": "num_attention_heads",
        "n_positions": "max_position_embeddings",
        "n_inner": "intermediate_size",
    },
}
# GPT-J's block: one LayerNorm (with bias) feeding attention and MLP in parallel, an ungated
# MLP fc_in → gelu → fc_out with biases, no bias on q/k/v/out, an lm_head with a bias.
_GPTJ_TYPES = {"gptj"}


@dataclass(frozen=True)
class MixtureOfExperts:
    """The MoE part of a model: routed experts, shared experts and which layers are sparse."""

    num_experts: int
    experts_per_token: int
    expert_intermediate_size: int
    shared_intermediate_size: int  # all shared experts of a layer together; 0 when none
    moe_layers: tuple[int, ...]  # indices of the layers whose MLP is a mixture of experts
    router_bias: bool
    expert_bias: bool


@dataclass(frozen=True)
class LatentAttention:
    """DeepSeek's multi-head latent attention: one compressed KV vector per token and layer."""

    kv_lora_rank: int
    q_lora_rank: int  # 0 when queries are projected directly
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int


@dataclass(frozen=True)
class SparseIndexer:
    """DeepSeek-V3.2's lightning indexer: a small attention that picks the top-k tokens."""

    num_heads: int
    head_dim: int
    top_k: int


@dataclass(frozen=True)
class VisionTower:
    """A ViT-style vision encoder and its projector into the language model (multimodal)."""

    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_channels: int
    image_size: int
    patch_size: int
    projector_params: int


@dataclass(frozen=True)
class ModelArch:
    """Everything the calculators need to know about a model's language part."""

    model_type: str
    hidden_size: int
    num_layers: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    tie_word_embeddings: bool
    qkv_bias: bool
    o_bias: bool
    qk_norm: bool
    norms_per_layer: int
    layer_kinds: tuple[str, ...]  # FULL, SLIDING, CHUNKED, MAMBA or LINEAR_ATTENTION per layer
    sliding_window: int | None
    max_position_embeddings: int | None
    torch_dtype: str
    moe: MixtureOfExperts | None
    mla: LatentAttention | None
    vision: VisionTower | None
    attention_sinks: bool
    quantization_config: Mapping[str, Any] | None
    rope_scaling: Mapping[str, Any] | None
    mixer: RecurrentMixer | None = None  # the layers of kind MAMBA / LINEAR_ATTENTION
    attention_chunk_size: int | None = None
    attention_output_gate: bool = False  # Qwen3-Next: q_proj also emits a per-head gate
    indexer: SparseIndexer | None = None
    mtp_layers: int = 0  # multi-token-prediction layers the checkpoint ships; vLLM skips them
    gated_mlp: bool = True  # gate, up and down projections (SwiGLU); False: up and down only
    mlp_bias: bool = False  # biases on the dense MLP's projections
    norm_bias: bool = False  # LayerNorm with a bias (weight and bias per norm)
    lm_head_bias: bool = False

    @property
    def num_full_layers(self) -> int:
        return sum(1 for kind in self.layer_kinds if kind == FULL)

    @property
    def num_sliding_layers(self) -> int:
        return sum(1 for kind in self.layer_kinds if kind == SLIDING)

    @property
    def num_chunked_layers(self) -> int:
        return sum(1 for kind in self.layer_kinds if kind == CHUNKED)

    @property
    def num_state_layers(self) -> int:
        return sum(1 for kind in self.layer_kinds if kind in STATE_KINDS)


@dataclass(frozen=True)
class ParamCounts:
    """Parameter counts by the role of the tensor, which decides how it is quantized and sharded.

    `experts` holds every routed expert; `experts_active` those a token passes through.
    `small` holds norms, biases, attention sinks and other vectors kept in the checkpoint dtype.
    """

    embedding: int
    lm_head: int
    attention: int
    dense_mlp: int
    experts: int
    experts_active: int
    shared_experts: int
    router: int
    small: int
    vision: int

    @property
    def total(self) -> int:
        return (
            self.embedding
            + self.lm_head
            + self.attention
            + self.dense_mlp
            + self.experts
            + self.shared_experts
            + self.router
            + self.small
            + self.vision
        )

    @property
    def active(self) -> int:
        """Parameters that take part in one token's forward pass (the whole model if dense)."""
        return self.total - self.experts + self.experts_active


def _field(config: Mapping[str, Any], name: str, where: str) -> Any:
    if name not in config or config[name] is None:
        raise ConfigError(f"{where}{name}: required field missing from config.json")
    return config[name]


def _int_field(config: Mapping[str, Any], name: str, where: str) -> int:
    value = _field(config, name, where)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{where}{name}: expected a non-negative integer, got {value!r}")
    return value


def _optional_int(config: Mapping[str, Any], name: str, where: str, default: int) -> int:
    """An optional integer field: absent or null gives `default`; anything else must be an int."""
    value = config.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{where}{name}: expected a non-negative integer, got {value!r}")
    return value


def _optional_mapping(config: Mapping[str, Any], name: str, where: str) -> Mapping[str, Any] | None:
    value = config.get(name)
    if value is None or isinstance(value, Mapping):
        return value
    raise ConfigError(f"{where}{name}: expected a JSON object, got {value!r}")


def _with_defaults(config: Mapping[str, Any]) -> dict[str, Any]:
    model_type = str(config.get("model_type", ""))
    merged = dict(_TRANSFORMERS_DEFAULTS.get(model_type, {}))
    merged.update({key: value for key, value in config.items() if value is not None})
    for alias, name in CONFIG_KEY_ALIASES.get(model_type, {}).items():
        if alias in merged and name not in merged:
            merged[name] = merged[alias]
    if model_type in _GPTJ_TYPES and "intermediate_size" not in merged and "hidden_size" in merged:
        merged["intermediate_size"] = 4 * merged["hidden_size"]
    return merged


def _language_config(config: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """The language model's config and the prefix that locates it in the file."""
    if not isinstance(config, Mapping):
        raise ConfigError("config.json: expected a JSON object")
    text = config.get("text_config")
    if isinstance(text, Mapping) and "hidden_size" not in config:
        merged = _with_defaults(text)
        # Fields that multimodal wrappers keep at the top level apply to the language model.
        for key in ("quantization_config", "torch_dtype", "tie_word_embeddings"):
            if key in config and key not in text:
                merged[key] = config[key]
        return merged, "text_config."
    return _with_defaults(config), ""


def _listed_layer_kinds(config: Mapping[str, Any], num_layers: int, where: str) -> list[str]:
    layer_types = config["layer_types"]
    if not isinstance(layer_types, list):
        raise ConfigError(f"{where}layer_types: expected a list, got {layer_types!r}")
    if len(layer_types) != num_layers:
        raise ConfigError(
            f"{where}layer_types: expected {num_layers} entries (num_hidden_layers), "
            f"got {len(layer_types)}"
        )
    kinds = []
    for index, kind in enumerate(layer_types):
        if kind not in _LAYER_TYPES:
            raise ConfigError(
                f"{where}layer_types[{index}]: unknown layer kind {kind!r}; expected one of "
                + ", ".join(sorted(_LAYER_TYPES))
            )
        kinds.append(_LAYER_TYPES[kind])
    return kinds


def _llama4_layer_kinds(config: Mapping[str, Any], num_layers: int, where: str) -> list[str]:
    """Llama 4: layers with RoPE attend within chunks; every fourth (NoPE) layer globally."""
    if not config.get("attention_chunk_size"):
        return [FULL] * num_layers
    no_rope = config.get("no_rope_layers")
    if no_rope is None:
        interval = _optional_int(config, "no_rope_layer_interval", where, 4) or 4
        no_rope = [int((index + 1) % interval != 0) for index in range(num_layers)]
    if not isinstance(no_rope, list) or len(no_rope) != num_layers:
        raise ConfigError(
            f"{where}no_rope_layers: expected a list of {num_layers} flags (num_hidden_layers)"
        )
    # transformers' naming: a 1 in no_rope_layers means the layer *uses* RoPE (chunked).
    return [CHUNKED if flag else FULL for flag in no_rope]


def _layer_kinds(config: Mapping[str, Any], num_layers: int, where: str) -> tuple[str, ...]:
    model_type = str(config.get("model_type", ""))
    if model_type == "jamba":
        return tuple(jamba_layer_kinds(config, num_layers, where))
    if model_type == "llama4_text":
        return tuple(_llama4_layer_kinds(config, num_layers, where))
    if model_type == "qwen3_next":
        if config.get("layer_types") is not None:
            return tuple(_listed_layer_kinds(config, num_layers, where))
        interval = _optional_int(config, "full_attention_interval", where, 4) or 4
        return tuple(
            FULL if (index + 1) % interval == 0 else LINEAR_ATTENTION for index in range(num_layers)
        )
    window = config.get("sliding_window")
    if config.get("use_sliding_window") is False or not window:
        if config.get("layer_types") is not None:
            # Without a window every attention layer is global, but other kinds stay.
            kinds = _listed_layer_kinds(config, num_layers, where)
            return tuple(FULL if kind == SLIDING else kind for kind in kinds)
        return (FULL,) * num_layers
    if config.get("layer_types") is not None:
        return tuple(_listed_layer_kinds(config, num_layers, where))
    if model_type == "gemma2":
        # Gemma 2 alternates: even layers use the local window, odd layers attend globally.
        return tuple(SLIDING if index % 2 == 0 else FULL for index in range(num_layers))
    pattern = _optional_int(config, "sliding_window_pattern", where, 0)
    if pattern:
        # Every pattern-th layer is global (Gemma 3: five local layers, then one global).
        return tuple(FULL if (index + 1) % pattern == 0 else SLIDING for index in range(num_layers))
    # A bare sliding_window with no pattern applies to every layer (Mistral v0.1).
    return (SLIDING,) * num_layers


def _check_known_keys(config: Mapping[str, Any], where: str) -> None:
    """Refuse a model type, or an expert/MoE/router key, that the calculators do not read."""
    if "model_type" not in config:
        raise ConfigError(f"{where}model_type: required field missing from config.json")
    model_type = config["model_type"]
    if model_type not in KNOWN_MODEL_TYPES:
        raise ConfigError(
            f"{where}model_type: {model_type!r} is not a model type the calculators know; "
            "expected one of " + ", ".join(sorted(KNOWN_MODEL_TYPES))
        )
    for key in sorted(config):
        lowered = key.lower()
        if not any(word in lowered for word in ("expert", "moe", "router")):
            continue
        if key not in _MOE_KEYS_READ and key not in _MOE_KEYS_ROUTING_ONLY:
            raise ConfigError(
                f"{where}{key}: a mixture-of-experts setting the calculators do not read; "
                "its effect on the parameter count is unknown"
            )


def _moe_layers(
    config: Mapping[str, Any], num_layers: int, where: str, model_type: str
) -> tuple[int, ...]:
    if model_type == "jamba":
        return jamba_moe_layers(config, num_layers, where)
    if model_type == "llama4_text":
        listed = config.get("moe_layers")
        if listed is not None:
            if not isinstance(listed, list) or not all(isinstance(i, int) for i in listed):
                raise ConfigError(f"{where}moe_layers: expected a list of layer indices")
            return tuple(sorted(set(listed)))
        step = _optional_int(config, "interleave_moe_layer_step", where, 1) or 1
        return tuple(range(step - 1, num_layers, step))
    first_dense = _optional_int(config, "first_k_dense_replace", where, 0)
    frequency = _optional_int(config, "moe_layer_freq", where, 0) or _optional_int(
        config, "decoder_sparse_step", where, 1
    )
    only_dense = config.get("mlp_only_layers") or []
    if not isinstance(only_dense, list) or not all(isinstance(i, int) for i in only_dense):
        raise ConfigError(f"{where}mlp_only_layers: expected a list of layer indices")
    mlp_only = set(only_dense)
    return tuple(
        index
        for index in range(num_layers)
        if index >= first_dense and (index + 1) % frequency == 0 and index not in mlp_only
    )


def _moe(config: Mapping[str, Any], num_layers: int, where: str) -> MixtureOfExperts | None:
    num_experts = (
        _optional_int(config, "num_local_experts", where, 0)
        or _optional_int(config, "n_routed_experts", where, 0)
        or _optional_int(config, "num_experts", where, 0)
    )
    model_type = str(config.get("model_type", ""))
    if num_experts <= 1:  # Jamba's config class reads one expert as a dense MLP
        return None
    experts_per_token = _int_field(config, "num_experts_per_tok", where)
    if "moe_intermediate_size" in config:
        expert_size = _int_field(config, "moe_intermediate_size", where)
    else:
        expert_size = _int_field(config, "intermediate_size", where)
    if expert_size == 0:
        raise ConfigError(f"{where}moe_intermediate_size: expected an integer > 0, got 0")
    shared = _optional_int(config, "n_shared_experts", where, 0) * expert_size
    if not shared:
        shared = _optional_int(config, "shared_expert_intermediate_size", where, 0)
    if model_type == "llama4_text":
        shared = expert_size  # every Llama 4 MoE layer has one shared expert of expert width
    return MixtureOfExperts(
        num_experts=num_experts,
        experts_per_token=experts_per_token,
        expert_intermediate_size=expert_size,
        shared_intermediate_size=shared,
        moe_layers=_moe_layers(config, num_layers, where, model_type),
        router_bias=model_type == "gpt_oss",
        expert_bias=model_type == "gpt_oss",
    )


def _mla(config: Mapping[str, Any], where: str) -> LatentAttention | None:
    if not config.get("kv_lora_rank"):
        return None
    return LatentAttention(
        kv_lora_rank=_int_field(config, "kv_lora_rank", where),
        q_lora_rank=_optional_int(config, "q_lora_rank", where, 0),
        qk_rope_head_dim=_int_field(config, "qk_rope_head_dim", where),
        qk_nope_head_dim=_int_field(config, "qk_nope_head_dim", where),
        v_head_dim=_int_field(config, "v_head_dim", where),
    )


def _vision(config: Mapping[str, Any], text_hidden: int) -> VisionTower | None:
    raw = config.get("vision_config")
    if not isinstance(raw, Mapping) or "text_config" not in config:
        return None
    vision = _with_defaults(raw)
    where = "vision_config."
    hidden = _int_field(vision, "hidden_size", where)
    # Gemma 3's projector: an RMSNorm over vision features, then a linear map to text width.
    projector = hidden * text_hidden + hidden
    return VisionTower(
        hidden_size=hidden,
        intermediate_size=_int_field(vision, "intermediate_size", where),
        num_layers=_int_field(vision, "num_hidden_layers", where),
        num_channels=_optional_int(vision, "num_channels", where, 3),
        image_size=_int_field(vision, "image_size", where),
        patch_size=_int_field(vision, "patch_size", where),
        projector_params=projector,
    )


def parse_config(config: Mapping[str, Any]) -> ModelArch:
    """Read a Hugging Face `config.json` (as a dict) into a `ModelArch`.

    Raises `ConfigError` naming the missing or bad field, e.g.
    `text_config.num_hidden_layers: required field missing from config.json`; values no
    model has (10^8 layers, NaN, 100 levels of nesting) too (`calculators.limits`).
    """
    check_config(config)
    language, where = _language_config(config)
    hidden = _int_field(language, "hidden_size", where)
    num_layers = _int_field(language, "num_hidden_layers", where)
    num_heads = _int_field(language, "num_attention_heads", where)
    if num_heads == 0 or hidden == 0 or num_layers == 0:
        raise ConfigError(f"{where}hidden_size/num_hidden_layers/num_attention_heads: must be > 0")
    num_kv_heads = _optional_int(language, "num_key_value_heads", where, 0) or num_heads
    head_dim = _optional_int(language, "head_dim", where, 0) or hidden // num_heads
    if head_dim == 0:
        raise ConfigError(
            f"{where}head_dim: hidden_size {hidden} / num_attention_heads {num_heads} "
            "gives 0; expected a head size > 0"
        )
    _check_known_keys(language, where)
    model_type = str(language.get("model_type", ""))
    tied_default = model_type in _TIED_BY_DEFAULT
    moe = _moe(language, num_layers, where)
    dense_width_key = (
        "intermediate_size_mlp" if model_type == "llama4_text" else "intermediate_size"
    )
    if moe is not None and len(moe.moe_layers) == num_layers:
        intermediate = _optional_int(language, dense_width_key, where, 0)
    else:
        intermediate = _int_field(language, dense_width_key, where)
    attention_bias = bool(language.get("attention_bias", False))
    layer_kinds = _layer_kinds(language, num_layers, where)
    return ModelArch(
        model_type=model_type,
        hidden_size=hidden,
        num_layers=num_layers,
        num_attention_heads=num_heads,
        num_kv_heads=num_kv_heads,
        head_dim=head_dim,
        intermediate_size=intermediate,
        vocab_size=_int_field(language, "vocab_size", where),
        tie_word_embeddings=bool(language.get("tie_word_embeddings", tied_default)),
        qkv_bias=attention_bias or model_type in _QKV_BIAS_TYPES,
        o_bias=attention_bias,
        qk_norm=model_type in _QK_NORM_TYPES,
        norms_per_layer=4
        if model_type in _FOUR_NORM_TYPES
        else 1
        if model_type in _GPTJ_TYPES
        else 2,
        layer_kinds=layer_kinds,
        sliding_window=_optional_int(language, "sliding_window", where, 0) or None,
        max_position_embeddings=(
            _optional_int(language, "max_position_embeddings", where, 0) or None
        ),
        torch_dtype=str(language.get("torch_dtype") or language.get("dtype") or "bfloat16"),
        moe=moe,
        mla=_mla(language, where),
        vision=_vision(config, hidden),
        attention_sinks=model_type == "gpt_oss",
        quantization_config=_optional_mapping(language, "quantization_config", where),
        rope_scaling=_optional_mapping(language, "rope_scaling", where),
        mixer=_mixer(language, hidden, layer_kinds, where),
        attention_chunk_size=(
            _optional_int(language, "attention_chunk_size", where, 0) or None
            if CHUNKED in layer_kinds
            else None
        ),
        attention_output_gate=model_type == "qwen3_next"
        or bool(language.get("attn_output_gate", False)),
        indexer=_indexer(language, where),
        mtp_layers=_optional_int(language, "num_nextn_predict_layers", where, 0)
        or _optional_int(language, "mtp_num_hidden_layers", where, 0),
        gated_mlp=model_type not in _GPTJ_TYPES,
        mlp_bias=model_type in _GPTJ_TYPES,
        norm_bias=model_type in _GPTJ_TYPES,
        lm_head_bias=model_type in _GPTJ_TYPES,
    )


def _mixer(
    config: Mapping[str, Any], hidden: int, kinds: tuple[str, ...], where: str
) -> RecurrentMixer | None:
    if MAMBA in kinds:
        return jamba_mixer(config, hidden, where)
    if LINEAR_ATTENTION in kinds:
        return gated_delta_net_mixer(config, hidden, where)
    return None


def _indexer(config: Mapping[str, Any], where: str) -> SparseIndexer | None:
    if not config.get("index_n_heads"):
        return None
    if not config.get("kv_lora_rank"):
        raise ConfigError(f"{where}index_n_heads: a sparse indexer needs MLA (kv_lora_rank)")
    return SparseIndexer(
        num_heads=_int_field(config, "index_n_heads", where),
        head_dim=_int_field(config, "index_head_dim", where),
        top_k=_int_field(config, "index_topk", where),
    )


def _attention_params(arch: ModelArch, tp: int) -> tuple[int, int]:
    """(linear weights, small tensors) of one layer's attention on one of `tp` ranks."""
    hidden = arch.hidden_size
    heads = arch.num_attention_heads
    mla = arch.mla
    if mla is not None:
        qk_head = mla.qk_nope_head_dim + mla.qk_rope_head_dim
        if mla.q_lora_rank:
            # q_a is replicated on every rank; q_b is split by heads.
            q = hidden * mla.q_lora_rank + mla.q_lora_rank * heads * qk_head // tp
            small = mla.q_lora_rank
        else:
            q = hidden * heads * qk_head // tp
            small = 0
        kv_a = hidden * (mla.kv_lora_rank + mla.qk_rope_head_dim)
        kv_b = mla.kv_lora_rank * heads * (mla.qk_nope_head_dim + mla.v_head_dim) // tp
        out = heads * mla.v_head_dim * hidden // tp
        indexer_linear = indexer_small = 0
        if arch.indexer is not None:
            # V3.2's indexer: its own query heads from the q latent, one key, per-head weights;
            # vLLM replicates these small projections on every rank.
            index = arch.indexer
            indexer_linear = (
                mla.q_lora_rank * index.num_heads * index.head_dim
                + hidden * index.head_dim
                + hidden * index.num_heads
            )
            indexer_small = 2 * index.head_dim  # the key's LayerNorm
        return (
            q + kv_a + kv_b + out + indexer_linear,
            small + mla.kv_lora_rank + indexer_small,
        )
    head_dim = arch.head_dim
    # KV heads are split across ranks; with more ranks than KV heads each rank keeps a copy.
    kv_heads_per_rank = max(1, arch.num_kv_heads // tp)
    q_width = heads * head_dim // tp
    kv_width = 2 * kv_heads_per_rank * head_dim
    # A gated attention (Qwen3-Next) projects a sigmoid gate per query channel as well.
    gate_width = q_width if arch.attention_output_gate else 0
    linear = hidden * (q_width + gate_width + kv_width) + q_width * hidden
    small = 0
    if arch.qkv_bias:
        small += q_width + kv_width
    if arch.o_bias:
        small += hidden
    if arch.qk_norm:
        small += 2 * head_dim
    if arch.attention_sinks:
        small += heads // tp
    return linear, small


def _vision_params(vision: VisionTower) -> int:
    hidden = vision.hidden_size
    per_layer = (
        4 * (hidden * hidden + hidden)  # q, k, v, out projections with biases
        + 2 * hidden * vision.intermediate_size
        + hidden
        + vision.intermediate_size  # fc1, fc2 with biases
        + 4 * hidden  # two LayerNorms (weight and bias)
    )
    patches = (vision.image_size // vision.patch_size) ** 2
    embeddings = vision.num_channels * vision.patch_size**2 * hidden + hidden + patches * hidden
    return vision.num_layers * per_layer + embeddings + 2 * hidden + vision.projector_params


def param_counts(arch: ModelArch, tensor_parallel_size: int = 1) -> ParamCounts:
    """Parameter counts of the model, or of one rank's shard under tensor parallelism.

    Sharded: attention heads, MLP and expert widths, the vocabulary of embedding and lm_head.
    Replicated on every rank: norms, routers, MLA's down-projections, KV heads beyond their count.
    Multi-token-prediction layers (`num_nextn_predict_layers`) are not counted: vLLM loads them
    only as a speculative-decoding draft, and published totals leave them out.
    """
    tp = tensor_parallel_size
    if tp < 1:
        raise ConfigError(f"tensor_parallel_size: expected an integer >= 1, got {tp}")
    hidden = arch.hidden_size
    vocab_per_rank = -(-arch.vocab_size // tp)
    embedding = vocab_per_rank * hidden
    lm_head = 0 if arch.tie_word_embeddings else vocab_per_rank * hidden
    attention = small = dense_mlp = experts = experts_active = shared = router = 0
    norm_tensors = 2 if arch.norm_bias else 1  # a LayerNorm's weight and bias
    mlp_matrices = 3 if arch.gated_mlp else 2
    moe = arch.moe
    moe_layers = set(moe.moe_layers) if moe is not None else set()
    for index in range(arch.num_layers):
        if arch.layer_kinds[index] in STATE_KINDS and arch.mixer is not None:
            linear, attention_small = arch.mixer.params(tp)
        else:
            linear, attention_small = _attention_params(arch, tp)
        attention += linear
        small += attention_small + arch.norms_per_layer * hidden * norm_tensors
        if moe is None or index not in moe_layers:
            dense_mlp += mlp_matrices * hidden * arch.intermediate_size // tp
            if arch.mlp_bias:
                small += arch.intermediate_size // tp + hidden
            continue
        per_expert = 3 * hidden * moe.expert_intermediate_size // tp
        experts += moe.num_experts * per_expert
        experts_active += moe.experts_per_token * per_expert
        shared += 3 * hidden * moe.shared_intermediate_size // tp
        router += hidden * moe.num_experts
        if moe.router_bias:
            small += moe.num_experts
        if moe.expert_bias:
            small += moe.num_experts * (2 * moe.expert_intermediate_size + hidden) // tp
        if moe.shared_intermediate_size and arch.model_type in _SHARED_EXPERT_GATE_TYPES:
            router += hidden  # the shared expert's sigmoid gate
    small += hidden * norm_tensors  # final norm
    if arch.lm_head_bias:
        small += vocab_per_rank
    vision = _vision_params(arch.vision) // tp if arch.vision is not None else 0
    return ParamCounts(
        embedding=embedding,
        lm_head=lm_head,
        attention=attention,
        dense_mlp=dense_mlp,
        experts=experts,
        experts_active=experts_active,
        shared_experts=shared,
        router=router,
        small=small,
        vision=vision,
    )
