"""The roofline bound the answers' estimate falls back on (`calculators.answer_estimate`, over
the catalog as `registry.answers.catalog_estimator` reads it): the bound of each deployment
whose vLLM memory plan fits, at the sequences the plan holds with an fp8 KV cache, against the
bound worked out by hand; never at a flagged price; a workload's typical request."""

from functools import cache

import pytest

from infermeter.calculators.accepted import Slo
from infermeter.calculators.answer import ROOFLINE_BOUND, NoEstimate, Question, cheapest_price
from infermeter.calculators.answer_estimate import (
    NO_TYPICAL_LENGTHS,
    UNQUANTIZED,
    AnswerEstimator,
    Bound,
    WorkloadTokens,
)
from infermeter.registry.answers import catalog_estimator
from infermeter.registry.catalog import load_gpus, load_models, load_prices
from infermeter.registry.estimate import typical_tokens, workload_tokens
from infermeter.registry.evidence import answer_prices
from infermeter.registry.models.identity import Workload

# Llama 3.1 8B (hidden 4096, 32 layers, 8 KV heads of 128, MLP 14336, vocabulary 128256, lm_head
# untied): the parameters one decode token passes through, the embedding row left out.
HIDDEN, LAYERS, KV_WIDTH, MLP, VOCAB = 4096, 32, 8 * 128, 14336, 128256
TOUCHED = VOCAB * HIDDEN + LAYERS * (2 * HIDDEN * HIDDEN + 2 * HIDDEN * KV_WIDTH + 3 * HIDDEN * MLP)
KV_BYTES_PER_TOKEN = LAYERS * 2 * KV_WIDTH * 1  # keys and values, fp8

GPUS, PRICES = load_gpus(), load_prices()
SMALL, BIG = "llama-3.1-8b-instruct", "llama-3.1-70b-instruct"


@cache
def _estimator() -> AnswerEstimator:
    tokens = {(SMALL, "chat"): WorkloadTokens(1000, 1000), (BIG, "long"): WorkloadTokens(128, 2048)}
    return catalog_estimator(GPUS, load_models(), answer_prices(PRICES.values()), tokens)


def _fewest(bounds: list[Bound]) -> dict[str, Bound]:
    """Each GPU's bound at the fewest GPUs that hold the model."""
    fewest: dict[str, Bound] = {}
    for bound in bounds:
        if bound.gpu not in fewest or bound.gpu_count < fewest[bound.gpu].gpu_count:
            fewest[bound.gpu] = bound
    return fewest


def test_estimate_bound_matches_the_hand_worked_bound_and_price() -> None:
    estimator = _estimator()
    h100 = _fewest(estimator.bounds(SMALL, UNQUANTIZED, 1000, 1000))["h100-sxm"]
    assert h100.gpu_count == 1
    assert h100.batch > 1
    context = 1000 + 1000 // 2  # the mean context of an output token
    step_bytes = 2 * TOUCHED + h100.batch * context * KV_BYTES_PER_TOKEN
    bound = GPUS["h100-sxm"].memory_bandwidth_gb_s * 1e9 / step_bytes * h100.batch
    assert h100.tokens_per_s == pytest.approx(bound, rel=0.005)
    assert f"at {h100.batch:,} sequences" in h100.note
    # the batch question's estimate is the cheapest bound, priced at the tier
    found = estimator(Question(SMALL, Slo(), "on_demand"), "chat", UNQUANTIZED)
    assert found is not None
    assert found.kind == ROOFLINE_BOUND  # the offline kind misses its target today
    costs = []
    for each in estimator.bounds(SMALL, UNQUANTIZED, 1000, 1000):
        price = cheapest_price(estimator.prices, each.gpu, "on_demand")
        if price is not None:
            costs.append(price.usd_per_gpu_hour * each.gpu_count / (each.tokens_per_s * 3.6e-3))
    assert found.usd_per_million_output_tokens == pytest.approx(min(costs))


def test_estimate_never_at_a_flagged_price() -> None:
    flagged = {price.id for price in PRICES.values() if price.caution is not None}
    assert flagged, "the catalog flags no price: this test would check nothing"
    estimator = _estimator()
    for tier in sorted({price.tier for price in estimator.prices}):
        found = estimator(Question(BIG, Slo(), tier), "long", UNQUANTIZED)
        assert found is not None
        assert found.price_id not in flagged
    # 70B in bf16 (about 141 GB) fits no single 80 GB GPU
    bounds = estimator.bounds(BIG, UNQUANTIZED, 128, 2048)
    assert len({b.gpu for b in bounds}) >= 3
    assert all(b.gpu_count >= 2 for b in bounds if GPUS[b.gpu].memory_gb <= 80)


@pytest.mark.parametrize(
    ("length", "tokens"),
    [
        ({"kind": "fixed", "value": 128}, 128),
        ({"kind": "uniform", "min": 800, "max": 1000}, 900),
        ({"kind": "normal", "mean": 1024.0, "stddev": 256.0}, 1024),
        ({"kind": "dataset", "mean": 250.4}, 250),
        ({"kind": "dataset"}, None),
    ],
)
def test_estimate_typical_tokens_of_each_length_kind(
    length: dict[str, object], tokens: int
) -> None:
    workload = Workload.model_validate(
        {"profile": "custom", "input_len": length, "output_len": {"kind": "fixed", "value": 8}}
    )
    assert typical_tokens(workload.input_len) == tokens
    assert workload_tokens(workload) == (None if tokens is None else (tokens, 8))


def test_estimate_says_why_without_lengths_and_is_none_without_catalog_model() -> None:
    estimator = _estimator()
    found = estimator(Question(SMALL, Slo(), "on_demand"), "no-such-workload", UNQUANTIZED)
    assert found == NoEstimate(NO_TYPICAL_LENGTHS)
    question = Question("no-such-model", Slo(), "on_demand")
    assert estimator.estimate(question, (100, 100), UNQUANTIZED) is None


def test_estimate_eight_rtx_5090_no_longer_outrun_two_h200_for_a_70b_model() -> None:
    # 8 × RTX 5090 hold Llama 3.1 70B in bf16 only under TP=8 over PCIe 5.0 (63 GB/s a way):
    # each step all-reduces 160 × batch × 8192 × 2 bytes, 7/4 of it per GPU, which adds about
    # three quarters to the time its GDDR7 takes for the step's reads. Without it the bound put
    # 8 × RTX 5090 ahead of 2 × H200 (NVLink 4) in tokens/s, and first in $/1M.
    estimator = _estimator()
    by_gpu = _fewest(estimator.bounds(BIG, UNQUANTIZED, 1000, 1000))
    rtx, h200 = by_gpu["rtx-5090"], by_gpu["h200-sxm"]
    assert (rtx.gpu_count, h200.gpu_count) == (8, 2)
    assert rtx.interconnect == "includes TP all-reduce over PCIe 5.0 x16"
    assert h200.interconnect == "includes TP all-reduce over NVLink 4"
    assert rtx.tokens_per_s < h200.tokens_per_s
    found = estimator.estimate(Question(BIG, Slo(), "on_demand"), (1000, 1000), UNQUANTIZED)
    assert found is not None
    assert found.gpu != "rtx-5090"
    # the traffic counted: the bound without it, from the plan's own batch, is far above
    step_without = rtx.batch / rtx.tokens_per_s - (2 * 80 * rtx.batch * 8192 * 2 * 7 / 4 / 63e9)
    assert rtx.batch / step_without > h200.tokens_per_s


def test_estimate_bound_reads_fp4_weights_as_the_predictor_does() -> None:
    # `fp4` results are NVFP4 (the predictor's reading): their bound once found no weight format
    # (`fp4` is no quantization method), so fp4 questions got no estimate at all. On one H100,
    # 4-bit weights of a 70B model (about 39 GB against 70 in fp8) leave room for more sequences.
    estimator = _estimator()
    fp4 = _fewest(estimator.bounds(BIG, "fp4", 128, 2048))
    assert fp4 == _fewest(estimator.bounds(BIG, "nvfp4", 128, 2048))
    fp8 = _fewest(estimator.bounds(BIG, "fp8", 128, 2048))
    assert fp4["h100-sxm"].gpu_count == fp8["h100-sxm"].gpu_count == 1
    assert fp4["h100-sxm"].batch > fp8["h100-sxm"].batch
