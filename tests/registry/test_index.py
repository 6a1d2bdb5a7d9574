"""registry.index: one row per result × load point, priced from the catalog, deterministic files."""

import csv
import hashlib
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from infermeter.bench.cli.main import main
from infermeter.registry.across_rows import with_replicate_spread
from infermeter.registry.catalog import PRICES_FILE
from infermeter.registry.errors import InvalidFileError
from infermeter.registry.index import build_index, render_csv, write_index
from infermeter.registry.index_row import COLUMNS, IndexRow
from infermeter.registry.location import catalogs_folder
from infermeter.registry.store import read_result, result_path

EXAMPLES = Path(__file__).parent.parent / "examples/valid/results"
MEASURED = EXAMPLES / "measured-two-points.json"  # h100-sxm × 1, two closed-loop points
REPORTED = EXAMPLES / "reported-throughput-only.json"  # h100-sxm × 1, throughput only
PARTIAL = EXAMPLES / "reported-partial-latency.json"  # h200-sxm × 2

PRICE = """
  - id: {id}
    provider: "test-cloud"
    offering: null
    gpu: {gpu}
    gpus_per_instance: 1
    instance: null
    tier: {tier}
    usd_per_gpu_hour: {price}
    region: null
    as_of: "2026-01-01"
    source:
      {{url: "https://example.com/prices", title: "Test prices", date: "2026-01-01",
       date_basis: "stated", official: true}}
"""

PRICES = [
    ("h100-od-cheap", "h100-sxm", "on_demand", 2.0),
    ("h100-od-dear", "h100-sxm", "on_demand", 3.0),
    ("h100-reserved", "h100-sxm", "reserved", 1.5),
    ("h200-spot", "h200-sxm", "interruptible", 1.8),
]


def _registry(root: Path, *examples: Path) -> Path:
    """A registry checkout at `root` with `examples` at their canonical paths and test prices."""
    for example in examples:
        destination = root / result_path(read_result(example)).as_posix()
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(example, destination)
    catalogs = catalogs_folder(root)
    catalogs.mkdir(parents=True, exist_ok=True)
    (root / "registry/results").mkdir(parents=True, exist_ok=True)
    text = "schema_version: 1\nprices:" + "".join(
        PRICE.format(id=i, gpu=g, tier=t, price=p) for i, g, t, p in PRICES
    )
    (catalogs / PRICES_FILE).write_text(text, encoding="utf-8")
    return root


def _rows(root: Path) -> list[dict[str, Any]]:
    rows, _ = build_index(root)
    return [row.as_dict() for row in rows]


def test_index_one_row_per_result_and_load_point(tmp_path: Path) -> None:
    rows, results = build_index(_registry(tmp_path, MEASURED, REPORTED, PARTIAL))
    expected = sum(len(read_result(path).points) for path in (MEASURED, REPORTED, PARTIAL))
    assert results == 3
    assert len(rows) == expected
    assert [(row.file, row.point_index) for row in rows] == sorted(
        (row.file, row.point_index) for row in rows
    )


def test_index_identity_and_measured_columns(tmp_path: Path) -> None:
    row = _rows(_registry(tmp_path, MEASURED))[1]
    result = read_result(MEASURED)
    assert row["result_id"] == result.id
    assert row["file"] == result_path(result).as_posix()
    assert (row["gpu"], row["gpu_count"], row["model"]) == ("h100-sxm", 1, "llama-3.1-8b-instruct")
    assert (row["engine"], row["engine_version"], row["profile"]) == ("vllm", "0.8.5", "chat")
    assert (row["arrival"], row["concurrency"], row["request_rate"]) == ("closed", 64, None)
    assert row["source_kind"] == "measured"
    assert row["ttft_ms_p95"] == 240.3
    assert row["e2e_ms_p99"] == 5980.2
    assert row["failure_rate"] == pytest.approx(5 / 2080, rel=1e-5)
    assert row["gpu_utilization_pct"] == 97.2


def test_index_prices_use_cheapest_of_each_tier_times_gpu_count(tmp_path: Path) -> None:
    row = _rows(_registry(tmp_path, MEASURED))[0]
    throughput, accepted = 1045.33, 1034.67
    assert row["on_demand_price_id"] == "h100-od-cheap"
    assert row["on_demand_usd_per_hour"] == 2.0
    assert row["on_demand_usd_per_million_output_tokens"] == pytest.approx(
        2.0 / (throughput * 3600) * 1e6, rel=1e-5
    )
    assert row["on_demand_usd_per_million_accepted_tokens"] == pytest.approx(
        2.0 / (accepted * 3600) * 1e6, rel=1e-5
    )
    assert row["on_demand_output_tokens_per_dollar"] == pytest.approx(
        throughput * 3600 / 2.0, rel=1e-5
    )
    assert row["reserved_price_id"] == "h100-reserved"
    assert row["reserved_usd_per_million_output_tokens"] == pytest.approx(
        1.5 / (throughput * 3600) * 1e6, rel=1e-5
    )
    # No interruptible price for this GPU: every figure of that tier is null, not guessed.
    assert row["interruptible_price_id"] is None
    assert row["interruptible_usd_per_million_output_tokens"] is None


def test_index_multi_gpu_price_is_per_deployment(tmp_path: Path) -> None:
    rows = _rows(_registry(tmp_path, PARTIAL))
    result = read_result(PARTIAL)
    for row, point in zip(rows, result.points, strict=True):
        assert row["gpu_count"] == 2
        assert row["interruptible_price_id"] == "h200-spot"
        assert row["interruptible_usd_per_hour"] == 3.6
        throughput = point.throughput.output_tokens_per_s
        if throughput:
            assert row["output_tokens_per_s_per_gpu"] == pytest.approx(throughput / 2, rel=1e-5)
            assert row["interruptible_usd_per_million_output_tokens"] == pytest.approx(
                3.6 / (throughput * 3600) * 1e6, rel=1e-5
            )
        assert row["on_demand_price_id"] is None


def test_index_derived_per_user_and_energy(tmp_path: Path) -> None:
    first = _rows(_registry(tmp_path, MEASURED))[0]
    assert first["tokens_per_s_per_user_basis"] == "concurrency"
    assert first["tokens_per_s_per_user"] == pytest.approx(1045.33 / 8, rel=1e-5)
    assert first["output_tokens_per_joule"] == pytest.approx(125440 / 61488.0, rel=1e-5)


def test_index_missing_inputs_stay_null(tmp_path: Path) -> None:
    (row,) = _rows(_registry(tmp_path, REPORTED))
    assert row["source_kind"] == "reported"
    for name in (
        "ttft_ms_p95",
        "e2e_ms_p99",
        "failure_rate",
        "accepted_output_tokens_per_s",
        "on_demand_usd_per_million_accepted_tokens",
        "output_tokens_per_joule",
        "energy_j",
        "duration_s",
    ):
        assert row[name] is None, name
    assert row["on_demand_usd_per_million_output_tokens"] is not None
    assert row["quantization"] == "fp8"


def test_index_files_are_content_hashed_and_deterministic(tmp_path: Path) -> None:
    root = _registry(tmp_path / "repo", MEASURED, REPORTED, PARTIAL)
    first = write_index(root, tmp_path / "out1")
    second = write_index(root, tmp_path / "out2")
    for a, b in [(first.json_file, second.json_file), (first.csv_file, second.csv_file)]:
        assert a.name == b.name
        assert a.read_bytes() == b.read_bytes()
        digest = hashlib.sha256(a.read_bytes()).hexdigest()[:12]
        assert a.name == f"index-{digest}{a.suffix}"
    manifest = json.loads(first.manifest.read_text(encoding="utf-8"))
    assert manifest == {
        "csv": first.csv_file.name,
        "json": first.json_file.name,
        "results": 3,
        "rows": first.rows,
        "schema_version": 1,
    }
    data = json.loads(first.json_file.read_text(encoding="utf-8"))
    assert [column["name"] for column in data["columns"]] == list(COLUMNS)
    assert data["licence"].startswith("infermeter's own data: Apache-2.0.")
    assert all(column["description"] for column in data["columns"])
    assert len(data["rows"]) == first.rows
    assert all(list(row) == list(COLUMNS) for row in data["rows"])


def test_index_csv_matches_json_rows(tmp_path: Path) -> None:
    root = _registry(tmp_path, MEASURED, REPORTED)
    rows, _ = build_index(root)
    table = list(csv.reader(io.StringIO(render_csv(rows))))
    assert table[0] == list(COLUMNS)
    assert len(table) == len(rows) + 1
    reported = next(line for line in table[1:] if line[COLUMNS.index("source_kind")] == "reported")
    assert reported[COLUMNS.index("ttft_ms_p95")] == ""  # null is an empty cell


def test_index_removes_stale_hashed_files_only(tmp_path: Path) -> None:
    root = _registry(tmp_path / "repo", MEASURED)
    out = tmp_path / "out"
    out.mkdir()
    stale = out / "index-000000000000.json"
    stale.write_text("{}\n", encoding="utf-8")
    keep = out / "notes.txt"
    keep.write_text("mine\n", encoding="utf-8")
    written = write_index(root, out)
    assert not stale.exists()
    assert keep.exists()
    assert written.removed == (stale,)


def test_index_empty_registry_writes_an_empty_index(tmp_path: Path) -> None:
    written = write_index(_registry(tmp_path / "repo"), tmp_path / "out")
    assert (written.results, written.rows) == (0, 0)
    assert written.csv_file.read_text(encoding="utf-8") == ",".join(COLUMNS) + "\n"


def test_index_invalid_results_fail_once_with_every_problem(tmp_path: Path) -> None:
    root = _registry(tmp_path / "repo", MEASURED)
    bad = root / "registry/results/h100-sxm/llama-3.1-8b-instruct/2025-01-01-000000000000.json"
    data = json.loads(MEASURED.read_text(encoding="utf-8"))
    data["points"][0]["ttft_ms"]["p50"] = -1
    bad.write_text(json.dumps(data), encoding="utf-8")
    misplaced = root / "registry/results/a100-80gb-sxm/x/2025-01-01-3d515a234ba5.json"
    misplaced.parent.mkdir(parents=True)
    shutil.copyfile(REPORTED, misplaced)
    with pytest.raises(InvalidFileError) as caught:
        write_index(root, tmp_path / "out")
    lines = str(caught.value).splitlines()
    assert any(
        line.startswith(bad.relative_to(root).as_posix()) and "ttft_ms.p50" in line
        for line in lines
    )
    assert any("path does not match its content" in line for line in lines)
    assert not (tmp_path / "out").exists()


def test_cli_registry_index_writes_and_reports(tmp_path: Path) -> None:
    root = _registry(tmp_path / "repo", MEASURED, REPORTED)
    out = tmp_path / "out"
    outcome = CliRunner().invoke(
        main, ["registry", "index", "--registry", str(root), "--out", str(out)]
    )
    assert outcome.exit_code == 0, outcome.output
    assert "2 results, 3 rows" in outcome.output
    assert (out / "index.json").is_file()


def test_cli_registry_index_json_output(tmp_path: Path) -> None:
    root = _registry(tmp_path / "repo", MEASURED)
    outcome = CliRunner().invoke(
        main, ["registry", "index", "--registry", str(root), "--out", str(tmp_path / "o"), "--json"]
    )
    assert outcome.exit_code == 0, outcome.output
    report = json.loads(outcome.output)
    assert report["rows"] == 2
    assert Path(report["json"]).is_file()


def test_cli_registry_index_invalid_file_exits_1_without_traceback(tmp_path: Path) -> None:
    root = _registry(tmp_path / "repo", MEASURED)
    bad = root / "registry/results/h100-sxm/broken.json"
    bad.write_text("{not json", encoding="utf-8")
    outcome = CliRunner().invoke(
        main, ["registry", "index", "--registry", str(root), "--out", str(tmp_path / "o")]
    )
    assert outcome.exit_code == 1
    assert "registry/results/h100-sxm/broken.json: invalid JSON" in outcome.output
    assert "Traceback" not in outcome.output


def test_index_replicates_share_a_key_and_show_the_spread() -> None:
    from infermeter.registry.across_rows import with_replicate_spread
    from infermeter.registry.index_row import IndexRow

    def row(result_id: str, key: str, tokens_per_s: float | None) -> IndexRow:
        values = dict.fromkeys(COLUMNS)
        values.update(
            result_id=result_id,
            replicate_key=key,
            replicates=1,
            output_tokens_per_s=tokens_per_s,
            output_tokens_per_s_min=tokens_per_s,
            output_tokens_per_s_max=tokens_per_s,
        )
        return IndexRow.from_columns(values)

    rows = with_replicate_spread(
        [row("a", "k1", 100.0), row("b", "k1", 120.0), row("c", "k2", 50.0), row("d", "k1", None)]
    )
    by_id = {r.result_id: r for r in rows}
    assert by_id["a"].replicates == 3
    assert (by_id["b"].output_tokens_per_s_min, by_id["b"].output_tokens_per_s_max) == (
        100.0,
        120.0,
    )
    assert by_id["c"].replicates == 1
    assert (by_id["c"].output_tokens_per_s_min, by_id["c"].output_tokens_per_s_max) == (50.0, 50.0)


def test_index_marks_corrected_and_withdrawn_results(tmp_path: Path) -> None:
    root = _registry(tmp_path, MEASURED, REPORTED)
    withdrawn, corrected = read_result(MEASURED), read_result(REPORTED)
    (root / "registry/corrections.yaml").write_text(
        "schema_version: 1\ncorrections:\n"
        f"  - {{result_id: '{withdrawn.id}', kind: withdrawal, date: '2026-11-01', "
        "reason: 'wrong GPU'}\n"
        f"  - {{result_id: '{corrected.id}', kind: correction, date: '2026-11-02', "
        f"reason: 'typo', replaced_by: '{withdrawn.id}'}}\n",
        encoding="utf-8",
    )
    rows = _rows(root)
    marks = {
        (row["result_id"], row["correction"], row["correction_date"], row["correction_reason"],
         row["replaced_by"])
        for row in rows
    }  # fmt: skip
    assert marks == {
        (withdrawn.id, "withdrawal", "2026-11-01", "wrong GPU", None),
        (corrected.id, "correction", "2026-11-02", "typo", withdrawn.id),
    }
    (root / "registry/corrections.yaml").unlink()
    assert {row["correction"] for row in _rows(root)} == {None}


def test_index_corrected_result_is_no_replicate() -> None:
    def row(result_id: str, correction: str | None, tokens_per_s: float) -> IndexRow:
        return IndexRow.from_columns({
            **dict.fromkeys(COLUMNS), "result_id": result_id, "replicate_key": "k",
            "correction": correction, "output_tokens_per_s": tokens_per_s, "replicates": 1,
        })  # fmt: skip

    spread = with_replicate_spread([row("a", None, 10.0), row("b", None, 20.0),
                                    row("c", "withdrawal", 1000.0)])  # fmt: skip
    assert [(r.replicates, r.output_tokens_per_s_max) for r in spread] == [
        (2, 20.0), (2, 20.0), (1, 1000.0)
    ]  # fmt: skip


def test_index_csv_cells_that_a_spreadsheet_would_run_are_text() -> None:
    # An engine version '=HYPERLINK(…)' passes validation and reached the CSV downloads as a
    # formula; every CSV we write (index, compare pages, prices) goes through csv_text.
    from infermeter.registry.index import csv_text

    text = csv_text([['=HYPERLINK("https://x.example")', "+1", "-2", "@SUM(A1)", "\tx", -1.5, 3,
                      None, True, "0.9.1"]])  # fmt: skip
    cells = text.removesuffix("\n").split(",")
    assert cells[0] == '"\'=HYPERLINK(""https://x.example"")"'
    assert cells[1:] == ["'+1", "'-2", "'@SUM(A1)", "'\tx", "-1.5", "3", "", "true", "0.9.1"]
