"""MiniMax-M3's parameters and KV caches as vLLM builds them (calculators.minimax_m3), with the
arithmetic written out from vllm/models/minimax_m3/nvidia/model.py and common/indexer.py
(0.29.0 and 0.34.0).

tests/data/configs/minimax-m3.json is MiniMaxM3TextConfig's declared defaults (vLLM 0.29.0,
vllm/transformers_utils/configs/minimax_m3.py: "Defaults mirror the text_config of the
MiniMax-M3-preview checkpoint") written out with their 0.29 key names; no copy of the published
checkpoint's config.json (huggingface.co/MiniMaxAI/MiniMax-M3) was found in the public code
searched, only third-party fixtures with the same values. Its published size: 427.04B
parameters from the safetensors metadata, 426.99B BF16 + 46.3M F32, 26B active (vLLM 0.34.0's
recipes/models/MiniMaxAI/MiniMax-M3.yaml), the vision tower included."""

import json
from pathlib import Path

import pytest
from cli_helpers import json_output
from test_calc_api import page_vram_plan

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import InputError
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.param_count import param_counts

PATH = Path(__file__).parent / "data" / "configs" / "minimax-m3.json"
CONFIG = json.loads(PATH.read_text())


def test_parameters_match_the_published_size() -> None:
    counts = param_counts(parse_config(CONFIG))
    vocab = 200064 * 6144
    assert counts.embedding == counts.lm_head == vocab
    # 60 layers of q (64 x 128), k and v (4 x 128 each) and o_proj; the 57 sparse layers'
    # qkv_proj also emits 4 index query heads and one index key of 128.
    assert counts.attention == 60 * (6144 * 9216 + 8192 * 6144) + 57 * 6144 * 5 * 128
    assert counts.dense_mlp == 3 * 3 * 6144 * 12288  # the first three layers
    assert counts.experts == 57 * 128 * 3 * 6144 * 3072
    assert counts.shared_experts == 57 * 3 * 6144 * 3072
    # The router and its correction bias, float32 (GateLinear params_dtype, e_score bias).
    assert (counts.router, counts.four_byte) == (0, 57 * (6144 * 128 + 128))
    # Two norms of hidden and two q/k norms a layer, two index norms a sparse layer, the last.
    assert counts.small == 60 * (2 * 6144 + 2 * 128) + 57 * 2 * 128 + 6144
    # 426.17B beside the published 427.04B (its vision tower, 0.87B, is the difference);
    # the F32 part 44.8M of the published 46.3M; 25.96B active of the published 26B.
    assert counts.total == 426_174_572_928
    assert abs(counts.total / 427.04e9 - 1) < 0.003
    assert round(counts.active / 1e9, 2) == 25.96


def test_with_its_vision_tower_the_published_size_exactly() -> None:
    # MiniMaxM3SparseForConditionalGeneration: transformers' MiniMaxM3VLVisionConfig defaults
    # (32 layers of 1280, fc 5120, 14 x 14 x 2 patches) and projector_hidden_size 6144.
    text = {key: value for key, value in CONFIG.items() if key != "model_type"}
    wrapper = {
        "model_type": "minimax_m3_vl",
        "text_config": text,
        "vision_config": {"model_type": "minimax_m3_vl_vision"},
        "projector_hidden_size": 6144,
    }
    block = 4 * 1280 * 1280 + 2 * 1280 * 5120 + 9 * 1280 + 5120  # biases and 2 LayerNorms
    patch = 3 * 2 * 14 * 14 * 1280  # the Conv3d, no bias
    projector = 1280 * 6144 + 6144 + 6144 * 6144 + 6144
    merger = 4 * 6144 * 6144 + 6144 + 6144 * 6144 + 6144  # 2 x 2 patches merged
    counts = param_counts(parse_config(wrapper))
    assert counts.vision == 32 * block + patch + 4 * 1280 + projector + merger
    # 427,040,142,720: the published 427.04B; its float32 part, the router and correction bias
    # (44.83M) and the patch Conv3d (1.51M): the published 46.3M.
    assert counts.total == 427_040_142_720
    assert round((counts.four_byte + patch) / 1e6, 1) == 46.3


def test_the_0_34_key_names_read_the_same() -> None:
    # transformers' MiniMaxM3VLTextConfig (vLLM 0.34): layer_types, mlp_layer_types, index_*.
    newer = {
        key: value
        for key, value in CONFIG.items()
        if key not in ("moe_layer_freq", "sparse_attention_config")
    }
    newer.update(
        model_type="minimax_m3_vl_text",
        layer_types=["full_attention"] * 3 + ["minimax_m3_sparse"] * 57,
        mlp_layer_types=["dense"] * 3 + ["sparse"] * 57,
        index_n_heads=4,
        index_head_dim=128,
    )
    for tp in (1, 8):
        assert param_counts(parse_config(newer), tp) == param_counts(parse_config(CONFIG), tp)


def test_calc_vram_plans_it_at_tp8_on_h200_and_the_page_agrees() -> None:
    # The same inputs to `calc vram` (--gpu h200-sxm -tp 8 ...) and to the memory page.
    query = {"gpu": "h200-sxm", "tensor_parallel_size": "8", "kv_cache_dtype": "fp8"}
    query |= {"vllm_version": "0.34", "max_model_len": "524288"}
    options = [f"--{key.replace('_', '-')}={value}" for key, value in query.items()]
    plan = json_output("calc", "vram", "--model", str(PATH), *options)["vllm_plan"]
    # One KV head a rank (4 heads, 8 ranks): 60 layers x 2 x 128 fp8 bytes, and the 57 sparse
    # layers' index keys, 128 bfloat16 values whatever --kv-cache-dtype, in 128-token blocks.
    block = 128 * (60 * 256 + 57 * 256)
    assert plan["block_size"] == 128
    assert plan["kv_cache_groups"] == 1
    assert plan["num_blocks"] == plan["kv_cache_bytes"] // block
    per_request = 524288 // 128
    assert plan["request_bytes_at_max_model_len"] == per_request * block
    assert plan["kv_cache_tokens"] == int(plan["num_blocks"] / per_request * 524288)
    roles = plan["weights_by_role"]
    assert roles["embedding"] == 2 * 200064 // 8 * 6144
    assert roles["four_byte"] == 4 * 57 * (6144 * 128 + 128)  # replicated on every rank
    assert any(note.startswith("MiniMax-M3: every layer's K/V") for note in plan["notes"])
    assert plan == page_vram_plan(PATH, **query)
    # At TP 1 the BF16 weights (852.6 GB) do not fit one H200.
    whole = json_output("calc", "vram", "--model", str(PATH), "--gpu", "h200-sxm")["vllm_plan"]
    assert whole["weights_bytes"] > 8 * roles["experts"]
    assert not whole["fits"]


def test_the_kv_size_per_token_users_refuse_it_naming_why() -> None:
    with pytest.raises(InputError, match=r"^model_type 'minimax_m3_text': MiniMax-M3's caches"):
        kv_cache_shape(parse_config(CONFIG))
