"""validated_price: the entry of a price source's row, or one error naming the row and the
fields the row gave that the entry may not hold."""

from pathlib import Path
from typing import Any

import pytest

from infermeter.registry.catalog import load_catalog
from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.harvest.price_entry import validated_price
from infermeter.registry.harvest.skypilot import PRICE_FILE
from infermeter.registry.models import PriceCatalog

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]


def _harvested_fields() -> dict[str, Any]:
    """The fields of an entry a harvest wrote (the first of SkyPilot's committed file)."""
    return load_catalog(REPOSITORY_ROOT / PRICE_FILE, PriceCatalog).prices[0].model_dump()


@pytest.mark.parametrize(
    ("changed", "message"),
    [
        (  # the notes quote the region the row gave: the error names the region alone
            {"region": "CANADA\x00-1", "notes": "same price in CANADA\x00-1"},
            "row 1: region: contains the control character U+0000",
        ),
        (  # a character only the notes hold is still named
            {"notes": "same price in \x1b[2J"},
            "row 1: notes: contains the control character U+001B",
        ),
    ],
)
def test_validated_price_names_the_field_the_row_gave(
    changed: dict[str, str], message: str
) -> None:
    with pytest.raises(HarvestError) as caught:
        validated_price({**_harvested_fields(), **changed}, "row 1")
    assert str(caught.value) == message
