"""DeepSeek-V4's parameters and KV caches as vLLM 0.29.0 builds them (calculators.deepseek_v4),
with the arithmetic written out from vllm/models/deepseek_v4 and v1/core/kv_cache_utils.py."""

import json
from pathlib import Path

import pytest
from test_calc_api import pasted_config_plan

from infermeter.calculators.cache_specs import (
    CacheSpec,
    bytes_per_block,
    packed_groups,
    request_blocks,
)
from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.deepseek_v4 import (
    kv_bytes,
    layer_specs,
    model_groups,
    parameters,
    rank_parameters,
)
from infermeter.calculators.errors import ConfigError, InputError
from infermeter.calculators.kv_cache import kv_cache_shape

CONFIGS = Path(__file__).parent / "data" / "configs"

# DeepSeek-V4-Flash's config.json (huggingface.co/deepseek-ai/DeepSeek-V4-Flash, as snapshotted
# in public code; the keys vLLM reads): 43 layers, two sliding-only, then ratio 4 and 128 in turn.
FLASH = {
    "model_type": "deepseek_v4",
    "hidden_size": 4096,
    "num_hidden_layers": 43,
    "num_attention_heads": 64,
    "head_dim": 512,
    "q_lora_rank": 1024,
    "o_lora_rank": 1024,
    "o_groups": 8,
    "vocab_size": 129280,
    "n_routed_experts": 256,
    "n_shared_experts": 1,
    "num_experts_per_tok": 6,
    "moe_intermediate_size": 2048,
    "index_n_heads": 64,
    "index_head_dim": 128,
    "hc_mult": 4,
    "num_hash_layers": 3,
    "topk_method": "noaux_tc",
    "sliding_window": 128,
    "compress_ratios": [0, 0] + [4, 128] * 20 + [4, 0],  # one past the layers: the MTP layer
}


def test_flash_parameters_match_the_published_284b() -> None:
    # DeepSeek publishes V4-Flash as 284B parameters (13B activated).
    counted = parameters(FLASH)
    assert counted.total == 284_334_567_511
    assert abs(counted.total / 284e9 - 1) < 0.002
    # 43 layers x 256 experts x 3 x 4096 x 2048.
    assert counted.routed_experts == 43 * 256 * 3 * 4096 * 2048
    # The first 3 layers route by an int32 token -> 6 experts table.
    assert counted.int32 == 3 * 129280 * 6


def test_fp8_ds_mla_pages_of_a_ratio_4_layer() -> None:
    specs = {spec.kind: spec for spec in layer_specs(4, 512, 128, 128, kv_bytes=1)}
    assert specs == {
        # 64 tokens x 584 B = 37376, rounded up to 576 B: 65 x 576.
        "sliding": CacheSpec("sliding", 64, 65 * 576, 128),
        # 256 tokens / 4 = 64 latents x 584 B, the same page.
        "compressed": CacheSpec("compressed", 256, 65 * 576),
        # 4 tokens x float32 x 2 x 2 x 512 = 32768 B -> 57 x 576; window 2 x 4.
        "compressor_state": CacheSpec("compressor_state", 4, 57 * 576, 8),
        # 64 keys x (128 FP8 + 4 B scale) = 8448 B -> 15 x 576.
        "indexer": CacheSpec("indexer", 256, 15 * 576),
        # 4 tokens x float32 x 2 x 2 x 128 = 8192 B -> 15 x 576.
        "indexer_state": CacheSpec("indexer_state", 4, 15 * 576, 8),
    }


def test_pages_of_ratio_128_1_and_bf16_layers() -> None:
    assert layer_specs(128, 512, 128, 128, kv_bytes=1)[1:] == [
        CacheSpec("compressed", 256, 3 * 576),  # 2 latents x 584 B = 1168 -> 3 x 576
        CacheSpec("compressor_state", 8, 57 * 576, 128),  # 8 x 4 x 2 x 512 = 32768 B
    ]
    assert [spec.kind for spec in layer_specs(1, 512, 128, 128, kv_bytes=1)] == ["sliding"]
    # bfloat16 rows: 512 x 2 B a latent, pages rounded up to 512 B (64 keys x 132 B = 8448).
    bf16 = {spec.kind: spec.page_bytes for spec in layer_specs(4, 512, 128, 128, kv_bytes=2)}
    assert bf16["sliding"] == bf16["compressed"] == 64 * 1024
    assert bf16["indexer"] == 17 * 512
    fp4 = {spec.kind: spec.page_bytes for spec in layer_specs(4, 512, 128, 128, 1, True)}
    assert fp4["indexer"] == 8 * 576  # 64 keys x (64 + 4) B = 4352


def test_flash_packs_into_five_groups() -> None:
    ratios = [0, 0] + [4, 128] * 20 + [4]
    specs = [spec for ratio in ratios for spec in layer_specs(ratio, 512, 128, 128, kv_bytes=1)]
    groups = packed_groups(specs)
    # Balanced buckets: 43 sliding (one page size), 21 + 21 ratio-4 states, 20 ratio-128
    # states; the full bucket (21 x 37440, 21 x 8640, 20 x 1728) is not balanced, kept whole.
    # Repeats: 22 in [21, 43] pads least (43 -> 44, 21 -> 22, 20 -> 22: 4 layers).
    assert [len(group.specs) for group in groups] == [22, 21, 62, 42, 20]
    assert [group.page_bytes for group in groups] == [
        22 * 37440,
        21 * 37440,
        21 * 37440 + 21 * 8640 + 20 * 1728,
        21 * 32832 + 21 * 8640,
        20 * 32832,
    ]
    assert bytes_per_block(groups) == 1_002_240
    # One request of 1,048,576 tokens with 8192 tokens in flight: 4096 full blocks, each
    # sliding group ceil((127 + 8192) / 64) + 1, the ratio-4 states ceil((7 + 8192) / 4) + 1,
    # the ratio-128 states ceil((127 + 8192) / 8) + 1.
    assert request_blocks(groups, 1_048_576, 8192) == 4096 + 2 * 131 + 2051 + 1041


@pytest.mark.parametrize(
    ("ratios", "message"),
    [
        ([0, 4], r"^compress_ratios: expected a list of at least 43 integers"),
        ([0] * 42 + [8], r"^compress_ratios: expected 0, 1, 4 or 128 for each layer"),
    ],
)
def test_bad_compress_ratios_are_named(ratios: list[int], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parameters({**FLASH, "compress_ratios": ratios})


def test_calc_vram_plans_v4_flash_at_tp8_on_h200_as_vllm_builds_it() -> None:
    # tests/data/configs/deepseek-v4-flash.json: FLASH with the checkpoint's other keys
    # (max_position_embeddings 1048576, qk_rope_head_dim 64, its fp8 quantization_config with
    # 128x128 UE8M0 blocks); vLLM's loader takes expert_dtype fp4 when the config omits it.
    # The calculator page (as the browser runs it) gives the same plan (pasted_config_plan).
    plan = pasted_config_plan(
        CONFIGS / "deepseek-v4-flash.json", "h200-sxm", tensor_parallel_size="8",
        kv_cache_dtype="fp8", vllm_version="0.29", max_model_len="1048576",
    )  # fmt: skip
    roles = plan["weights_by_role"]
    fp8 = 1 + 1 / (128 * 128)  # one UE8M0 byte per 128x128 block
    vocab = 129280 // 8 * 4096  # embedding and lm_head split by vocabulary, bfloat16
    assert roles["embedding"] == roles["lm_head"] == 2 * vocab
    # fused_wqa_wkv replicated; wq_b, wo_a, wo_b split 8 ways; the indexer's wq_b (21 layers)
    # replicated: 43 x (4096 x 1536 + 3 x 33554432 / 8) + 21 x 1024 x 64 x 128, in FP8.
    attention = 43 * (4096 * 1536 + 3 * 33554432 // 8) + 21 * 1024 * 64 * 128
    assert roles["attention"] == round(attention * fp8)
    # 256 routed experts per layer, 3 x 4096 x 2048 / 8 each on a rank, MXFP4 (a byte per 32).
    assert roles["experts"] == round(43 * 256 * 3 * 4096 * 2048 // 8 * (0.5 + 1 / 32))
    assert roles["shared_experts"] == round(43 * 3 * 4096 * 2048 // 8 * fp8)
    assert roles["router"] == 2 * 43 * 4096 * 256  # the gate, bfloat16, replicated
    assert roles["four_byte"] == 4 * (rank_parameters(FLASH, 8).four_byte)
    # Five groups; a block is the widest group's pages (62 full-attention specs) = 1,002,240 B.
    groups = model_groups(FLASH, kv_bytes=1)
    assert [len(group.specs) for group in groups] == [22, 21, 62, 42, 20]
    assert bytes_per_block(groups) == 1_002_240
    assert plan["num_blocks"] == plan["kv_cache_bytes"] // 1_002_240
    # One 1M-token request with 2 x 8192 tokens in flight (async scheduling, 0.26+): 4096
    # compressed/indexer pages, 2 x (ceil((127 + 16384) / 64) + 1) sliding pages, ratio-4
    # states ceil((7 + 16384) / 4) + 1 and ratio-128 states ceil((127 + 16384) / 8) + 1.
    per_request = 4096 + 2 * 259 + 4099 + 2065
    assert plan["request_bytes_at_max_model_len"] == per_request * 1_002_240
    assert plan["max_concurrency"] == round(plan["num_blocks"] / per_request, 4)
    assert plan["kv_cache_tokens"] == int(plan["num_blocks"] / per_request * 1048576)
    assert plan["kv_cache_groups"] == 5
    assert plan["fits"]
    assert any(note.startswith("DeepSeek-V4: the KV cache is planned") for note in plan["notes"])
    # FlashMLA turns --kv-cache-dtype auto into fp8 (fp8_ds_mla): the same groups.
    assert kv_bytes("auto") == kv_bytes("fp8") == 1
    assert kv_bytes("bfloat16") == 2


def test_the_kv_size_per_token_users_refuse_deepseek_v4_naming_why() -> None:
    arch = parse_config(json.loads((CONFIGS / "deepseek-v4-flash.json").read_text()))
    with pytest.raises(InputError, match=r"^model_type 'deepseek_v4': DeepSeek-V4's caches"):
        kv_cache_shape(arch)
