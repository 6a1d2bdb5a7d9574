"""Expert and data parallelism in the memory plan (calculators.parallel), against figures derived
by hand from each model's config.json numbers. One public log has both (Qwen3-Coder-480B-FP8 on
8 H20, DP 8 with expert parallelism, https://github.com/vllm-project/recipes/pull/12: two cases of
tests/data/vllm_startup_logs.yaml, checked there); it shows no weights line, so the per-GPU
weights here are hand-derived, not logged: vLLM's "Local/global number of experts: 32/128" on
EP 4 (Qwen3-VL-235B, https://github.com/QwenLM/Qwen3-VL/issues/1520) and "16/256" on EP 16
(DeepSeek-V3.2, https://github.com/vllm-project/vllm-ascend/issues/5461) show the placement.
"""

import math

import pytest

from calculators.arch import parse_config
from calculators.errors import InputError
from calculators.parallel import ParallelLayout, local_experts
from calculators.vllm_plan import GIB, VllmSettings, plan_vllm
from registry.catalog import load_models

MODELS = load_models()


def _arch(model_id: str):  # type: ignore[no-untyped-def]
    return parse_config(MODELS[model_id].config)


def _plan(model_id: str, **settings: object):  # type: ignore[no-untyped-def]
    return plan_vllm(
        _arch(model_id),
        VllmSettings(
            gpu_memory_bytes=141 * GIB,
            gpu_name="h200-sxm",
            max_model_len=8192,
            **settings,  # type: ignore[arg-type]
        ),
    )


def _bf16_expert_bytes(model_id: str) -> int:
    """Every routed expert of every MoE layer, bf16, from the config's own numbers."""
    config = MODELS[model_id].config
    per_expert = 3 * config["hidden_size"] * config["moe_intermediate_size"] * 2
    return config["num_hidden_layers"] * config["num_experts"] * per_expert


def test_expert_parallel_gives_each_rank_its_whole_experts() -> None:
    # Qwen3-30B-A3B: 48 MoE layers x 128 experts x 3 x 2048 x 768 x 2 B = 27.0 GiB of experts.
    # TP 2 x DP 2 with expert parallelism: EP 4, 32 experts a rank, a quarter of them.
    every = _bf16_expert_bytes("qwen3-30b-a3b")
    assert every == 48 * 128 * 3 * 2048 * 768 * 2
    ep = _plan(
        "qwen3-30b-a3b", tensor_parallel_size=2, data_parallel_size=2, enable_expert_parallel=True
    )
    tp = _plan("qwen3-30b-a3b", tensor_parallel_size=2, data_parallel_size=2)
    assert ep.weights_by_role["experts"] == every // 4
    # Without expert parallelism vLLM slices every expert over the TP x DP ranks: a quarter too.
    assert tp.weights_by_role["experts"] == every // 4
    assert _plan("qwen3-30b-a3b", tensor_parallel_size=2).weights_by_role["experts"] == every // 2
    assert ep.as_dict()["expert_parallel_size"] == 4
    # Attention and the rest stay split by TP 2 alone.
    for role in ("attention", "embedding", "lm_head", "router"):
        assert ep.weights_by_role[role] == tp.weights_by_role[role]


def test_expert_parallel_the_most_loaded_rank_takes_the_remainder() -> None:
    # DeepSeek-R1's 256 experts on DP 6 (EP 6): ranks hold 43 or 42, the plan the 43.
    layout = ParallelLayout(data_parallel_size=6, enable_expert_parallel=True)
    arch = _arch("deepseek-r1")
    assert local_experts(arch, layout) == math.ceil(256 / 6) == 43
    whole = _plan("deepseek-r1", data_parallel_size=6, enable_expert_parallel=True)
    every = _plan("deepseek-r1").weights_by_role["experts"]  # TP 1: every expert on one GPU
    assert whole.weights_by_role["experts"] == every * 43 // 256


def test_expert_parallel_over_tp_alone_matches_the_tp_slices() -> None:
    # Qwen3-235B-A22B on 8 GPUs: 16 whole experts of 128, or 1/8 of each expert's 1536 width.
    tp = _plan("qwen3-235b-a22b", tensor_parallel_size=8)
    ep = _plan("qwen3-235b-a22b", tensor_parallel_size=8, enable_expert_parallel=True)
    assert ep.weights_by_role["experts"] == tp.weights_by_role["experts"]
    assert ep.weights_by_role["experts"] == _bf16_expert_bytes("qwen3-235b-a22b") // 8


def test_data_parallel_multiplies_gpus_not_memory_per_gpu() -> None:
    one = _plan("llama-3.1-70b-instruct", tensor_parallel_size=2)
    four = _plan("llama-3.1-70b-instruct", tensor_parallel_size=2, data_parallel_size=4)
    assert four.weights_bytes == one.weights_bytes
    assert four.kv_cache_tokens == one.kv_cache_tokens
    assert four.as_dict()["gpus"] == 8
    assert one.as_dict()["gpus"] == 2
    assert four.as_dict()["deployment_max_concurrency"] == pytest.approx(
        4 * one.max_concurrency, rel=1e-3
    )


def test_expert_parallel_on_a_dense_model_changes_nothing_and_says_so() -> None:
    dense = _plan("llama-3.1-8b-instruct")
    flagged = _plan("llama-3.1-8b-instruct", enable_expert_parallel=True)
    assert flagged.weights_bytes == dense.weights_bytes
    assert any("no routed experts" in note for note in flagged.notes)


def test_data_parallel_size_is_checked() -> None:
    with pytest.raises(InputError, match="data_parallel_size"):
        _plan("llama-3.1-8b-instruct", data_parallel_size=0)


def test_data_parallel_moe_layers_see_every_ranks_tokens() -> None:
    # The dispatch before the experts gathers the tokens of all DP ranks: the MoE part of the
    # profiling run's forward peak grows with DP (up to the fused-MoE chunk), a dense model's not.
    moe_one = _plan("qwen3-30b-a3b", max_num_batched_tokens=2048)
    moe_four = _plan("qwen3-30b-a3b", max_num_batched_tokens=2048, data_parallel_size=4)
    assert moe_four.forward_peak_bytes > 3 * moe_one.forward_peak_bytes
    dense_one = _plan("llama-3.1-8b-instruct")
    dense_four = _plan("llama-3.1-8b-instruct", data_parallel_size=4)
    assert dense_four.forward_peak_bytes == dense_one.forward_peak_bytes
