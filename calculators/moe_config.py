"""A config's mixture-of-experts part: experts, shared experts, which layers are sparse, and the
refusal of an expert/MoE/router key the calculators do not read."""

from collections.abc import Mapping
from typing import Any

from infermeter.calculators.config_aliases import alias_keys
from infermeter.calculators.config_fields import int_field, optional_int
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.mixers import jamba_moe_layers
from infermeter.calculators.model_arch import MixtureOfExperts

# Config keys about experts and routing that the calculators read (the rest of the key names
# below only steer routing and change no tensor shape). An expert/MoE/router key outside both
# sets is an error naming it, because it may change how many parameters there are.
_MOE_KEYS_READ = frozenset(
    {
        "num_local_experts", "n_routed_experts", "num_experts", "num_experts_per_tok",
        "experts_per_token", "moe_intermediate_size", "n_shared_experts",
        "shared_expert_intermediate_size", "first_k_dense_replace", "moe_layer_freq",
        "decoder_sparse_step", "mlp_only_layers", "interleave_moe_layer_step",
        "expert_layer_period", "expert_layer_offset", "moe_layers", "top_k_experts",
        "enable_moe_block", "expert_intermediate_size", "use_second_mlp_block",
        "share_expert_dim", "num_shared_experts",
    }
)  # fmt: skip
_MOE_KEYS_ROUTING_ONLY = frozenset(
    {
        "router_aux_loss_coef", "output_router_logits", "router_jitter_noise", "norm_topk_prob",
        "routed_scaling_factor", "scoring_func", "topk_method", "n_group", "topk_group",
        "moe_router_enable_expert_bias", "router_z_loss_coef", "aux_loss_alpha",
        "seq_aux", "use_expert_bias", "router_dtype", "num_experts_offload",
        "moe_router_dtype", "moe_apply_router_weight_on_input", "expert_selection_fn",
        "router_enable_expert_bias",
        # Flint's sigmoid or softmax top-k (vLLM 0.34.0 vllm/models/flint/model.py scoring_func).
        "router_score_function",
    }
)  # fmt: skip


# Keys read for one model type only (`read_moe`, or under another name: config_aliases), and
# routing settings of those types: Nemotron-H's shared-expert width and latent MoE.
_MOE_KEYS_READ_BY_TYPE = {
    "nemotron_h": frozenset({"moe_shared_expert_intermediate_size", "moe_latent_size"}),
    # Ling (bailing_moe.py), Param2 (param2moe.py), Sarvam (sarvam.py): shared-expert width.
    "bailing_moe": frozenset({"moe_shared_expert_intermediate_size"}),
    "bailing_moe_linear": frozenset({"moe_shared_expert_intermediate_size"}),
    # BailingMoeV3 (bailing_moe_v3.py): and clamps on the experts' SwiGLU (no weights).
    "bailing_moe_v3": frozenset(
        {
            "moe_shared_expert_intermediate_size",
            "expert_swiglu_limit_list",
            "share_expert_swiglu_limit_list",
        }
    ),
    "param2moe": frozenset({"moe_shared_expert_intermediate_size"}),
    "sarvam_mla": frozenset({"moe_shared_expert_intermediate_size"}),
    # ERNIE 4.5 (ernie45_moe.py): which layers hold experts; the rest steer routing.
    "ernie4_5_moe": frozenset(
        {
            "moe_layer_start_index", "moe_layer_end_index", "moe_layer_interval", "moe_norm_min",
            "moe_capacity", "moe_gate", "moe_use_aux_free", "moe_use_hard_gate",
            "moe_gate_act", "moe_aux_loss_lambda", "moe_group",
            "moe_multimodal_dispatch_use_allgather",
        }
    ),
    # HY-V3 (hy_v3.py): routing and combine settings.
    "hy_v3": frozenset(
        {"moe_router_use_sigmoid", "enable_moe_fp32_combine", "router_scaling_factor"}
    ),
    # LongCat-Flash (longcat_flash.py): zero-computation experts and their routing.
    "longcat_flash": frozenset(
        {"zero_expert_num", "zero_expert_type", "nextn_use_scmoe", "router_bias"}
    ),
    # Step 3 / 3.5 (step3_text.py, step3p5.py): the list of MoE layers, routing settings.
    "step3_text": frozenset({"moe_layers_enum", "norm_expert_weight"}),
    "step3p5": frozenset(
        {"moe_layers_enum", "norm_expert_weight", "use_moe_router_bias",
         "moe_router_scaling_factor", "moe_router_activation", "need_fp32_gate", "use_moe",
         "moe_every_n_layer", "moe_layer_offset"}
    ),
    # Cohere2-MoE (cohere2_moe.py): how the shared expert's output is combined (sum, average).
    "cohere2_moe": frozenset({"shared_expert_combination_strategy"}),
    # Kimi Linear: its name for experts per token (an alias, config_reader) and routing
    # settings (vLLM's KimiMoE: sigmoid scores, renormalised top-k, one group).
    # Inkling (vLLM's InklingMoE): sink experts, the checkpoint's gate/up row order.
    "inkling_model": frozenset(
        {"shared_expert_sink", "inference_moe_w13_interleaved", "shared_experts_size"}
    ),
    # ZAYA1 (zaya.py's ZayaRouter): the router MLP's width (calculators.zaya).
    "zaya": frozenset({"router_hidden_size"}),
    # Mistral Large 4: the params.json `moe` block vLLM's adapt_config_dict empties into
    # n_routed_experts, moe_intermediate_size and the rest.
    "mistral_large_4": frozenset({"moe"}),
    # Laguna (vLLM's LagunaMoE): a scale on the routed experts' output.
    "laguna": frozenset({"moe_routed_scaling_factor"}),
    # K2-Horizon (k2_horizon.py): the routers' bias, their scoring, MoVA's value experts.
    "k2_horizon": frozenset(
        {"moe_gate_bias", "router_score_func", "router_scaling_factor", "mova_num_experts",
         "mova_num_experts_per_tok"}
    ),
    # AliceAI (alice_ai.py): its sigmoid router always has the correction bias.
    "alice_ai": frozenset({"router_bias_correction"}),
    "kimi_linear": frozenset(
        {
            "num_experts_per_token",
            "moe_renormalize",
            "moe_router_activation_func",
            "use_grouped_topk",
            "num_expert_group",
        }
    ),
}  # fmt: skip


def check_moe_keys(config: Mapping[str, Any], where: str, family: str) -> None:
    """Refuse an expert/MoE/router key that the calculators do not read: it may change how many
    parameters there are. `family`: the model type whose layout the config's has."""
    model_type = str(config.get("model_type", ""))
    own = _MOE_KEYS_READ_BY_TYPE.get(family, frozenset()) | alias_keys(model_type)
    for key in sorted(config):
        lowered = key.lower()
        if not any(word in lowered for word in ("expert", "moe", "router")):
            continue
        if key not in _MOE_KEYS_READ | own and key not in _MOE_KEYS_ROUTING_ONLY:
            raise ConfigError(
                f"{where}{key}: a mixture-of-experts setting the calculators do not read; "
                "its effect on the parameter count is unknown"
            )


def _moe_layers(
    config: Mapping[str, Any], num_layers: int, where: str, model_type: str
) -> tuple[int, ...]:
    if model_type == "jamba":
        return jamba_moe_layers(config, num_layers, where)
    if model_type == "nemotron_h":  # its MoE layers are the E letters of the layer pattern
        return tuple(
            i for i, kind in enumerate(str(config.get("hybrid_override_pattern"))) if kind == "E"
        )
    listed = config.get("moe_layers")  # Llama 4's, or derived by config_aliases.normalised
    if listed is not None:
        if not isinstance(listed, list) or not all(isinstance(i, int) for i in listed):
            raise ConfigError(f"{where}moe_layers: expected a list of layer indices")
        return tuple(sorted(set(listed)))
    if model_type == "llama4_text":
        step = optional_int(config, "interleave_moe_layer_step", where, 1) or 1
        return tuple(range(step - 1, num_layers, step))
    flags = config.get("moe_layer_freq")
    if isinstance(flags, list):  # MiMo-V2: one flag a layer (vLLM's mimo_v2.py is_moe_layer)
        if len(flags) != num_layers:
            raise ConfigError(
                f"{where}moe_layer_freq: expected {num_layers} flags (num_hidden_layers), "
                f"got {len(flags)}"
            )
        return tuple(index for index, flag in enumerate(flags) if flag)
    first_dense = optional_int(config, "first_k_dense_replace", where, 0)
    frequency = optional_int(config, "moe_layer_freq", where, 0) or optional_int(
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


def read_moe(config: Mapping[str, Any], num_layers: int, where: str) -> MixtureOfExperts | None:
    num_experts = (
        optional_int(config, "num_local_experts", where, 0)
        or optional_int(config, "n_routed_experts", where, 0)
        or optional_int(config, "num_experts", where, 0)
    )
    model_type = str(config.get("model_type", ""))
    if num_experts <= 1:  # Jamba's config class reads one expert as a dense MLP
        return None
    experts_per_token = int_field(config, "num_experts_per_tok", where)
    if not 0 < experts_per_token <= num_experts:
        raise ConfigError(
            f"{where}num_experts_per_tok: {experts_per_token} experts a token of {num_experts}; "
            "expected 1 to the number of experts"
        )
    if "moe_intermediate_size" in config:
        expert_size = int_field(config, "moe_intermediate_size", where)
    else:
        expert_size = int_field(config, "intermediate_size", where)
    if expert_size == 0:
        raise ConfigError(f"{where}moe_intermediate_size: expected an integer > 0, got 0")
    shared = _shared_width(config, expert_size, model_type, where)
    nemotron = model_type == "nemotron_h"
    return MixtureOfExperts(
        num_experts=num_experts,
        experts_per_token=experts_per_token,
        expert_intermediate_size=expert_size,
        shared_intermediate_size=shared,
        moe_layers=_moe_layers(config, num_layers, where, model_type),
        # Nemotron-H's, LongCat's, ERNIE 4.5's, MiniMax-M3's and Beam's routers keep an fp32
        # e_score_correction_bias per expert, as do those whose config enables it (Ling,
        # Param2, Sarvam, HY-V3).
        router_bias=model_type
        in {
            "gpt_oss",
            "nemotron_h",
            "longcat_flash",
            "glm5_next_text",
            "ernie4_5_moe",
            "minimax_m3_text",
            "beam",
            "alice_ai",
        }
        or bool(config.get("moe_router_enable_expert_bias", False))
        or (model_type == "k2_horizon" and bool(config.get("moe_gate_bias")))
        or (model_type == "lfm2_moe" and bool(config.get("use_expert_bias", True))),
        expert_bias=model_type == "gpt_oss",
        expert_matrices=2 if nemotron else 3,
        latent_size=optional_int(config, "moe_latent_size", where, 0) if nemotron else 0,
        zero_experts=optional_int(config, "zero_expert_num", where, 0)
        if model_type == "longcat_flash"
        else 0,
    )


def _shared_width(config: Mapping[str, Any], expert_size: int, model_type: str, where: str) -> int:
    """All shared experts of a MoE layer together, as each family's vLLM module builds them.

    A count (`n_shared_experts`: DeepSeek, ERNIE 4.5 under its alias; `num_shared_experts`: Kimi
    Linear, AFMoE, Ling, Sarvam, HY-V3) times a width: `moe_shared_expert_intermediate_size`
    where set (Nemotron-H, Ling's bailing_moe.py, sarvam.py), else the routed experts'. Param2's
    `moe_shared_expert_intermediate_size` is already the total (param2moe.py); Cohere2-MoE's
    shared experts take `intermediate_size` (cohere2_moe.py), as its routed ones do; a single
    `shared_expert_intermediate_size` (Qwen2-MoE) or `share_expert_dim` (Step 3.x) is the total.
    """
    if model_type == "llama4_text":
        return expert_size  # every Llama 4 MoE layer has one shared expert of expert width
    count = optional_int(config, "n_shared_experts", where, 0) or optional_int(
        config, "num_shared_experts", where, 0
    )
    each = optional_int(config, "moe_shared_expert_intermediate_size", where, 0)
    if model_type == "param2moe" and each:
        return each
    if count:
        return count * (each or expert_size)
    return optional_int(config, "shared_expert_intermediate_size", where, 0) or optional_int(
        config, "share_expert_dim", where, 0
    )
