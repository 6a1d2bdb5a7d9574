"""Parameter counts of a `ModelArch`, by the role of each tensor, for the whole model or one
tensor-parallel rank's shard."""

from dataclasses import dataclass, fields, replace

from infermeter.calculators.deepseek_v4 import rank_parameters
from infermeter.calculators.domyn_edge import rank_parameters as domyn_edge_parameters
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.inkling import rank_parameters as inkling_parameters
from infermeter.calculators.minimax_m3 import indexer_parameters
from infermeter.calculators.model_arch import (
    FULL,
    MIXER_FREE_KINDS,
    STATE_KINDS,
    ModelArch,
    VisionTower,
)
from infermeter.calculators.zaya import rank_parameters as zaya_parameters

# Model types whose MoE layers gate the shared expert with a learned sigmoid (hidden → 1).
_SHARED_EXPERT_GATE_TYPES = {
    "qwen2_moe", "qwen3_next", "qwen3_5_moe_text", "qwen4_exp_text", "alice_ai",
}  # fmt: skip


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
    # float32 and int32 tensors, 4 bytes each whatever the checkpoint dtype (DeepSeek-V4's
    # hyper-connections, sinks, compressor positions and hash-routing tables).
    four_byte: int = 0

    @property
    def total(self) -> int:
        every_field: int = sum(vars(self).values())  # a frozen dataclass: its fields only
        # experts_active is a share of experts, not a part of its own.
        return every_field - self.experts_active

    @property
    def active(self) -> int:
        """Parameters that take part in one token's forward pass (the whole model if dense)."""
        return self.total - self.experts + self.experts_active


def _mla_params(arch: ModelArch, tp: int, layer: int | None = None) -> tuple[int, int]:
    """(linear weights, small tensors) of one layer's (`layer`'s) multi-head latent attention on
    a rank."""
    hidden, heads, mla = arch.hidden_size, arch.num_attention_heads, arch.mla
    assert mla is not None
    if mla.q_lora_rank:
        # q_a is replicated on every rank; q_b is split by heads.
        q = hidden * mla.q_lora_rank + mla.q_lora_rank * heads * mla.qk_head_dim // tp
        small = mla.q_lora_rank
    else:
        q = hidden * heads * mla.qk_head_dim // tp
        small = 0
    kv_a = hidden * mla.kv_latent_dim
    kv_b = mla.kv_lora_rank * heads * (mla.qk_nope_head_dim + mla.v_head_dim) // tp
    out = heads * mla.v_head_dim * hidden // tp
    # BailingMoeV3's output gate: one a head or one a value channel.
    out += {"head": heads, "element": heads * mla.v_head_dim}.get(arch.attention_gate, 0) * (
        hidden // tp
    )
    indexer_linear = indexer_small = 0
    if arch.indexer is not None and arch.indexer.has_own(layer):
        # V3.2's indexer: its own query heads from the q latent, one key, per-head weights;
        # vLLM replicates these small projections on every rank.
        index = arch.indexer
        indexer_linear = (
            mla.q_lora_rank * index.num_heads * index.head_dim
            + hidden * index.head_dim
            + hidden * index.num_heads
        )
        indexer_small = 2 * index.head_dim  # the key's LayerNorm
        if index.tokens_per_key > 1:  # GLM-5-Next's pooling gate and position weights
            indexer_linear += index.head_dim * hidden
            indexer_small += index.tokens_per_key * index.head_dim
    return q + kv_a + kv_b + out + indexer_linear, small + mla.kv_lora_rank + indexer_small


def _attention_params(
    arch: ModelArch, tp: int, full: bool = False, layer: int | None = None
) -> tuple[int, int]:
    """(linear weights, small tensors) of one layer's attention on one of `tp` ranks; `full`:
    a full-attention layer, `layer` its index (`ModelArch.attention_shape`)."""
    if arch.mistral_large4 is not None and layer is not None:
        return arch.mistral_large4.attention_params(arch, tp, layer)
    if arch.mla is not None:
        return _mla_params(arch, tp, layer)
    hidden = arch.hidden_size
    if arch.shared_q_dim:
        return _shared_q_attention(arch, tp)
    shape = arch.attention_shape(full, layer)
    # KV heads are split across ranks; with more ranks than KV heads each rank keeps a copy.
    kv_heads_per_rank = max(1, shape.kv_heads // tp)
    q_width = shape.heads * shape.head_dim // tp
    kv_width = kv_heads_per_rank * (shape.head_dim + shape.v_head_dim)
    # A gated attention projects a sigmoid gate per query channel (Qwen3-Next, Laguna's
    # "per-element") or per head (Laguna's default) as well.
    gate_width = q_width if arch.attention_output_gate or arch.attention_gate == "element" else 0
    if arch.attention_gate == "head":
        gate_width = shape.heads // tp
    linear = (
        hidden * (q_width + gate_width + kv_width) + shape.heads * shape.v_head_dim // tp * hidden
    )
    small = 0
    if arch.qkv_bias:
        small += q_width + kv_width
    if arch.o_bias:
        small += hidden
    if arch.qk_norm:
        small += 2 * shape.head_dim
    if shape.sinks:
        small += shape.heads // tp
    if arch.attention_gate_bias:
        small += shape.heads // tp
    return linear, small


def _shared_q_attention(arch: ModelArch, tp: int) -> tuple[int, int]:
    """Step 3's attention (step3_text.py): qkv_proj to the shared query and one KV head,
    replicated on every rank; the query's RMSNorm; wq and o_proj split by heads."""
    hidden, shared = arch.hidden_size, arch.shared_q_dim
    heads_width = arch.num_attention_heads * arch.head_dim // tp
    linear = (
        hidden * (shared + 2 * arch.num_kv_heads * arch.head_dim)
        + shared * heads_width
        + heads_width * hidden
    )
    return linear, shared


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


# A rank's parameters counted so far, by `ParamCounts` part (param_counts' running sums), built
# into ParamCounts once at the end; adding to a part ParamCounts does not have is a KeyError.
_Tally = dict[str, int]


def _tally() -> _Tally:
    """Every part of `ParamCounts` at zero."""
    return dict.fromkeys((part.name for part in fields(ParamCounts)), 0)


def _mixer_params(arch: ModelArch, tp: int, kind: str, layer: int) -> tuple[int, int]:
    """A layer's sequence mixer: attention, a state mixer, or both side by side (Falcon-H1)."""
    if kind in STATE_KINDS and arch.mixer is not None:
        linear, small = arch.mixer.params(tp)
    elif kind in MIXER_FREE_KINDS:
        linear, small = 0, 0
    elif arch.shared_blocks is not None:
        # Zamba2: the attention is a shared block's (counted once); the layer adds its own parts.
        linear, small = arch.shared_blocks.layer_params(tp), 0
    else:
        linear, small = _attention_params(arch, tp, kind == FULL, layer)
    if arch.parallel_mixer and arch.mixer is not None and kind not in STATE_KINDS:
        mixer_linear, mixer_small = arch.mixer.params(tp)
        linear += mixer_linear
        small += mixer_small
    return linear, small


def _dense_mlp(arch: ModelArch, tp: int, index: int, tally: _Tally) -> None:
    """A layer's dense MLP: Gemma 4's beside the MoE block (every layer), or the layer's own."""
    hidden, matrices = arch.hidden_size, 3 if arch.gated_mlp else 2
    moe_layer = arch.moe is not None and index in arch.moe.moe_layer_set
    if arch.mlp_beside_moe:
        # Gemma 4: the dense MLP runs in every layer, twice as wide in the KV-shared ones.
        shared_kv = index >= arch.num_layers - arch.kv_shared_layers
        wide = 2 if arch.double_wide_shared_mlp and shared_kv else 1
        tally["dense_mlp"] += matrices * hidden * wide * arch.intermediate_size // tp
    elif not moe_layer:
        width = arch.mlp_widths[index] if arch.mlp_widths else arch.intermediate_size
        if not width:
            return
        tally["dense_mlp"] += matrices * hidden * width // tp
        if arch.mlp_bias:
            # TeleChat2 keeps down_proj's bias only (mlp_input_bias False).
            tally["small"] += (width // tp if arch.mlp_input_bias else 0) + hidden


def _moe_block(arch: ModelArch, tp: int, tally: _Tally) -> None:
    """A mixture-of-experts layer: routed and shared experts, the router and their biases."""
    moe, hidden = arch.moe, arch.hidden_size
    assert moe is not None
    matrices, width = moe.expert_matrices, moe.latent_size or hidden
    per_expert = matrices * width * moe.expert_intermediate_size // tp
    tally["experts"] += moe.num_experts * per_expert
    tally["experts_active"] += moe.experts_per_token * per_expert
    tally["shared_experts"] += matrices * hidden * moe.shared_intermediate_size // tp
    # Nemotron-H's latent projections, replicated on every rank (ReplicatedLinear).
    tally["shared_experts"] += 2 * hidden * moe.latent_size
    # LongCat's router scores its zero-computation experts too (they hold no weights).
    router = hidden * (moe.num_experts + moe.zero_experts)
    bias = moe.num_experts + moe.zero_experts if moe.router_bias else 0
    if arch.float32_router:  # HY-V4: gate and correction bias in float32
        tally["four_byte"] += router + bias
    else:
        tally["router"] += router
        tally["small"] += bias
    if moe.expert_bias:
        tally["small"] += moe.num_experts * (2 * moe.expert_intermediate_size + hidden) // tp
    if moe.shared_intermediate_size and arch.model_type in _SHARED_EXPERT_GATE_TYPES:
        tally["router"] += hidden  # the shared expert's sigmoid gate
    if arch.mlp_beside_moe:
        # Gemma 4's router scale and per-expert scale, and the block's three extra norms.
        tally["small"] += hidden + moe.num_experts + 3 * hidden


def _layer(arch: ModelArch, tp: int, index: int, tally: _Tally) -> None:
    """One decoder layer's parameters on one rank, added to `tally`."""
    kind = arch.layer_kinds[index]
    norms = arch.norms_per_layer
    if arch.mlp_widths:  # DeciLM: a norm before each part the layer has
        norms = (kind not in MIXER_FREE_KINDS) + (arch.mlp_widths[index] > 0)
    tally["small"] += norms * arch.hidden_size * (2 if arch.norm_bias else 1)
    linear, small = _mixer_params(arch, tp, kind, index)
    tally["attention"] += linear
    tally["small"] += small
    connections = arch.hyper_connections
    if connections is not None and connections.float32:
        tally["four_byte"] += connections.layer_params(arch.hidden_size)
    elif connections is not None:
        tally["small"] += connections.layer_params(arch.hidden_size)
    if arch.mla is not None and arch.attention_sinks:  # HY-V4: a float32 sink per head
        tally["four_byte"] += arch.num_attention_heads // tp
    if arch.altup is not None:
        linear, small = arch.altup.layer_params(tp)
        tally["dense_mlp"] += linear
        tally["small"] += small
    if arch.single_purpose_layers and kind not in MIXER_FREE_KINDS:
        return
    _dense_mlp(arch, tp, index, tally)
    if arch.moe is not None and index in arch.moe.moe_layer_set:
        _moe_block(arch, tp, tally)


def _family_parts(arch: ModelArch, tp: int, tally: _Tally) -> None:
    """K2-Horizon's MoVA, output gate and q/k norms, Step5's DSA indexers and router biases:
    their parameters by role on one rank, added to `tally`."""
    moe_layers = len(arch.moe.moe_layers) if arch.moe is not None else 0
    for parts in (arch.k2_horizon, arch.step5):
        if parts is not None:
            for part, count in parts.model_params(tp, arch.num_layers, moe_layers).items():
                tally[part] += count


def _per_layer_embeddings(arch: ModelArch, tp: int, tally: _Tally) -> int:
    """Gemma 4's per-layer embeddings: the table (split by vocabulary), returned; the projection
    of the hidden state into it and its norm, and per layer a gate, a projection back and a norm,
    added to `tally`."""
    width, layers, hidden = arch.per_layer_input_size, arch.num_layers, arch.hidden_size
    if not width:
        return 0
    tally["dense_mlp"] += hidden * layers * width // tp + layers * 2 * hidden * width
    tally["small"] += width + layers * hidden
    return -(-arch.per_layer_vocab_size // tp) * layers * width


# The counts of the last models asked about, by the (frozen) config object itself and the
# tensor-parallel size: a prediction asks for them many times per deployment (the answers'
# estimate predicts for every deployment of a question: 70 % of its time went here).
_COUNTED: dict[tuple[int, int], tuple[ModelArch, ParamCounts]] = {}
_COUNTED_MOST = 64


def param_counts(arch: ModelArch, tensor_parallel_size: int = 1) -> ParamCounts:
    """Parameter counts of the model, or of one rank's shard under tensor parallelism (worked
    out once per config object and size)."""
    key = (id(arch), tensor_parallel_size)
    counted = _COUNTED.get(key)
    if counted is not None and counted[0] is arch:
        return counted[1]
    counts = _param_counts(arch, tensor_parallel_size)
    if len(_COUNTED) >= _COUNTED_MOST:
        _COUNTED.clear()
    _COUNTED[key] = (arch, counts)
    return counts


def _param_counts(arch: ModelArch, tensor_parallel_size: int = 1) -> ParamCounts:
    """Parameter counts of the model, or of one rank's shard under tensor parallelism.

    Sharded: attention heads, MLP and expert widths, the vocabulary of embedding and lm_head.
    Replicated on every rank: norms, routers, MLA's down-projections, KV heads beyond their count.
    Multi-token-prediction layers (`num_nextn_predict_layers`) are not counted: vLLM loads them
    only as a speculative-decoding draft, and published totals leave them out.
    """
    tp = tensor_parallel_size
    if tp < 1:
        raise ConfigError(f"tensor_parallel_size: expected an integer >= 1, got {tp}")
    if arch.deepseek_v4 is not None:
        return _deepseek_v4_counts(arch, tp)
    if arch.zaya is not None:
        return ParamCounts(**zaya_parameters(arch.zaya, tp))
    if arch.domyn_edge is not None:
        return ParamCounts(**domyn_edge_parameters(arch.domyn_edge, tp))
    if arch.inkling is not None:
        # Its towers are plain nn.Linear and nn.Embedding modules: whole on every rank.
        return ParamCounts(**{**inkling_parameters(arch.inkling, tp), "vision": arch.vision_params})
    counts = _common_counts(arch, tp)
    if arch.minimax_m3 is not None:
        return _minimax_m3_counts(arch, tp, counts)
    return counts


def _common_counts(arch: ModelArch, tp: int) -> ParamCounts:
    """`_param_counts` of the families the common decoder describes."""
    hidden = arch.hidden_size
    vocab_per_rank = -(-arch.vocab_size // tp)
    tally = _tally()
    for index in range(arch.num_layers):
        _layer(arch, tp, index, tally)
    if arch.altup is not None:
        tally["dense_mlp"] += arch.altup.model_params(tp)
    ple_tables = 0
    if arch.qwen4_exp is not None:  # its PLE layers and QSA indexers
        ple_tables, qsa_linear, ple_linear, small = arch.qwen4_exp.model_params(tp)
        tally["attention"] += qsa_linear
        tally["dense_mlp"] += ple_linear
        tally["small"] += small
    _family_parts(arch, tp, tally)
    if arch.shared_blocks is not None:
        attention, mlp, small = arch.shared_blocks.block_params(tp)
        tally["attention"] += arch.shared_blocks.blocks * attention
        tally["dense_mlp"] += arch.shared_blocks.blocks * mlp
        tally["small"] += arch.shared_blocks.blocks * small
    if arch.loop_sliding_layers:
        # LoopCoder's gate projection per layer: head_dim -> one gate a head, with a bias.
        tally["attention"] += arch.num_layers * arch.head_dim * arch.num_attention_heads // tp
        tally["small"] += arch.num_layers * arch.num_attention_heads // tp
    if arch.hyper_connections is not None:  # the head that merges the streams
        head = arch.hyper_connections.head_params(hidden)
        tally["four_byte"] += head if arch.hyper_connections.float32 else 0
        tally["small"] += 0 if arch.hyper_connections.float32 else head
    tally["small"] += arch.scale_params
    if arch.norms_per_layer:  # the final norm (HRM-Text's norms, the final one too, are weightless)
        tally["small"] += hidden * (2 if arch.norm_bias else 1)
    embedding = vocab_per_rank * hidden + _per_layer_embeddings(arch, tp, tally) + ple_tables
    # GPT-2's learned positions (replicated); BLOOM's LayerNorm after the word embeddings.
    embedding += arch.position_embeddings * hidden
    ngram_tables, ngram_projections = arch.ngram_embedding
    embedding += -(-ngram_tables // tp) + ngram_projections
    if arch.embedding_norm:
        tally["small"] += hidden * (2 if arch.norm_bias else 1)
    if arch.lm_head_bias:
        tally["small"] += vocab_per_rank
    vision = _vision_params(arch.vision) if arch.vision is not None else arch.vision_params
    tally["embedding"] += embedding
    tally["lm_head"] += 0 if arch.tie_word_embeddings else vocab_per_rank * hidden
    tally["vision"] += vision // tp
    return ParamCounts(**tally)


def _minimax_m3_counts(arch: ModelArch, tp: int, counts: ParamCounts) -> ParamCounts:
    """MiniMax-M3 (calculators.minimax_m3): the common GQA MoE (its router in float32) plus the
    indexer's projections in the sparse layers' qkv_proj and their norms."""
    assert arch.minimax_m3 is not None
    linear, norms = indexer_parameters(arch.minimax_m3, tp)
    return replace(counts, attention=counts.attention + linear, small=counts.small + norms)


def _deepseek_v4_counts(arch: ModelArch, tp: int) -> ParamCounts:
    """DeepSeek-V4 (calculators.deepseek_v4): the attention's quantizable linears as `attention`,
    its compressors, the indexer's weights_proj and the norms as `small` (never quantized)."""
    assert arch.deepseek_v4 is not None
    rank = rank_parameters(arch.deepseek_v4, tp)
    return ParamCounts(
        embedding=rank.embedding,
        lm_head=rank.lm_head,
        attention=rank.linear,
        dense_mlp=0,
        experts=rank.experts,
        experts_active=rank.experts_active,
        shared_experts=rank.shared_experts,
        router=rank.router,
        small=rank.small,
        vision=0,
        four_byte=rank.four_byte,
    )
