"""The first-release table (calculators.first_releases) is keyed by model types the config reader
plans by name: a misspelt key would drop a family's note without an error."""

from infermeter.calculators.config_reader import KNOWN_MODEL_TYPES, family_of
from infermeter.calculators.first_releases import FIRST_RELEASES


def test_first_releases_are_keyed_by_model_types_the_reader_knows() -> None:
    unknown = [key for key in FIRST_RELEASES if family_of(key) not in KNOWN_MODEL_TYPES]
    assert unknown == []
