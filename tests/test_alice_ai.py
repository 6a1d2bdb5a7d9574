"""AliceAI's parameters and caches as vLLM 0.33.0-0.34.0 build them (calculators.alice_ai), with
the arithmetic written out from vllm/model_executor/models/alice_ai.py and the KDA layer it
reuses (model_executor/layers/mamba/gdn/kimi_gdn_linear_attn.py, mamba_utils.kda_state_shape).

tests/data/configs/alice-ai.json is the config class's defaults, not a published checkpoint's
(no public config.json was found): AliceAIConfig (vllm-project/vllm
vllm/transformers_utils/configs/alice_ai.py at e179c78) over transformers 5.24's
Qwen3NextConfig, written out with its derived layer_types. No published parameter count exists
for it: the count is held to the module's arithmetic.
"""

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from test_calc_api import pasted_config_plan

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.param_count import param_counts
from infermeter.calculators.vllm_overheads import FORWARD_PEAK_FACTOR, forward_peak_bytes

CONFIG_PATH = Path(__file__).parent / "data" / "configs" / "alice-ai.json"
CONFIG = json.loads(CONFIG_PATH.read_text())
H, LAYERS, FULL, KDA, VOCAB = 2048, 48, 12, 36, 129024
WIDTH = 32 * 128  # KDA heads x head size
_OPTIONS = {"vllm_version": "0.34", "max_model_len": "262144"}


def _linear(tp: int) -> int:
    """One rank's attention-side linear weights: 12 gated full-attention layers (16 query heads
    of 256 with their gate, 2 KV heads, o_proj) and 36 KDA layers (q/k/v, beta, the replicated
    f_a/g_a down-projections, f_b/g_b up-projections, o_proj)."""
    kv = max(1, 2 // tp) * 2 * 256
    full = H * (2 * 16 * 256 // tp + kv) + 16 * 256 // tp * H
    kda = H * 3 * WIDTH // tp + H * 32 // tp + 2 * H * 128 + 2 * 128 * WIDTH // tp
    return FULL * full + KDA * (kda + WIDTH * H // tp)


def test_alice_ai_counts_follow_the_module() -> None:
    arch = parse_config(CONFIG)
    assert arch.layer_kinds == ("kda", "kda", "kda", "full") * 12
    for tp in (1, 8):
        counts = param_counts(arch, tp)
        assert counts.attention == _linear(tp)
        # 512 experts of 512 in every layer, the shared expert, the router and its gate.
        assert counts.experts == LAYERS * 512 * 3 * H * 512 // tp
        assert counts.shared_experts == LAYERS * 3 * H * 512 // tp
        assert counts.router == LAYERS * (H * 512 + H)
        # Two norms a layer and the final one; KDA's float32 convolutions (3 x 4096 x 4),
        # dt_bias and A_log and its gated norm; q/k norms; the router's correction bias; the
        # attention residuals (4 x H a layer: none before layer 0's attention, two in the
        # final mixer).
        kda_small = (3 * WIDTH * 4 + WIDTH + 32) // tp + 128
        small = (2 * LAYERS + 1) * H + KDA * kda_small + FULL * 512 + LAYERS * 512
        assert counts.small == small + 4 * H * LAYERS
        assert counts.embedding == counts.lm_head == -(-VOCAB // tp) * H
    # 79.64B in all (no published figure to compare), the residual vectors 393,216 of them.
    assert param_counts(arch).total == 79_635_961_472


def test_the_caches_per_token_and_per_sequence() -> None:
    arch = parse_config(CONFIG)
    for tp, kv_heads in ((1, 2), (8, 1)):
        shape = kv_cache_shape(arch, tensor_parallel_size=tp)
        assert shape.bytes_per_token == FULL * kv_heads * 2 * 256 * 2
        assert shape.state_layers == KDA
        # kda_state_shape: a bfloat16 convolution state of 3 x 4096 channels by 3 steps and a
        # float32 recurrent state of 32 heads x 128 x 128, split over the ranks.
        per_sequence = (3 * WIDTH * 3 * 2 + 32 * 128 * 128 * 4) // tp
        assert shape.state_bytes_per_sequence_per_layer == per_sequence


def test_the_residual_bank_adds_to_the_activation_peak() -> None:
    # _init_residual_bank: ceil(48 / 4) hidden states per batched token, on every rank.
    arch = parse_config(CONFIG)
    assert arch.residual_bank_states == 12
    plain = replace(arch, residual_bank_states=0)
    for tp in (1, 8):
        added = forward_peak_bytes(arch, 8192, tp) - forward_peak_bytes(plain, 8192, tp)
        assert added == pytest.approx(12 * 8192 * H * 2 * FORWARD_PEAK_FACTOR, abs=2)


def test_calc_vram_at_tp_1_leaves_no_room_as_the_page_says() -> None:
    plan = pasted_config_plan(CONFIG_PATH, "h200-sxm", **_OPTIONS, tensor_parallel_size="1")
    counts = param_counts(parse_config(CONFIG))
    assert sum(plan["weights_by_role"].values()) == 2 * counts.total
    assert plan["weights_bytes"] > 141e9
    assert not plan["fits"]
    assert plan["num_blocks"] == 0


def test_calc_vram_at_tp_8_plans_the_hybrid_cache_as_the_page_does() -> None:
    plan = pasted_config_plan(CONFIG_PATH, "h200-sxm", **_OPTIONS, tensor_parallel_size="8")
    counts = param_counts(parse_config(CONFIG), 8)
    assert sum(plan["weights_by_role"].values()) == 2 * counts.total
    assert plan["kv_cache_bytes_per_token"] == FULL * 1024
    # The least multiple of 0.34's 64 tokens whose 1024-byte-a-token attention page holds a
    # KDA state of 271,360 bytes: 320.
    assert plan["block_size"] == 320
    assert plan["fits"]
    assert any(note.startswith("AliceAI: Qwen3-Next's layer") for note in plan["notes"])
    assert not any("multi-token-prediction" in note for note in plan["notes"])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"block_attn_res_block_size": 0}, r"^block_attn_res_block_size: AliceAI requires"),
        ({"kda_allow_negative_eigenvalues": True}, r"^kda_allow_negative_eigenvalues: vLLM"),
        ({"mlp_only_layers": [0]}, r"^mlp_only_layers/decoder_sparse_step: vLLM's alice_ai"),
        ({"linear_num_value_heads": 16}, r"^linear_num_value_heads/linear_value_head_dim: "),
        ({"num_experts": 0}, r"^num_experts: AliceAI requires sparse experts"),
    ],
)
def test_bad_alice_ai_fields_are_named(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config({**CONFIG, **change})
