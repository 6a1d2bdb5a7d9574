"""OLMo-hybrid: Gated DeltaNet layers three to one with OLMo 2 attention (calculators.olmo_hybrid),
read with the defaults of vLLM 0.29's OlmoHybridConfig. Ai2 publishes OLMo Hybrid as a 7B model
with three Gated DeltaNet layers to one attention layer (https://labindex.ai/outputs/ai2/olmo-hybrid).
"""

import pytest

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.mixers import LINEAR_ATTENTION
from infermeter.calculators.model_arch import FULL
from infermeter.calculators.param_count import param_counts


def test_olmo_hybrid_defaults_are_three_delta_net_layers_to_one_attention_layer() -> None:
    arch = parse_config({"model_type": "olmo_hybrid"})
    assert arch.layer_kinds[:8] == (LINEAR_ATTENTION,) * 3 + (FULL,) + (LINEAR_ATTENTION,) * 3 + (
        FULL,
    )
    assert param_counts(arch).total == pytest.approx(7e9, rel=0.07)


def test_olmo_hybrid_state_is_the_gated_delta_net_shape() -> None:
    kv = kv_cache_shape(parse_config({"model_type": "olmo_hybrid"}), tensor_parallel_size=2)
    # 30 heads: keys 0.75 x 3840 / 30 = 96 wide, values 192; 15 of each per rank.
    conv = (2 * 30 * 96 + 30 * 192) // 2 * 3
    assert kv.state_bytes_per_sequence_per_layer == (conv + 15 * 96 * 192) * 2
    assert (kv.full_layers, kv.state_layers) == (8, 24)
    assert kv.bytes_per_token_per_layer == 2 * 15 * 128 * 2


def test_olmo_hybrid_keeps_the_heads_a_config_names() -> None:
    config = {"model_type": "olmo_hybrid", "linear_num_key_heads": 16, "linear_key_head_dim": 128}
    mixer = parse_config(config).mixer
    assert mixer is not None
    assert (mixer.key_heads, mixer.value_heads, mixer.value_head_dim) == (16, 30, 256)
