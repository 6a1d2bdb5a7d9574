"""Each successful request's SLO figures in the result file (`LoadPoint.request_figures`): what
the answer checks a reader's SLO against request by request. Times are rounded up to the
microsecond, so a bound in whole microseconds is decided as on the raw times; a run whose
figures would take its file over the registry's size limit keeps its points without them, each
point saying so."""

from __future__ import annotations

import pytest

from infermeter.bench.result.assemble import validate_result
from infermeter.registry.input_files import LIMITS_BYTES
from infermeter.registry.store import dumps_result
from tests.measured_result import MS, measured_result, request_record


def test_each_successful_request_is_kept_in_send_order_rounded_up_to_the_microsecond() -> None:
    records = [
        request_record(2, 80 * MS + 1, 4),  # 1 ns over 80 ms: stored above an 80 ms bound
        request_record(0, 80 * MS, 4),  # exactly 80 ms: stored at it
        request_record(1, 30 * MS, 1),  # one token: no TPOT
        request_record(3, 30 * MS, 4, ok=False),  # failed: counted in requests.failed only
    ]
    (point,) = measured_result(records).points
    figures = point.request_figures
    assert figures is not None
    assert point.requests.failed == 1
    assert figures.output_tokens == [4, 1, 4]
    assert figures.ttft_ms == [80.0, 30.0, 80.001]
    assert figures.tpot_ms == [10.0, None, 10.0]
    assert figures.e2e_ms == [110.0, 30.0, 110.001]


def test_figures_that_would_pass_the_file_limit_are_left_out_and_each_point_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    records = [request_record(i, 20 * MS, 4) for i in range(40)]
    kept = measured_result(records)
    assert kept.points[0].request_figures is not None
    size = len(dumps_result(kept).encode("utf-8"))
    monkeypatch.setitem(LIMITS_BYTES, "result file", size - 1)
    (point,) = measured_result(records).points
    assert point.request_figures is None
    (verdict,) = [v for v in point.validity if v.code == "request_figures_left_out"]
    assert "above the limit" in verdict.message
    assert validate_result(kept) == []
