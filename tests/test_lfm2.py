"""LFM2's and LFM2-MoE's parameters, KV cache and convolution states as vLLM 0.34.0 builds them
(calculators.lfm2, the SHORT_CONV kind of calculators.mixers), with the arithmetic written out
from vllm/model_executor/models/lfm2.py, lfm2_moe.py and layers/mamba/short_conv.py.

tests/data/configs/lfm2-1.2b.json is LiquidAI/LFM2-1.2B's config.json as a download of it is
committed in github.com/lorinefeng/LiquidRAG (models/LiquidAI_LFM2-1.2B/config.json, commit
2dcc735c3d85fd07df83922e5948428f6f783091), byte for byte: `block_ff_dim` 12288 auto-adjusted to
8192, `full_attn_idxs` and no `layer_types`. Its model card (huggingface.co/LiquidAI/LFM2-1.2B,
"Parameters 1,170,340,608", "16 (10 conv + 6 attn)") states the count it is held to.

No LFM2-8B-A1B config.json was found in public code; tests/data/configs/lfm2-8b-a1b.json is
transformers' Lfm2MoeConfig (5.24.0, whose docstring names LiquidAI/LFM2-8B-A1B) with what the
model card (huggingface.co/LiquidAI/LFM2-8B-A1B) states: 24 layers (18 conv + 6 attention),
vocabulary 65,536, 8.3B parameters, 1.5B active. Where the 6 attention layers sit (2, 6, 10, 14,
18, 21) is read from trimmed copies of the config in public ports; it changes no count.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import json_output
from test_calc_api import pasted_config_plan

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.model_arch import FULL
from infermeter.calculators.param_count import param_counts

CONFIGS = Path(__file__).parent / "data" / "configs"
DENSE_PATH, MOE_PATH = CONFIGS / "lfm2-1.2b.json", CONFIGS / "lfm2-8b-a1b.json"
DENSE, MOE = json.loads(DENSE_PATH.read_text()), json.loads(MOE_PATH.read_text())
H, HEADS, KV_HEADS, HEAD, VOCAB, TAPS = 2048, 32, 8, 64, 65536, 3
DENSE_MLP, MOE_DENSE_MLP, EXPERT, EXPERTS = 8192, 7168, 1792, 32


def _attention_linear(tp: int) -> int:
    """qkv_proj and out_proj on a rank (no biases, heads of hidden / heads)."""
    q = HEADS * HEAD // tp
    kv = 2 * max(1, KV_HEADS // tp) * HEAD
    return H * (q + kv) + q * H


def _conv_linear(tp: int) -> int:
    return (3 * H * H + H * H) // tp  # ShortConv's in_proj (B, C, x) and out_proj


def test_lfm2_1_2b_counts_its_published_size() -> None:
    arch = parse_config(DENSE)
    assert arch.intermediate_size == DENSE_MLP  # int(2 x 12288 / 3), a multiple of 256
    assert param_counts(arch).total == 1_170_340_608


@pytest.mark.parametrize("tp", [1, 2])
def test_lfm2_parameters_follow_the_modules(tp: int) -> None:
    counts = param_counts(parse_config(DENSE), tp)
    assert counts.attention == 6 * _attention_linear(tp) + 10 * _conv_linear(tp)
    assert counts.dense_mlp == 16 * 3 * H * DENSE_MLP // tp  # w13 and w2 in every layer
    assert counts.embedding == VOCAB // tp * H
    assert counts.lm_head == 0  # tied
    # operator_norm and ffn_norm, q/k norms, the depthwise convolutions; embedding_norm.
    assert counts.small == 16 * 2 * H + 6 * 2 * HEAD + 10 * H * TAPS // tp + H


@pytest.mark.parametrize(
    ("change", "width"),
    [
        ({}, 8192),
        # LFM2-350M's 6656: int(4437.3) rounded up to a multiple of 256.
        ({"block_ff_dim": 6656}, 4608),
        ({"block_ffn_dim_multiplier": 1.5}, 12288),
        ({"block_multiple_of": 1000}, 9000),
        ({"block_auto_adjust_ff_dim": False}, 12288),
        # Lfm2Config puts block_ff_dim in intermediate_size; without it, intermediate_size.
        ({"block_ff_dim": None, "intermediate_size": 10752, "block_auto_adjust_ff_dim": False},
         10752),
    ],
)  # fmt: skip
def test_lfm2_mlp_width_as_lfm2_mlp_derives_it(change: dict[str, Any], width: int) -> None:
    config = {key: value for key, value in {**DENSE, **change}.items() if value is not None}
    assert parse_config(config).intermediate_size == width


def test_lfm2_layer_pattern() -> None:
    kinds = parse_config(DENSE).layer_kinds
    assert [i for i, kind in enumerate(kinds) if kind == FULL] == [2, 5, 8, 10, 12, 14]
    listed = ["full_attention" if kind == FULL else "conv" for kind in kinds]
    assert parse_config({**DENSE, "layer_types": listed}).layer_kinds == kinds
    # Lfm2Config without full_attn_idxs: every layer attention.
    no_pattern = {key: value for key, value in DENSE.items() if key != "full_attn_idxs"}
    assert parse_config(no_pattern).layer_kinds == (FULL,) * 16


def test_lfm2_moe_counts_its_published_sizes() -> None:
    counts = param_counts(parse_config(MOE))
    assert counts.total == pytest.approx(8.3e9, rel=0.01)  # 8.34B
    assert 1.5e9 <= counts.active < 1.6e9  # 1.56B, which the card truncates to 1.5B


@pytest.mark.parametrize("tp", [1, 2])
def test_lfm2_moe_parameters_follow_the_modules(tp: int) -> None:
    arch = parse_config(MOE)
    assert arch.moe is not None
    assert arch.moe.moe_layers == tuple(range(2, 24))  # num_dense_layers 2
    counts = param_counts(arch, tp)
    assert counts.attention == 6 * _attention_linear(tp) + 18 * _conv_linear(tp)
    assert counts.dense_mlp == 2 * 3 * H * MOE_DENSE_MLP // tp  # not auto-adjusted
    assert counts.experts == 22 * EXPERTS * 3 * H * EXPERT // tp
    assert counts.router == 22 * H * EXPERTS  # replicated
    assert counts.lm_head == 0
    # Norms, q/k norms, convolutions, embedding_norm and the float32 correction biases.
    small = 24 * 2 * H + 6 * 2 * HEAD + 18 * H * TAPS // tp + H + 22 * EXPERTS
    assert counts.small == small
    no_bias = param_counts(parse_config({**MOE, "use_expert_bias": False}), tp)
    assert counts.small - no_bias.small == 22 * EXPERTS


@pytest.mark.parametrize(("config", "state_layers"), [(DENSE, 10), (MOE, 18)])
@pytest.mark.parametrize("tp", [1, 2])
def test_caches_and_convolution_states(config: dict[str, Any], state_layers: int, tp: int) -> None:
    kv = kv_cache_shape(parse_config(config), tensor_parallel_size=tp)
    assert (kv.full_layers, kv.sliding_layers, kv.state_layers) == (6, 0, state_layers)
    assert kv.bytes_per_token_per_layer == 2 * max(1, KV_HEADS // tp) * HEAD * 2
    # short_conv_state_shape: conv_L_cache - 1 inputs of hidden_size / TP channels, bf16.
    assert kv.state_bytes_per_sequence_per_layer == H // tp * (TAPS - 1) * 2


@pytest.mark.parametrize(
    ("path", "state_layers", "groups"),
    # vLLM's hybrid grouping of 6 attention layers: 10 state layers in 2 groups, 18 in 3.
    [(DENSE_PATH, 10, 3), (MOE_PATH, 18, 4)],
)
@pytest.mark.parametrize("tp", [1, 2])
def test_calc_vram_plans_lfm2_as_the_page_does(
    path: Path, state_layers: int, groups: int, tp: int
) -> None:
    options = {"vllm_version": "0.34", "max_model_len": "32768"}
    plan = pasted_config_plan(path, "h200-sxm", tensor_parallel_size=str(tp), **options)
    arch = parse_config(json.loads(path.read_text()))
    assert plan["weights_by_role"]["attention"] == 2 * param_counts(arch, tp).attention
    assert plan["kv_cache_bytes_per_token"] == 6 * 2 * max(1, KV_HEADS // tp) * HEAD * 2
    assert plan["state_bytes_per_sequence"] == state_layers * H // tp * (TAPS - 1) * 2
    assert plan["kv_cache_groups"] == groups
    assert plan["fits"]
    assert not any(note.startswith("LFM2") for note in plan["notes"])


@pytest.mark.parametrize(
    ("path", "version", "note"),
    [
        (DENSE_PATH, "0.9", "LFM2 is served from vLLM 0.10 (the first release that registers it)"),
        (MOE_PATH, "0.10", "LFM2-MoE is served from vLLM 0.11 (the first release that "),
    ],
)
def test_a_release_before_the_family_says_so(path: Path, version: str, note: str) -> None:
    plan = json_output(
        "calc", "vram", "--model", str(path), "--gpu", "h200-sxm", "--vllm-version", version
    )["vllm_plan"]
    assert any(text.startswith(note) for text in plan["notes"])


@pytest.mark.parametrize(
    ("config", "change", "message"),
    [
        (DENSE, {"conv_dim": 1024}, r"^conv_dim: expected hidden_size \(2048\): lfm2.py adds "),
        (DENSE, {"block_dim": None}, r"^block_dim: required field missing"),
        (DENSE, {"full_attn_idxs": [2, 16]}, r"^full_attn_idxs: expected a list of layer "),
        (DENSE, {"block_multiple_of": 0}, r"^block_multiple_of: expected an integer > 0"),
        (DENSE, {"layer_types": ["conv"] * 15 + ["mamba"]}, r"^layer_types\[15\]: expected "),
        (MOE, {"layer_types": None}, r"^layer_types: expected a list of 24 entries"),
        (MOE, {"conv_L_cache": 1}, r"^conv_L_cache: expected at least 2 taps, got 1"),
    ],
)
def test_bad_lfm2_fields_are_named(
    config: dict[str, Any], change: dict[str, Any], message: str
) -> None:
    changed = {key: value for key, value in {**config, **change}.items() if value is not None}
    with pytest.raises(ConfigError, match=message):
        parse_config(changed)


# LFM2-VL: no checkpoint's config.json was found in public code. tests/data/configs/lfm2-vl.json
# is transformers' Lfm2VlConfig with its defaults written out (5.24.0: a SigLIP2 vision config
# of Siglip2VisionConfig's defaults, the projector's) around LFM2-1.2B's text config; its count
# is held to lfm2_vl.py's and lfm2_siglip2.py's modules.
VL_PATH = CONFIGS / "lfm2-vl.json"
VL = json.loads(VL_PATH.read_text())


def _siglip2_tower(width: int, inner: int, layers: int) -> int:
    """Siglip2VisionTransformer: the patch Linear (16 x 16 x 3 -> width, bias), 256 positions,
    blocks of two LayerNorms, q/k/v/out and fc1/fc2 with biases, the post LayerNorm."""
    block = 2 * 2 * width + 4 * (width * width + width) + 2 * width * inner + inner + width
    return 3 * 16 * 16 * width + width + 256 * width + layers * block + 2 * width


def _projector(width: int, layernorm: bool = True) -> int:
    """Lfm2VLMultiModalProjector over 2 x 2 unshuffled patches: LayerNorm, 4w -> 2560 -> H."""
    unshuffled = 4 * width
    return 2 * unshuffled * layernorm + unshuffled * 2560 + 2560 + 2560 * H + H


def test_lfm2_vl_counts_its_tower_and_projector() -> None:
    arch = parse_config(VL)
    assert arch.vision_params == _siglip2_tower(768, 3072, 12) + _projector(768)
    assert arch.reading_notes == ()
    assert param_counts(arch).total == 1_170_340_608 + arch.vision_params
    # A wider tower and no projector LayerNorm (vLLM builds every layer it is given).
    wide = {"hidden_size": 1152, "intermediate_size": 4304, "num_hidden_layers": 26}
    changed = {**VL, "projector_use_layernorm": False,
               "vision_config": {**VL["vision_config"], **wide}}  # fmt: skip
    expected = _siglip2_tower(1152, 4304, 26) + _projector(1152, layernorm=False)
    assert parse_config(changed).vision_params == expected


@pytest.mark.parametrize("tp", [1, 2])
def test_calc_vram_plans_lfm2_vl_as_the_page_does(tp: int) -> None:
    options = {"vllm_version": "0.34", "max_model_len": "32768"}
    plan = pasted_config_plan(VL_PATH, "h200-sxm", tensor_parallel_size=str(tp), **options)
    # The tower's share of a rank, as param_count splits every tower.
    assert plan["weights_by_role"]["vision"] == 2 * (parse_config(VL).vision_params // tp)
    assert plan["state_bytes_per_sequence"] == 10 * H // tp * (TAPS - 1) * 2
