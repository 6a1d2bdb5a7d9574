"""Tests of calculators.vllm_plan, calculators.memory and calculators.fit: invariants of the memory
plan (hypothesis over catalog models and settings), vLLM's refusal, headroom states, bad inputs,
and which GPUs fit."""

import itertools
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import InputError
from infermeter.calculators.fit import GPU_COUNTS, FitResult, GpuOption, fit_gpu, fit_gpus
from infermeter.calculators.memory import (
    ENOUGH_HEADROOM,
    NEAR_LIMIT,
    OVER_LIMIT,
    SimplePlan,
    headroom_state,
    memory_report,
)
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.vllm_notes import CAPTURE_OOM
from infermeter.calculators.vllm_plan import plan_vllm
from infermeter.calculators.vllm_settings import VllmSettings
from infermeter.registry.catalog import load_models
from infermeter.registry.lookup import gpu_memory_bytes, gpu_options, resolve_gpu

GIB = 1024**3
MODELS = load_models()
ARCHS = {model_id: parse_config(entry.config) for model_id, entry in MODELS.items()}
# Dense GQA, MoE, MLA, sliding-window, hybrid and multimodal models.
PROPERTY_MODELS = [
    "llama-3.2-1b-instruct",
    "llama-3.1-8b-instruct",
    "qwen2.5-7b-instruct",
    "qwen3-30b-a3b",
    "mixtral-8x7b-instruct-v0.1",
    "mistral-7b-v0.1",
    "gpt-oss-20b",
    "gemma-2-9b-it",
    "gemma-3-12b-it",
    "deepseek-v3",
]
SMALL_MODELS = [
    "llama-3.2-1b-instruct",
    "llama-3.1-8b-instruct",
    "qwen2.5-7b-instruct",
    "gpt-oss-20b",
    "gemma-3-12b-it",
]
H100 = gpu_memory_bytes(resolve_gpu("h100-sxm"))
# Read once: every lookup re-reads the catalog files.
CATALOG_OPTIONS = {option.id: option for option in gpu_options("on_demand")}

models = st.sampled_from(PROPERTY_MODELS)
memories = st.integers(min_value=16, max_value=192).map(lambda gib: gib * GIB)
kv_dtypes = st.sampled_from(["auto", "fp8"])
versions = st.sampled_from(["0.8", "0.11", "0.19", "0.21", "0.28", "0.34"])
utilizations = st.floats(min_value=0.05, max_value=1.0)


def _settings(**fields: Any) -> VllmSettings:
    fields.setdefault("gpu_memory_bytes", H100)
    return VllmSettings(**fields)


# --- properties ---------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    model_id=models,
    memory=memories,
    kv_dtype=kv_dtypes,
    context=st.integers(min_value=1, max_value=200_000),
    more_context=st.integers(min_value=0, max_value=100_000),
    concurrency=st.integers(min_value=1, max_value=64),
    more_concurrency=st.integers(min_value=0, max_value=64),
)
def test_memory_report_required_bytes_monotone_in_context_and_concurrency(
    model_id: str,
    memory: int,
    kv_dtype: str,
    context: int,
    more_context: int,
    concurrency: int,
    more_concurrency: int,
) -> None:
    arch = ARCHS[model_id]
    base = _settings(gpu_memory_bytes=memory, kv_cache_dtype=kv_dtype, max_model_len=4096)
    small = memory_report(arch, base, context, concurrency).simple.required_bytes
    longer = memory_report(arch, base, context + more_context, concurrency).simple.required_bytes
    wider = memory_report(arch, base, context, concurrency + more_concurrency).simple.required_bytes
    assert small <= longer
    assert small <= wider


def _tp_sizes(arch: ModelArch) -> list[int]:
    return [tp for tp in (1, 2, 4, 8) if arch.num_attention_heads % tp == 0]


@settings(max_examples=60, deadline=None)
@given(model_id=models, memory=memories, kv_dtype=kv_dtypes, version=versions)
def test_plan_vllm_more_gpus_never_hold_fewer_kv_tokens(
    model_id: str, memory: int, kv_dtype: str, version: str
) -> None:
    arch = ARCHS[model_id]
    plans = [
        plan_vllm(
            arch,
            _settings(
                gpu_memory_bytes=memory,
                tensor_parallel_size=tp,
                kv_cache_dtype=kv_dtype,
                vllm_version=version,
            ),
        )
        for tp in _tp_sizes(arch)
    ]
    for fewer, more in itertools.pairwise(plans):
        assert more.weights_bytes < fewer.weights_bytes
        assert more.kv_cache_bytes_per_token <= fewer.kv_cache_bytes_per_token
        assert more.num_blocks >= fewer.num_blocks
        assert more.kv_cache_tokens >= fewer.kv_cache_tokens
        assert more.max_concurrency >= fewer.max_concurrency


@settings(max_examples=60, deadline=None)
@given(
    model_id=models,
    memory=memories,
    low=utilizations,
    high=utilizations,
    version=versions,
)
def test_plan_vllm_higher_utilization_never_shrinks_kv_cache(
    model_id: str, memory: int, low: float, high: float, version: str
) -> None:
    low, high = sorted((low, high))
    arch = ARCHS[model_id]
    base = _settings(gpu_memory_bytes=memory, vllm_version=version)
    at_low = plan_vllm(arch, replace(base, gpu_memory_utilization=low))
    at_high = plan_vllm(arch, replace(base, gpu_memory_utilization=high))
    assert at_high.kv_cache_bytes >= at_low.kv_cache_bytes
    assert at_high.kv_cache_tokens >= at_low.kv_cache_tokens
    # More utilization leaves less memory outside the budget, where graphs vLLM does not budget
    # for are captured: only that refusal may come with it.
    assert at_high.fits or not at_low.fits or at_high.error.startswith(CAPTURE_OOM)


@settings(max_examples=40, deadline=None)
@given(
    model_id=st.sampled_from(SMALL_MODELS),
    memory=st.integers(min_value=40, max_value=192).map(lambda gib: gib * GIB),
    max_model_len=st.integers(min_value=1_000_000, max_value=16_000_000),
    kv_dtype=kv_dtypes,
    version=versions,
)
def test_plan_vllm_refusal_gives_largest_length_that_fits(
    model_id: str, memory: int, max_model_len: int, kv_dtype: str, version: str
) -> None:
    arch = ARCHS[model_id]
    base = _settings(
        gpu_memory_bytes=memory,
        max_model_len=max_model_len,
        kv_cache_dtype=kv_dtype,
        vllm_version=version,
    )
    plan = plan_vllm(arch, base)
    assume(not plan.fits and plan.largest_max_model_len > 0)
    largest = plan.largest_max_model_len
    assert plan.error is not None
    assert f"estimated maximum model length is {largest}." in plan.error
    assert f"max seq len ({max_model_len})" in plan.error
    assert largest < plan.max_model_len
    assert plan.kv_cache_bytes < plan.request_bytes_at_max_model_len
    assert plan_vllm(arch, replace(base, max_model_len=largest)).fits
    over = plan_vllm(arch, replace(base, max_model_len=largest + 1))
    # The estimate is made on the budget of the requested length, as vLLM's is; from 0.27 that
    # budget holds the runner's placeholder block table, which shrinks with max_model_len, so only
    # the request one token longer is held to it there.
    assert over.request_bytes_at_max_model_len > plan.kv_cache_bytes
    if plan.runner_buffer_bytes == 0:
        assert not over.fits
    report = memory_report(arch, base)
    assert not report.fits
    assert report.reason is not None
    assert plan.error in report.reason


@settings(max_examples=30, deadline=None)
@given(
    model_id=st.sampled_from(SMALL_MODELS),
    memory=st.integers(min_value=40, max_value=192).map(lambda gib: gib * GIB),
    max_model_len=st.integers(min_value=1_000_000, max_value=16_000_000),
    version=st.sampled_from(["0.20", "0.21", "0.28"]),
)
def test_memory_report_at_vllm_suggested_length_fits(
    model_id: str, memory: int, max_model_len: int, version: str
) -> None:
    # From 0.20 CUDA graphs are inside vLLM's budget, so the simple model and the plan agree.
    arch = ARCHS[model_id]
    base = _settings(gpu_memory_bytes=memory, max_model_len=max_model_len, vllm_version=version)
    largest = plan_vllm(arch, base).largest_max_model_len
    assume(0 < largest < max_model_len)
    report = memory_report(arch, replace(base, max_model_len=largest))
    assert report.fits, report.reason
    assert report.simple.headroom_state != OVER_LIMIT


def test_memory_report_at_vllm_suggested_length_fits_before_0_20() -> None:
    arch = ARCHS["llama-3.1-8b-instruct"]
    base = _settings(
        gpu_memory_bytes=gpu_memory_bytes(resolve_gpu("rtx-3090")), vllm_version="0.19"
    )
    largest = plan_vllm(arch, base).largest_max_model_len  # 46416
    report = memory_report(arch, replace(base, max_model_len=largest))
    assert report.plan.fits
    assert report.fits, report.reason


@settings(max_examples=40, deadline=None)
@given(
    model_id=models,
    memory=memories,
    tp=st.sampled_from([1, 2, 4]),
    version=versions,
    kv_dtype=kv_dtypes,
)
def test_plan_vllm_fits_iff_no_error_and_accounts_add_up(
    model_id: str, memory: int, tp: int, version: str, kv_dtype: str
) -> None:
    arch = ARCHS[model_id]
    plan = plan_vllm(
        arch,
        _settings(
            gpu_memory_bytes=memory,
            tensor_parallel_size=tp,
            vllm_version=version,
            kv_cache_dtype=kv_dtype,
        ),
    )
    assert plan.fits == (plan.error is None)
    assert plan.fits == (plan.max_concurrency >= 1)
    graphs = plan.cuda_graph_bytes if plan.cuda_graph_in_budget else 0
    spent = (
        plan.weights_bytes
        + plan.activation_peak_bytes
        + plan.non_torch_bytes
        + plan.runner_buffer_bytes
        + graphs
        + plan.extensible_reserve_bytes
    )
    assert plan.kv_cache_bytes == max(0, plan.requested_bytes - spent)
    assert plan.requested_bytes <= memory
    if plan.kv_cache_bytes == 0:
        assert not plan.fits
        assert plan.largest_max_model_len == 0
    payload = plan.as_dict()
    assert all(isinstance(payload[key], int) for key in payload if key.endswith("_bytes"))


# --- worked examples ----------------------------------------------------------------------------


def test_plan_vllm_llama_3_1_8b_on_h100_at_8k() -> None:
    plan = plan_vllm(ARCHS["llama-3.1-8b-instruct"], _settings(max_model_len=8192))
    assert plan.fits
    assert plan.kv_cache_bytes_per_token == 131072
    assert plan.weights_bytes / GIB == pytest.approx(14.99, abs=0.01)
    # Roughly 55 GiB of KV cache at 128 KiB per token: ~450k tokens, ~55 requests of 8k.
    assert 400_000 < plan.kv_cache_tokens < 480_000
    assert plan.max_concurrency == pytest.approx(plan.kv_cache_tokens / 8192, rel=0.01)


def test_plan_vllm_sliding_window_reserves_in_flight_tokens_from_0_26() -> None:
    # gpt-oss-20b: 12 full-attention and 12 sliding-window (128) layers, one group each, blocks of
    # 16 tokens. A request of 32,768 tokens takes 2048 full blocks; its sliding group holds
    # ceil((127 + in flight) / 16) + 1 (SlidingWindowSpec.max_admission_blocks_per_request), the
    # in-flight tokens being max_num_batched_tokens before 0.26 and, from 0.26,
    # max_in_flight_tokens: 2 batches of 4096 under async scheduling on one stage.
    arch = ARCHS["gpt-oss-20b"]
    before, after = (
        plan_vllm(arch, _settings(vllm_version=version, max_model_len=32768,
                                  max_num_batched_tokens=4096))
        for version in ("0.25", "0.26")
    )  # fmt: skip
    for plan, in_flight in ((before, 4096), (after, 8192)):
        blocks = 2048 + -(-(127 + in_flight) // 16) + 1
        page = 16 * plan.kv_cache_bytes_per_token_per_layer
        assert plan.kv_cache_groups == 2
        assert plan.request_bytes_at_max_model_len == blocks * 12 * page
    assert after.max_concurrency < before.max_concurrency


def test_plan_vllm_llama_3_1_8b_on_rtx_3090_at_full_context_is_refused() -> None:
    # vLLM's own message on a 24 GB card at the default 131072 tokens (vllm-project/vllm#10517).
    memory = gpu_memory_bytes(resolve_gpu("rtx-3090"))
    plan = plan_vllm(ARCHS["llama-3.1-8b-instruct"], _settings(gpu_memory_bytes=memory))
    assert plan.max_model_len == 131072
    assert not plan.fits
    assert plan.error is not None
    assert plan.error.startswith("To serve at least one request with the")
    assert "Try increasing `gpu_memory_utilization` or decreasing `max_model_len`" in plan.error
    assert 20_000 < plan.largest_max_model_len < 131072


def test_plan_vllm_no_memory_left_for_kv_cache() -> None:
    # 131 GiB of weights load on an H200 (139.9 GiB) but leave nothing of its 0.9 budget.
    memory = gpu_memory_bytes(resolve_gpu("h200-sxm"))
    arch = ARCHS["llama-3.1-70b-instruct"]
    plan = plan_vllm(arch, _settings(gpu_memory_bytes=memory, max_model_len=8192))
    assert plan.requested_bytes < plan.weights_bytes < memory
    assert not plan.fits
    assert plan.kv_cache_bytes == plan.num_blocks == plan.kv_cache_tokens == 0
    assert plan.error is not None
    assert plan.error.startswith("No available memory for the cache blocks")


def test_plan_vllm_weights_above_the_whole_gpu_fail_to_load() -> None:
    # 131 GiB of weights on one 79 GiB H100: vLLM runs out of memory in load_model, before
    # gpu_memory_utilization matters (vllm-project/vllm#5714, #28143), so raising it is no advice.
    plan = plan_vllm(ARCHS["llama-3.1-70b-instruct"], _settings(max_model_len=8192))
    assert plan.weights_bytes > H100
    assert not plan.fits
    assert plan.error is not None
    assert plan.error.startswith("CUDA out of memory loading the weights: ")
    assert "131.45 GiB of weights per GPU" in plan.error
    assert "79.15 GiB" in plan.error
    assert "Try increasing `gpu_memory_utilization`" not in plan.error
    assert "--tensor-parallel-size" in plan.error


def test_plan_vllm_enforce_eager_has_no_cuda_graphs() -> None:
    arch = ARCHS["llama-3.1-8b-instruct"]
    assert plan_vllm(arch, _settings(enforce_eager=True)).cuda_graph_bytes == 0
    assert plan_vllm(arch, _settings()).cuda_graph_bytes > 0


def test_plan_vllm_pipeline_parallel_splits_layers() -> None:
    arch = ARCHS["llama-3.1-70b-instruct"]
    one = plan_vllm(arch, _settings())
    two = plan_vllm(arch, _settings(pipeline_parallel_size=2))
    assert two.weights_bytes < 0.6 * one.weights_bytes
    assert two.kv_cache_bytes_per_token == one.kv_cache_bytes_per_token // 2


# --- headroom states ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headroom", "state"),
    [
        (-1, OVER_LIMIT),
        (-(10**12), OVER_LIMIT),
        (0, NEAR_LIMIT),
        (99, NEAR_LIMIT),
        (100, ENOUGH_HEADROOM),
        (1000, ENOUGH_HEADROOM),
    ],
)
def test_headroom_state_thresholds(headroom: int, state: str) -> None:
    # 10 % of a 1000-byte GPU is the line between near the limit and enough headroom.
    assert headroom_state(headroom, 1000) == state


@pytest.mark.parametrize(
    ("required", "state", "fits"),
    [
        (1001, OVER_LIMIT, False),
        (1000, NEAR_LIMIT, True),
        (901, NEAR_LIMIT, True),
        (900, ENOUGH_HEADROOM, True),
    ],
)
def test_simple_plan_headroom_from_breakdown(required: int, state: str, fits: bool) -> None:
    plan = SimplePlan(
        context_tokens=1,
        concurrency=1,
        memory_bytes=1000,
        weights_bytes=required - 300,
        kv_cache_bytes=100,
        runtime_overhead_bytes=100,
        safety_margin_bytes=100,
    )
    assert plan.required_bytes == required
    assert (plan.headroom_state, plan.fits) == (state, fits)


def test_memory_report_simple_model_breakdown_sums() -> None:
    report = memory_report(ARCHS["llama-3.1-8b-instruct"], _settings(max_model_len=8192), 8192, 4)
    payload = report.as_dict()
    assert payload["required_bytes"] == sum(payload["breakdown"].values())
    assert payload["breakdown"]["kv_cache_bytes"] == 4 * 8192 * 131072
    assert payload["headroom_bytes"] == H100 - payload["required_bytes"]
    assert payload["headroom_state"] == ENOUGH_HEADROOM


def test_memory_report_simple_model_over_limit_explains_why() -> None:
    report = memory_report(ARCHS["llama-3.1-8b-instruct"], _settings(max_model_len=8192), 8192, 500)
    assert report.plan.fits
    assert not report.fits
    assert report.simple.headroom_state == OVER_LIMIT
    assert report.reason is not None
    assert "500 concurrent requests of 8192 tokens" in report.reason


# --- bad inputs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("gpu_memory_utilization", 0.0),
        ("gpu_memory_utilization", 1.01),
        ("gpu_memory_utilization", -0.5),
        ("tensor_parallel_size", 0),
        ("pipeline_parallel_size", 0),
        ("max_model_len", 0),
        ("max_model_len", -1),
        ("max_num_seqs", -4),
        ("max_num_batched_tokens", 0),
        ("gpu_memory_bytes", 0),
        ("block_size", 0),
    ],
)
def test_plan_vllm_rejects_out_of_domain_numbers(field: str, value: float) -> None:
    with pytest.raises(InputError, match=field):
        plan_vllm(ARCHS["llama-3.1-8b-instruct"], _settings(**{field: value}))


def test_plan_vllm_accepts_full_utilization() -> None:
    full = _settings(gpu_memory_utilization=1.0)
    assert plan_vllm(ARCHS["llama-3.1-8b-instruct"], replace(full, enforce_eager=True)).fits
    # 0.19 captures its graphs outside the budget, in the memory full utilization leaves none of.
    refused = plan_vllm(ARCHS["llama-3.1-8b-instruct"], full).error
    assert refused is not None
    assert refused.startswith(CAPTURE_OOM)


@pytest.mark.parametrize(("context", "concurrency"), [(0, 1), (-8, 1), (1024, 0), (1024, -1)])
def test_memory_report_rejects_non_positive_context_or_concurrency(
    context: int, concurrency: int
) -> None:
    with pytest.raises(InputError, match=r"context|concurrency"):
        memory_report(ARCHS["llama-3.1-8b-instruct"], _settings(), context, concurrency)


def test_plan_vllm_rejects_unparsable_version() -> None:
    with pytest.raises(InputError, match="vllm_version"):
        plan_vllm(ARCHS["llama-3.1-8b-instruct"], _settings(vllm_version="latest"))


# --- fit ----------------------------------------------------------------------------------------


def _fit(model_id: str, gpu_ids: list[str], context: int = 8192) -> list[FitResult]:
    options = [CATALOG_OPTIONS[gpu_id] for gpu_id in gpu_ids]
    return fit_gpus(ARCHS[model_id], options, VllmSettings(gpu_memory_bytes=1), context, 1)


@pytest.mark.parametrize("gpu_id", ["h100-sxm", "h100-pcie", "h200-sxm", "a100-80gb-sxm"])
def test_fit_llama_3_1_8b_at_8k_fits_one_gpu(gpu_id: str) -> None:
    (result,) = _fit("llama-3.1-8b-instruct", [gpu_id])
    assert result.fits
    assert result.gpu_count == 1
    assert result.report is not None
    assert result.report.plan.max_model_len == 8192


@pytest.mark.parametrize("gpu_id", ["h100-sxm", "h100-pcie"])
def test_fit_llama_3_1_70b_bf16_needs_two_or_four_h100(gpu_id: str) -> None:
    gpu = CATALOG_OPTIONS[gpu_id]
    arch = ARCHS["llama-3.1-70b-instruct"]
    one = memory_report(
        arch, _settings(gpu_memory_bytes=gpu.memory_bytes, max_model_len=8192), 8192
    )
    assert not one.fits
    (result,) = _fit("llama-3.1-70b-instruct", [gpu_id])
    assert result.gpu_count in (2, 4)
    assert result.usd_per_hour is not None
    assert gpu.usd_per_gpu_hour is not None
    assert result.usd_per_hour == pytest.approx(gpu.usd_per_gpu_hour * result.gpu_count)


def _assert_ranked(results: list[FitResult], key: str) -> None:
    fitting = [r for r in results if r.fits]
    assert results[: len(fitting)] == fitting, "non-fitting options must come last"
    priced = [r for r in fitting if getattr(r, key) is not None]
    assert fitting[: len(priced)] == priced, "unpriced options must come after priced ones"
    prices = [getattr(r, key) for r in priced]
    assert prices == sorted(prices)


@pytest.mark.parametrize(
    "model_id", ["llama-3.1-8b-instruct", "llama-3.1-70b-instruct", "deepseek-v3"]
)
@pytest.mark.parametrize("rank_by", ["usd_per_hour", "usd_per_gb_hour"])
def test_fit_gpus_catalog_ranked_and_counts_bounded(model_id: str, rank_by: str) -> None:
    options = list(CATALOG_OPTIONS.values())
    results = fit_gpus(ARCHS[model_id], options, VllmSettings(gpu_memory_bytes=1), 8192, 1, rank_by)
    assert len(results) == len(options)
    _assert_ranked(results, rank_by)
    for result in results:
        assert result.gpu_count is None or result.gpu_count in GPU_COUNTS
        assert result.fits == (result.reason is None)
        if result.fits:
            assert result.report is not None
            assert result.report.fits
            assert result.report.plan.settings.tensor_parallel_size == result.gpu_count


def test_fit_gpus_deepseek_does_not_fit_on_small_gpus() -> None:
    results = {r.gpu.id: r for r in _fit("deepseek-v3", ["rtx-4090", "l4", "h200-sxm"])}
    assert not results["rtx-4090"].fits
    assert not results["l4"].fits
    assert results["rtx-4090"].reason is not None
    assert results["rtx-4090"].reason.startswith("does not fit: with 1, 2, 4, 8 GPUs")
    assert results["h200-sxm"].gpu_count == 8


def test_fit_gpus_orders_priced_then_unpriced_then_misfits() -> None:
    big = 80 * GIB
    options = [
        GpuOption("expensive", "Expensive", big, 80.0, 3.0),
        GpuOption("unpriced", "Unpriced", big, 80.0, None),
        GpuOption("cheap", "Cheap", big, 80.0, 1.0),
        GpuOption("tiny", "Tiny", GIB // 2, 0.5, 0.01),
        GpuOption("also-unpriced", "Also unpriced", big, 80.0, None),
    ]
    results = fit_gpus(ARCHS["llama-3.2-1b-instruct"], options, VllmSettings(1), 4096, 1)
    assert [r.gpu.id for r in results] == [
        "cheap",
        "expensive",
        "also-unpriced",
        "unpriced",
        "tiny",
    ]
    assert results[-1].usd_per_hour is None  # nothing to pay for a deployment that cannot run


def test_fit_gpus_rejects_unknown_ranking() -> None:
    with pytest.raises(InputError, match="rank_by"):
        fit_gpus(ARCHS["llama-3.2-1b-instruct"], [], VllmSettings(1), 4096, 1, "tokens")


SIX_HEADS = parse_config(
    {
        "model_type": "llama",
        "hidden_size": 3072,
        "intermediate_size": 8192,
        "num_hidden_layers": 24,
        "num_attention_heads": 6,
        "num_key_value_heads": 6,
        "vocab_size": 32000,
        "max_position_embeddings": 4096,
    }
)


def test_fit_gpu_skips_counts_that_do_not_divide_the_heads() -> None:
    gpu = GpuOption("small", "Small", 3 * GIB, 3.2, 1.0)
    # Four GPUs would hold it, but 6 heads do not split four ways: vLLM refuses that count.
    with pytest.raises(InputError, match="tensor_parallel_size: 4 does not divide"):
        memory_report(SIX_HEADS, VllmSettings(3 * GIB, tensor_parallel_size=4, max_model_len=4096))
    result = fit_gpu(SIX_HEADS, gpu, VllmSettings(1), 4096, 1)
    assert not result.fits
    assert result.reason is not None
    assert "with 1, 2 GPUs" in result.reason


@pytest.mark.parametrize("model_id", ["qwen2.5-7b-instruct", "gemma-3-12b-it", "deepseek-v3"])
def test_fit_gpu_count_divides_attention_heads(model_id: str) -> None:
    arch = ARCHS[model_id]
    for result in _fit(model_id, ["rtx-3090", "l4", "a10g", "h100-sxm"], context=32768):
        if result.gpu_count is not None:
            assert arch.num_attention_heads % result.gpu_count == 0


def _vllm_can_shard(arch: ModelArch, count: int) -> bool:
    # vLLM's QKVParallelLinear: KV heads split evenly, or each is replicated an integer number of
    # times when there are more GPUs than KV heads. MLA has no KV heads to split.
    if arch.mla is not None:
        return arch.num_attention_heads % count == 0
    kv_heads = arch.num_kv_heads
    return arch.num_attention_heads % count == 0 and (
        kv_heads % count == 0 or count % kv_heads == 0
    )


@pytest.mark.parametrize(
    "model_id",
    [
        "qwen2.5-7b-instruct",
        "qwen3-30b-a3b",
        "gemma-2-27b-it",
        "phi-4",
    ],
)
def test_fit_gpu_count_shards_kv_heads_as_vllm_requires(model_id: str) -> None:
    arch = ARCHS[model_id]
    options = [CATALOG_OPTIONS[gpu_id] for gpu_id in ("l4", "rtx-3090", "a10g")]
    results = fit_gpus(arch, options, VllmSettings(gpu_memory_bytes=1), 8192, 2)
    counts = {result.gpu_count for result in results if result.gpu_count is not None}
    assert counts, "expected at least one fitting option"
    for count in counts:
        assert _vllm_can_shard(arch, count), f"{count} GPUs"


def test_fit_gpu_min_count_skips_only_counts_below_it() -> None:
    gpu = CATALOG_OPTIONS["h100-sxm"]
    arch = ARCHS["llama-3.1-70b-instruct"]
    settings = _settings(gpu_memory_bytes=gpu.memory_bytes, max_model_len=8192)
    plain = fit_gpu(arch, gpu, settings, 8192, 1)
    assert plain.gpu_count in (2, 4)
    assert fit_gpu(arch, gpu, settings, 8192, 1, min_gpu_count=2).gpu_count == plain.gpu_count
    assert fit_gpu(arch, gpu, settings, 8192, 1, min_gpu_count=8).gpu_count == 8


@pytest.mark.parametrize(
    ("model_id", "version", "batches"),
    [
        ("gpt-oss-20b", "0.28", 2),  # a mixture of experts off 0.28's V2 list: V1
        ("gpt-oss-20b", "0.29", 3),  # V2 wherever supported from 0.29
        ("gpt-oss-20b", "0.34", 3),  # V2 only
        ("gemma-2-9b-it", "0.25", 1),  # before 0.26 one batch whatever the runner
        ("gemma-2-9b-it", "0.26", 3),  # a dense attention model: V2 from 0.25
        ("gemma-2-9b-it", "0.27", 3),
    ],
)
def test_sliding_window_reserves_one_more_batch_under_pipeline_parallelism_with_the_v2_runner(
    model_id: str, version: str, batches: int
) -> None:
    # vLLM's max_concurrent_batches (vllm/config/vllm.py, 0.26-0.33) under async scheduling is
    # stages + 1 with the V2 model runner and the stages alone with V1 under pipeline
    # parallelism; 0.34.0 has only V2. At 2 stages of 4096 batched tokens: 8192 or 12288 in flight.
    arch = ARCHS[model_id]
    settings = _settings(
        vllm_version=version,
        max_model_len=32768,
        block_size=16,
        max_num_batched_tokens=4096,
        pipeline_parallel_size=2,
    )
    plan = plan_vllm(arch, settings)
    window, full = arch.sliding_window or 0, -(-32768 // 16)
    blocks = full + -(-(window - 1 + batches * 4096) // 16) + 1
    page = 16 * plan.kv_cache_bytes_per_token_per_layer
    per_stage = -(-arch.num_full_layers // 2)
    assert plan.request_bytes_at_max_model_len == blocks * per_stage * page
