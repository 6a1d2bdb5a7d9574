"""Fixtures of the registry tests."""

from pathlib import Path

import pytest
from registry_checkout import empty_registry
from registry_helpers import prices_registry


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    """An empty registry checkout (`registry_helpers.empty_registry`) in the test's folder."""
    return empty_registry(tmp_path / "registry-checkout")


@pytest.fixture
def price_registry(tmp_path: Path) -> Path:
    """A registry checkout with only the GPU catalog (`registry_helpers.prices_registry`)."""
    return prices_registry(tmp_path / "registry-checkout")
