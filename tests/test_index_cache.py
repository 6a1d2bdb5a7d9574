"""IndexCache's layers without an indexer in DeepSeek-V3.2 and GLM-5 (calculators.index_cache),
with the layers worked out by hand from vLLM's rule per release: deepseek_v2.py (0.22-0.28),
vllm/models/deepseek_v32/attention.py (0.29-0.34) and utils.py compute_skip_topk_layers (0.34).

The GLM-5 config is the catalog's (zai-org/GLM-5, 78 layers, index_n_heads 32 x index_head_dim
128) with IndexCache's keys added, as a checkpoint converted for it declares them."""

import json
from pathlib import Path
from typing import Any

import pytest
from test_calc_api import pasted_config_plan

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.index_cache import keyed_layers
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.param_count import param_counts
from infermeter.registry.catalog import load_models

GLM5: dict[str, Any] = dict(load_models()["glm-5"].config)
LAYERS, H = 78, 6144
# index_topk_freq 4 with the default offset 2: max(layer - 1, 0) % 4 == 0.
EVERY_FOURTH = (0, *range(1, LAYERS, 4))
# One indexer: wq_b from the q latent (2048 -> 32 x 128), wk (6144 -> 128), weights_proj
# (6144 -> 32), all replicated on every rank; its key's LayerNorm (2 x 128) among the small ones.
INDEXER = 2048 * 32 * 128 + H * 128 + H * 32
# Per token and layer with an fp8 cache: the latent in fp8_ds_mla (512 + 4 x 4 + 64 x 2 bytes)
# and, on the layers with their own indexer, an FP8 key of 128 values and a float32 scale.
LATENT_FP8, KEY = 656, 128 + 4


def test_frequency_and_offset_pick_the_layers_by_hand() -> None:
    assert len(EVERY_FOURTH) == 21
    assert keyed_layers({"index_topk_freq": 4}, LAYERS, "") == EVERY_FOURTH
    # offset 1: max(layer, 0) % 3 == 0.
    keys = {"index_topk_freq": 3, "index_skip_topk_offset": 1}
    assert keyed_layers(keys, 10, "") == (0, 3, 6, 9)
    # A pattern wins over the frequency; layers past its end keep their indexer.
    keys = {"index_topk_freq": 4, "index_topk_pattern": "FSSFS"}
    assert keyed_layers(keys, 7, "") == (0, 3, 5, 6)
    assert keyed_layers({"index_topk_pattern": ["F", "S", "F"]}, 3, "") == (0, 2)
    # The defaults (frequency 1) and a pattern without "S": every layer, as before.
    assert keyed_layers({}, LAYERS, "") is None
    assert keyed_layers({"index_topk_freq": 1, "index_topk_pattern": "FFF"}, 3, "") is None


def test_glm5_every_fourth_indexer_holds_fewer_weights_and_keys() -> None:
    plain, shared = parse_config(GLM5), parse_config({**GLM5, "index_topk_freq": 4})
    assert plain.indexer is not None
    assert plain.indexer.layers is None
    assert shared.indexer is not None
    assert shared.indexer.layers == EVERY_FOURTH
    for tp in (1, 8):
        less = param_counts(plain, tp).attention - param_counts(shared, tp).attention
        assert less == (LAYERS - 21) * INDEXER
    assert param_counts(plain).small - param_counts(shared).small == (LAYERS - 21) * 256
    assert kv_cache_shape(plain, "fp8").bytes_per_token == LAYERS * (LATENT_FP8 + KEY) == 61464
    assert kv_cache_shape(shared, "fp8").bytes_per_token == LAYERS * LATENT_FP8 + 21 * KEY
    assert kv_cache_shape(shared, "fp8").bytes_per_token == 53940
    # bfloat16 latents (576 values of 2 bytes); the keys stay FP8.
    assert kv_cache_shape(shared).bytes_per_token == LAYERS * 576 * 2 + 21 * KEY


@pytest.mark.parametrize(
    ("version", "own"),
    [("0.19", LAYERS), ("0.23", LAYERS), ("0.24", 21), ("0.29", 21), ("0.33", 21), ("0.34", 21)],
)
def test_releases_before_024_build_every_indexer(tmp_path: Path, version: str, own: int) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**GLM5, "index_topk_freq": 4}))
    options = {"vllm_version": version, "kv_cache_dtype": "fp8", "max_model_len": "202752"}
    plan = pasted_config_plan(path, "b200", tensor_parallel_size="8", **options)
    assert plan["kv_cache_bytes_per_token"] == LAYERS * LATENT_FP8 + own * KEY


def test_glm5_plan_at_034_drops_57_indexers_the_page_too(tmp_path: Path) -> None:
    plans = {}
    for name, config in (("plain", GLM5), ("shared", {**GLM5, "index_topk_freq": 4})):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(config))
        plans[name] = pasted_config_plan(
            path, "b200", tensor_parallel_size="16", vllm_version="0.34", kv_cache_dtype="fp8",
            max_model_len="202752",
        )  # fmt: skip
    plain, shared = plans["plain"], plans["shared"]
    # bfloat16 weights, the indexers replicated on every rank: 57 of them fewer.
    attention = plain["weights_by_role"]["attention"] - shared["weights_by_role"]["attention"]
    assert attention == 2 * 57 * INDEXER
    assert plain["kv_cache_bytes_per_token"] == 61464
    assert shared["kv_cache_bytes_per_token"] == 53940
    # One group of 78 latent caches and 21 indexer key caches, blocks of 64 tokens (0.34).
    assert shared["block_size"] == 64
    assert shared["num_blocks"] == shared["kv_cache_bytes"] // (64 * 53940)
    per_request = -(-202752 // 64)
    assert shared["request_bytes_at_max_model_len"] == per_request * 64 * 53940
    assert shared["fits"]
    assert shared["kv_cache_tokens"] > plain["kv_cache_tokens"]


def test_indexer_types_count_from_034() -> None:
    types = ["full" if layer % 2 == 0 else "shared" for layer in range(LAYERS)]
    arch = parse_config({**GLM5, "index_topk_freq": 4, "indexer_types": types})
    assert arch.indexer is not None
    assert arch.indexer.layers == tuple(range(0, LAYERS, 2))
    assert arch.at_release((0, 33)).indexer == arch.indexer.at_release((0, 33))
    assert kv_cache_shape(arch.at_release((0, 34)), "fp8").bytes_per_token == (
        LAYERS * LATENT_FP8 + 39 * KEY
    )
    assert kv_cache_shape(arch.at_release((0, 33)), "fp8").bytes_per_token == 53940
    assert kv_cache_shape(arch.at_release((0, 23)), "fp8").bytes_per_token == 61464
    # A config without the keys is the same object in every release (its counts are reused).
    plain = parse_config(GLM5)
    assert all(plain.at_release((0, minor)) is plain for minor in (19, 23, 24, 34))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"index_topk_freq": 0}, r"^index_topk_freq: expected a positive integer, got 0$"),
        ({"index_topk_freq": "4"}, r"^index_topk_freq: expected a positive integer"),
        ({"index_skip_topk_offset": 1.5}, r"^index_skip_topk_offset: expected an integer"),
        ({"index_topk_pattern": 5}, r"^index_topk_pattern: expected a string or a list"),
        ({"indexer_types": ["full"] * 3}, r"^indexer_types: expected a list of 78 entries"),
        ({"indexer_types": ["full", "local"] * 39}, r"^indexer_types: expected 'full' or"),
    ],
)
def test_bad_index_cache_keys_are_named(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config({**GLM5, **change})


def test_catalog_glm52_builds_21_indexers_and_reaches_1m_tokens_on_8_b200(tmp_path: Path) -> None:
    config = dict(load_models()["glm-5.2"].config)
    arch = parse_config(config)
    assert arch.indexer is not None
    # index_topk_freq 4, index_skip_topk_offset 3: max(layer - 2, 0) % 4 == 0.
    assert arch.indexer.layers == (0, 1, 2, *range(6, LAYERS, 4))
    assert kv_cache_shape(arch, "fp8").bytes_per_token == LAYERS * LATENT_FP8 + 21 * KEY
    less = param_counts(parse_config(GLM5)).total - param_counts(arch).total
    assert less == 57 * (INDEXER + 256)
    # vLLM 0.34.0's recipe (recipes/models/zai-org/GLM-5.2.yaml): the FP8 checkpoint with an
    # FP8 KV cache reaches the full 1M-token context on 8 x B200, where vLLM 0.32+ makes the
    # cache FP8 by itself (GlmMoeDsaForCausalLM on SM10x); the page plans the same.
    path = tmp_path / "glm-5.2.json"
    path.write_text(json.dumps(config))
    plan = pasted_config_plan(
        path, "b200", tensor_parallel_size="8", quantization="fp8", vllm_version="0.34",
        max_model_len="1048576",
    )  # fmt: skip
    assert plan["fits"]
    assert plan["kv_cache_bytes_per_token"] == 53940
    assert plan["kv_cache_tokens"] >= 1048576
