"""A model's architecture as the calculators see it: the language model's shape, its
mixture-of-experts, latent-attention, indexer and vision parts, and the kind of each layer.

`calculators.config_reader` builds a `ModelArch` from a `config.json`; `calculators.param_count`
counts its parameters.
"""

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from infermeter.calculators.hyper_connections import HyperConnections
from infermeter.calculators.lightning import LIGHTNING, LightningMixer
from infermeter.calculators.mamba2 import MAMBA2, MLP_ONLY, Mamba2Mixer
from infermeter.calculators.mixers import KDA, LINEAR_ATTENTION, MAMBA, SHORT_CONV, RecurrentMixer

if TYPE_CHECKING:
    from infermeter.calculators.gemma3n import AltUpLaurel
    from infermeter.calculators.k2_horizon import K2HorizonParts
    from infermeter.calculators.mistral_large4 import Large4Layers
    from infermeter.calculators.qwen4_exp import Qwen4ExpParts
    from infermeter.calculators.step5 import Step5Parts
    from infermeter.calculators.zamba2 import SharedBlocks

FULL = "full"
SLIDING = "sliding"
CHUNKED = "chunked"  # Llama 4's chunked local attention
# Layers with a per-sequence state instead of KV.
STATE_KINDS = (MAMBA, LINEAR_ATTENTION, MAMBA2, KDA, LIGHTNING, SHORT_CONV)
# Layers that mix tokens by attention or a state: the others (Nemotron-H's MLP layers) hold neither.
MIXER_FREE_KINDS = (MLP_ONLY,)


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
    # Matrices per expert: 3 for a gated MLP (gate, up, down), 2 for Nemotron-H's squared-ReLU
    # experts (up, down; vLLM's nemotron_h.py builds them with activation_without_mul).
    expert_matrices: int = 3
    # Nemotron-H's latent MoE (`moe_latent_size`): the routed experts work in this width, between
    # a hidden → latent and a latent → hidden projection replicated on every rank; 0 when none.
    latent_size: int = 0
    # LongCat-Flash's zero-computation experts (`zero_expert_num`): the router scores them with
    # the real ones, but they hold no weights (longcat_flash.py's LongcatRouter).
    zero_experts: int = 0

    @cached_property
    def moe_layer_set(self) -> frozenset[int]:
        """`moe_layers` as a set, made once: a loop over 10,000 layers that made one a layer
        took 10,000 x 10,000 steps."""
        return frozenset(self.moe_layers)


@dataclass(frozen=True)
class LatentAttention:
    """DeepSeek's multi-head latent attention: one compressed KV vector per token and layer."""

    kv_lora_rank: int
    q_lora_rank: int  # 0 when queries are projected directly
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int

    @property
    def qk_head_dim(self) -> int:
        """One query (and key) head's width: its part without rotary embedding and its rotary
        part."""
        return self.qk_nope_head_dim + self.qk_rope_head_dim

    @property
    def kv_latent_dim(self) -> int:
        """Values one token's latent KV vector holds per layer, what the cache keeps: the
        compressed KV and the key's rotary part (kv_a_proj_with_mqa's output width)."""
        return self.kv_lora_rank + self.qk_rope_head_dim


# Layers by index; None: every layer.
IndexerLayers = tuple[int, ...] | None


@dataclass(frozen=True)
class SparseIndexer:
    """DeepSeek-V3.2's lightning indexer: a small attention that picks the top-k tokens."""

    num_heads: int
    head_dim: int
    top_k: int
    # The layers that build their own indexer and hold its key cache (HY-V4's "full" ones; the
    # "shared" ones reuse their top-k; IndexCache's, calculators.index_cache); None: every layer.
    layers: IndexerLayers = None
    # The layers that run sparse attention (FlashMLA's sparse cache layout); None: every layer.
    sparse_layers: IndexerLayers = None
    # (first vLLM release, its `layers`) where releases build different ones, oldest first;
    # `layers` is the latest release's. Empty: the same in every release.
    layers_by_release: tuple[tuple[tuple[int, int], IndexerLayers], ...] = ()
    # Tokens one key of the indexer's cache stands for (GLM-5-Next's index_kpool, with pooling
    # weights of its own); 1: a key a token.
    tokens_per_key: int = 1

    def at_release(self, version: tuple[int, int]) -> "SparseIndexer":
        """The indexer vLLM release `version` builds (itself where it is the same)."""
        chosen = self.layers
        for since, layers in self.layers_by_release:
            if version >= since:
                chosen = layers
        return self if chosen == self.layers else replace(self, layers=chosen)

    def count(self, num_layers: int) -> tuple[int, int]:
        """(layers with their own indexer, layers with sparse attention) of `num_layers`."""
        own = num_layers if self.layers is None else len(self.layers)
        sparse = num_layers if self.sparse_layers is None else len(self.sparse_layers)
        return own, sparse

    def has_own(self, layer: int | None) -> bool:
        """Whether layer `layer` builds its own indexer (every layer when it is None)."""
        return self.layers is None or layer is None or layer in self.layers


@dataclass(frozen=True)
class AttentionShape:
    """The attention of one kind of layer where it differs from the config's main heads (MiMo-V2's
    sliding-window layers: `swa_num_attention_heads`, `swa_num_key_value_heads`, ...)."""

    heads: int
    kv_heads: int
    head_dim: int
    v_head_dim: int
    sinks: bool = False  # a learned sink logit per head


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
class VisionEncoder:
    """What the profiling run's encoder pass needs of a vision tower (`calculators.mm_profile`):
    its hidden width, its MLP's width and kind, the largest item the processor makes."""

    family: str
    width: int
    mlp_width: int
    gated_mlp: bool
    pixel_values_per_patch: int  # channels x temporal patch x patch x patch
    patches_per_token: int  # spatial_merge_size squared
    max_tokens_per_item: int
    out_width: int  # the merger's output, the language model's width


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
    layer_kinds: tuple[str, ...]  # FULL, SLIDING, CHUNKED, MLP_ONLY or a STATE_KINDS kind
    sliding_window: int | None
    max_position_embeddings: int | None
    torch_dtype: str
    moe: MixtureOfExperts | None
    mla: LatentAttention | None
    vision: VisionTower | None
    attention_sinks: bool
    quantization_config: Mapping[str, Any] | None
    rope_scaling: Mapping[str, Any] | None
    # The layers of a STATE_KINDS kind.
    mixer: RecurrentMixer | Mamba2Mixer | LightningMixer | None = None
    attention_chunk_size: int | None = None
    # The length vLLM derives from the config's length keys (config_reader.derived_max_len):
    # the smallest of them, `model_max_length` over all; None: max_position_embeddings alone.
    derived_max_len: int | None = None
    attention_output_gate: bool = False  # Qwen3-Next: q_proj also emits a per-head gate
    indexer: SparseIndexer | None = None
    mtp_layers: int = 0  # multi-token-prediction layers the checkpoint ships; vLLM skips them
    gated_mlp: bool = True  # gate, up and down projections (SwiGLU); False: up and down only
    mlp_bias: bool = False  # biases on the dense MLP's projections
    mlp_input_bias: bool = True  # False: the output projection's bias only (TeleChat2)
    norm_bias: bool = False  # LayerNorm with a bias (weight and bias per norm)
    lm_head_bias: bool = False
    # GPT-2's learned position embeddings (wpe: one row per position, replicated on every rank)
    # and BLOOM's LayerNorm after the word embeddings (bloom.py's word_embeddings_layernorm).
    position_embeddings: int = 0
    embedding_norm: bool = False
    # LongCat-Flash n-gram's hashed n-gram tables (split by rows over the ranks) and their
    # projections to hidden_size (replicated): values each (config_aliases.ngram_embedding).
    ngram_embedding: tuple[int, int] = (0, 0)
    # DeciLM (nemotron_nas.py): each layer's MLP width, 0 where it has none; (): every layer's
    # is intermediate_size. A layer's norms then follow its parts (one before attention, one
    # before the MLP).
    mlp_widths: tuple[int, ...] = ()
    # IQuest LoopCoder (iquest_loopcoder.py): the layers run `loop_num` times; every loop after
    # the first adds to each layer an attention with its own cache of at most `loop_window`
    # tokens (loop_window_size), and a per-head gate projection. 0: no such layers.
    loop_sliding_layers: int = 0
    loop_window: int = 0
    # HRM-Text (hrm_text.py): full-attention caches beyond one a layer, its stacks' layers run
    # again with the same weights and a cache of their own each run.
    extra_full_caches: int = 0
    # Sliding-window caches of `sliding_window` tokens beyond one a sliding layer (Dory's
    # recurrent layers: one a loop, calculators.dory).
    extra_sliding_caches: int = 0
    # Replicated scales beside the norms and biases, counted as small tensors (Dory's nGPT
    # scales and logit scale, AliceAI's attention-residual vectors).
    scale_params: int = 0
    # Hidden states a forward pass keeps per batched token beside the residual stream (AliceAI's
    # AttnRes bank: one per block of layers, calculators.alice_ai).
    residual_bank_states: int = 0
    # KV heads a rank's cache holds beyond the model's (Unlimited-OCR-2's DASH: one for the
    # router's keys and metadata, calculators.unlimited_ocr).
    extra_kv_heads_per_rank: int = 0
    # The largest tensor-parallel size vLLM accepts (Dory: 1); 0: no limit of its own.
    max_tensor_parallel: int = 0
    # False: no rotary embedding, so no cos/sin cache (GPT-2's learned positions, BLOOM's ALiBi).
    rotary: bool = True
    # Step 3's attention (step3_text.py): one replicated projection to a shared query of this
    # width plus one KV head, an RMSNorm, then the per-head query projection (wq); 0 when none.
    shared_q_dim: int = 0
    # A vision tower counted by `calculators.vision` (Qwen-VL, Pixtral, generic ViT): its
    # parameters, tower and projector together; SigLIP towers are `vision` instead.
    vision_params: int = 0
    # The tower's shape for the profiling run's encoder pass (Qwen2-VL, Qwen2.5-VL); None when
    # that pass is not modelled for the family.
    vision_encoder: VisionEncoder | None = None
    # What the reader assumed, shown in every plan's notes (a model type read generically, a
    # vision tower counted as a generic ViT).
    reading_notes: tuple[str, ...] = ()
    # Nemotron-H: a layer is a mixer (attention, Mamba-2) or an MLP, never both; only the
    # MLP_ONLY layers hold an MLP.
    single_purpose_layers: bool = False
    # Falcon-H1: every layer runs attention and a Mamba-2 mixer side by side, so each holds KV
    # and a per-sequence state.
    parallel_mixer: bool = False
    # Gemma 4 (vLLM's gemma4.py): full-attention layers with their own head size and KV heads
    # (None: as the sliding layers); the last `kv_shared_layers` layers reuse an earlier layer's
    # KV; a dense MLP in every layer with the MoE block beside it; per-layer embeddings (PLE).
    global_head_dim: int | None = None
    global_kv_heads: int | None = None
    kv_shared_layers: int = 0
    mlp_beside_moe: bool = False
    double_wide_shared_mlp: bool = False
    per_layer_input_size: int = 0
    per_layer_vocab_size: int = 0
    # Zamba2: transformer blocks whose weights its attention layers share (calculators.zamba2).
    shared_blocks: "SharedBlocks | None" = None
    # Values narrower than keys (MiMo-V2: `v_head_dim`); 0: head_dim.
    v_head_dim: int = 0
    # Sliding-window layers with heads of their own (MiMo-V2); None: the main heads.
    sliding_attention: AttentionShape | None = None
    # Query heads of each layer where they differ (Laguna-XS); (): num_attention_heads.
    heads_per_layer: tuple[int, ...] = ()
    # Laguna's sigmoid output gate: "head" (one a head), "element" (one a query channel) or "".
    attention_gate: str = ""
    # Gemma 3n's AltUp and LAuReL blocks (calculators.gemma3n).
    altup: "AltUpLaurel | None" = None
    # DeepSeek-V4 (calculators.deepseek_v4): its language config, which the parameter count and
    # the vLLM plan's packed KV groups read; None for every other family.
    deepseek_v4: Mapping[str, Any] | None = None
    # Copies of the residual stream with float32 gates around each sub-block (HY-V4's
    # hyper-connections, calculators.hyper_connections); None: one residual stream.
    hyper_connections: HyperConnections | None = None
    # Mistral Large 4's per-layer NoPE, KV-source and indexer choices (calculators.mistral_large4).
    mistral_large4: "Large4Layers | None" = None
    # The KV cache dtype vLLM picks for "auto" where the config declares one (Mistral Large 4's
    # fp8_kv_cache); "": the model dtype.
    default_kv_cache_dtype: str = ""
    # Beam's output gate: a bias per head beside its projection (calculators.beam).
    attention_gate_bias: bool = False
    # A float32 router and correction bias (HY-V4's moe.py); False: the model dtype.
    float32_router: bool = False
    # Qwen4-Exp's per-layer embeddings and QSA indexers (calculators.qwen4_exp).
    qwen4_exp: "Qwen4ExpParts | None" = None
    # K2-Horizon's MoVA value experts, output gate and whole-width q/k norms
    # (calculators.k2_horizon).
    k2_horizon: "K2HorizonParts | None" = None
    # Step5's DSA indexers, their FP8 summaries and router biases (calculators.step5).
    step5: "Step5Parts | None" = None
    # MiniMax-M3 (calculators.minimax_m3) and Inkling (calculators.inkling): their language
    # configs, as read, which their caches (calculators.layer_caches) and parameters read.
    minimax_m3: Mapping[str, Any] | None = None
    # DomynEdge (calculators.domyn_edge): its config with its per-layer head sizes and windows.
    domyn_edge: Mapping[str, Any] | None = None
    # ZAYA1 (calculators.zaya): its config, which its parameters and caches read.
    zaya: Mapping[str, Any] | None = None
    inkling: Mapping[str, Any] | None = None

    def at_release(self, version: tuple[int, int]) -> "ModelArch":
        """The model as vLLM release `version` builds it: IndexCache's indexers appear on every
        layer before 0.24 (calculators.index_cache). Itself where nothing differs, so that the
        parameter counts worked out for it are reused."""
        if self.indexer is None:
            return self
        indexer = self.indexer.at_release(version)
        return self if indexer is self.indexer else replace(self, indexer=indexer)

    def attention_shape(self, full: bool, layer: int | None = None) -> AttentionShape:
        """The heads of a full-attention (`full`) or other layer (of index `layer`): Gemma 4
        gives its full-attention layers their own head size and KV heads, MiMo-V2 its
        sliding-window layers their own heads, Laguna-XS each layer its query heads."""
        heads = self.num_attention_heads
        if layer is not None and self.heads_per_layer:
            heads = self.heads_per_layer[layer]
        if not full and self.sliding_attention is not None:
            if layer is not None and self.heads_per_layer:
                return replace(self.sliding_attention, heads=heads)
            return self.sliding_attention
        head_dim = self.global_head_dim if full and self.global_head_dim else self.head_dim
        kv_heads = self.global_kv_heads if full and self.global_kv_heads else self.num_kv_heads
        return AttentionShape(
            heads,
            kv_heads,
            head_dim,
            self.v_head_dim or head_dim,
            self.attention_sinks,
        )

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
        if self.parallel_mixer:  # a mixer in every layer, beside its attention if it has one
            return self.num_layers
        return sum(1 for kind in self.layer_kinds if kind in STATE_KINDS)
