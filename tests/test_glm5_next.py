"""GLM-5-Next's parameters and caches as vLLM 0.34.0 builds them (calculators.glm5_next), with
the arithmetic written out from vllm/models/glm5next/common (model.py, attention.py, kda.py).

tests/data/configs/glm5.3-flash-text.json: GLM-5.3-Flash's text_config as a public test fixture
reproduces it key by key (its _text_config; the code index names no repository), with the
layer pattern its DSA_LAYERS/KDA_LAYERS constants stand for written out as transformers'
Glm5NextTextConfig default (every fourth layer MLA) and the linear_attn_config's layer lists
left out (vLLM reads layer_types). Published size (a public deployment note for
zai-org/GLM-5.3-Flash): "320B total / 18B active", with the MTP layer and the vision tower,
which vLLM loads only for speculative decoding and images and this count leaves out.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from test_calc_api import pasted_config_plan

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.param_count import param_counts
from infermeter.calculators.quantization import weight_format

CONFIG_PATH = Path(__file__).parent / "data" / "configs" / "glm5.3-flash-text.json"
CONFIG = json.loads(CONFIG_PATH.read_text())
H, HEADS = 4096, 64


def _mla_layer(tp: int) -> int:
    """One MLA layer's projections and its indexer on a rank (q_a, kv_a and the indexer
    replicated; q_b, kv_b and o_proj split by heads)."""
    mla = H * 1536 + 1536 * HEADS * 256 // tp + H * 512 + 512 * HEADS * 512 // tp
    mla += HEADS * 256 // tp * H
    # The indexer: wq_b from the q latent, the fused key and head weights, the pooling gate.
    return mla + 1536 * 32 * 128 + H * (128 + 32) + 128 * H


def _kda_layer(tp: int) -> int:
    """One KDA layer: q, k, v, beta and o split; f_a, g_a replicated; f_b, g_b split."""
    width = 64 * 128
    return (3 * H * width + H * 64 + width * H) // tp + 2 * H * 128 + 2 * 128 * width // tp


def test_parameters_by_hand_and_against_the_published_size() -> None:
    arch = parse_config(CONFIG)
    for tp in (1, 8):
        counts = param_counts(arch, tp)
        assert counts.attention == 11 * _mla_layer(tp) + 34 * _kda_layer(tp)
        assert counts.experts == 42 * 288 * 3 * H * 2048 // tp
        assert counts.shared_experts == 42 * 3 * H * 2048 // tp
        assert counts.dense_mlp == 3 * 3 * H * 12288 // tp
        # mHC, float32: two boundaries a layer of 24 gates from the 4 x 4096 streams, their
        # biases and 3 scales; no head.
        assert counts.four_byte == 45 * 2 * (24 * 4 * H + 24 + 3)
    counts = param_counts(arch)
    # 313.3B and 17.4B active; the MTP layer (one more MoE layer, about 7.3B) and the vision
    # tower make up the published 320B / 18B.
    assert counts.total == 313_326_811_966
    assert round(counts.active / 1e9, 1) == 17.4


def test_mla_and_kda_stay_in_bfloat16_under_fp8() -> None:
    fmt = weight_format(parse_config(CONFIG), "fp8")
    assert "attention" not in fmt.quantized_roles
    assert "experts" in fmt.quantized_roles


def test_the_caches_per_token_and_per_sequence() -> None:
    arch = parse_config(CONFIG)
    for tp, state in (
        (1, 64 * 128 * 128 * 4 + 3 * 8192 * 3 * 2),
        (8, 8 * 128 * 128 * 4 + 3 * 1024 * 3 * 2),
    ):
        kv = kv_cache_shape(arch, tensor_parallel_size=tp)
        # 11 MLA layers: a 512-wide bfloat16 latent (no RoPE part) a token, whole on every rank,
        # and the indexer's FP8 key of 128 with a float32 scale, one per 4 tokens.
        assert kv.bytes_per_token == 11 * 512 * 2 + -(-11 * 132 // 4)
        # 34 KDA layers: a float32 recurrent state of 64 heads of 128 x 128 and a bfloat16
        # convolution state of q, k and v over 3 steps, split by heads.
        assert (kv.state_layers, kv.state_bytes_per_sequence_per_layer) == (34, state)
    # An fp8 cache: the latent as SM120's NoPE row (512 FP8 values and 4 float32 scales; the
    # plan's choice: FlashMLA on Hopper keeps 656), the indexer keys as before.
    assert kv_cache_shape(arch, "fp8").bytes_per_token == 11 * 528 + 363


@pytest.mark.parametrize(("tp", "fits"), [("1", False), ("8", True)])
def test_calc_vram_as_the_page_does(tp: str, fits: bool) -> None:
    plan = pasted_config_plan(CONFIG_PATH, "h200-sxm", tensor_parallel_size=tp,
                              max_model_len="131072")  # fmt: skip
    rank = param_counts(parse_config(CONFIG), int(tp))
    assert plan["weights_by_role"]["experts"] == 2 * rank.experts
    assert plan["weights_by_role"]["four_byte"] == 4 * rank.four_byte
    assert plan["kv_cache_bytes_per_token"] == 11 * 1024 + 363
    assert plan["fits"] is fits
    assert any(note.startswith("GLM-5-Next: KDA and MLA") for note in plan["notes"])
    assert any(note.startswith("GLM-5-Next is served from vLLM 0.30") for note in plan["notes"])


def test_the_multimodal_wrapper_reads_its_text_config() -> None:
    text = {key: value for key, value in CONFIG.items() if key != "model_type"}
    wrapper = parse_config({"model_type": "glm5_next", "text_config": text})
    assert param_counts(wrapper).total == param_counts(parse_config(CONFIG)).total


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"qk_rope_head_dim": 64}, r"^qk_rope_head_dim: GLM-5-Next's MLA has no RoPE"),
        ({"index_kpool": 1}, r"^index_kpool: vLLM's pooled indexer cache expects > 1"),
        ({"mlp_layer_types": ["moe"] * 45}, r"^mlp_layer_types: expected a list of dense"),
        ({"layer_types": ["mamba"] * 45}, r"^layer_types\[0\]: expected linear_attention"),
    ],
)
def test_bad_glm5_next_fields_are_named(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config({**CONFIG, **change})
