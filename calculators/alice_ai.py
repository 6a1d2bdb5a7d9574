"""AliceAI (`model_type` alice_ai) as vLLM serves it from 0.33.0 to 0.34.0
(`vllm/model_executor/models/alice_ai.py`, first in the 0.33.0 sdist; the same file in 0.34.0):
Qwen3-Next's layer pattern with Kimi Delta Attention in place of Gated DeltaNet.
- `layer_types` (or every `full_attention_interval`-th layer) names the layers: a
  "linear_attention" layer is KDA (`KimiGatedDeltaNetAttention` with `linear_num_key_heads`
  heads of `linear_key_head_dim`, which must equal the value heads and size, low-rank gates,
  `linear_conv_kernel_dim`; its state as Kimi Linear's, `calculators.kda.kda_layer`), a
  "full_attention" layer Qwen3-Next's gated attention with q/k norms (`Qwen3NextAttention`);
- every layer is a sparse MoE block (`AliceAISparseMoeBlock`: sigmoid router with a float32
  correction bias, a shared expert with its sigmoid gate), whatever `mlp_only_layers` says;
- attention residuals (AttnRes) over blocks of `block_attn_res_block_size` layers: each layer
  but the first projects hidden -> 1 and keeps an RMSNorm weight before its attention, every
  layer does before its MLP, and the final mixer once more (`_AttentionResidualFinal`): four
  replicated vectors of hidden a layer in all, in the model dtype, never quantized (their
  `ReplicatedLinear` output is one row: no quantization method takes it);
- the MTP layers a checkpoint ships (`mtp_num_hidden_layers`) are dropped on load
  (`hf_to_vllm_mapper`: "mtp." -> None; config.py warns that MTP is unavailable).
The forward pass keeps a residual bank of ceil(layers / block) hidden states per batched token
(`AliceAIModel._init_residual_bank`), added to the profiling run's activation peak (its fitted
factor applies to it as to the rest). Pipeline parallelism is refused by vLLM
(`AliceAIForCausalLMConfig`), as is `kda_allow_negative_eigenvalues`.
"""

from collections.abc import Mapping
from typing import Any

from infermeter.calculators.config_fields import int_field, optional_int
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.kda import kda_layer
from infermeter.calculators.mixers import RecurrentMixer

# AliceAIConfig's own defaults over Qwen3NextConfig's (vllm-project/vllm
# vllm/transformers_utils/configs/alice_ai.py at e179c78, after 0.34.0; in 0.34.0 the checkpoint
# brings its configuration_alice_ai.py): the fields that change a count or a cache.
ALICE_AI_DEFAULTS: dict[str, Any] = {
    "vocab_size": 129024,
    "linear_num_key_heads": 32,
    "block_attn_res_block_size": 4,
    "mtp_num_hidden_layers": 1,
}
ALICE_AI_NOTE = (
    "AliceAI: Qwen3-Next's layer pattern with Kimi Delta Attention layers, a MoE block in every "
    "layer and attention-residual vectors (4 x hidden a layer, model dtype); its MTP layers are "
    "not loaded by vLLM 0.33-0.34; the AttnRes residual bank (ceil(layers / "
    "block_attn_res_block_size) hidden states per batched token) is added to the activation "
    "peak"
)


def alice_ai_mixer(config: Mapping[str, Any], hidden: int, where: str) -> RecurrentMixer:
    """The KDA layers, as `_make_kimi_kda_config` adapts the flat config for Kimi's layer."""
    heads = int_field(config, "linear_num_key_heads", where)
    head_dim = int_field(config, "linear_key_head_dim", where)
    if (heads, head_dim) != (
        int_field(config, "linear_num_value_heads", where),
        int_field(config, "linear_value_head_dim", where),
    ):
        raise ConfigError(
            f"{where}linear_num_value_heads/linear_value_head_dim: AliceAI's KDA requires them "
            f"equal to the key heads and size ({heads} x {head_dim})"
        )
    if heads == 0 or head_dim == 0:
        raise ConfigError(f"{where}linear_num_key_heads/linear_key_head_dim: must be > 0")
    return kda_layer(hidden, heads, head_dim, int_field(config, "linear_conv_kernel_dim", where))


def check_alice_ai(config: Mapping[str, Any], where: str) -> None:
    """Refuse what vLLM 0.34's AliceAI refuses, and dense layers it would not build."""
    if optional_int(config, "block_attn_res_block_size", where, 0) <= 0:
        raise ConfigError(f"{where}block_attn_res_block_size: AliceAI requires a positive integer")
    if config.get("kda_allow_negative_eigenvalues"):
        raise ConfigError(
            f"{where}kda_allow_negative_eigenvalues: vLLM serves AliceAI only with false"
        )
    if config.get("mlp_only_layers") or optional_int(config, "decoder_sparse_step", where, 1) > 1:
        raise ConfigError(
            f"{where}mlp_only_layers/decoder_sparse_step: vLLM's alice_ai.py builds a MoE block "
            "in every layer; expected no dense layers"
        )
    if optional_int(config, "num_experts", where, 0) <= 1:
        raise ConfigError(f"{where}num_experts: AliceAI requires sparse experts (> 1)")


def alice_ai_fields(config: Mapping[str, Any]) -> dict[str, Any]:
    """The AttnRes parameters, replicated small tensors: a projection to one score and a norm
    weight before each layer's attention (not the first layer's) and MLP, and in the final
    mixer (checked by `check_alice_ai` before)."""
    hidden, layers = config["hidden_size"], config["num_hidden_layers"]
    blocks = -(-layers // config["block_attn_res_block_size"])  # _init_residual_bank
    return {
        "scale_params": 2 * hidden * ((layers - 1) + layers + 1),
        "residual_bank_states": blocks,
    }
