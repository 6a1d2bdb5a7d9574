"""Inkling's parameters and KV caches as vLLM builds them (calculators.inkling), with the
arithmetic written out from vllm/models/inkling/nvidia (model.py, attention.py, moe.py,
sconv_swa_attn.py; unchanged in what holds memory from 0.29.0 to 0.34.0) and
v1/core/kv_cache_utils.py (unify_kv_cache_spec_page_size, the uniform-page groups).

tests/data/configs/inkling.json: no copy of the published config.json
(huggingface.co/thinkingmachines/Inkling) was found in the public code searched. It is
transformers 5.24's InklingTextConfig defaults (its checkpoint: thinkingmachines/Inkling; 66
layers of hidden 6144, 64 heads of 128, 8 KV heads on the 11 full-attention layers and 16 on
the 55 sliding ones, a 512-token window, 256 routed experts of 3072 top-6, 2 sink experts,
dense MLPs of 24576, padded vocabulary 201024, 200058 rows unpadded) under the names of vLLM's
InklingModelConfig, with what vLLM 0.34.0's recipes/models/thinkingmachines/Inkling.yaml states
(the layer 0-1 dense MLPs: dense_mlp_idx 2; 1M context) and, as Inkling-Small's published
config.json has them (third-party snapshots), the embedding norm, the gate bias and global
scales. Published size: 975B parameters, 41B active (the recipe)."""

import json
from pathlib import Path

import pytest
from cli_helpers import json_output
from test_calc_api import page_vram_plan

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import InputError
from infermeter.calculators.inkling import model_groups
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.param_count import param_counts
from infermeter.calculators.quantization import weight_format

PATH = Path(__file__).parent / "data" / "configs" / "inkling.json"
CONFIG = json.loads(PATH.read_text())
ARCH = parse_config(CONFIG)


def test_parameters_against_the_published_size() -> None:
    counts = param_counts(ARCH)
    # qkvr: 64 query heads, K and V of the layer's KV heads, 16 relative channels a head; wo_ud.
    full = 6144 * (8192 + 2 * 8 * 128 + 16 * 64) + 8192 * 6144
    local = 6144 * (8192 + 2 * 16 * 128 + 16 * 64) + 8192 * 6144
    assert counts.attention == 11 * full + 55 * local
    assert counts.dense_mlp == 2 * 3 * 6144 * 24576
    assert counts.experts == 64 * 256 * 3 * 6144 * 3072
    assert counts.shared_experts == 64 * 2 * 3 * 6144 * 3072  # the sink experts
    assert counts.router == 64 * 264 * 6144  # 256 + 2 experts, rounded up to 8 rows
    assert counts.four_byte == 64 * (1 + 256)  # float32 global scale and gate bias
    # 947.0B and 41.06B active beside the published 975B and 41B: vLLM loads neither the 8
    # MTP heads (a separate draft model) nor, for InklingForCausalLM, the towers.
    assert counts.total == 947_027_923_522
    assert round(counts.active / 1e9, 2) == 41.06
    # The embedding is replicated on every rank, the lm_head split.
    at_8 = param_counts(ARCH, 8)
    assert at_8.embedding == 201024 * 6144
    assert at_8.lm_head == 201024 // 8 * 6144
    assert at_8.attention == (11 * full + 55 * local) // 8


def test_sink_experts_stay_in_the_model_dtype() -> None:
    fmt = weight_format(ARCH, "fp8")
    assert "experts" in fmt.quantized_roles
    assert "shared_experts" not in fmt.quantized_roles


def test_the_caches_grouped_with_one_page_size_at_tp8() -> None:
    groups = model_groups(ARCH.inkling or {}, kv_bytes=2, tp=8, block_size=16)
    # Per rank: full attention 1 KV head, 16 x 2 x 128 x 2 = 8192 B a block; sliding 2 heads,
    # 16384 B; the convolution state 4 taps x heads x (256 + 2 x 6144 / heads, to a power of
    # two) x 2 = 16384 B for either kind. Every page grows to 16384 B: full blocks hold 32
    # tokens. 11 full, 55 sliding, 66 state layers: groups of 11, 1 + 5 + 6 of them.
    assert len(groups) == 12
    assert {len(group.specs) for group in groups} == {11}
    assert {spec.page_bytes for group in groups for spec in group.specs} == {16384}
    # In order of the kinds' first layers: sliding (layer 0), its state, full (layer 5).
    assert [group.specs[0].block_size for group in groups] == [16] * 5 + [4] * 6 + [32]
    with pytest.raises(InputError, match=r"^tensor_parallel_size: Inkling's short-conv"):
        model_groups(ARCH.inkling or {}, kv_bytes=2, tp=16, block_size=16)


def test_calc_vram_plans_it_at_tp8_on_b300_and_the_page_agrees() -> None:
    cli = json_output(
        "calc", "vram", "--model", str(PATH), "--gpu", "b300", "-tp", "8",
        "--vllm-version", "0.34", "--max-model-len", "1048576",
    )  # fmt: skip
    plan = cli["vllm_plan"]
    # vLLM 0.34's blocks of 64 tokens: full attention 64 x 512 = 32768 B a block, sliding
    # 65536 B, the state 16384 B (as above); every page grows to 65536 B, full blocks hold 128
    # tokens and state blocks 16.
    block = 11 * 65536
    assert plan["num_blocks"] == plan["kv_cache_bytes"] // block
    assert plan["kv_cache_groups"] == 12
    # A 1M-token request: 1048576 / 128 full blocks; the sliding and state groups hold their
    # window and the tokens in flight (2 x max_num_batched_tokens).
    flight = 2 * plan["max_num_batched_tokens"]
    sliding = -(-(511 + flight) // 64) + 1
    state = -(-(3 + flight) // 16) + 1
    per_request = 1048576 // 128 + 5 * sliding + 6 * state
    assert plan["request_bytes_at_max_model_len"] == per_request * block
    assert plan["kv_cache_tokens"] == int(plan["num_blocks"] / per_request * 1048576)
    assert plan["kv_cache_bytes_per_token"] == 11 * 512  # the full-attention layers' K/V
    assert any(note.startswith("Inkling: each layer's K/V") for note in plan["notes"])
    assert not any(note.startswith("Inkling is served from") for note in plan["notes"])
    # vLLM 0.19 (calc vram's default release) does not serve it: the plan says so.
    old = json_output("calc", "vram", "--model", str(PATH), "--gpu", "b300", "-tp", "8")
    assert (
        "Inkling is served from vLLM 0.26 (its recipe's min_vllm_version); this plan "
        "applies 0.19's memory terms to it" in old["vllm_plan"]["notes"]
    )
    assert plan == page_vram_plan(
        PATH, gpu="b300", tensor_parallel_size="8", vllm_version="0.34", max_model_len="1048576"
    )


def test_the_kv_size_per_token_users_refuse_it_naming_why() -> None:
    with pytest.raises(InputError, match=r"^model_type 'inkling_model': Inkling's caches"):
        kv_cache_shape(ARCH)


def test_the_wrappers_towers() -> None:
    # InklingForConditionalGeneration: an audio embedding of 80 x 256 mel bins and a 3-layer
    # HMLP over 40 x 40 x 2 patches of 3 channels. plan_out_scales: spatial folds 5, 2, 2, 2,
    # then the temporal 2; 3 layers take (1,5,5,128), (1,20,20,1216), (2,40,40,9600): linear
    # maps 75 -> 128, 128 x 16 -> 1216 (each with an RMSNorm) and 1216 x 8 -> 6144.
    wrapper = {
        "model_type": "inkling_mm_model",
        "text_config": {key: value for key, value in CONFIG.items() if key != "model_type"},
        "audio_config": {"decoder_dmodel": 6144, "n_mel_bins": 80, "mel_vocab_size": 256,
                         "use_audio_norm": True, "audio_mode": "dmel"},
        "vision_config": {"vision_encoder_type": "hmlp", "decoder_dmodel": 6144, "patch_size": 40,
                          "temporal_patch_size": 2, "n_channels": 3, "n_layers": 3,
                          "use_vision_norm": True},
    }  # fmt: skip
    audio = 80 * 256 * 6144 + 6144
    vision = 75 * 128 + 128 + 2048 * 1216 + 1216 + 9728 * 6144 + 6144
    for tp in (1, 8):  # plain modules, whole on every rank
        counts = param_counts(parse_config(wrapper), tp)
        assert counts.vision == audio + vision
        assert counts.total == param_counts(ARCH, tp).total + audio + vision
