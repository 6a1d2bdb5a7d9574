"""`infermeter registry validate`: every valid example passes, every invalid one fails for its
own reason, and the registry's files are guarded against duplicates and edits after merging."""

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from registry_helpers import git

from infermeter.bench.cli.main import main
from infermeter.registry.checks.counts import count_findings
from infermeter.registry.checks.history import GitError, UnknownRevisionError
from infermeter.registry.checks.strings import string_findings
from infermeter.registry.corrections import (
    CORRECTIONS_FILE,
    CorrectionEntry,
    final_replacement,
    load_corrections,
)
from infermeter.registry.models import Result
from infermeter.registry.store import content_id, dumps_result, result_path, write_result
from infermeter.registry.validate import MAX_FILE_BYTES, ValidationReport, validate_paths

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = Path(__file__).parent.parent / "examples"
VALID_FILES = sorted((EXAMPLES / "valid").rglob("*.json"))
INVALID_FOLDER = EXAMPLES / "invalid"
INVALID_FILES = sorted(INVALID_FOLDER.rglob("*.json"))
EXPECTED: dict[str, dict[str, dict[str, str]]] = yaml.safe_load(
    (INVALID_FOLDER / "EXPECTED.yaml").read_text(encoding="utf-8")
)
MEASURED = EXAMPLES / "valid/results/measured-two-points.json"
REPORTED = EXAMPLES / "valid/results/reported-throughput-only.json"
SUMMARY = re.compile(r"^\d+ files? checked, (all valid|\d+ problems?)$")


def _expectation(path: Path) -> dict[str, str]:
    relative = path.relative_to(INVALID_FOLDER)
    return EXPECTED[relative.parts[0]][relative.name]


def _result(path: Path = MEASURED, **changes: Any) -> Result:
    data = json.loads(path.read_text(encoding="utf-8"))
    for dotted, value in changes.items():
        target = data
        *parents, last = dotted.split("__")
        for name in parents:
            target = target[int(name)] if isinstance(target, list) else target[name]
        target[last] = value
    result = Result.model_validate(data)
    return result.model_copy(update={"id": content_id(result)})


def _checks(report: ValidationReport) -> set[str]:
    return {problem.check for problem in report.problems}


# --- the example folders ------------------------------------------------------------------


def test_validate_examples_cover_at_least_25_failure_kinds() -> None:
    assert len(INVALID_FILES) >= 25
    assert len(VALID_FILES) >= 3


def test_validate_every_invalid_example_has_one_expectation() -> None:
    listed = {f"{folder}/{name}" for folder, entries in EXPECTED.items() for name in entries}
    present = {path.relative_to(INVALID_FOLDER).as_posix() for path in INVALID_FILES}
    assert listed == present


@pytest.mark.parametrize("path", VALID_FILES, ids=lambda path: path.name)
def test_validate_valid_example_passes(path: Path) -> None:
    report = validate_paths([path])
    assert report.ok, "\n".join(str(problem) for problem in report.problems)
    assert report.files_checked == 1


@pytest.mark.parametrize("path", INVALID_FILES, ids=lambda path: path.name)
def test_validate_invalid_example_fails_for_its_own_reason(path: Path) -> None:
    expected = _expectation(path)
    report = validate_paths([path])
    assert not report.ok
    assert _checks(report) == {expected["check"]}, [str(problem) for problem in report.problems]
    assert any(
        problem.path == expected["path"] and expected["message"] in problem.message
        for problem in report.problems
    ), [str(problem) for problem in report.problems]


def test_validate_names_each_missing_field_once(tmp_path: Path) -> None:
    # jsonschema gives one `required` error per missing field, each with the whole list: `{}`
    # printed its six missing fields six times each ("1 file checked, 36 problems").
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    paths = [problem.path for problem in validate_paths([empty]).problems]
    assert paths == ["schema_version", "id", "identity", "slo", "points", "source"]


@pytest.mark.parametrize("path", INVALID_FILES, ids=lambda path: path.name)
def test_validate_cli_prints_one_line_per_problem(path: Path) -> None:
    expected = _expectation(path)
    outcome = CliRunner().invoke(main, ["registry", "validate", str(path)])
    assert outcome.exit_code == 1, outcome.output
    assert isinstance(outcome.exception, SystemExit)  # exit 1, not an uncaught error
    assert "Traceback" not in outcome.output
    *problems, summary = outcome.output.splitlines()
    assert SUMMARY.match(summary)
    assert problems
    file = str(path.relative_to(REPOSITORY_ROOT))
    location = f"{expected['path']}: " if expected["path"] else ""
    assert any(
        line.startswith(f"{file}: {location}") and expected["message"] in line for line in problems
    ), outcome.output
    assert all(line.startswith(f"{file}: ") for line in problems)


def test_validate_cli_json_format() -> None:
    invalid = INVALID_FOLDER / "results/percentiles-out-of-order.json"
    outcome = CliRunner().invoke(
        main, ["registry", "validate", "--format", "json", str(invalid), str(MEASURED)]
    )
    assert outcome.exit_code == 1
    report = json.loads(outcome.output)
    assert report["ok"] is False
    assert report["files_checked"] == 2
    assert report["problems"] == [
        {
            "file": "tests/examples/invalid/results/percentiles-out-of-order.json",
            "path": "points[0].ttft_ms",
            "message": "p50 (80.0) is above p90 (61.2)",
            "check": "model",
        }
    ]
    valid = CliRunner().invoke(main, ["registry", "validate", "--format", "json", str(MEASURED)])
    assert valid.exit_code == 0
    assert json.loads(valid.output) == {
        "ok": True,
        "files_checked": 1,
        "problems": [],
        "skipped": [],
    }


def test_validate_collects_problems_of_every_file() -> None:
    files = [INVALID_FOLDER / "results" / name for name in ("empty-file.json", "wrong-type.json")]
    report = validate_paths([*files, MEASURED])
    assert report.files_checked == 3
    assert {problem.file.rsplit("/", 1)[-1] for problem in report.problems} == {
        "empty-file.json",
        "wrong-type.json",
    }
    assert report.summary == "3 files checked, 2 problems"


def test_validate_committed_registry_is_valid() -> None:
    report = validate_paths(registry_root=REPOSITORY_ROOT)
    assert report.ok, "\n".join(str(problem) for problem in report.problems)


# --- the registry tree ------------------------------------------------------------------------


def _registry(tmp_path: Path) -> Path:
    (tmp_path / "registry" / "results").mkdir(parents=True)
    return tmp_path


def test_validate_empty_registry_is_valid(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    outcome = CliRunner().invoke(main, ["registry", "validate", "--registry", str(root)])
    assert outcome.exit_code == 0, outcome.output
    assert outcome.output.strip() == "0 files checked, all valid"


def test_validate_result_written_by_the_store_passes(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    write_result(_result(), root)
    report = validate_paths(registry_root=root)
    assert report.ok, [str(problem) for problem in report.problems]
    assert report.files_checked == 1


@pytest.mark.parametrize(("tool", "refused"), [("infermeter", True), ("guidellm", False)])
def test_validate_requests_in_their_window_only_where_the_window_holds_them(
    tool: str, refused: bool
) -> None:
    """A request longer than its window is impossible where the window runs from the first
    request sent to the last answered (infermeter, vLLM, AIPerf); GuideLLM's window is the span
    between its warmup and cooldown, which a request it counts may cross."""
    data = json.loads(MEASURED.read_text(encoding="utf-8"))
    e2e = data["points"][0]["e2e_ms"]
    longer = {name: value * 60 if name != "n" else value for name, value in e2e.items()}
    result = _result(points__0__e2e_ms=longer, source__tool__name=tool)
    findings = [f for f in count_findings("r.json", result) if ".e2e_ms." in f.path]
    assert bool(findings) is refused, [str(f) for f in findings]


@pytest.mark.parametrize(("warmup", "refused"), [(None, True), (0, True), (40, False)])
def test_validate_in_flight_counts_the_warmup_still_in_flight(
    warmup: int | None, refused: bool
) -> None:
    """bench run's concurrency_mean counts warm-up requests still in flight in the window: an
    open loop of 20 measured requests after 100 warm-up ones averaged 106 in flight, and its
    result was refused as impossible."""
    sent = _result().points[0].requests.sent
    assert sent is not None
    result = _result(
        points__0__concurrency_mean=sent + 30, points__0__requests__warmup_in_flight=warmup
    )
    findings = [f for f in count_findings("r.json", result) if " sent" in f.message]
    assert bool(findings) is refused, [str(f) for f in findings]


def test_validate_path_must_agree_with_content(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    result = _result()
    wrong = root / "registry/results/h100-pcie/llama-3.1-8b-instruct" / result_path(result).name
    wrong.parent.mkdir(parents=True)
    wrong.write_text(dumps_result(result), encoding="utf-8")
    report = validate_paths(registry_root=root)
    assert [(problem.check, problem.message) for problem in report.problems] == [
        ("placement", f"path disagrees with the content, which belongs at {result_path(result)}")
    ]


def test_validate_path_pattern_in_results_tree(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    loose = root / "registry/results/result.json"
    loose.write_text(dumps_result(_result()), encoding="utf-8")
    report = validate_paths(registry_root=root)
    assert [problem.message for problem in report.problems] == [
        "not at registry/results/<gpu>/<model>/<date>-<id>.json; its content belongs at "
        f"{result_path(_result())}"
    ]


def test_validate_registry_file_must_be_canonical(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    path = write_result(_result(), root)
    path.write_text(json.dumps(json.loads(path.read_text()), indent=4) + "\n", encoding="utf-8")
    report = validate_paths(registry_root=root)
    assert [problem.check for problem in report.problems] == ["placement"]
    assert "not written canonically" in report.problems[0].message


def test_validate_rejects_other_files_in_results_tree(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    (root / "registry/results/notes.txt").write_text("hello\n", encoding="utf-8")
    (root / "registry/results/.gitkeep").write_text("", encoding="utf-8")
    report = validate_paths(registry_root=root)
    assert [str(problem) for problem in report.problems] == [
        "registry/results/notes.txt: only .json result files belong in registry/results/"
    ]


def test_validate_rejects_a_file_that_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "result.yaml"
    path.write_text("a: 1\n", encoding="utf-8")
    report = validate_paths([path], registry_root=_registry(tmp_path / "root"))
    assert [problem.message for problem in report.problems] == [
        "not a .json file; results are JSON files"
    ]


def test_validate_rejects_symlinks(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    target = tmp_path / "elsewhere.json"
    shutil.copy(MEASURED, target)
    link = root / "registry/results/link.json"
    link.symlink_to(target)
    folder_link = root / "registry/results/folder"
    folder_link.symlink_to(tmp_path)
    report = validate_paths(registry_root=root)
    assert sorted(str(problem) for problem in report.problems) == [
        "registry/results/folder: is a symbolic link; registry folders must be real",
        "registry/results/link.json: is a symbolic link; registry files must be regular files",
    ]
    direct = validate_paths([link], registry_root=root)
    assert [problem.message for problem in direct.problems] == [
        "is a symbolic link; registry files must be regular files"
    ]


def test_validate_names_a_fifo_given_as_the_walk_names_one(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    fifo = root / "registry/results/pipe.json"
    os.mkfifo(fifo)
    walked = validate_paths(registry_root=root)
    named = validate_paths([fifo], registry_root=root)
    expected = "is not a regular file (a FIFO, socket or device)"
    assert [problem.message for problem in walked.problems] == [expected]
    assert [problem.message for problem in named.problems] == [expected]


def test_validate_rejects_a_2_mb_file(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    data = json.loads(MEASURED.read_text(encoding="utf-8"))
    data["source"]["command"] = "x" * 2_000_000
    path.write_text(json.dumps(data), encoding="utf-8")
    assert path.stat().st_size > MAX_FILE_BYTES
    report = validate_paths([path], registry_root=_registry(tmp_path / "root"))
    assert [problem.message for problem in report.problems] == [
        "2.0 MB is above the limit of 1 MiB"
    ]


def test_validate_missing_path(tmp_path: Path) -> None:
    report = validate_paths([tmp_path / "nothing.json"], registry_root=_registry(tmp_path))
    assert [problem.message for problem in report.problems] == ["no such file or folder"]
    assert report.files_checked == 0


# --- strings --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["input < 1024 tokens and output > 128", "a\tb\nc", "TTFT p95 <= 200 ms", "über 5 €"],
)
def test_validate_strings_plain_text_passes(text: str) -> None:
    assert string_findings("f", {"conditions": text}) == []


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("<img src=x onerror=alert(1)>", "contains markup '<img src=x onerror=alert(1)>'"),
        ("click <a href='https://x'>here</a>", "contains markup"),
        ("<SCRIPT", "contains markup '<SCRIPT'"),
        ("hidden <!-- comment", "contains markup '<!--'"),
        ("nul\x00byte", "control character U+0000"),
        ("escape\x1b[31m", "control character U+001B"),
        ("rtl\u2066isolate", "bidirectional control character U+2066"),
    ],
)
def test_validate_strings_reject_markup_and_controls(text: str, fragment: str) -> None:
    findings = string_findings("f", {"points": [{"note": text}]})
    assert [finding.path for finding in findings] == ["points[0].note"]
    assert fragment in findings[0].message


# --- duplicates -------------------------------------------------------------------------------


def test_validate_duplicate_measurements_rejected(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    original = write_result(_result(), root)
    # Another submitter, the same measurements: a duplicate, not a replicate.
    copy = _result(source__submitter="someone-else")
    candidate = tmp_path / "candidate.json"
    candidate.write_text(dumps_result(copy), encoding="utf-8")
    report = validate_paths([candidate], registry_root=root)
    assert [(problem.file, problem.check) for problem in report.problems] == [
        ("candidate.json", "duplicates")
    ]
    assert original.relative_to(root).as_posix() in report.problems[0].message


def test_validate_replicate_from_another_submitter_is_fine(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    write_result(_result(), root)
    replicate = _result(
        source__submitter="someone-else",
        points__0__ttft_ms__mean=44.0,
        source__started_at="2025-05-13T09:30:00Z",
        source__finished_at="2025-05-13T09:41:02Z",
    )
    write_result(replicate, root)
    report = validate_paths(registry_root=root)
    assert report.ok, [str(problem) for problem in report.problems]
    assert report.files_checked == 2


def test_validate_duplicates_within_the_registry(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    write_result(_result(), root)
    write_result(_result(source__submitter="someone-else"), root)
    report = validate_paths(registry_root=root)
    assert [problem.check for problem in report.problems] == ["duplicates", "duplicates"]


# --- immutability against a git base ------------------------------------------------------


def _corrections(root: Path, *entries: dict[str, str]) -> None:
    text = yaml.safe_dump({"schema_version": 1, "corrections": list(entries)}, sort_keys=False)
    (root / "registry/corrections.yaml").write_text(text, encoding="utf-8")


@pytest.fixture
def merged(tmp_path: Path) -> tuple[Path, Path, Result]:
    """A registry repository whose first commit holds one merged result."""
    root = _registry(tmp_path / "repo")
    git(root, "init", "-q", "-b", "main")
    result = _result()
    path = write_result(result, root)
    _corrections(root)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "merge a result")
    return root, path, result


def _immutability(root: Path, base: str = "main") -> list[str]:
    report = validate_paths(base=base, registry_root=root)
    return [str(problem) for problem in report.problems if problem.check == "immutability"]


def test_validate_unchanged_registry_against_base(merged: tuple[Path, Path, Result]) -> None:
    root, _path, _result_merged = merged
    report = validate_paths(base="main", registry_root=root)
    assert report.ok, [str(problem) for problem in report.problems]


def test_validate_changed_merged_result_is_an_error(merged: tuple[Path, Path, Result]) -> None:
    root, path, result = merged
    git(root, "checkout", "-q", "-b", "edit")
    path.write_text(path.read_text().replace("example-contributor", "edited"), encoding="utf-8")
    git(root, "commit", "-q", "-am", "edit a merged result")
    relative = path.relative_to(root).as_posix()
    assert _immutability(root) == [
        f"{relative}: changed since main, but merged results are immutable: append a correction "
        f"or withdrawal of {result.id} to registry/corrections.yaml instead"
    ]
    # An entry never allows an edit: the file's content is its id.
    _corrections(
        root,
        {"result_id": result.id, "kind": "withdrawal", "date": "2025-06-01", "reason": "edited"},
    )
    assert _immutability(root) == [
        f"{relative}: changed since main, but its withdrawal in registry/corrections.yaml "
        "allows only keeping the file as merged or removing it: the corrected figures go in a "
        "new result file"
    ]


def test_validate_withdrawal_allows_keeping_or_removing_the_file(
    merged: tuple[Path, Path, Result],
) -> None:
    root, path, result = merged
    withdrawal = {"result_id": result.id, "kind": "withdrawal", "date": "2025-06-01", "reason": "r"}
    _corrections(root, withdrawal)
    assert _immutability(root) == []  # kept as merged, shown as withdrawn
    path.unlink()
    assert _immutability(root) == []


def test_validate_correction_allows_removal_only_with_its_replacement_present(
    merged: tuple[Path, Path, Result],
) -> None:
    root, path, result = merged
    replacement = write_result(_result(source__submitter="corrector"), root)
    entry = {
        "result_id": result.id,
        "kind": "correction",
        "date": "2025-06-01",
        "reason": "wrong submitter",
        "replaced_by": replacement.stem[-12:],
    }
    _corrections(root, entry)
    path.unlink()
    assert _immutability(root) == []
    # The entry names another replacement than the one in the registry: the removal is refused.
    _corrections(root, {**entry, "replaced_by": "abcdefabcdef"})
    relative = path.relative_to(root).as_posix()
    assert _immutability(root) == [
        f"{relative}: deleted since main, but its correction in registry/corrections.yaml "
        "names abcdefabcdef as the replacement, and no result file in registry/results/ has "
        "that id"
    ]


def test_validate_deleted_merged_result_is_an_error(merged: tuple[Path, Path, Result]) -> None:
    root, path, result = merged
    path.unlink()
    assert len(_immutability(root)) == 1
    assert "deleted since main" in _immutability(root)[0]
    replacement = write_result(_result(source__submitter="corrector"), root)
    replacement_id = replacement.stem[-12:]
    _corrections(
        root,
        {
            "result_id": result.id,
            "kind": "correction",
            "date": "2025-06-01",
            "reason": "wrong submitter",
            "replaced_by": replacement_id,
        },
    )
    report = validate_paths(base="main", registry_root=root)
    assert report.ok, [str(problem) for problem in report.problems]


def test_validate_corrections_file_is_append_only(merged: tuple[Path, Path, Result]) -> None:
    root, _path, result = merged
    entry = {"result_id": result.id, "kind": "withdrawal", "date": "2025-06-01", "reason": "a"}
    _corrections(root, entry)
    git(root, "commit", "-q", "-am", "withdraw")
    _corrections(root, {**entry, "reason": "rewritten"})
    assert _immutability(root, "HEAD") == [
        "registry/corrections.yaml: corrections[0]: an entry merged before was changed "
        "(append only)"
    ]
    _corrections(root)
    assert _immutability(root, "HEAD") == [
        "registry/corrections.yaml: corrections: 1 entries merged before were removed"
    ]


def test_validate_a_result_corrected_twice_is_a_chain_of_appended_entries(
    merged: tuple[Path, Path, Result],
) -> None:
    # The corrections file is append-only: a replacement corrected again keeps its first entry
    # as merged, and a second entry names the result that now stands for both.
    root, path, result = merged
    first = write_result(_result(source__submitter="corrector"), root)
    entry = {"result_id": result.id, "kind": "correction", "date": "2025-06-01", "reason": "a"}
    _corrections(root, {**entry, "replaced_by": first.stem[-12:]})
    path.unlink()
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first correction")
    second = write_result(_result(source__submitter="corrector again"), root)
    again = {**entry, "result_id": first.stem[-12:], "replaced_by": second.stem[-12:]}
    _corrections(root, {**entry, "replaced_by": first.stem[-12:]}, again)
    first.unlink()
    report = validate_paths(base="HEAD", registry_root=root)
    assert report.ok, [str(problem) for problem in report.problems]
    assert (
        final_replacement(load_corrections(root / CORRECTIONS_FILE), result.id)
        == (second.stem[-12:])
    )
    # The chain must end in the registry.
    second.unlink()
    assert [str(problem) for problem in validate_paths(registry_root=root).problems] == [
        f"registry/corrections.yaml: corrections[0].replaced_by: {first.stem[-12:]} is no "
        "result in registry/results/ (nor is the result its later corrections name)",
        f"registry/corrections.yaml: corrections[1].replaced_by: {second.stem[-12:]} is no "
        "result in registry/results/",
    ]


def test_validate_correction_must_name_an_existing_replacement(
    merged: tuple[Path, Path, Result],
) -> None:
    root, _path, result = merged
    _corrections(
        root,
        {
            "result_id": result.id,
            "kind": "correction",
            "date": "2025-06-01",
            "reason": "r",
            "replaced_by": "abcdefabcdef",
        },
    )
    report = validate_paths(registry_root=root)
    assert [str(problem) for problem in report.problems] == [
        "registry/corrections.yaml: corrections[0].replaced_by: abcdefabcdef is no result in "
        "registry/results/"
    ]


def test_validate_corrections_entry_shape() -> None:
    with pytest.raises(ValueError, match="a correction needs replaced_by"):
        CorrectionEntry.model_validate(
            {"result_id": "abcdefabcdef", "kind": "correction", "date": "2025-06-01", "reason": "r"}
        )


def test_validate_invalid_corrections_file_reported(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    (root / "registry/corrections.yaml").write_text(
        "schema_version: 1\ncorrections:\n  - {result_id: nope, kind: withdrawal}\n",
        encoding="utf-8",
    )
    report = validate_paths(registry_root=root)
    assert _checks(report) == {"corrections"}
    assert {problem.path for problem in report.problems} >= {
        "corrections[0].result_id",
        "corrections[0].date",
    }


def test_validate_unknown_base_revision(merged: tuple[Path, Path, Result]) -> None:
    root, _path, _result_merged = merged
    with pytest.raises(UnknownRevisionError, match="unknown git revision 'no-such-branch'"):
        validate_paths(base="no-such-branch", registry_root=root)
    outcome = CliRunner().invoke(
        main, ["registry", "validate", "--registry", str(root), "--base", "no-such-branch"]
    )
    assert outcome.exit_code == 2
    assert "unknown git revision 'no-such-branch'" in outcome.output
    assert "Traceback" not in outcome.output


def test_validate_base_needs_a_git_repository(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    with pytest.raises(GitError, match="is not inside a git repository"):
        validate_paths(base="main", registry_root=root)


def test_validate_base_needs_git(
    merged: tuple[Path, Path, Result], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root, _path, _result_merged = merged
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(GitError, match="git is not installed"):
        validate_paths(base="main", registry_root=root)
    outcome = CliRunner().invoke(
        main, ["registry", "validate", "--registry", str(root), "--base", "main"]
    )
    assert outcome.exit_code == 1
    assert "Error: git is not installed" in outcome.output


# --- never a traceback ----------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


def _leaf_paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(data, dict):
        return [path for key, value in data.items() for path in _leaf_paths(value, (*prefix, key))]
    if isinstance(data, list):
        return [path for index, v in enumerate(data) for path in _leaf_paths(v, (*prefix, index))]
    return [prefix]


MEASURED_LEAVES = _leaf_paths(json.loads(MEASURED.read_text(encoding="utf-8")))


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(content=st.binary(max_size=300))
def test_validate_never_raises_on_arbitrary_bytes(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "fuzz.json"
    path.write_bytes(content)
    report = validate_paths([path], registry_root=tmp_path)
    assert report.files_checked == 1
    assert not report.ok


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(leaf=st.sampled_from(MEASURED_LEAVES), value=JSON_VALUES)
def test_validate_never_raises_on_a_changed_field(
    tmp_path: Path, leaf: tuple[Any, ...], value: Any
) -> None:
    data = json.loads(MEASURED.read_text(encoding="utf-8"))
    target = data
    for key in leaf[:-1]:
        target = target[key]
    target[leaf[-1]] = value
    path = tmp_path / "fuzz.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    report = validate_paths([path], registry_root=tmp_path)
    assert report.files_checked == 1
    assert all(isinstance(problem.message, str) and problem.check for problem in report.problems)


def test_a_json_finding_cuts_its_message_as_a_printed_line_does() -> None:
    from infermeter.registry.checks import Finding
    from infermeter.registry.errors import MESSAGE_CHARS

    long = Finding("r.json", "points[0]", "x" * (MESSAGE_CHARS + 50), "schema").as_json()
    assert long["message"] == "x" * (MESSAGE_CHARS - 1) + "…"
    short = Finding("r.json", "", "y" * MESSAGE_CHARS, "schema").as_json()
    assert short == {
        "file": "r.json",
        "path": "",
        "message": "y" * MESSAGE_CHARS,
        "check": "schema",
    }
