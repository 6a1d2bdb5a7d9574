"""Parameter counts of a `ModelArch`, by the role of each tensor, for the whole model or one
tensor-parallel rank's shard."""

from dataclasses import dataclass

from calculators.errors import ConfigError
from calculators.model_arch import FULL, MIXER_FREE_KINDS, STATE_KINDS, ModelArch, VisionTower

# Model types whose MoE layers gate the shared expert with a learned sigmoid (hidden → 1).
_SHARED_EXPERT_GATE_TYPES = {"qwen2_moe", "qwen3_next", "qwen3_5_moe_text"}


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


def _attention_params(arch: ModelArch, tp: int, full: bool = False) -> tuple[int, int]:
    """(linear weights, small tensors) of one layer's attention on one of `tp` ranks; `full`:
    a full-attention layer, which Gemma 4 gives its own head size and KV heads."""
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
    head_dim = arch.global_head_dim if full and arch.global_head_dim else arch.head_dim
    kv_heads = arch.global_kv_heads if full and arch.global_kv_heads else arch.num_kv_heads
    # KV heads are split across ranks; with more ranks than KV heads each rank keeps a copy.
    kv_heads_per_rank = max(1, kv_heads // tp)
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
        kind = arch.layer_kinds[index]
        small += arch.norms_per_layer * hidden * norm_tensors
        if kind in STATE_KINDS and arch.mixer is not None:
            linear, attention_small = arch.mixer.params(tp)
        elif kind in MIXER_FREE_KINDS:
            linear, attention_small = 0, 0
        else:
            linear, attention_small = _attention_params(arch, tp, kind == FULL)
        if arch.parallel_mixer and arch.mixer is not None:
            mixer_linear, mixer_small = arch.mixer.params(tp)
            linear += mixer_linear
            attention_small += mixer_small
        attention += linear
        small += attention_small
        if arch.single_purpose_layers and kind not in MIXER_FREE_KINDS:
            continue
        if arch.mlp_beside_moe:
            # Gemma 4: the dense MLP runs in every layer, twice as wide in the KV-shared ones.
            wide = (
                2
                if arch.double_wide_shared_mlp and index >= arch.num_layers - arch.kv_shared_layers
                else 1
            )
            dense_mlp += mlp_matrices * hidden * wide * arch.intermediate_size // tp
        if moe is None or index not in moe_layers:
            if arch.mlp_beside_moe:
                continue
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
        if arch.mlp_beside_moe:
            # Gemma 4's router scale and per-expert scale, and the block's three extra norms.
            small += hidden + moe.num_experts + 3 * hidden
    small += hidden * norm_tensors  # final norm
    if arch.per_layer_input_size:
        # Gemma 4's per-layer embeddings: the table (split by vocabulary), the projection of the
        # hidden state into it and its norm; per layer a gate, a projection back and a norm.
        width = arch.per_layer_input_size
        embedding += -(-arch.per_layer_vocab_size // tp) * arch.num_layers * width
        dense_mlp += hidden * arch.num_layers * width // tp + arch.num_layers * 2 * hidden * width
        small += width + arch.num_layers * hidden
    if arch.lm_head_bias:
        small += vocab_per_rank
    vision = _vision_params(arch.vision) if arch.vision is not None else arch.vision_params
    vision //= tp
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
