"""`bench fleet`'s driver when a node is lost and no other node can take the run: the points
the lost attempt had streamed back become the entry's result, marked incomplete.

The Ray cluster here is a STAND-IN with no live node left (the real cluster's lost-node path,
retry included, is in test_fleet_ray.py); the checkpoint is a real result file's text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from infermeter.bench.fleet.matrix import load_matrix
from infermeter.bench.fleet.ray_runner import FleetConfig, _Driver
from infermeter.registry.validate import validate_paths

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]


class _StandinRayAllNodesGone:
    """The few calls of the `ray` module the driver makes, for a cluster with no live node."""

    @staticmethod
    def remote(function: Any) -> Any:
        return function

    @staticmethod
    def nodes() -> list[dict[str, Any]]:
        return []


def _checkpoint_text() -> str:
    measured = REPOSITORY_ROOT / "tests" / "examples" / "valid" / "results"
    return (measured / "measured-two-points.json").read_text(encoding="utf-8")


def test_fleet_lost_run_not_retried_keeps_its_streamed_points_as_an_incomplete_result(
    tmp_path: Path,
) -> None:
    plan = tmp_path / "plan.yaml"
    runs = [{"name": "chat", "gpus": ["l40s"]}]
    plan.write_text(yaml.safe_dump({"defaults": {"model": "m"}, "runs": runs}))
    matrix = load_matrix(plan)
    (entry,) = matrix.entries
    lines: list[str] = []
    results = tmp_path / "fleet-results"
    config = FleetConfig(address="127.0.0.1:6379", results_dir=results)
    driver = _Driver(_StandinRayAllNodesGone, matrix, config, lines.append)
    driver.outcomes[entry.id].attempts = 1
    text = _checkpoint_text()
    driver.checkpoint[entry.id] = text
    driver._lost(entry.id, RuntimeError("The node with node ID: 0123456789abcdef0123 has died"))
    outcome = driver.outcomes[entry.id]
    assert outcome.status == "incomplete"
    assert outcome.message is not None
    assert outcome.message.startswith("its node was lost; the points it had measured are kept")
    partial = results / "partial" / f"{entry.id}.attempt-1.json"
    assert outcome.partial == [partial]
    assert partial.read_text(encoding="utf-8") == text
    assert outcome.result_path == results / f"{entry.id}.json"
    assert outcome.result_path.read_text(encoding="utf-8") == text
    assert validate_paths([outcome.result_path]).ok
    assert "0123456789abcdef0123" in driver.dead
    assert lines[-1].endswith("incomplete → " + str(outcome.result_path) + ": " + outcome.message)


def test_fleet_lost_run_without_a_point_is_reported_failed(tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump({"runs": [{"model": "m", "name": "chat", "gpus": ["l40s"]}]}))
    matrix = load_matrix(plan)
    (entry,) = matrix.entries
    config = FleetConfig(address="127.0.0.1:6379", results_dir=tmp_path / "out")
    driver = _Driver(_StandinRayAllNodesGone, matrix, config, lambda line: None)
    driver.outcomes[entry.id].attempts = 1
    driver._lost(entry.id, RuntimeError("node died"))
    outcome = driver.outcomes[entry.id]
    assert (outcome.status, outcome.result_path, outcome.partial) == ("failed", None, [])
    assert not (tmp_path / "out" / f"{entry.id}.json").exists()


def test_registry_validate_of_fleet_results_skips_and_names_the_partial_attempts(
    tmp_path: Path,
) -> None:
    from click.testing import CliRunner

    from infermeter.bench.cli.main import main

    results = tmp_path / "fleet-results"
    (results / "partial").mkdir(parents=True)
    (results / "chat--l40s-x1.json").write_text(_checkpoint_text(), encoding="utf-8")
    # A lost attempt's points: not a result to submit, so not read (even when broken) ...
    attempt = results / "partial" / "chat--l40s-x1.attempt-1.json"
    attempt.write_text("{ not json", encoding="utf-8")
    # ... while any other file of the folder, partial/ too, is still checked.
    stray = results / "partial" / "notes.json"
    stray.write_text("[]", encoding="utf-8")
    report = validate_paths([results])
    assert report.files_checked == 2
    assert report.skipped == (str(attempt),)
    assert [problem.file for problem in report.problems] == [str(stray)]
    stray.unlink()
    run = CliRunner().invoke(main, ["registry", "validate", str(results)])
    assert run.exit_code == 0, run.output
    assert run.output.splitlines() == [
        f"{attempt}: skipped: a lost fleet attempt's partial points, not a result",
        "1 file checked (1 partial attempt of bench fleet skipped: not results to submit), "
        "all valid",
    ]
    # Named on its own, the attempt is checked as any file.
    assert not validate_paths([attempt]).ok
    assert validate_paths([attempt]).skipped == ()
