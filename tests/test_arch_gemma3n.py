"""Gemma 3n's language model (calculators.gemma3n), read with transformers' Gemma3nTextConfig
defaults: AltUp and LAuReL weights in every layer, per-layer embeddings, the last
`num_kv_shared_layers` layers without KV of their own. Google states the raw sizes with the
vision and audio towers only, so these tests hold the mechanisms to vLLM 0.29's gemma3n.py.
"""

import pytest

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.model_arch import FULL, SLIDING
from infermeter.calculators.param_count import param_counts

HIDDEN, LAYERS = 2048, 35


def test_gemma3n_altup_and_laurel_weights_per_layer_and_per_model() -> None:
    base = param_counts(parse_config({"model_type": "gemma3n_text"}))
    wider = param_counts(parse_config({"model_type": "gemma3n_text", "laurel_rank": 128}))
    # LAuReL: hidden -> rank -> hidden in every layer.
    assert wider.total - base.total == LAYERS * 2 * HIDDEN * 64
    fewer = param_counts(parse_config({"model_type": "gemma3n_text", "altup_num_inputs": 2}))
    # AltUp: 2 x (n - 1) hidden x hidden projections; per layer a router (hidden x n) and the
    # n x n and n x n^2 coefficients.
    per_layer = HIDDEN * 2 + 4 + 8
    assert base.total - fewer.total == 4 * HIDDEN * HIDDEN + LAYERS * (
        HIDDEN * 4 + 16 + 64 - per_layer
    )


def test_gemma3n_per_layer_embeddings_are_a_table_of_layers_x_256_a_token() -> None:
    counts = param_counts(parse_config({"model_type": "gemma3n_text"}))
    assert counts.embedding == 262_400 * HIDDEN + 262_144 * LAYERS * 256
    assert counts.lm_head == 0  # tied


def test_gemma3n_shared_kv_layers_hold_no_cache() -> None:
    arch = parse_config({"model_type": "gemma3n_text"})
    assert arch.layer_kinds[:5] == (SLIDING, SLIDING, SLIDING, SLIDING, FULL)
    kv = kv_cache_shape(arch)
    # 35 layers, the last 15 shared: 20 hold KV, every fifth of them global.
    assert (kv.full_layers, kv.sliding_layers, kv.sliding_window) == (4, 16, 512)
    assert kv.bytes_per_token_per_layer == 2 * 2 * 256 * 2


def test_gemma3n_reads_a_per_layer_width_list_of_one_width_and_refuses_others() -> None:
    listed = {"model_type": "gemma3n_text", "intermediate_size": [16_384] * LAYERS}
    assert parse_config(listed).intermediate_size == 16_384
    with pytest.raises(ConfigError, match=r"^intermediate_size: MLP widths that differ"):
        parse_config({**listed, "intermediate_size": [8192] + [16_384] * (LAYERS - 1)})
