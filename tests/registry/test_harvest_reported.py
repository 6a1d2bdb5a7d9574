"""The one builder of harvested results (`registry.harvest.reported`): a row whose parts make no
valid result is skipped with the field and the reason, never a traceback."""

import pytest
from pydantic import ValidationError

from infermeter.registry.harvest.errors import RowSkipped
from infermeter.registry.harvest.reported import (
    fixed_lengths,
    harvest_row,
    offline_point,
    replaced,
    reported_result,
)
from infermeter.registry.models import Identity, Load, ReportedSource, Result

IDENTITY = Identity.model_validate(
    {
        "gpu": {"id": "h100-sxm", "count": 1, "form_factor": "sxm"},
        "engine": {"name": "vllm", "version": "0.9.1"},
        "model": {"id": "llama-3.1-8b-instruct", "hf_repo": "meta-llama/Llama-3.1-8B"},
        "serving": {},
        "workload": fixed_lengths(128, 128).model_dump(exclude_none=True),
    }
)
SOURCE = ReportedSource.model_validate(
    {
        "kind": "reported",
        "url": "https://example.com/table",
        "title": "a table",
        "publisher": "a vendor",
        "conditions": "as printed",
        "retrieved": "2026-12-01",
        "submitter": "someone",
    }
)


def _no_number() -> Result:
    raise RowSkipped("value '—' is not a number")


def _closed_loop_without_concurrency() -> Result:
    Load(arrival="closed")
    raise AssertionError("a closed loop without concurrency was built")


def test_a_row_is_a_result_or_a_reason() -> None:
    assert harvest_row("k", _no_number).skipped == "value '—' is not a number"
    skipped = harvest_row("k", _closed_loop_without_concurrency).skipped
    assert skipped == "not a valid result: Load: closed arrival needs concurrency"
    made = harvest_row("k", lambda: reported_result(IDENTITY, [offline_point(10.0, 0)], SOURCE))
    assert made.result is not None
    assert made.result.points[0].requests.sent is None  # no count stated: none stored


def test_a_result_without_points_is_skipped_by_its_field() -> None:
    with pytest.raises(RowSkipped, match=r"^not a valid result: points: "):
        reported_result(IDENTITY, [], SOURCE)


def test_replaced_validates_the_copy() -> None:
    assert replaced(SOURCE, title="another").title == "another"
    with pytest.raises(ValidationError, match="url"):
        replaced(SOURCE, url="not an address")
