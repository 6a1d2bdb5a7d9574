"""The predictor's figure for a catalog deployment (`calculators.answer_estimate.
predicted_tokens_per_s`), which the answers' estimate shows with its measured error or replaces
by the roofline bound."""

import pytest

from infermeter.calculators.answer_estimate import predicted_tokens_per_s
from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.predict import P99Bounds
from infermeter.registry.catalog import load_gpus, load_models
from infermeter.registry.perf_cases import gpu_for_prediction

GPUS = {gpu_id: gpu_for_prediction(gpu) for gpu_id, gpu in load_gpus().items()}
MODELS = load_models()


@pytest.mark.parametrize("slo", [None, P99Bounds(ttft_ms=2000, tpot_ms=100)])
def test_a_deployment_that_holds_the_model_has_a_figure(slo: P99Bounds | None) -> None:
    arch = parse_config(MODELS["llama-3.1-70b-instruct"].config)
    found = predicted_tokens_per_s(arch, GPUS["h200-sxm"], 8, "fp8", 1000, 1000, slo)
    assert found is not None
    assert found > 0


def test_a_deployment_that_cannot_hold_the_model_has_none() -> None:
    found = predicted_tokens_per_s(
        parse_config(MODELS["llama-3.1-405b-instruct"].config), GPUS["l40s"], 1, None, 1000, 1000
    )
    assert found is None
