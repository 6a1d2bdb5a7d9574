"""The closed-loop check: a closed loop's output tokens/s against its own concurrency, mean E2E
and mean output length (Little's law), above by the slack for every point, below by the floor
only for a point that counts no requests and whose every request ran its full length."""

import json
from pathlib import Path
from typing import Any

import pytest

from infermeter.registry.checks.closed_loop import (
    LITTLE_FLOOR,
    LITTLE_SLACK,
    closed_loop_findings,
    little_tokens_per_s,
)
from infermeter.registry.models import Result
from infermeter.registry.store import content_id, dumps_result
from infermeter.registry.validate import validate_paths

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
REPORTED = EXAMPLES / "valid/results/reported-throughput-only.json"
MEASURED = EXAMPLES / "valid/results/measured-two-points.json"
# reported-throughput-only: 12,000 output tok/s from 256 streams of 2,048 tokens; a mean E2E
# of 256 × 2,048 ÷ 12,000 s makes the three figures one run.
AGREEING_E2E_MS = 256 * 2048 / 12_000 * 1000


def _reported(e2e_ms: float, ignore_eos: bool | None = True, **requests: int) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(REPORTED.read_text(encoding="utf-8"))
    data["identity"]["workload"]["ignore_eos"] = ignore_eos
    data["points"][0]["e2e_ms"] = {"mean": e2e_ms}
    data["points"][0]["requests"] = requests
    return data


def _messages(data: dict[str, Any]) -> list[str]:
    result = Result.model_validate(data)
    return [f"{f.path}: {f.message}" for f in closed_loop_findings("f.json", result)]


def _file(tmp_path: Path, data: dict[str, Any]) -> Path:
    result = Result.model_validate(data)
    path = tmp_path / "result.json"
    path.write_text(dumps_result(result.model_copy(update={"id": content_id(result)})))
    return path


def test_the_reported_example_edited_to_lose_requests_fails_and_unedited_passes(
    tmp_path: Path,
) -> None:
    assert validate_paths([REPORTED]).ok
    assert validate_paths([_file(tmp_path, _reported(AGREEING_E2E_MS))]).ok
    # The same 12,000 tok/s with requests of a fifth of that E2E: 0.2 of what the loop completes.
    report = validate_paths([_file(tmp_path, _reported(AGREEING_E2E_MS / 5))])
    assert not report.ok
    (problem,) = report.problems
    assert problem.check == "closed-loop"
    assert problem.path == "points[0].throughput.output_tokens_per_s"
    assert problem.message == (
        "12000 output tok/s at concurrency 256 is 0.2× the 60000 tok/s that 256 streams of 2048 "
        "output tokens (the workload's mean) in 8.74 s each (e2e_ms.mean) complete (Little's "
        "law): under 0.5×, and the point counts no requests: requests the source does not count "
        "failed or stalled"
    )


@pytest.mark.parametrize(
    ("ratio", "ignore_eos", "requests", "refused"),
    [
        (LITTLE_FLOOR * 0.99, True, {}, "under 0.5×"),
        (LITTLE_FLOOR * 1.01, True, {}, None),
        # A point that counts its requests states its failures: its low throughput pays for them.
        (0.1, True, {"completed": 300}, None),
        # Requests that may stop at end-of-sequence give fewer tokens than the stated length.
        (0.1, None, {}, None),
        (LITTLE_SLACK * 1.01, True, {}, "more than 1.2×, impossible for any closed loop"),
        (LITTLE_SLACK * 1.01, None, {"completed": 300}, "more than 1.2×"),
        (LITTLE_SLACK * 0.99, None, {}, None),
    ],
)
def test_the_floor_only_where_no_request_is_counted_the_slack_everywhere(
    ratio: float, ignore_eos: bool | None, requests: dict[str, int], refused: str | None
) -> None:
    messages = _messages(_reported(AGREEING_E2E_MS * ratio, ignore_eos, **requests))
    if refused is None:
        assert messages == []
    else:
        (message,) = messages
        assert refused in message
        assert f" is {ratio:.3g}× the {12_000 / ratio:.0f} tok/s " in message


def test_a_measured_point_is_judged_by_its_own_mean_output() -> None:
    # measured-two-points with fixed 256-token outputs: its points complete 490 and 2,075
    # requests, and their tokens ÷ requests, not the workload's 256, is each request's output.
    data = json.loads(MEASURED.read_text(encoding="utf-8"))
    data["identity"]["workload"]["output_len"] = {"kind": "fixed", "value": 256}
    assert _messages(data) == []
    point = data["points"][1]
    mean_output = point["tokens"]["output"] / point["requests"]["completed"]
    bound = little_tokens_per_s(64, mean_output, point["e2e_ms"]["mean"])
    assert 0.95 < point["throughput"]["output_tokens_per_s"] / bound < 1.05
    e2e_ms = point["e2e_ms"]["mean"]
    point["e2e_ms"] = {"mean": e2e_ms / 2}  # half what its latencies allow: failures it counts
    assert _messages(data) == []
    point["e2e_ms"] = {"mean": e2e_ms * 2}  # twice what they allow
    (message,) = _messages(data)
    assert message.startswith("points[1].throughput.output_tokens_per_s: 4427 output tok/s at ")
    assert "(tokens.output ÷ requests.completed)" in message


def test_what_no_length_or_latency_fixes_is_not_judged() -> None:
    data = _reported(AGREEING_E2E_MS / 10)
    assert _messages(data)
    normal = {"kind": "normal", "mean": 2048.0, "stddev": 9.0}
    for lengths in ({"kind": "dataset"}, normal, {"kind": "fixed", "value": 0}):
        data["identity"]["workload"]["output_len"] = lengths
        assert _messages(data) == []
    assert _messages(_reported(AGREEING_E2E_MS / 10) | {"points": [_offline()]}) == []


def _offline() -> dict[str, Any]:
    point: dict[str, Any] = _reported(AGREEING_E2E_MS / 10)["points"][0]
    return point | {"load": {"arrival": "offline"}}
