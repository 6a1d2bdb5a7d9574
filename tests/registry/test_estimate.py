"""The calculators' estimate beside "no result meets this yet" (`registry.estimate`): the
roofline bound of the smallest deployment that fits, at the sequences its memory plan holds,
against the bound worked out by hand; never at a flagged price."""

import pytest

from infermeter.registry.catalog import load_gpus, load_models, load_prices
from infermeter.registry.estimate import Estimates, cost_estimates, typical_tokens, workload_tokens
from infermeter.registry.lookup import cheapest_prices
from infermeter.registry.models.identity import Workload

# Llama 3.1 8B (hidden 4096, 32 layers, 8 KV heads of 128, MLP 14336, vocabulary 128256, lm_head
# untied): the parameters one decode token passes through, the embedding row left out.
HIDDEN, LAYERS, KV_WIDTH, MLP, VOCAB = 4096, 32, 8 * 128, 14336, 128256
TOUCHED = VOCAB * HIDDEN + LAYERS * (2 * HIDDEN * HIDDEN + 2 * HIDDEN * KV_WIDTH + 3 * HIDDEN * MLP)
KV_BYTES_PER_TOKEN = LAYERS * 2 * KV_WIDTH * 2  # keys and values, bf16

GPUS, MODELS, PRICES = load_gpus(), load_models(), load_prices()
CHEAPEST = {gpu: cheapest_prices(gpu, PRICES.values()) for gpu in GPUS}


def test_estimate_matches_the_hand_worked_bound_and_price() -> None:
    estimates = cost_estimates(MODELS["llama-3.1-8b-instruct"], GPUS, CHEAPEST, 1000, 1000)
    h100 = next(e for e in estimates if e.gpu == "h100-sxm")
    assert h100.gpu_count == 1
    assert h100.batch > 1
    context = 1000 + 1000 // 2  # the mean context of an output token
    step_bytes = 2 * TOUCHED + h100.batch * context * KV_BYTES_PER_TOKEN
    bound = GPUS["h100-sxm"].memory_bandwidth_gb_s * 1e9 / step_bytes * h100.batch
    assert h100.bound_tokens_per_s == pytest.approx(bound, rel=0.005)
    price = CHEAPEST["h100-sxm"]["on_demand"]
    assert h100.price_id == price.id
    assert h100.usd_per_million_output_tokens == pytest.approx(
        price.usd_per_gpu_hour / (bound * 3600) * 1e6, rel=0.005
    )


def test_estimate_ranks_cheapest_first_and_never_at_a_flagged_price() -> None:
    estimates = cost_estimates(MODELS["llama-3.1-70b-instruct"], GPUS, CHEAPEST, 128, 2048)
    assert len(estimates) >= 3
    costs = [e.usd_per_million_output_tokens for e in estimates]
    assert costs == sorted(costs)
    flagged = {price.id for price in PRICES.values() if price.caution is not None}
    assert flagged, "the catalog flags no price: this test would check nothing"
    assert not flagged & {e.price_id for e in estimates}
    # 70B in bf16 (about 141 GB) fits no single 80 GB GPU
    assert all(e.gpu_count >= 2 for e in estimates if GPUS[e.gpu].memory_gb <= 80)


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


def test_estimate_none_without_stated_lengths_or_catalog_model() -> None:
    estimates = Estimates(GPUS, MODELS, CHEAPEST)
    dataset = Workload.model_validate(
        {"profile": "custom", "input_len": {"kind": "dataset"}, "output_len": {"kind": "dataset"}}
    )
    assert estimates.cheapest("llama-3.1-8b-instruct", dataset) is None
    assert estimates.ranked("no-such-model", 100, 100) == []
    fixed = Workload.model_validate(
        {
            "profile": "chat",
            "input_len": {"kind": "fixed", "value": 1000},
            "output_len": {"kind": "fixed", "value": 1000},
        }
    )
    cheapest = estimates.cheapest("llama-3.1-8b-instruct", fixed)
    assert cheapest == estimates.ranked("llama-3.1-8b-instruct", 1000, 1000)[0]


def test_estimate_eight_rtx_5090_no_longer_outrun_two_h200_for_a_70b_model() -> None:
    # 8 × RTX 5090 hold Llama 3.1 70B in bf16 only under TP=8 over PCIe 5.0 (63 GB/s a way):
    # each step all-reduces 160 × batch × 8192 × 2 bytes, 7/4 of it per GPU, which adds about
    # three quarters to the time its GDDR7 takes for the step's reads. Without it the bound put
    # 8 × RTX 5090 ahead of 2 × H200 (NVLink 4) in tokens/s, and first in $/1M.
    estimates = cost_estimates(MODELS["llama-3.1-70b-instruct"], GPUS, CHEAPEST, 1000, 1000)
    by_gpu = {e.gpu: e for e in estimates}
    rtx, h200 = by_gpu["rtx-5090"], by_gpu["h200-sxm"]
    assert (rtx.gpu_count, h200.gpu_count) == (8, 2)
    assert rtx.interconnect == "includes TP all-reduce over PCIe 5.0 x16"
    assert h200.interconnect == "includes TP all-reduce over NVLink 4"
    assert rtx.bound_tokens_per_s < h200.bound_tokens_per_s
    assert estimates[0].gpu != "rtx-5090"
    # the traffic counted: the bound without it, from the plan's own batch, is far above
    step_without = rtx.batch / rtx.bound_tokens_per_s - (
        2 * 80 * rtx.batch * 8192 * 2 * 7 / 4 / 63e9
    )
    assert rtx.batch / step_without > h200.bound_tokens_per_s
