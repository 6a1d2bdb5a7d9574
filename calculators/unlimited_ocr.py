"""Unlimited-OCR-2's language model (`UnlimitedOCR2TextForCausalLM`, first in vLLM 0.30.0's
`vllm/model_executor/models/unlimited_ocr.py`; read from 0.34.0's, with
`model_executor/layers/dash_attention.py` and `models/config.py`
`UnlimitedOCRForCausalLMConfig`): DeepSeek-OCR's DeepSeek-V2 MoE decoder with plain multi-head
attention (its text config is `DeepseekVLV2TextConfig`, model_type deepseek_v2, read as that
family), every layer's attention DASH when the wrapper's config.json carries a
`sparse_attention_config` (vLLM copies it onto the text config and requires DASH in every
layer and `sparse_index_dim` equal to the head size):
- `DashRouter`: q and k projections hidden -> sparse_index_dim (`nn.Linear`, so never
  quantized, replicated on every rank), their two norms and the `head_cls` vector;
- the layer's cache holds one KV head more per rank than the model's (`num_kv_heads + 1`: the
  router's keys and two metadata channels), a K and a V of head size a token;
- the cache is `RSWASpec` (R-SWA: the prompt stays, generated tokens beyond
  `sparse_local_block` x `sparse_block_size` are evicted while decoding); vLLM sizes it at
  startup as full attention (`FullAttentionSpec.max_memory_usage_bytes`), as planned here.
"""

from collections.abc import Mapping
from typing import Any

from infermeter.calculators.config_fields import int_field, optional_mapping
from infermeter.calculators.errors import ConfigError

DASH_NOTE = (
    "Unlimited-OCR-2: DeepSeek-OCR's MoE decoder with DASH attention in every layer (an "
    "unquantized router of two hidden -> sparse_index_dim projections a layer, one more KV head "
    "per rank in the cache); its R-SWA cache is sized as vLLM sizes it at startup, as full "
    "attention (decoding evicts generated tokens beyond the local window)"
)


def dash_config(config: Mapping[str, Any], where: str) -> Mapping[str, Any] | None:
    """The language model's DASH settings (`sparse_attention_config`), None when it has none."""
    sparse = optional_mapping(config, "sparse_attention_config", where)
    if sparse is None or not sparse.get("use_sparse_attention", True):
        return None
    return sparse


def dash_fields(config: Mapping[str, Any], sparse: Mapping[str, Any], where: str) -> dict[str, Any]:
    """`ModelArch` fields of DASH attention: the routers (replicated small tensors) and the
    cache's extra KV head per rank."""
    hidden = int_field(config, "hidden_size", where)
    layers = int_field(config, "num_hidden_layers", where)
    head_dim = hidden // int_field(config, "num_attention_heads", where)
    place = f"{where}sparse_attention_config."
    index_dim = int_field(sparse, "sparse_index_dim", place)
    if index_dim != head_dim:
        raise ConfigError(
            f"{place}sparse_index_dim: Unlimited-OCR-2 requires it equal to the head size "
            f"({head_dim}), got {index_dim}"
        )
    freq = sparse.get("sparse_attention_freq", [1] * layers)
    if freq != [1] * layers:
        raise ConfigError(
            f"{place}sparse_attention_freq: vLLM serves DASH only in every layer; expected "
            f"{layers} ones"
        )
    if config.get("kv_lora_rank"):
        raise ConfigError(
            f"{where}kv_lora_rank: DASH is multi-head attention; expected null (no MLA)"
        )
    return {
        "scale_params": layers * (2 * hidden * index_dim + 3 * index_dim),
        "extra_kv_heads_per_rank": 1,
    }


def unlimited_ocr2_fields(config: Mapping[str, Any], family: str, where: str) -> dict[str, Any]:
    """DASH's fields for a DeepSeek-V2 language model that declares it, else none."""
    sparse = dash_config(config, where) if family == "deepseek_v2" else None
    return {} if sparse is None else dash_fields(config, sparse, where)
