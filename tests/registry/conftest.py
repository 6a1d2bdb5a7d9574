"""Fixtures of the registry tests."""

from pathlib import Path

import pytest
from registry_helpers import empty_registry


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    """An empty registry checkout (`registry_helpers.empty_registry`) in the test's folder."""
    return empty_registry(tmp_path / "registry-checkout")
