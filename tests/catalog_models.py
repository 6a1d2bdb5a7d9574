"""The catalog's models as the calculators read them, by catalog id, for tests that plan a
named model (its `config` read by `calculators.config_reader.parse_config`, as the CLI does)."""

from functools import cache

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.model_arch import ModelArch
from infermeter.registry.catalog import load_models
from infermeter.registry.models import ModelEntry


@cache
def catalog_models() -> dict[str, ModelEntry]:
    """The model catalog, read once."""
    return load_models()


def catalog_arch(model_id: str) -> ModelArch:
    """The architecture of the catalog model `model_id`."""
    return parse_config(catalog_models()[model_id].config)
