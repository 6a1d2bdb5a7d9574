"""`run_session(checkpoint=…)`: after each finished load point, the result so far, marked
incomplete (what `bench fleet` streams back to its driver, so a lost node keeps its points).

The server is the STAND-IN vLLM's HTTP side (tests/bench/standin_vllm.py), in-process on
127.0.0.1."""

from __future__ import annotations

from pathlib import Path

from infermeter.bench.plan.options import RunOptions
from infermeter.bench.session.builder import session_config
from infermeter.bench.session.session import run_session
from infermeter.registry.models import Result
from infermeter.registry.validate import validate_paths


def test_session_checkpoint_after_each_point_is_the_result_so_far_marked_incomplete(
    tmp_path: Path, endpoint: str
) -> None:
    options = RunOptions.model_validate(
        {
            "endpoint": endpoint, "gpu": "h100-sxm", "model-id": "llama-3.2-1b-instruct",
            "concurrency": [1, 2], "num-requests": 4, "warmup": 0, "input-len": 16,
            "output-len": 8, "output": str(tmp_path / "result.json"),
        }
    )  # fmt: skip
    kept: list[Result] = []
    outcome = run_session(session_config(options, "infermeter bench run"), checkpoint=kept.append)
    assert [[p.load.concurrency for p in result.points] for result in kept] == [[1], [1, 2]]
    for result in kept:
        assert result.source.kind == "measured"
        assert result.source.complete is False
    final = outcome.result
    assert final is not None
    assert final.source.kind == "measured"
    assert final.source.complete is True
    # The last checkpoint holds the same measured points as the result written at the end.
    assert kept[-1].points == final.points
    assert validate_paths([tmp_path / "result.json"]).ok
