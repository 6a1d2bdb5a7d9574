"""Qwen4-Exp's parameters and caches as vLLM 0.29.0 and 0.34.0 build them (calculators.qwen4_exp),
with the arithmetic written out from vllm/models/qwen4_exp/nvidia (model.py, hyperconnection.py,
qsa.py, qsa_indexer.py, ple_layer.py, ngram_embedding.py).

tests/data/configs/qwen4-exp-flash-next.json is the text_config of Qwen/Qwen3.8-Flash-Next's
config.json as public test code reproduces it field by field (a config-parity test "shaped
exactly like Qwen/Qwen3.8-Flash-Next's shipped config.json", and a second project's fixture of
"the released text tower's geometry"; the code index names neither repository, and the
checkpoint's own license keeps its file out of public code), under the text model's
architecture; `mamba_ssm_dtype` float32 as the second fixture pins it. No published parameter
count was found: the count is held to the modules' arithmetic, and the Qwen3-Next part to the
qwen3_next count the catalog holds to Qwen3-Next-80B's published 80B.
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
from infermeter.calculators.qwen4_exp import ple_table_rows
from infermeter.calculators.vision import count_vision

CONFIG_PATH = Path(__file__).parent / "data" / "configs" / "qwen4-exp-flash-next.json"
CONFIG = json.loads(CONFIG_PATH.read_text())
H, STREAMS = 2560, 4
WIDTH = STREAMS * H
# The public parity test's golden values, from transformers' modeling_qwen4_exp algorithm: the
# 16 n-gram heads of the first PLE layer sum to 320,001,446 rows, 320,001,536 padded to 128.
PLE_ROWS = 320_001_536
_OPTIONS = {"vllm_version": "0.34", "max_model_len": "262144"}


def test_the_ple_table_rows_match_the_published_golden_values() -> None:
    assert ple_table_rows(CONFIG, 1) == [PLE_ROWS]
    # A second PLE layer takes the next 16 primes (by trial division here).
    primes = [n for n in range(20_000_000, 20_001_000) if all(n % d for d in range(2, 4473))]
    first, second = ple_table_rows(CONFIG, 2)
    assert first == PLE_ROWS == -(-sum(primes[:16]) // 128) * 128
    assert second == -(-sum(primes[16:32]) // 128) * 128


def test_what_qwen4_exp_adds_to_qwen3_next_follows_the_modules() -> None:
    qwen4 = parse_config(CONFIG)
    qwen3 = parse_config({**CONFIG, "model_type": "qwen3_next"})
    # Gated residual a boundary: per-stream norm, down-projection (320) merged with the
    # injection (4) padded to 336 rows, up-projection; two a layer; the final mixer has no
    # injection. PLE: kv_proj 2560 -> 4H + H (replicated), three norms and a depthwise
    # convolution of 4H channels (kernel 4). QSA: 12 layers' index_qk_proj H -> (4 + 1) x 128,
    # q/k norms of 128.
    hyper = 48 * 2 * (WIDTH + WIDTH * 336 + 320 * WIDTH) + WIDTH + 2 * WIDTH * 320
    for tp in (1, 8):
        added, base = param_counts(qwen4, tp), param_counts(qwen3, tp)
        assert added.embedding - base.embedding == PLE_ROWS // tp * 160
        assert added.attention - base.attention == 12 * H * 5 * 128
        assert added.dense_mlp - base.dense_mlp == 2560 * (WIDTH + H)
        assert added.small - base.small == hyper + 3 * WIDTH + 4 * WIDTH + 12 * 2 * 128
        for role in ("experts", "shared_experts", "router", "lm_head", "four_byte"):
            assert getattr(added, role) == getattr(base, role), role
    # 176.96B in all, of which the PLE table is 51.2B; no published figure to compare.
    assert param_counts(qwen4).total == 176_955_944_320
    assert param_counts(qwen4).embedding - 248320 * H == PLE_ROWS * 160


def test_the_caches_per_token_and_per_sequence() -> None:
    arch = parse_config(CONFIG)
    for tp, kv_heads in ((1, 2), (8, 1)):
        shape = kv_cache_shape(arch, tensor_parallel_size=tp)
        # 12 attention layers: a bfloat16 key and value of 256 per KV head on the rank; their
        # compressed indexer keys, 128 bfloat16 values per 4 tokens.
        assert shape.bytes_per_token == 12 * kv_heads * 2 * 256 * 2 + 12 * 128 * 2 // 4
        # 36 Gated DeltaNet layers and the PLE layer's short-convolution state.
        assert shape.state_layers == 37


def test_qsa_layer_names_of_vllm_0_34_read_as_0_29s() -> None:
    renamed = {
        **CONFIG,
        "layer_types": [
            "indexed_attention" if kind == "full_attention" else kind
            for kind in CONFIG["layer_types"]
        ],
    }
    assert param_counts(parse_config(renamed)) == param_counts(parse_config(CONFIG))
    without_qsa = {k: v for k, v in CONFIG.items() if not k.startswith("indexer_")}
    assert kv_cache_shape(parse_config(without_qsa)).bytes_per_token == 12 * 2 * 2 * 256 * 2


def test_the_multimodal_wrapper_reads_its_text_config_and_a_qwen3_5_tower() -> None:
    # Qwen4ExpForConditionalGeneration is Qwen3.5's wrapper: its vision tower is Qwen3.5's.
    vision = {"model_type": "qwen4_exp", "depth": 27, "hidden_size": 1152,
              "intermediate_size": 4304, "num_heads": 16, "out_hidden_size": 2560,
              "patch_size": 16, "spatial_merge_size": 2, "temporal_patch_size": 2,
              "in_channels": 3, "num_position_embeddings": 2304}  # fmt: skip
    wrapper = parse_config({"model_type": "qwen4_exp", "text_config": CONFIG,
                            "vision_config": vision})  # fmt: skip
    tower = count_vision({"model_type": "qwen3_5"}, vision, H)
    assert tower.recognised
    assert wrapper.vision_params == tower.params > 0
    text = param_counts(parse_config(CONFIG)).total
    assert param_counts(wrapper).total == text + tower.params


def test_calc_vram_at_tp_1_leaves_no_room_as_the_page_says() -> None:
    plan = pasted_config_plan(CONFIG_PATH, "h200-sxm", **_OPTIONS, tensor_parallel_size="1")
    # 354 GB of weights (the PLE table alone 102 GB) on a 141 GB H200: no cache at all.
    assert plan["weights_bytes"] > 350e9
    assert plan["weights_by_role"]["embedding"] == 2 * (248320 * H + PLE_ROWS * 160)
    assert not plan["fits"]
    assert plan["error"].startswith("CUDA out of memory loading the weights")


def test_calc_vram_at_tp_8_plans_the_hybrid_cache_as_the_page_does() -> None:
    plan = pasted_config_plan(CONFIG_PATH, "h200-sxm", **_OPTIONS, tensor_parallel_size="8")
    assert plan["weights_by_role"]["embedding"] == 2 * (248320 // 8 * H + PLE_ROWS // 8 * 160)
    assert plan["kv_cache_bytes_per_token"] == 12 * 1024 + 768
    # Blocks of 448 tokens (the least multiple of 0.34's 64 whose attention page holds a Gated
    # DeltaNet state); one group of the 12 attention layers, four of the 37 state layers (two
    # pages a request each, 0.27+). A block id holds 12 attention pages of 448 x 1024 B and 448
    # tokens of compressed keys.
    assert plan["block_size"] == 448
    unit = 12 * 448 * 1024 + 448 * 768
    blocks_per_request = -(-262144 // 448) + 4 * 2
    assert plan["request_bytes_at_max_model_len"] == blocks_per_request * unit
    assert plan["num_blocks"] == plan["kv_cache_bytes"] // unit
    assert plan["fits"]
    assert any(note.startswith("Qwen4-Exp: Qwen3-Next's hybrid") for note in plan["notes"])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"hc_count": 1}, r"^hc_count: Qwen4-Exp requires hc_count > 1"),
        ({"ple_layer_ids": [0]}, r"^ple_layer_ids: expected 1-based layer numbers"),
        ({"ple_embedding_dtype": "nvfp4"}, r"^ple_embedding_dtype: the PLE table's"),
        ({"ple_embed_dim": 2550}, r"^ple_embed_dim: 2550 is not divisible by the 16"),
        ({"indexer_compress_ratio": 0}, r"^indexer_compress_ratio: expected an integer > 0"),
    ],
)
def test_bad_qwen4_exp_fields_are_named(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config({**CONFIG, **change})
