"""The profiling run's multimodal encoder pass (calculators/mm_profile.py), held to a vLLM 0.10.2
startup log that prints the activation peak:
https://github.com/mrpid12org/imageworks/blob/229b9475de9abcc7caf5d28739f1852657a8226b/vllm_server.log
(Qwen2-VL-2B-Instruct, 15.99 GiB, gpu_memory_utilization 0.8, max_model_len 4096, 2048 batched
tokens: "2.65 GiB for peak activation", "GPU KV cache size: 223,712 tokens")."""

import json
from pathlib import Path

import pytest
from test_arch_families import QWEN2_5_VL_7B, QWEN2_VL_2B
from test_calc_api import pasted_config_plan

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.mm_profile import dummy_items, encoder_profile
from infermeter.calculators.vllm_plan import plan_vllm
from infermeter.calculators.vllm_settings import GIB, VllmSettings

LOGGED = VllmSettings(
    int(15.99 * GIB),
    vllm_version="0.10.2",
    gpu_memory_utilization=0.8,
    max_model_len=4096,
    max_num_batched_tokens=2048,
)


def test_qwen2_vl_2b_activation_peak_is_the_encoder_pass_as_logged() -> None:
    plan = plan_vllm(parse_config(QWEN2_VL_2B), LOGGED)
    # Within 15 % of the logged 2.65 GiB: doubling or halving the term fails.
    assert plan.activation_peak_bytes / GIB == pytest.approx(2.65, rel=0.15)
    assert plan.kv_cache_tokens == pytest.approx(223_712, rel=0.05)


def test_the_text_model_alone_has_no_encoder_pass() -> None:
    text_only = {key: value for key, value in QWEN2_VL_2B.items() if key != "vision_config"}
    with_tower = plan_vllm(parse_config(QWEN2_VL_2B), LOGGED)
    alone = plan_vllm(parse_config(text_only), LOGGED)
    assert parse_config(text_only).vision_encoder is None
    assert alone.activation_peak_bytes < with_tower.activation_peak_bytes / 3


def test_the_largest_qwen2_vl_image_is_16384_tokens_of_4_patches() -> None:
    encoder = parse_config(QWEN2_VL_2B).vision_encoder
    assert encoder is not None
    assert (encoder.max_tokens_per_item, encoder.patches_per_token) == (16384, 4)
    assert encoder.pixel_values_per_patch == 3 * 2 * 14 * 14
    assert not encoder.gated_mlp
    seven_b = parse_config(QWEN2_5_VL_7B).vision_encoder
    assert seven_b is not None
    assert seven_b.gated_mlp
    assert seven_b.mlp_width == 3420


@pytest.mark.parametrize(
    ("version", "batched", "items"),
    [((0, 8), 16384, 1), ((0, 8), 16385, 2), ((0, 10), 16385, 1), ((0, 10), 32768, 2)],
)
def test_dummy_items_round_up_in_0_8_and_down_from_0_10(
    version: tuple[int, int], batched: int, items: int
) -> None:
    encoder = parse_config(QWEN2_VL_2B).vision_encoder
    assert encoder is not None
    assert dummy_items(encoder, version, batched, seqs=256) == items
    assert dummy_items(encoder, version, batched, seqs=1) == 1


def test_the_rotary_step_sets_a_peak_per_release() -> None:
    encoder = parse_config(QWEN2_VL_2B).vision_encoder
    assert encoder is not None
    peaks = {
        version: encoder_profile(encoder, version, 2048, 256, 1, 2).peak_bytes
        for version in ((0, 10), (0, 11), (0, 34))
    }
    # 0.11 rotates q and k together in float32, 0.22 on in bfloat16 without the copies.
    assert peaks[(0, 11)] > peaks[(0, 10)] > peaks[(0, 34)]


def test_calc_vram_of_a_pasted_qwen2_vl_config_as_the_page_does(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(QWEN2_VL_2B))
    plan = pasted_config_plan(
        path, "rtx-4090", vllm_version="0.10.2", max_model_len="4096", max_num_batched_tokens="2048"
    )
    assert plan["activation_peak_bytes"] > 2 * GIB


def test_the_plan_says_what_the_encoder_pass_costs() -> None:
    notes = plan_vllm(parse_config(QWEN2_VL_2B), LOGGED).notes
    assert any(
        note.startswith("the profiling run encodes 1 dummy image(s) of 65,536") for note in notes
    )


def test_the_v2_runner_frees_the_pixel_values_before_the_decoder_pass() -> None:
    encoder = parse_config(QWEN2_VL_2B).vision_encoder
    assert encoder is not None
    v1 = encoder_profile(encoder, (0, 34), 2048, 256, 1, 2)
    v2 = encoder_profile(encoder, (0, 34), 2048, 256, 1, 2, pixels_held=False)
    assert v1.held_bytes - v2.held_bytes == 65536 * 3 * 2 * 14 * 14 * 4
    assert v1.peak_bytes == v2.peak_bytes
