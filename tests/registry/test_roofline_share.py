"""A load point's share of its roofline bound (`registry.roofline_share`), against the bound
worked out by hand from Llama 3.1 8B's config.json and the H100 SXM's datasheet figures."""

import json
from pathlib import Path
from typing import Any

import pytest

from infermeter.registry.catalog import load_gpus, load_models
from infermeter.registry.index_rows import index_rows
from infermeter.registry.prices import PriceBook
from infermeter.registry.roofline_share import (
    DISAGGREGATED,
    MODEL_NOT_IN_CATALOG,
    NO_COMPUTE_RATE,
    RooflineBounds,
    RooflineShare,
    roofline_shares,
)
from infermeter.registry.store import parse_result

TEMPLATE = Path(__file__).resolve().parents[1] / "examples/valid/results/measured-two-points.json"

# Llama 3.1 8B (hidden 4096, 32 layers, 8 KV heads of 128, MLP 14336, vocabulary 128256, lm_head
# untied): the parameters one decode token passes through, the embedding row left out.
HIDDEN, LAYERS, KV_WIDTH, MLP, VOCAB = 4096, 32, 8 * 128, 14336, 128256
TOUCHED = VOCAB * HIDDEN + LAYERS * (2 * HIDDEN * HIDDEN + 2 * HIDDEN * KV_WIDTH + 3 * HIDDEN * MLP)
KV_BYTES_PER_TOKEN = LAYERS * 2 * KV_WIDTH * 2  # keys and values, bf16
H100_BYTES_PER_S = 3350e9
H100_BF16_FLOPS = 989.4e12
CONTEXT = 16  # the shortest prompt (16) + half of the shortest output before a token (0)


def _result(edit: Any = None) -> Any:
    data = json.loads(TEMPLATE.read_text())
    if edit is not None:
        edit(data)
    return parse_result(json.dumps(data), "result.json")


def _shares(result: Any) -> list[Any]:
    return roofline_shares(result, load_gpus(), load_models())


def test_roofline_share_matches_the_hand_worked_bandwidth_bound() -> None:
    result = _result()
    for share, point in zip(_shares(result), result.points, strict=True):
        batch = point.load.concurrency
        step_bytes = 2 * TOUCHED + batch * CONTEXT * KV_BYTES_PER_TOKEN
        bound = H100_BYTES_PER_S / step_bytes * batch
        assert share.bound_tokens_per_s == pytest.approx(bound, rel=0.005)
        measured = point.throughput.output_tokens_per_s
        assert share.pct == pytest.approx(measured / bound * 100, rel=0.005)
        assert share.basis == f"bandwidth bound at batch {batch}, {CONTEXT} tokens of context"


def test_roofline_share_without_a_batch_is_the_compute_bound() -> None:
    def offline(data: dict[str, Any]) -> None:
        data["identity"]["serving"]["max_num_seqs"] = None
        for point in data["points"]:
            point["load"] = {"arrival": "offline"}

    share = _shares(_result(offline))[0]
    assert share.bound_tokens_per_s == pytest.approx(H100_BF16_FLOPS / (2 * TOUCHED), rel=0.01)
    assert share.basis.startswith("compute bound")


def test_roofline_share_of_two_replicas_is_twice_one() -> None:
    def two_replicas(data: dict[str, Any]) -> None:
        data["identity"]["gpu"]["count"] = 2
        data["identity"]["serving"]["data_parallel_size"] = 2
        for point in data["points"]:
            point["load"]["concurrency"] *= 2

    one, two = _shares(_result()), _shares(_result(two_replicas))
    for single, double in zip(one, two, strict=True):
        assert double.bound_tokens_per_s == pytest.approx(2 * single.bound_tokens_per_s)


def test_roofline_share_none_for_a_model_outside_the_catalog() -> None:
    result = _result()
    no_bound = RooflineShare(None, None, MODEL_NOT_IN_CATALOG)
    assert roofline_shares(result, load_gpus(), {}) == [no_bound, no_bound]


def test_roofline_share_none_for_a_disaggregated_deployment() -> None:
    """Prefill and decode on separate pools: InferenceX's DeepSeek-R1 on 34 GB300 (2 prefill,
    32 decode GPUs in 4 workers) measured 14 times the "bound" of one replica over all 34."""

    def disaggregated(data: dict[str, Any]) -> None:
        data["identity"]["gpu"]["count"] = 4
        data["identity"]["serving"]["tensor_parallel_size"] = None
        data["identity"]["serving"]["disaggregated"] = {"prefill_gpus": 1, "decode_gpus": 3}

    no_bound = RooflineShare(None, None, DISAGGREGATED)
    assert _shares(_result(disaggregated)) == [no_bound, no_bound]


def test_roofline_share_reaches_the_index_row() -> None:
    result = _result()
    bounds = RooflineBounds(load_gpus(), load_models())
    rows = index_rows(result, "result.json", PriceBook([]), None, bounds)
    shares = _shares(result)
    assert [row.roofline_pct for row in rows] == [
        pytest.approx(share.pct, rel=1e-5) for share in shares
    ]
    assert all(row.roofline_basis for row in rows)
    assert [row.roofline_pct for row in index_rows(result, "result.json", PriceBook([]))] == [
        None,
        None,
    ]


def test_roofline_share_none_without_a_batch_on_a_gpu_without_rates() -> None:
    def offline_on_gh200(data: dict[str, Any]) -> None:
        data["identity"]["gpu"].update({"id": "gh200-144gb", "form_factor": "superchip"})
        data["identity"]["serving"]["max_num_seqs"] = None
        for point in data["points"]:
            point["load"] = {"arrival": "offline"}

    # the GH200 as a catalog entry without compute rates (the catalog gives it rates now)
    catalog = load_gpus()
    rates = catalog["gh200-144gb"].tflops_dense
    no_rates = rates.model_copy(update=dict.fromkeys(rates.model_dump(), None))
    gpus = {
        **catalog,
        "gh200-144gb": catalog["gh200-144gb"].model_copy(update={"tflops_dense": no_rates}),
    }
    no_bound = RooflineShare(None, None, NO_COMPUTE_RATE)
    assert roofline_shares(_result(offline_on_gh200), gpus, load_models()) == [no_bound, no_bound]
    bounds = RooflineBounds(gpus, load_models())
    rows = index_rows(_result(offline_on_gh200), "result.json", PriceBook([]), None, bounds)
    assert [(row.roofline_tokens_per_s, row.roofline_pct) for row in rows] == [(None, None)] * 2
    assert [row.roofline_basis for row in rows] == [NO_COMPUTE_RATE] * 2  # the page says why
    # with the batch stated, the bandwidth bound still applies
    stated = roofline_shares(
        _result(
            lambda data: data["identity"]["gpu"].update(
                {"id": "gh200-144gb", "form_factor": "superchip"}
            )
        ),
        gpus,
        load_models(),
    )
    assert all(share.bound_tokens_per_s is not None for share in stated)


def test_roofline_share_of_an_unknown_format_takes_the_gpu_s_fastest_rate() -> None:
    # 951 index rows label their weights 'fp4' (NVFP4 or MXFP4, unstated), which the
    # calculators do not read: the share drew their compute bound at the FP8 rate of the most
    # compact format they know (AWQ), half a B200's FP4 rate, and so doubled their '% of
    # bound'. The physics check bounds such a format at the fastest rate; so does the share.
    b200 = load_gpus()["b200"]
    fastest = max(rate for rate in b200.tflops_dense.model_dump().values() if rate)
    assert fastest == b200.tflops_dense.fp4

    def fp4_offline_on_b200(data: dict[str, Any]) -> None:
        data["identity"]["gpu"] = {"id": "b200", "count": 1, "form_factor": "sxm"}
        data["identity"]["model"]["quantization"] = "fp4"
        data["identity"]["serving"]["max_num_seqs"] = None
        for point in data["points"]:
            point["load"] = {"arrival": "offline"}

    share = _shares(_result(fp4_offline_on_b200))[0]
    flops_per_token = 2 * TOUCHED  # and attention over 16 tokens of context, under 1 %
    assert share.bound_tokens_per_s == pytest.approx(fastest * 1e12 / flops_per_token, rel=0.01)
    assert share.basis.startswith("compute bound")


@pytest.mark.parametrize("quantization", ["nvfp4", "mxfp4"])
def test_roofline_share_of_an_fp4_export_is_bounded_on_the_export(quantization: str) -> None:
    # DeepSeek-R1's catalog checkpoint is FP8, which vLLM will not serve as nvfp4 or mxfp4; a
    # result at those ran NVIDIA's or AMD's export (calculators.checkpoint_export). The share
    # bounded it in the one format the FP8 checkpoint serves, a byte a weight where a 4-bit
    # export reads about half: 61 index rows' bandwidth bounds as low as an FP8 run's.
    def deepseek_on_b200(precision: str) -> Any:
        def edit(data: dict[str, Any]) -> None:
            data["identity"]["gpu"] = {"id": "b200", "count": 8, "form_factor": "sxm"}
            model = data["identity"]["model"]
            model.update(id="deepseek-r1", hf_repo="deepseek-ai/DeepSeek-R1", dtype=None)
            model["quantization"] = precision
            data["identity"]["serving"]["tensor_parallel_size"] = 8

        return _result(edit)

    fp8, fp4 = (_shares(deepseek_on_b200(precision)) for precision in ("fp8", quantization))
    for at_fp8, at_fp4 in zip(fp8, fp4, strict=True):
        assert at_fp4.basis.startswith("bandwidth bound")
        assert at_fp4.bound_tokens_per_s > 1.3 * at_fp8.bound_tokens_per_s
