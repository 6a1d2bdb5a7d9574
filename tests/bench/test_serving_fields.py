"""A live run and every importer fill the result's serving settings from the registry's own
model: a field added to `ServingSettings` must be added to `bench.result.deployment.Deployment` and
`bench.importers.common.ImportFacts`, or be named as one they never state. Matching by name
once dropped a new field silently, or (a live run) failed every result. Both make their
identity from a `Deployment` (`bench.result.deployment.identity_data`)."""

import dataclasses

import pytest

from infermeter.bench.importers.common import (
    IMPORT_SERVING_NOT_STATED,
    IMPORTED_DEPLOYMENT_FIELDS,
    ImportFacts,
)
from infermeter.bench.result.deployment import SERVING_NOT_STATED, Deployment
from infermeter.registry.models import ServingSettings


def _field_names(source: type) -> set[str]:
    """A dataclass's fields, or a pydantic model's (ImportFacts)."""
    if dataclasses.is_dataclass(source):
        return {field.name for field in dataclasses.fields(source)}
    return set(source.model_fields)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("source", "not_stated"),
    [(Deployment, SERVING_NOT_STATED), (ImportFacts, IMPORT_SERVING_NOT_STATED)],
    ids=["bench run", "bench import"],
)
def test_serving_fields_are_declared_or_named_as_not_stated(
    source: type, not_stated: frozenset[str]
) -> None:
    declared = _field_names(source)
    serving = set(ServingSettings.model_fields)
    assert serving - declared == not_stated, (
        f"{source.__name__}: add these ServingSettings fields, or name them as not stated"
    )
    assert not_stated <= serving  # no stale name


def test_import_takes_every_deployment_field_its_flags_state() -> None:
    deployment = {field.name for field in dataclasses.fields(Deployment)}
    flags = set(ImportFacts.model_fields)
    always = {"gpu_count", "model_id", "engine_version", "hf_repo"}  # required, checked first
    assert set(IMPORTED_DEPLOYMENT_FIELDS) == (deployment & flags) - always
