"""Attention-free state-space models (Mamba, Falcon-Mamba, Mamba-2): one norm and one mixer a
layer, no KV, one state page per sequence and layer (calculators.state_space); Zamba2's Mamba-2
layers with shared transformer blocks (calculators.zamba2).

tests/data/configs/falcon-mamba-7b.json is tiiuae/falcon-mamba-7b's config.json as copied in a
public repository (danielgonzagat/penin-monorepo, SYSTEM/opt/llm_base/falcon-mamba-7b/config.json
at 9c1f8da3); transformers' model doc calls it a model "in 7B parameter size"
(huggingface/transformers docs/source/en/model_doc/falcon_mamba.md), the count is 7.27B.
Mamba-Codestral-7B-v0.1 has the shape of transformers' Mamba2Config defaults
(configuration_mamba2.py, 5.24) and 7,285,403,648 parameters
(https://ai-tldr.dev/models/codestral-mamba/). state-spaces/mamba-2.8b: d_model 2560,
64 layers, vocabulary 50277 padded to 50280 (LaurentMazare/mamba.rs src/constants.rs, citing its
config.json). Zamba2-2.7B: transformers' Zamba2Config defaults (its docstring's checkpoint) with
the two shared blocks Zyphra's README describes (github.com/Zyphra/Zamba2, "two shared attention
blocks which are interleaved in an ABAB pattern", a LoRA projector on each shared MLP).
"""

import json
from pathlib import Path
from typing import Any

import pytest

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import InputError
from infermeter.calculators.kv_blocks import state_pages
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.mamba2 import MAMBA2
from infermeter.calculators.mixers import MAMBA
from infermeter.calculators.model_arch import FULL
from infermeter.calculators.param_count import param_counts
from infermeter.calculators.vllm_plan import plan_vllm
from infermeter.calculators.vllm_settings import GIB, VllmSettings

CONFIGS = Path(__file__).parent / "data" / "configs"
CODESTRAL: dict[str, Any] = {
    "model_type": "mamba2",
    "hidden_size": 4096,
    "num_hidden_layers": 64,
    "vocab_size": 32768,
}
MAMBA_2_8B: dict[str, Any] = {
    "model_type": "mamba",
    "hidden_size": 2560,
    "num_hidden_layers": 64,
    "vocab_size": 50280,
}


def _falcon_mamba() -> dict[str, Any]:
    config: dict[str, Any] = json.loads((CONFIGS / "falcon-mamba-7b.json").read_text())
    return config


def test_falcon_mamba_counts_its_published_7b() -> None:
    arch = parse_config(_falcon_mamba())
    assert arch.layer_kinds == (MAMBA,) * 64
    assert arch.num_attention_heads == 0
    assert param_counts(arch).total == pytest.approx(7e9, rel=0.05)


def test_codestral_mamba_from_transformers_defaults_counts_exactly() -> None:
    arch = parse_config(CODESTRAL)
    assert arch.layer_kinds == (MAMBA2,) * 64
    assert param_counts(arch).total == 7_285_403_648


def test_mamba_ties_its_embeddings_by_default_and_has_no_mlp() -> None:
    counts = param_counts(parse_config(MAMBA_2_8B))
    assert counts.lm_head == 0
    assert counts.dense_mlp == 0
    assert counts.total == pytest.approx(2.8e9, rel=0.02)


def test_state_space_models_hold_no_kv_and_one_state_per_layer() -> None:
    kv = kv_cache_shape(parse_config(_falcon_mamba()))
    assert kv.full_layers == kv.sliding_layers == 0
    assert kv.bytes_per_token_per_layer == 0
    # mamba1_state_shape: conv (kernel - 1) x inner, SSM inner x state, both bf16.
    assert kv.state_bytes_per_sequence_per_layer == (3 * 8192 + 8192 * 16) * 2
    # mamba2_state_shape at TP 2: conv (inner + 2 x groups x state) / 2 x 3, SSM 64 x 64 x 128.
    tp2 = kv_cache_shape(parse_config(CODESTRAL), tensor_parallel_size=2)
    assert tp2.state_bytes_per_sequence_per_layer == ((8192 + 2 * 8 * 128) // 2 * 3 + 64**3 * 2) * 2


def test_an_attention_free_plan_counts_sequences_of_state_not_tokens_of_kv() -> None:
    arch = parse_config(_falcon_mamba())
    settings = VllmSettings(gpu_memory_bytes=80 * GIB, max_model_len=4096, vllm_version="0.29")
    plan = plan_vllm(arch, settings)
    state = plan.state_bytes_per_sequence
    # One block per request: max_model_len tokens (mamba_block_size = max_model_len).
    assert plan.block_size == 4096
    assert plan.max_concurrency == plan.kv_cache_bytes // state
    assert plan.kv_cache_tokens == plan.max_concurrency * 4096


ZAMBA2_2_7B: dict[str, Any] = json.loads((CONFIGS / "zamba2-2.7b.json").read_text())


def test_zamba2_counts_its_shared_blocks_once() -> None:
    two = param_counts(parse_config(ZAMBA2_2_7B))
    one = param_counts(parse_config({**ZAMBA2_2_7B, "num_mem_blocks": 1}))
    assert two.total == pytest.approx(2.7e9, rel=0.02)
    # One more block: attention 2H -> 3 x 2H and 2H -> H, a gated MLP of 4H, two norms.
    hidden = 2560
    block = 2 * hidden * 6 * hidden + 2 * hidden * hidden + 3 * hidden * 4 * hidden + 3 * hidden
    assert two.total - one.total == block


def test_zamba2_keeps_kv_in_its_hybrid_layers_and_a_state_in_every_layer() -> None:
    arch = parse_config(ZAMBA2_2_7B)
    kv = kv_cache_shape(arch, tensor_parallel_size=2)
    assert arch.layer_kinds.count(FULL) == kv.full_layers == 9
    assert kv.state_layers == 54
    # 32 heads of 2 x 2560 / 32 = 160, K and V, bf16, split over 2 ranks.
    assert kv.bytes_per_token_per_layer == 2 * 16 * 160 * 2
    # Mamba-2 with 8 heads of 640, one group of state 64, kernel 4, over 2 ranks.
    conv = (5120 + 2 * 2 * 64) // 2 * 3
    assert kv.state_bytes_per_sequence_per_layer == (conv + 4 * 640 * 64) * 2


def test_a_hybrid_request_holds_two_state_pages_from_vllm_0_27_one_before() -> None:
    arch = parse_config(ZAMBA2_2_7B)
    kv = kv_cache_shape(arch)
    assert [state_pages(kv, version) for version in ((0, 26), (0, 27), (0, 29))] == [1, 2, 2]
    assert state_pages(kv_cache_shape(parse_config(_falcon_mamba())), (0, 29)) == 1
    # In the plan: 9 attention layers and 54 Mamba-2 layers make groups of 9 layers, one of
    # attention and six of state; a request of 4096 tokens takes its attention blocks and two
    # pages in each state group.
    settings = VllmSettings(gpu_memory_bytes=80 * GIB, max_model_len=4096, vllm_version="0.29")
    plan = plan_vllm(arch, settings)
    page = plan.block_size * kv.bytes_per_token_per_layer
    blocks = -(-4096 // plan.block_size) + 6 * 2
    assert plan.request_bytes_at_max_model_len == blocks * 9 * page


def test_a_tensor_parallel_size_must_split_the_state_layers_as_vllm_does() -> None:
    settings = VllmSettings(gpu_memory_bytes=80 * GIB, tensor_parallel_size=3)
    with pytest.raises(
        InputError, match=r"^tensor_parallel_size: 3 does not divide .* 128 Mamba-2"
    ):
        plan_vllm(parse_config(CODESTRAL), settings)
    with pytest.raises(InputError, match=r"does not divide the model's 8192 Mamba inner channels"):
        plan_vllm(parse_config(_falcon_mamba()), settings)


def test_zamba2_without_a_block_list_takes_transformers_default_pattern() -> None:
    listed = parse_config(ZAMBA2_2_7B)
    default = {key: value for key, value in ZAMBA2_2_7B.items() if key != "layers_block_type"}
    assert parse_config(default).layer_kinds == listed.layer_kinds


def test_zamba2_ties_its_lm_head_as_vllm_does_whatever_the_config_says() -> None:
    untied = param_counts(parse_config({**ZAMBA2_2_7B, "tie_word_embeddings": False}))
    assert untied.lm_head == 0
