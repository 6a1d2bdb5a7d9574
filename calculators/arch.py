"""A model's architecture, read from its Hugging Face `config.json` (given as a dict).

Covers dense MHA/GQA models, mixture-of-experts (routed + shared experts, dense first layers),
DeepSeek's multi-head latent attention (MLA), sliding-window layer patterns (Mistral v0.1,
Gemma 2/3, gpt-oss) and multimodal wrappers whose language model sits in `text_config`.
Fields a config file leaves out take the defaults transformers gives that model type, so a
config reads here as it does in transformers; a field without such a default is an error
naming it.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from calculators.errors import ConfigError

FULL = "full"
SLIDING = "sliding"

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
# Model types with per-head RMSNorm on queries and keys (q_norm / k_norm).
_QK_NORM_TYPES = {"qwen3", "qwen3_moe", "gemma3_text", "olmo2"}
# Model types with four norms per decoder layer (pre/post attention, pre/post feed-forward).
_FOUR_NORM_TYPES = {"gemma2", "gemma3_text"}


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
    layer_kinds: tuple[str, ...]  # FULL or SLIDING for each layer
    sliding_window: int | None
    max_position_embeddings: int | None
    torch_dtype: str
    moe: MixtureOfExperts | None
    mla: LatentAttention | None
    vision: VisionTower | None
    attention_sinks: bool
    quantization_config: Mapping[str, Any] | None
    rope_scaling: Mapping[str, Any] | None

    @property
    def num_full_layers(self) -> int:
        return sum(1 for kind in self.layer_kinds if kind == FULL)

    @property
    def num_sliding_layers(self) -> int:
        return sum(1 for kind in self.layer_kinds if kind == SLIDING)


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
    merged = dict(_TRANSFORMERS_DEFAULTS.get(str(config.get("model_type", "")), {}))
    merged.update({key: value for key, value in config.items() if value is not None})
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


def _layer_kinds(config: Mapping[str, Any], num_layers: int, where: str) -> tuple[str, ...]:
    window = config.get("sliding_window")
    if config.get("use_sliding_window") is False or not window:
        return (FULL,) * num_layers
    layer_types = config.get("layer_types")
    if layer_types is not None:
        if not isinstance(layer_types, list):
            raise ConfigError(f"{where}layer_types: expected a list, got {layer_types!r}")
        if len(layer_types) != num_layers:
            raise ConfigError(
                f"{where}layer_types: expected {num_layers} entries (num_hidden_layers), "
                f"got {len(layer_types)}"
            )
        return tuple(SLIDING if "sliding" in str(kind) else FULL for kind in layer_types)
    model_type = str(config.get("model_type", ""))
    if model_type == "gemma2":
        # Gemma 2 alternates: even layers use the local window, odd layers attend globally.
        return tuple(SLIDING if index % 2 == 0 else FULL for index in range(num_layers))
    pattern = _optional_int(config, "sliding_window_pattern", where, 0)
    if pattern:
        # Every pattern-th layer is global (Gemma 3: five local layers, then one global).
        return tuple(FULL if (index + 1) % pattern == 0 else SLIDING for index in range(num_layers))
    # A bare sliding_window with no pattern applies to every layer (Mistral v0.1).
    return (SLIDING,) * num_layers


def _moe(config: Mapping[str, Any], num_layers: int, where: str) -> MixtureOfExperts | None:
    num_experts = (
        _optional_int(config, "num_local_experts", where, 0)
        or _optional_int(config, "n_routed_experts", where, 0)
        or _optional_int(config, "num_experts", where, 0)
    )
    if not num_experts:
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
    first_dense = _optional_int(config, "first_k_dense_replace", where, 0)
    frequency = _optional_int(config, "moe_layer_freq", where, 0) or _optional_int(
        config, "decoder_sparse_step", where, 1
    )
    only_dense = config.get("mlp_only_layers") or []
    if not isinstance(only_dense, list) or not all(isinstance(i, int) for i in only_dense):
        raise ConfigError(f"{where}mlp_only_layers: expected a list of layer indices")
    mlp_only = set(only_dense)
    moe_layers = tuple(
        index
        for index in range(num_layers)
        if index >= first_dense and (index + 1) % frequency == 0 and index not in mlp_only
    )
    model_type = str(config.get("model_type", ""))
    return MixtureOfExperts(
        num_experts=num_experts,
        experts_per_token=experts_per_token,
        expert_intermediate_size=expert_size,
        shared_intermediate_size=shared,
        moe_layers=moe_layers,
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
    `text_config.num_hidden_layers: required field missing from config.json`.
    """
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
    model_type = str(language.get("model_type", ""))
    tied_default = model_type in _TIED_BY_DEFAULT
    moe = _moe(language, num_layers, where)
    if moe is not None and len(moe.moe_layers) == num_layers:
        intermediate = _optional_int(language, "intermediate_size", where, 0)
    else:
        intermediate = _int_field(language, "intermediate_size", where)
    attention_bias = bool(language.get("attention_bias", False))
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
        norms_per_layer=4 if model_type in _FOUR_NORM_TYPES else 2,
        layer_kinds=_layer_kinds(language, num_layers, where),
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
        return q + kv_a + kv_b + out, small + mla.kv_lora_rank
    head_dim = arch.head_dim
    # KV heads are split across ranks; with more ranks than KV heads each rank keeps a copy.
    kv_heads_per_rank = max(1, arch.num_kv_heads // tp)
    q_width = heads * head_dim // tp
    kv_width = 2 * kv_heads_per_rank * head_dim
    linear = hidden * (q_width + kv_width) + q_width * hidden
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
    """
    tp = tensor_parallel_size
    if tp < 1:
        raise ConfigError(f"tensor_parallel_size: expected an integer >= 1, got {tp}")
    hidden = arch.hidden_size
    vocab_per_rank = -(-arch.vocab_size // tp)
    embedding = vocab_per_rank * hidden
    lm_head = 0 if arch.tie_word_embeddings else vocab_per_rank * hidden
    attention = small = dense_mlp = experts = experts_active = shared = router = 0
    moe = arch.moe
    moe_layers = set(moe.moe_layers) if moe is not None else set()
    for index in range(arch.num_layers):
        linear, attention_small = _attention_params(arch, tp)
        attention += linear
        small += attention_small + arch.norms_per_layer * hidden
        if moe is None or index not in moe_layers:
            dense_mlp += 3 * hidden * arch.intermediate_size // tp
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
        if moe.shared_intermediate_size and arch.model_type == "qwen2_moe":
            router += hidden  # the shared expert's sigmoid gate
    small += hidden  # final norm
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
