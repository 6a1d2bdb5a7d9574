"""DeciLM / Llama-Nemotron NAS (`model_type` nemotron-nas): a block config per layer.

As vLLM 0.29 builds it (vllm/model_executor/models/nemotron_nas.py, `DeciLMDecoderLayer`), each
entry of `block_configs` has
- an attention part: `no_op` (no attention, no KV cache, no input norm) or Llama's attention
  with num_attention_heads // `n_heads_in_group` KV heads;
- an FFN part: `no_op` (no MLP, no post-attention norm) or Llama's gated MLP of
  `intermediate_size`, or of `_ffn_mult_to_intermediate_size(ffn_mult, hidden_size)`:
  int(2 x ffn_mult x hidden_size / 3) rounded up to a multiple of 256.
vLLM's module builds no `replace_with_linear` part, and a KV head count that differs between
layers is not modelled here (each layer's KV cache would differ): both are refused by name.
"""

from collections.abc import Mapping
from typing import Any

from infermeter.calculators.config_fields import int_field
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.mamba2 import MLP_ONLY
from infermeter.calculators.model_arch import FULL

DECILM = "nemotron-nas"


def _ffn_width(ffn: Mapping[str, Any], hidden: int, where: str) -> int:
    if ffn.get("no_op"):
        return 0
    if ffn.get("ffn_mult") is not None:
        mult = ffn["ffn_mult"]
        if isinstance(mult, bool) or not isinstance(mult, (int, float)) or mult <= 0:
            raise ConfigError(f"{where}ffn_mult: expected a number > 0, got {mult!r}")
        width = int(2 * mult * hidden / 3)
        return width if width % 256 == 0 else width + 256 - width % 256
    return int_field(ffn, "intermediate_size", where)


def _blocks(config: Mapping[str, Any], num_layers: int) -> list[tuple[int | None, int]]:
    """Each layer's (n_heads_in_group, None without attention; MLP width, 0 without)."""
    blocks = config.get("block_configs")
    if not isinstance(blocks, list) or len(blocks) != num_layers:
        raise ConfigError(
            f"block_configs: expected {num_layers} block configs (num_hidden_layers), one a layer"
        )
    hidden = int_field(config, "hidden_size", "")
    read: list[tuple[int | None, int]] = []
    for index, block in enumerate(blocks):
        where = f"block_configs[{index}]."
        attention, ffn = (block or {}).get("attention") or {}, (block or {}).get("ffn") or {}
        for part, name in ((attention, "attention"), (ffn, "ffn")):
            if part.get("replace_with_linear"):
                raise ConfigError(
                    f"{where}{name}.replace_with_linear: a linear replacement of the block, "
                    "which vLLM's nemotron_nas.py does not build"
                )
        group = (
            None
            if attention.get("no_op")
            else int_field(attention, "n_heads_in_group", f"{where}attention.")
        )
        read.append((group, _ffn_width(ffn, hidden, f"{where}ffn.")))
    return read


def decilm_shape(merged: dict[str, Any]) -> None:
    """The uniform fields the rest of the reader takes: the KV heads of the attention layers and
    the widest MLP (vLLM's activation peak); the per-layer parts are `decilm_fields`'."""
    layers = merged.get("num_hidden_layers")
    if not isinstance(layers, int) or "hidden_size" not in merged:
        return
    blocks = _blocks(merged, layers)
    groups = {group for group, _ in blocks if group is not None}
    if len(groups) > 1:
        present = [(i, group) for i, (group, _) in enumerate(blocks) if group is not None]
        index = next(i for i, group in present if group != present[0][1])
        raise ConfigError(
            f"block_configs[{index}].attention.n_heads_in_group: KV heads that differ between "
            "layers are not modelled"
        )
    if groups:
        merged["num_key_value_heads"] = int_field(merged, "num_attention_heads", "") // min(groups)
    merged["intermediate_size"] = max(width for _, width in blocks)


def decilm_layers(config: Mapping[str, Any], num_layers: int) -> tuple[list[bool], tuple[int, ...]]:
    """(whether each layer has attention, each layer's MLP width)."""
    blocks = _blocks(config, num_layers)
    return [group is not None for group, _ in blocks], tuple(width for _, width in blocks)


def decilm_layer_kinds(config: Mapping[str, Any], num_layers: int, where: str) -> list[str]:
    """Full attention where the block has attention, else an MLP-only layer (no KV cache)."""
    attention, _ = decilm_layers(config, num_layers)
    return [FULL if present else MLP_ONLY for present in attention]
