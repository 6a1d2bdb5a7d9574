"""The answer pages' estimate where no evidence qualifies (`registry.prediction.estimate`): the
prediction with its measured error, or the roofline bound where its kind missed its target."""

import pytest

from infermeter.calculators.perf_labels import error_label, missed_target
from infermeter.calculators.predict import Slo
from infermeter.registry.catalog import load_gpus, load_models
from infermeter.registry.prediction import estimate

GPUS, MODELS = load_gpus(), load_models()


@pytest.mark.parametrize(
    ("slo", "kind"), [(None, "offline"), (Slo(ttft_ms=2000, tpot_ms=100), "server")]
)
def test_estimate_shows_what_its_kinds_error_allows(slo: Slo | None, kind: str) -> None:
    found = estimate(
        MODELS["llama-3.1-70b-instruct"], GPUS["h200-sxm"], 8, "fp8", 1000, 1000, slo, 3.0
    )
    assert found is not None
    assert found.kind == kind
    assert found.shown == ("bound" if missed_target(kind) else "prediction")
    assert found.missed_target == missed_target(kind)
    if found.shown == "prediction":
        assert found.label == error_label(kind)
    assert found.gpu_count == 8
    assert found.output_tokens_per_s > 0
    expected = 3.0 * 8 / (found.output_tokens_per_s * 3600) * 1e6
    assert found.usd_per_million_output_tokens == pytest.approx(expected)


def test_estimate_of_a_deployment_that_cannot_hold_the_model_is_none() -> None:
    assert estimate(MODELS["llama-3.1-405b-instruct"], GPUS["l40s"], 1, None, 1000, 1000) is None
