"""Beam (`model_type` beam) as vLLM serves it: added in 0.33.0, memory-wise unchanged in 0.34.0
(`vllm/models/beam/nvidia`: `model.py`, `attention.py`, `moe.py`; `BeamConfig`,
`vllm/transformers_utils/configs/beam.py`, gives the defaults a config.json may omit).

A grouped-query MoE decoder whose layers `layer_types` marks "sliding_attention" (RoPE, a window
of `sliding_window` tokens) or "full_attention" (NoPE with SSMax query scaling: no weights, no
rotary table); `BeamConfig` makes every layer sliding when the list is absent. What it adds to
the common decoder, per layer:
- a sigmoid output gate per query channel (`output_gate_proj`, hidden -> heads x head_dim,
  split by heads, fused into `qkv_gate_proj` when the KV heads divide among the ranks: the same
  shards) and a `gate_bias` per head, split by heads;
- per-head q/k RMSNorms and four RMSNorms (sandwich norm);
- `mlp_layer_types` "dense" (a SwiGLU MLP of `intermediate_size`) or "sparse" (`BeamConfig`'s
  default for every layer): routed experts without shared ones, behind a float32 router
  (`GateLinear` with params_dtype float32) and a float32 `e_score_correction_bias`.
The LM head is never tied (vLLM refuses tie_word_embeddings). Neither short convolutions nor
shared KV are in the served model: those are the DFlash2 draft model's (`dflash2.py`, a
speculative-decoding drafter registered apart), which a plan without speculation does not load.
"""

from collections.abc import Mapping
from typing import Any

from infermeter.calculators.errors import ConfigError

# vLLM's BeamConfig defaults (0.33.0 = 0.34.0), those a count or a cache reads; `head_dim` None
# means hidden_size / num_attention_heads, as the reader's own default.
BEAM_DEFAULTS: dict[str, Any] = {
    "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144,
    "num_hidden_layers": 24, "num_attention_heads": 32, "num_key_value_heads": 4,
    "max_position_embeddings": 32768, "tie_word_embeddings": False, "sliding_window": 4096,
    "moe_intermediate_size": 768, "num_experts_per_tok": 8, "num_experts": 128,
}  # fmt: skip
BEAM_NOTE = (
    "Beam: the served model only (the DFlash2 drafter is not counted); its MNNVL all-reduce "
    "workspace at TP 2, 4 or 8 on SM90/SM100 with NVLink multicast (3 buffers of about "
    "2 x max_num_batched_tokens x hidden_size x 2 bytes a GPU, outside torch's allocator) is "
    "not in the plan"
)


def beam_fields(config: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """`ModelArch` fields of a beam config beyond the common decoder's."""
    if config.get("tie_word_embeddings"):
        raise ConfigError(
            f"{where}tie_word_embeddings: vLLM's Beam requires false (it builds its own lm_head)"
        )
    return {"attention_gate_bias": True, "float32_router": True}
