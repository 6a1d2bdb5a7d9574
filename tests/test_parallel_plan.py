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
from catalog_gpus import traits
from catalog_models import catalog_arch

from infermeter.calculators.errors import InputError
from infermeter.calculators.parallel import ParallelLayout, local_experts
from infermeter.calculators.vllm_plan import plan_vllm
from infermeter.calculators.vllm_settings import GIB, VllmSettings
from infermeter.registry.catalog import load_models

MODELS = load_models()


def _h200_settings(**settings: object) -> VllmSettings:
    """vLLM's settings on an H200 SXM (141 GiB) at an 8,192-token context, with `settings`."""
    return VllmSettings(
        gpu_memory_bytes=141 * GIB,
        gpu=traits("h200-sxm"),
        max_model_len=8192,
        **settings,  # type: ignore[arg-type]
    )


def _plan(model_id: str, **settings: object):  # type: ignore[no-untyped-def]
    return plan_vllm(catalog_arch(model_id), _h200_settings(**settings))


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
    arch = catalog_arch("deepseek-r1")
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


# --- --concurrency is the deployment's: each data-parallel replica holds its share -----------


def _memory(model_id: str, concurrency: int, **settings: object):  # type: ignore[no-untyped-def]
    from infermeter.calculators.memory import memory_report

    return memory_report(
        catalog_arch(model_id),
        _h200_settings(**settings),
        8192,
        concurrency,
    )


def test_data_parallel_concurrency_is_the_deployments_each_replica_holds_ceil_c_over_dp() -> None:
    from infermeter.calculators.kv_cache import kv_cache_shape

    arch = catalog_arch("llama-3.1-8b-instruct")
    per_request = kv_cache_shape(arch, None, 1, 2).bytes_for_sequence(8192)
    ten_on_four = _memory("llama-3.1-8b-instruct", 10, data_parallel_size=4).simple
    assert (ten_on_four.concurrency, ten_on_four.concurrency_per_replica) == (10, 3)
    assert ten_on_four.kv_cache_bytes == 3 * per_request  # ceil(10 / 4), not 10
    three_on_one = _memory("llama-3.1-8b-instruct", 3).simple
    assert three_on_one.kv_cache_bytes == ten_on_four.kv_cache_bytes
    assert three_on_one.required_bytes == ten_on_four.required_bytes
    assert _memory("llama-3.1-8b-instruct", 10).simple.kv_cache_bytes == 10 * per_request
    payload = _memory("llama-3.1-8b-instruct", 10, data_parallel_size=4).as_dict()
    assert (payload["concurrency"], payload["concurrency_per_replica"]) == (10, 3)


def test_data_parallel_refusal_names_the_share_of_each_replica() -> None:
    report = _memory("llama-3.1-70b-instruct", 400, tensor_parallel_size=2, data_parallel_size=2)
    assert not report.simple.fits
    assert report.reason is not None
    assert "400 concurrent requests (200 on each of 2 replicas) of 8192 tokens" in report.reason


def test_data_parallel_fit_needs_fewer_gpus_per_replica_for_the_same_traffic() -> None:
    from dataclasses import replace

    from infermeter.calculators.fit import GpuOption, fit_gpu

    h100 = GpuOption("h100-sxm", "H100 SXM", 79 * GIB, 80.0, 3.0, traits("h100-sxm"))
    arch = catalog_arch("llama-3.1-8b-instruct")
    settings = VllmSettings(gpu_memory_bytes=1)
    # 64 requests of 32k tokens: 256 GiB of KV cache on one replica, 64 GiB on each of four
    alone = fit_gpu(arch, h100, settings, 32768, 64)
    spread = fit_gpu(arch, h100, replace(settings, data_parallel_size=4), 32768, 64)
    assert (alone.gpu_count, spread.gpu_count) == (8, 2)
    assert spread.gpus == 8
    assert spread.report is not None
    assert spread.report.simple.concurrency_per_replica == 16


def test_data_parallel_throughput_bound_sums_the_replicas_shares() -> None:
    from infermeter.calculators.roofline import plan_throughput_bound

    arch = catalog_arch("llama-3.1-8b-instruct")
    rates = {"bf16": 989.0, "fp16": 989.0}

    def bound(concurrency: int, dp: int):  # type: ignore[no-untyped-def]
        settings = VllmSettings(gpu_memory_bytes=80 * GIB, data_parallel_size=dp)
        return plan_throughput_bound(arch, settings, 3350.0, rates, 1024, concurrency)

    assert bound(8, 2).tokens_per_second == pytest.approx(2 * bound(4, 1).tokens_per_second)
    assert (bound(8, 2).batch, bound(8, 2).gpu_count, bound(8, 2).data_parallel_size) == (8, 2, 2)
    # 5 over 2 replicas: one holds 3, the other 2
    uneven = bound(5, 2).tokens_per_second
    assert uneven == pytest.approx(bound(3, 1).tokens_per_second + bound(2, 1).tokens_per_second)
    # one request on four replicas: three sit idle and add nothing
    assert bound(1, 4).tokens_per_second == pytest.approx(bound(1, 1).tokens_per_second)
