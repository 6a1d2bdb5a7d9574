"""Result format version 1 → 2: the upgrade, `registry migrate`, and the immutability check.

The version-1 files in tests/data/results-v1/ are real: one of the registry's TensorRT-LLM
offline figures as merged before version 2 (stored then as "closed, concurrency 3000") and the
measured example as it was written by version 1.
"""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from registry_helpers import git

from infermeter.bench.cli.main import main
from infermeter.registry.errors import InvalidFileError
from infermeter.registry.migrate import migrate_paths, pending_migrations
from infermeter.registry.migration import is_older_format, upgrade_result_data
from infermeter.registry.models import RESULT_SCHEMA_VERSION
from infermeter.registry.store import content_id, dumps_result, read_result, result_path
from infermeter.registry.validate import validate_paths

V1 = Path(__file__).resolve().parents[1] / "data" / "results-v1"
OFFLINE_V1 = V1 / "2026-11-30-e6f5f462d3f3.json"
MEASURED_V1 = V1 / "measured-two-points.json"


def _v1(path: Path) -> dict[str, object]:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["schema_version"] == 1
    return data


def test_reading_a_version_1_offline_table_cell_gives_an_offline_point() -> None:
    result = read_result(OFFLINE_V1)
    assert result.schema_version == RESULT_SCHEMA_VERSION == 2
    (point,) = result.points
    assert point.load.arrival == "offline"
    assert (point.load.concurrency, point.load.request_rate) == (None, None)
    # What was measured is kept exactly: the request count and the table value.
    assert point.requests.sent == 3000
    assert point.throughput.output_tokens_per_s == 13181.24
    assert result.id == content_id(result) != "e6f5f462d3f3"
    assert result.identity.gpu.count == 8


def test_closed_loop_points_stay_closed() -> None:
    old = _v1(MEASURED_V1)
    result = read_result(MEASURED_V1)
    assert [(p.load.arrival, p.load.concurrency) for p in result.points] == [
        ("closed", 8),
        ("closed", 64),
    ]
    # Nothing but the version (and so the id) differs.
    upgraded = json.loads(dumps_result(result))
    for data in (old, upgraded):
        data.pop("id")
        data.pop("schema_version")
    assert upgraded == old


def test_all_at_once_verdict_is_dropped_with_the_closed_loop() -> None:
    data = _v1(MEASURED_V1)
    point = data["points"][0]  # type: ignore[index]
    point["requests"]["sent"] = 8
    point["validity"] = [{"code": "all-at-once", "message": "sent at once"}]
    upgraded = upgrade_result_data(data, "x.json")
    assert upgraded["points"][0]["load"] == {"arrival": "offline"}
    assert upgraded["points"][0]["validity"] == []
    assert data["points"][0]["load"]["arrival"] == "closed"  # type: ignore[index]  # not mutated


def test_fewer_requests_than_concurrency_is_also_offline() -> None:
    data = _v1(MEASURED_V1)
    data["points"][1]["requests"]["sent"] = 65  # type: ignore[index]
    assert upgrade_result_data(data, "x.json")["points"][1]["load"]["arrival"] == "closed"
    data["points"][1]["requests"]["sent"] = 64  # type: ignore[index]
    assert upgrade_result_data(data, "x.json")["points"][1]["load"]["arrival"] == "offline"


def test_current_and_unknown_versions() -> None:
    data = json.loads(dumps_result(read_result(OFFLINE_V1)))
    assert not is_older_format(data)
    assert upgrade_result_data(data, "x.json") is data
    with pytest.raises(InvalidFileError, match="schema_version 3 is newer than this infermeter"):
        upgrade_result_data(dict(data, schema_version=3), "x.json")


def invoke(*args: str) -> Result:
    outcome = CliRunner().invoke(main, list(args))
    assert "Traceback" not in outcome.output
    assert outcome.exception is None or isinstance(outcome.exception, SystemExit)
    return outcome


@pytest.fixture
def v1_registry(tmp_path: Path) -> Path:
    """A git registry whose main branch holds a merged version-1 file."""
    folder = tmp_path / "registry/results/h200-sxm/llama-3.1-70b-instruct"
    folder.mkdir(parents=True)
    shutil.copy(OFFLINE_V1, folder / OFFLINE_V1.name)
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "merge a version-1 result")
    return tmp_path


def test_migrate_moves_the_file_and_validates_against_the_base(v1_registry: Path) -> None:
    root = v1_registry
    old = root / "registry/results/h200-sxm/llama-3.1-70b-instruct" / OFFLINE_V1.name
    assert validate_paths(registry_root=root).problems[0].check == "version"
    assert pending_migrations([], root) == [old]
    (item,) = migrate_paths([], root)
    assert (item.old_path, item.from_version, item.to_version) == (old, 1, 2)
    assert not old.exists()
    assert item.new_path == root / result_path(read_result(item.new_path))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "migrate")
    report = validate_paths(base="main~0", registry_root=root)
    assert report.ok, [str(problem) for problem in report.problems]
    report = validate_paths(base="main~1", registry_root=root)
    assert report.ok, [str(problem) for problem in report.problems]
    # Twice changes nothing.
    assert migrate_paths([], root) == []
    assert git(root, "status", "--porcelain") == ""


def test_an_edited_migration_is_still_a_change(v1_registry: Path) -> None:
    root = v1_registry
    (item,) = migrate_paths([], root)
    item.new_path.write_text(
        item.new_path.read_text().replace("13181.24", "13181.25"), encoding="utf-8"
    )
    report = validate_paths(base="main", registry_root=root)
    assert [problem.check for problem in report.problems if problem.check == "immutability"] == [
        "immutability"
    ]


def test_a_deleted_version_1_file_is_still_a_change(v1_registry: Path) -> None:
    root = v1_registry
    (root / "registry/results/h200-sxm/llama-3.1-70b-instruct" / OFFLINE_V1.name).unlink()
    report = validate_paths(base="main", registry_root=root)
    assert any("deleted since main" in problem.message for problem in report.problems)


def test_cli_migrate_check_then_migrate(v1_registry: Path) -> None:
    root = v1_registry
    checked = invoke("registry", "migrate", "--registry", str(root), "--check")
    assert checked.exit_code == 1
    assert "older format" in checked.output
    migrated = invoke("registry", "migrate", "--registry", str(root))
    assert migrated.exit_code == 0, migrated.output
    assert migrated.output.splitlines()[-1] == "1 file migrated"
    again = invoke("registry", "migrate", "--registry", str(root), "--check")
    assert again.exit_code == 0
    assert "current format" in again.output


def test_cli_migrate_a_contributors_file_in_place(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    shutil.copy(MEASURED_V1, path)
    outcome = invoke("registry", "migrate", str(path))
    assert outcome.exit_code == 0, outcome.output
    assert json.loads(path.read_text())["schema_version"] == 2
    assert validate_paths([path]).ok


def test_cli_migrate_names_a_file_it_cannot_upgrade(tmp_path: Path) -> None:
    data = _v1(MEASURED_V1)
    data["points"][0]["load"]["arrival"] = "sometimes"  # type: ignore[index]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    outcome = invoke("registry", "migrate", str(path))
    assert outcome.exit_code == 1
    assert "bad.json: points[0].load.arrival" in outcome.output
    assert json.loads(path.read_text())["schema_version"] == 1  # nothing half-written


def test_cli_migrate_writes_no_file_the_gate_rejects(tmp_path: Path) -> None:
    # A version-1 file that upgrades cleanly but whose command carries a key: the upgrade
    # would be a file registry validate rejects, so none of the files is rewritten.
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    shutil.copy(MEASURED_V1, good)
    data = _v1(MEASURED_V1)
    data["source"]["command"] += " --api-key sk-live-0123456789abcdefghij"  # type: ignore[index]
    bad.write_text(json.dumps(data), encoding="utf-8")
    before = {path: path.read_bytes() for path in (good, bad)}
    outcome = invoke("registry", "migrate", str(good), str(bad))
    assert outcome.exit_code == 1, outcome.output
    assert "bad.json" in outcome.output
    assert "after the upgrade" in outcome.output
    assert "sk-live" not in outcome.output
    assert {path: path.read_bytes() for path in (good, bad)} == before


def test_cli_migrate_names_a_file_nested_too_deep_to_upgrade(tmp_path: Path) -> None:
    # Under the JSON parser's limit but deeper than a result nests: the upgrade's copy of the
    # data recursed past Python's limit, a traceback.
    data = _v1(MEASURED_V1)
    path = tmp_path / "deep.json"
    deep = "[" * 600 + "]" * 600
    path.write_text(json.dumps(data)[:-1] + f', "notes_x": {deep}}}', encoding="utf-8")
    outcome = invoke("registry", "migrate", str(path))
    assert outcome.exit_code == 1, outcome.output
    assert "deep.json: JSON nested deeper than 32 levels" in outcome.output
    assert json.loads(path.read_text())["schema_version"] == 1
