"""Kimi Linear (model_type kimi_linear): KDA layers between MLA layers, DeepSeek-style experts.

tests/data/configs/kimi-linear-48b-a3b-instruct.json holds the structural fields of
moonshotai/Kimi-Linear-48B-A3B-Instruct's config.json as four public projects transcribe them
alike (a static model-description package pinning config revision 5d029d18, an MLX and a Rust
loader's tests, a KDA kernel note); the Hugging Face file itself is not readable from here, so
the model is not in the catalog. MoonshotAI/Kimi-Linear's README publishes 48B total / 3B
activated. Its length is `model_max_length` 1048576 (no max_position_embeddings), as the Rust
loader's test transcribes it. The shapes are vLLM's (0.24.0 model_executor/models/kimi_linear.py and
layers/mamba/gdn/kimi_gdn_linear_attn.py; 0.29.0 models/kimi_k3/nvidia/model.py serves the same
layers), the state's shapes and dtypes `mamba_utils.kda_state_shape` / `kda_state_dtype`.
"""

import json
from pathlib import Path
from typing import Any

import pytest

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.model_arch import FULL
from infermeter.calculators.param_count import param_counts
from infermeter.calculators.vllm_plan import plan_vllm
from infermeter.calculators.vllm_settings import GIB, VllmSettings, default_max_model_len

CONFIG = Path(__file__).parent / "data" / "configs" / "kimi-linear-48b-a3b-instruct.json"


def _config(**changes: Any) -> dict[str, Any]:
    config: dict[str, Any] = json.loads(CONFIG.read_text())
    config.update(changes)
    return config


def test_kimi_linear_reads_kda_and_mla_layers_by_their_one_based_list() -> None:
    arch = parse_config(_config())
    assert not arch.reading_notes  # read by name, not generically
    assert arch.layer_kinds.count("kda") == 20
    assert [i for i, kind in enumerate(arch.layer_kinds) if kind == FULL] == [
        3, 7, 11, 15, 19, 23, 26
    ]  # fmt: skip
    assert arch.mla is not None
    assert arch.mla.q_lora_rank == 0
    assert arch.moe is not None
    assert arch.moe.moe_layers == tuple(range(1, 27))
    assert arch.moe.experts_per_token == 8
    assert arch.moe.shared_intermediate_size == 1024


def test_kimi_linear_counts_match_the_published_size() -> None:
    counts = param_counts(parse_config(_config()))
    # Counted from the shapes vLLM builds: 49.12B total, 3.48B active (0.75B of it embedding
    # and lm_head); the published names round to 48B and 3B.
    assert counts.total == 49_122_675_072
    assert counts.active == 3_484_453_248
    assert abs(counts.total / 48e9 - 1) < 0.03


def test_kimi_linear_cache_mla_per_token_and_kda_state_per_sequence() -> None:
    arch = parse_config(_config())
    kv = kv_cache_shape(arch)
    assert kv.full_layers == 7
    assert kv.state_layers == 20
    assert kv.bytes_per_token_per_layer == (512 + 64) * 2
    # conv: 3 x 32 x 128 channels x 3 steps in bf16; recurrent: 32 x 128 x 128 in float32.
    assert kv.state_bytes_per_sequence_per_layer == 3 * 4096 * 3 * 2 + 32 * 128 * 128 * 4
    at_tp2 = kv_cache_shape(arch, tensor_parallel_size=2)
    assert at_tp2.state_bytes_per_sequence_per_layer * 2 == kv.state_bytes_per_sequence_per_layer
    assert at_tp2.bytes_per_token_per_layer == kv.bytes_per_token_per_layer  # MLA: replicated


def test_kimi_linear_plans_with_state_per_sequence() -> None:
    arch = parse_config(_config())
    plan = plan_vllm(arch, VllmSettings(80 * GIB, tensor_parallel_size=2, max_model_len=65536))
    assert plan.state_bytes_per_sequence == 20 * (3 * 2048 * 3 * 2 + 16 * 128 * 128 * 4)
    assert plan.max_concurrency > 1


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("attn_res_block_size", 12),
        ("routed_expert_hidden_size", 3584),
        ("mla_use_output_gate", True),
    ],
)
def test_kimi_k3_mechanisms_in_a_kimi_linear_config_are_refused_naming_them(
    key: str, value: object
) -> None:
    with pytest.raises(ConfigError, match=rf"^{key}: Kimi K3's .* is not modelled"):
        parse_config(_config(**{key: value}))


def test_full_rank_kda_gate_and_bad_layer_lists_are_refused() -> None:
    config = _config()
    config["linear_attn_config"] = {**config["linear_attn_config"], "use_full_rank_gate": True}
    with pytest.raises(ConfigError, match=r"^linear_attn_config\.use_full_rank_gate: "):
        parse_config(config)
    config["linear_attn_config"] = {**config["linear_attn_config"], "use_full_rank_gate": False}
    config["linear_attn_config"]["kda_layers"] = [0, 1]
    with pytest.raises(ConfigError, match=r"^linear_attn_config\.kda_layers: expected"):
        parse_config(config)


def test_vllm_derives_the_length_from_model_max_length_and_the_smallest_length_key() -> None:
    # vLLM (config/model.py, model_arch_config_convertor.py): the smallest of its length keys,
    # and model_max_length over all of them; 2048 when none is present.
    assert default_max_model_len(parse_config(_config())) == 1_048_576
    no_length = _config()
    del no_length["model_max_length"]
    assert default_max_model_len(parse_config(no_length)) == 2048
    both = _config(model_max_length=None, max_position_embeddings=131072, seq_length=65536)
    assert default_max_model_len(parse_config(both)) == 65536
    override = _config(max_position_embeddings=131072, seq_length=65536)
    assert default_max_model_len(parse_config(override)) == 1_048_576


def test_kimi_linear_blocks_align_to_128_from_vllm_0_27() -> None:
    # vLLM 0.27-0.29 platforms/interface.py: a hybrid MLA + state model's block is a multiple of
    # 128 tokens; before, of the block size (16): 15 x 128 = 1920 or 118 x 16 = 1888 tokens hold
    # one sequence's 2,170,880-byte KDA state at 1,152 bytes per token.
    arch = parse_config(_config())
    new = plan_vllm(arch, VllmSettings(80 * GIB, max_model_len=65536, vllm_version="0.29"))
    old = plan_vllm(arch, VllmSettings(80 * GIB, max_model_len=65536, vllm_version="0.24"))
    assert new.block_size == 1920
    assert old.block_size == 1888
