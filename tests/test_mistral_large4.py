"""Mistral Large 4's parameters and caches as vLLM 0.34.0 builds them (calculators.mistral_large4),
with the arithmetic written out from vllm/models/mistral (nvidia/attention.py, indexer.py,
moe.py, ssmax.py; common/layer_spec.py; mistral_large4/nvidia/model.py).

No Mistral Large 4 config is public (vLLM's tests name mistralai/Mistral-Large-4-1T-A52B, "not
available online"), and the family has no config class of defaults: Mistral ships params.json,
which vLLM adapts. tests/data/configs/mistral-large-4.json is therefore vLLM 0.34.0's own test
params.json (tests/transformers_utils/test_config.py `_mistral_large_4_params`: 8 layers,
block-FP8) as vllm/transformers_utils/configs/mistral.py `adapt_config_dict` turns it into the
config the model reads: NoPE on every fourth layer, layer 7 reading layer 3's latent, indexers
on the "full" layers of "full,shared,full,full", fp8_kv_cache. Its 4 heads cannot be split over
8 ranks, so the plan refuses TP 8 as vLLM does and is checked at TP 1 and 4. The count is held
to the modules' arithmetic (the 1T/52B of the checkpoint's name has no config to check against).
"""

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import invoke, json_output
from test_calc_api import pasted_config_plan

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.param_count import param_counts

CONFIG_PATH = Path(__file__).parent / "data" / "configs" / "mistral-large-4.json"
CONFIG = json.loads(CONFIG_PATH.read_text())
H, HEADS, LATENT, ROPE, NOPE, V, VOCAB = 256, 4, 512, 64, 64, 128, 1024
INDEX_HEADS, INDEX_DIM = 4, 128
ROPE_LAYERS = [True, True, True, False] * 2
OWNERS = [0, 1, 2, 3, 4, 5, 6]  # layer 7 reads layer 3's latent
INDEXERS = [0, 2, 3, 4, 6, 7]


def _kept(tp: int) -> int:
    """What stays in the model dtype: kv_b_proj (split), kv_a_proj_with_mqa and its norm on the
    owners (replicated), SSMax, the indexer's wk_weights_proj, q_input_norm, k_norm, SSMax."""
    kv_b = sum(LATENT * HEADS * ((NOPE if r else NOPE + ROPE) + V) // tp for r in ROPE_LAYERS)
    kv_a = sum(H * (LATENT + (ROPE if ROPE_LAYERS[i] else 0)) + LATENT for i in OWNERS)
    indexer = len(INDEXERS) * (H * (INDEX_DIM + INDEX_HEADS) + 2 * H + 2 * INDEX_DIM + 8)
    return kv_b + kv_a + 8 * 2 * HEADS // tp + indexer


@pytest.mark.parametrize("tp", [1, 4])
def test_parameters_follow_the_modules(tp: int) -> None:
    counts = param_counts(parse_config(CONFIG), tp)
    q_o = 2 * H * HEADS * 128 // tp  # q_proj (nope + rope) and o_proj
    assert counts.attention == 8 * q_o + len(INDEXERS) * H * INDEX_HEADS * INDEX_DIM  # + wq_b
    assert counts.small == _kept(tp) + 8 * 2 * H + H  # two norms a layer, the final norm
    assert counts.dense_mlp == 3 * H * 512 // tp  # layer 0 (first_k_dense_replace 1)
    assert counts.experts == 7 * 8 * 3 * H * 128 // tp
    assert counts.shared_experts == 7 * 3 * H * 128 // tp
    assert counts.router == 7 * H * 8
    assert counts.embedding == counts.lm_head == VOCAB // tp * H


def test_total_of_the_fixture() -> None:
    assert param_counts(parse_config(CONFIG)).total == 14_647_664


def test_caches_follow_the_owners_and_indexers() -> None:
    arch = parse_config(CONFIG)
    # fp8_kv_cache: "auto" is fp8_ds_mla (656 bytes) on the 7 owners, FP8 keys on 6 indexers.
    assert kv_cache_shape(arch).bytes_per_token == 7 * 656 + 6 * 132
    assert kv_cache_shape(arch, "bfloat16").bytes_per_token == 7 * 576 * 2 + 6 * 132
    unshared = parse_config({**CONFIG, "kv_source_layers": None, "index_sharing": None})
    assert kv_cache_shape(unshared).bytes_per_token == 8 * (656 + 132)
    # Without index_topk: dense latent attention, no indexer weights or keys.
    dense = parse_config({**CONFIG, "index_topk": None, "fp8_kv_cache": False})
    assert dense.indexer is None
    assert kv_cache_shape(dense).bytes_per_token == 7 * 576 * 2
    attention = param_counts(parse_config(CONFIG)).attention - param_counts(dense).attention
    assert attention == len(INDEXERS) * H * INDEX_HEADS * INDEX_DIM


@pytest.mark.parametrize("tp", [1, 4])
def test_calc_vram_plans_mistral_large_4_as_the_page_does(tp: int) -> None:
    options = {"vllm_version": "0.34", "max_model_len": "4096"}
    plan = pasted_config_plan(CONFIG_PATH, "h200-sxm", tensor_parallel_size=str(tp), **options)
    counts = param_counts(parse_config(CONFIG), tp)
    roles = plan["weights_by_role"]
    assert roles["small"] == 2 * counts.small  # kv_a, kv_b, wk_weights_proj stay bf16
    assert "mla_copies" not in roles  # an unquantized kv_b_proj: W_UK/W_UV are views
    assert plan["kv_cache_bytes_per_token"] == 7 * 656 + 6 * 132
    assert plan["block_size"] == 64
    assert plan["num_blocks"] == plan["kv_cache_bytes"] // (64 * (7 * 656 + 6 * 132))
    assert any(note.startswith("Mistral Large 4: latent caches") for note in plan["notes"])
    assert not any(note.startswith("Mistral Large 4 is served") for note in plan["notes"])


def test_an_older_release_is_noted_and_tp_8_refused_as_vllm_refuses_it() -> None:
    old = json_output("calc", "vram", "--model", str(CONFIG_PATH), "--gpu", "h200-sxm")
    served = "Mistral Large 4 is served from vLLM 0.34 (its recipe's min_vllm_version)"
    assert f"{served}; this plan applies 0.19's memory terms to it" in old["vllm_plan"]["notes"]
    result = invoke("calc", "vram", "--model", str(CONFIG_PATH), "--gpu", "h200-sxm", "-tp", "8")
    assert result.exit_code == 2  # a usage error: the option does not fit the model
    assert "tensor_parallel_size: 8 does not divide the model's 4 attention heads" in (
        result.output
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"kv_source_layers": [0, 1, 2, 3, 4, 5, 6, 7, 0]}, r"^kv_source_layers: expected a list"),
        ({"kv_source_layers": [0, 1, 2, 3, 4, 5, 7, 6]}, r"^kv_source_layers\[6\]: expected an"),
        ({"index_sharing": ["full", "local"] * 4}, r"^index_sharing: expected 'full' or"),
        ({"q_lora_rank": 1536}, r"^q_lora_rank: vLLM's Mistral Large 4 supports no query LoRA"),
    ],
)
def test_bad_mistral_large_4_fields_are_named(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config({**CONFIG, **change})
