"""Unlimited-OCR-2's language model as vLLM 0.34.0 builds it (calculators.unlimited_ocr):
DeepSeek-OCR's DeepSeek-V2 MoE decoder with DASH attention
(vllm/model_executor/models/unlimited_ocr.py, model_executor/layers/dash_attention.py,
models/config.py UnlimitedOCRForCausalLMConfig).

No config.json of baidu/Unlimited-OCR-2 was found in public code. tests/data/configs/
unlimited-ocr-2.json is deepseek-ai/DeepSeek-OCR's config.json (whose layout vLLM says
Unlimited-OCR reuses), as a public model report reproduces it beside the checkpoint's tensor
list (3,336,106,240 parameters, its vision tower and projector counted by
calculators.vision's DeepEncoder; the code index does not name that repository), under the
unlimited-ocr wrapper, with a sparse_attention_config of the values vLLM 0.34 requires,
its code defaults (dash_topk_blocks 12, dash_sigma 1) and an assumed block of 64 tokens and
local window of 2 blocks (the 128-token R-SWA window Unlimited-OCR v1 defaults to).
"""

import json
from pathlib import Path
from typing import Any

import pytest
from test_calc_api import pasted_config_plan

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import ConfigError, InputError
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.param_count import param_counts
from infermeter.calculators.vllm_settings import check_tensor_parallel

CONFIG_PATH = Path(__file__).parent / "data" / "configs" / "unlimited-ocr-2.json"
CONFIG = json.loads(CONFIG_PATH.read_text())
H, LAYERS, VOCAB = 1280, 12, 129280
# DASH's routers: q and k projections H -> 128, two norms and head_cls of 128, a layer.
ROUTERS = LAYERS * (2 * H * 128 + 3 * 128)


def _language_tensors() -> int:
    """The language model's tensors in DeepSeek-OCR's published listing: embed_tokens and
    lm_head, q/k/v/o of H x H, layer 0's MLP of 6848, 11 layers of 64 experts of 896, two shared
    experts (1792) and a router, two norms a layer and the final one."""
    attention = LAYERS * 4 * H * H
    experts = 11 * 64 * 3 * H * 896 + 11 * 3 * H * 1792 + 11 * 64 * H
    return 2 * VOCAB * H + attention + 3 * H * 6848 + experts + (2 * LAYERS + 1) * H


def test_the_decoder_is_deepseek_ocrs_plus_the_dash_routers() -> None:
    arch = parse_config(CONFIG)
    assert arch.model_type == "deepseek_v2"
    # The listing's other 401,372,160: SAM-ViT-B, CLIP-L, the projector and two view tokens.
    assert arch.vision_params == 3_336_106_240 - _language_tensors() == 401_372_160
    assert param_counts(arch).total == 3_336_106_240 + ROUTERS
    without = {key: value for key, value in CONFIG.items() if key != "sparse_attention_config"}
    assert param_counts(parse_config(without)).total == 3_336_106_240  # DeepSeek-OCR's
    # The routers are replicated on every rank and never quantized.
    two = param_counts(arch, 2)
    assert two.small - param_counts(parse_config(without), 2).small == ROUTERS
    assert two.attention == LAYERS * 4 * H * H // 2


def test_the_cache_holds_one_more_kv_head_a_rank() -> None:
    arch = parse_config(CONFIG)
    for tp in (1, 2, 5):
        heads = 10 // tp + 1
        assert kv_cache_shape(arch, tensor_parallel_size=tp).bytes_per_token == (
            LAYERS * heads * 2 * 128 * 2
        )


def test_calc_vram_at_tp_1_and_2_as_the_page_says() -> None:
    for tp, heads in (("1", 11), ("2", 6)):
        plan = pasted_config_plan(CONFIG_PATH, "l40s", vllm_version="0.34",
                                  max_model_len="8192", tensor_parallel_size=tp)  # fmt: skip
        assert plan["kv_cache_bytes_per_token"] == LAYERS * heads * 512
        assert plan["weights_by_role"]["small"] == 2 * (ROUTERS + 25 * H)
        assert plan["fits"]
        assert any(note.startswith("Unlimited-OCR-2: DeepSeek-OCR") for note in plan["notes"])
        assert plan["weights_by_role"]["vision"] == 2 * 401_372_160 // int(tp)


def test_tp_8_is_refused_as_vllm_refuses_it() -> None:
    # Ten attention heads split over 1, 2, 5 or 10 ranks only (vLLM asserts it too).
    with pytest.raises(InputError, match=r"^tensor_parallel_size: 8 does not divide .* 10 "):
        check_tensor_parallel(parse_config(CONFIG), 8)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"sparse_index_dim": 64}, r"^language_config\.sparse_attention_config\.sparse_index_dim"),
        ({"sparse_attention_freq": [1] * 11 + [0]}, r"sparse_attention_freq: vLLM serves DASH"),
    ],
)
def test_bad_dash_settings_are_named(change: dict[str, Any], message: str) -> None:
    sparse = {**CONFIG["sparse_attention_config"], **change}
    with pytest.raises(ConfigError, match=message):
        parse_config({**CONFIG, "sparse_attention_config": sparse})


def test_a_projector_other_than_linear_is_named() -> None:
    projector = {**CONFIG["projector_config"], "projector_type": "mlp_gelu"}
    with pytest.raises(ConfigError, match=r"^projector_config\.projector_type: only"):
        parse_config({**CONFIG, "projector_config": projector})
