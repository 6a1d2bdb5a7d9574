"""LFM3 (`model_type` lfm3) as vLLM serves it: added in 0.34.0
(`vllm/model_executor/models/lfm3.py`; `Lfm3Config`, `vllm/transformers_utils/configs/lfm3.py`,
gives the defaults a config.json may omit).

A hybrid whose layers `layer_types` marks "full_attention", "sliding_attention" (a window of
`sliding_window` tokens) or "conv"; without the list `Lfm3Config` makes layer i full attention
where i % 4 == 2, sliding where i % 4 == 0 and i > 0, and a short convolution elsewhere. Per
layer, on a rank:
- an attention layer: q/k/v and o_proj split by heads (no biases), per-head q/k RMSNorms and,
  with `use_attention_gate`, a sigmoid gate per head (`gate_proj` hidden -> heads, split);
- a "conv" layer: vLLM's `ShortConv` (`calculators.mixers`, kind SHORT_CONV), whose state (the
  last `conv_L_cache` - 1 inputs of hidden_size / TP channels in the model dtype,
  `short_conv_state_shape`) vLLM keeps per sequence as a Mamba state (MambaSpec);
- in every layer a SwiGLU MLP of `intermediate_size` (w13, w2), two RMSNorms, four with
  `use_sandwich_norm`.
The embeddings are tied by default, and the final RMSNorm is `embedding_norm`.
"""

from collections.abc import Mapping
from typing import Any

from infermeter.calculators.mixers import SHORT_CONV, listed_layer_kinds
from infermeter.calculators.model_arch import FULL, SLIDING

# vLLM's Lfm3Config defaults (0.34.0), those a count or a cache reads.
LFM3_DEFAULTS: dict[str, Any] = {
    "vocab_size": 128000, "hidden_size": 2048, "intermediate_size": 7680,
    "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 4,
    "max_position_embeddings": 128000, "tie_word_embeddings": True, "conv_bias": False,
    "conv_L_cache": 7, "head_dim": 128, "sliding_window": 256, "use_sandwich_norm": True,
    "use_attention_gate": True,
}  # fmt: skip
_KINDS = {"full_attention": FULL, "sliding_attention": SLIDING, "conv": SHORT_CONV}


def lfm3_layer_kinds(config: Mapping[str, Any], num_layers: int, where: str) -> list[str]:
    """Each layer's kind: `layer_types`, or `Lfm3Config`'s pattern where the config omits it."""
    if config.get("layer_types") is None:
        return [
            FULL if i % 4 == 2 else SLIDING if i % 4 == 0 and i > 0 else SHORT_CONV
            for i in range(num_layers)
        ]
    refusal = "expected 'full_attention', 'sliding_attention' or 'conv', got {0!r}"
    return listed_layer_kinds(
        config, "layer_types", num_layers, where, sequence=list, kinds=_KINDS, refusal=refusal
    )


def lfm3_fields(config: Mapping[str, Any]) -> dict[str, Any]:
    """`ModelArch` fields of an lfm3 config beyond the common decoder's (its q/k norms and
    sandwich norms are `config_reader`'s block flags)."""
    return {"attention_gate": "head" if config.get("use_attention_gate", True) else ""}
