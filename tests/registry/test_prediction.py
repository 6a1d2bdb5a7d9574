"""The predictor's figure for a catalog deployment (`registry.prediction.predicted_tokens_per_s`),
which the answers' estimate shows with its measured error or replaces by the roofline bound."""

import pytest

from infermeter.calculators.predict import Slo
from infermeter.registry.catalog import load_gpus, load_models
from infermeter.registry.prediction import predicted_tokens_per_s

GPUS, MODELS = load_gpus(), load_models()


@pytest.mark.parametrize("slo", [None, Slo(ttft_ms=2000, tpot_ms=100)])
def test_a_deployment_that_holds_the_model_has_a_figure(slo: Slo | None) -> None:
    found = predicted_tokens_per_s(
        MODELS["llama-3.1-70b-instruct"], GPUS["h200-sxm"], 8, "fp8", 1000, 1000, slo
    )
    assert found is not None
    assert found > 0


def test_a_deployment_that_cannot_hold_the_model_has_none() -> None:
    found = predicted_tokens_per_s(
        MODELS["llama-3.1-405b-instruct"], GPUS["l40s"], 1, None, 1000, 1000
    )
    assert found is None
