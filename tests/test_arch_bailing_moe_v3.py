"""BailingMoeV3: KDA layers with full-rank gates between gated MLA layers
(calculators.bailing_moe_v3), held to vLLM 0.29's bailing_moe_v3.py shapes. No public
BailingMoeV3 config.json was found to hold a total to.
"""

import json
from pathlib import Path
from typing import Any

import pytest

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.mixers import KDA
from infermeter.calculators.model_arch import FULL
from infermeter.calculators.param_count import param_counts

HIDDEN, HEADS, HEAD = 2048, 16, 128
V3: dict[str, Any] = json.loads(
    (Path(__file__).parent / "data" / "configs" / "bailing-moe-v3-small.json").read_text()
)


def test_mla_ends_each_group_and_fills_the_tail() -> None:
    arch = parse_config(V3)
    assert [i for i, kind in enumerate(arch.layer_kinds) if kind == FULL] == [3, 7, 8, 9]
    assert arch.layer_kinds.count(KDA) == 6
    assert arch.mla is not None
    assert arch.mla.kv_lora_rank == 512  # bailing_moe_v3.py's getattr default


def test_kda_state_and_mla_latent_per_token() -> None:
    kv = kv_cache_shape(parse_config(V3), tensor_parallel_size=2)
    # kda_state_shape: conv 3 x heads x head_dim / 2 ranks x 3 steps in bf16, state 8 x 128 x 128
    # float32.
    assert kv.state_bytes_per_sequence_per_layer == 3 * 16 * 128 // 2 * 3 * 2 + 8 * 128 * 128 * 4
    assert kv.bytes_per_token_per_layer == (512 + 64) * 2
    assert (kv.full_layers, kv.state_layers) == (4, 6)


def test_full_rank_gates_and_the_mla_output_gate() -> None:
    width = HEADS * HEAD
    base = param_counts(parse_config(V3)).total
    gated = param_counts(
        parse_config({**V3, "gated_attention_proj_granularity_type": "head_wise"})
    ).total
    assert gated - base == 4 * HIDDEN * HEADS  # one gate a head in each MLA layer
    attention = param_counts(parse_config(V3)).attention
    # Each KDA layer: q, k, v, beta, f and g (hidden -> width each), o; convs and norms aside.
    mla = (
        attention - 6 * (HIDDEN * (3 * width + HEADS) + 2 * HIDDEN * width + width * HIDDEN)
    ) // 4
    assert (
        mla == HIDDEN * HEADS * 192 + HIDDEN * (512 + 64) + 512 * HEADS * 256 + HEADS * 128 * HIDDEN
    )


def test_kda_with_low_rank_gates_is_refused_as_vllm_does() -> None:
    with pytest.raises(ConfigError, match=r"^no_kda_lora: vLLM serves BailingMoeV3"):
        parse_config({**V3, "no_kda_lora": False})
