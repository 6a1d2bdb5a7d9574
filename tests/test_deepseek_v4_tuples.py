"""DeepSeek-V4's request sizing in vLLM 0.22-0.28 (calculators.deepseek_v4_tuples), held to the one
public log that prints it: vLLM issue 44376 (DeepSeek-V4-Flash, 2 GH200, TP 2 + EP, fp8 KV, block
256, max_model_len 30000, the offline LLM class's 16384 batched tokens), where 0.22 refuses to
start: "6.66 GiB KV cache is needed ... available KV cache memory (5.44 GiB) ... the estimated
maximum model length is 13528"."""

import json
from pathlib import Path

from catalog_gpus import traits

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.deepseek_v4 import model_specs
from infermeter.calculators.deepseek_v4_tuples import (
    NOTE,
    largest_length,
    request_bytes,
    tuple_groups,
)
from infermeter.calculators.vllm_plan import plan_vllm
from infermeter.calculators.vllm_settings import GIB, VllmSettings

CONFIGS = Path(__file__).parent / "data" / "configs"
FLASH = json.loads((CONFIGS / "deepseek-v4-flash.json").read_text())
SPECS = model_specs(FLASH, 1)


def test_flash_layer_tuples_and_groups_as_0_22_lays_them_out() -> None:
    tuple_bytes, groups = tuple_groups(SPECS)
    # Full-group pages: ratio-128 latents 2 x 584 -> 1728, indexer keys 64 x 132 -> 8640,
    # ratio-4 latents 64 x 584 -> 37440 (576-byte alignment).
    assert tuple_bytes == 1728 + 8640 + 37440
    # 62 full-attention caches; 43 sliding windows split 22 + 21 (tuples = 22); the ratio-4
    # compressor and indexer states (21 + 21); the ratio-128 compressor states (20).
    assert [len(group) for group in groups] == [62, 22, 21, 42, 20]


def test_a_30000_token_request_needs_the_logged_6_66_gib() -> None:
    needed = request_bytes(SPECS, 30000, 16384)
    # 22 tuples x 47,808 B x (118 + 259 + 259 + 4099 + 2065) pages.
    assert needed == 22 * 47808 * 6800
    assert round(needed / GIB, 2) == 6.66
    # With 8192 batched tokens (the API server's default) it would have been 3.40 GiB.
    assert round(request_bytes(SPECS, 30000, 8192) / GIB, 2) == 3.40


def test_the_longest_length_in_5_44_gib_is_vllms_estimate() -> None:
    # The log's 13,528 comes from the unrounded available memory; 5.44 GiB exactly gives 13,524.
    assert largest_length(SPECS, int(5.44 * GIB), 30000, 16384) == 13524


def _plan(version: str) -> dict[str, object]:
    settings = VllmSettings(
        gpu_memory_bytes=96 * 10**9,
        gpu_memory_utilization=0.95,
        tensor_parallel_size=2,
        enable_expert_parallel=True,
        max_model_len=30000,
        max_num_batched_tokens=16384,
        max_num_seqs=1024,
        kv_cache_dtype="fp8",
        block_size=256,
        gpu=traits("gh200-96gb"),
        vllm_version=version,
    )
    return plan_vllm(parse_config(FLASH), settings).as_dict()


def test_the_plan_sizes_requests_by_tuples_before_0_29_only() -> None:
    before, packed = _plan("0.22"), _plan("0.29")
    assert before["request_bytes_at_max_model_len"] == 22 * 47808 * 6800
    assert NOTE in before["notes"]
    assert NOTE not in packed["notes"]
    assert packed["request_bytes_at_max_model_len"] != before["request_bytes_at_max_model_len"]
