"""`registry harvest inferencex` on a dump in exactly the shape InferenceX-app's dump writes.

The rows in tests/data/harvest/inferencex-dump are made up (InferenceX's dumps cannot be
downloaded here); their columns and metric keys are those of the app's database schema and of
InferenceX's utils/process_result.py.
"""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from infermeter.bench.cli.main import main
from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.harvest.inferencex import harvest_inferencex
from infermeter.registry.harvest.options import HarvestOptions
from infermeter.registry.models import Result
from infermeter.registry.store import read_result

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
DUMP = REPOSITORY_ROOT / "tests/data/harvest/inferencex-dump"


def _results(registry: Path) -> list[Result]:
    paths = sorted((registry / "registry" / "results").rglob("*.json"))
    return sorted((read_result(path) for path in paths), key=lambda r: r.identity.gpu.id)


def test_a_run_and_configuration_become_one_result_of_closed_points(registry: Path) -> None:
    report = harvest_inferencex(DUMP, HarvestOptions(registry, today="2026-12-01"))
    assert len(report.added) == 2
    _, h200 = _results(registry)
    assert [p.load.concurrency for p in h200.points] == [4, 64]
    assert {p.load.arrival for p in h200.points} == {"closed"}
    low = h200.points[0]
    # 24 output tokens/s per GPU × 8 GPUs; latencies from seconds to ms.
    assert low.throughput.output_tokens_per_s == pytest.approx(24.0 * 8)
    assert low.ttft_ms.p50 == pytest.approx(152.0)  # type: ignore[union-attr]
    assert low.tpot_ms.p99 == pytest.approx(24.1)  # type: ignore[union-attr]
    assert low.e2e_ms.mean == pytest.approx(19100.0)  # type: ignore[union-attr]
    workload = h200.identity.workload
    assert (workload.input_len.min, workload.input_len.max) == (819, 1024)  # type: ignore[union-attr]
    assert workload.ignore_eos is True
    assert h200.identity.engine.version == "image lmsysorg/sglang:v0.5.2-cu129"
    assert h200.source.unofficial is False  # type: ignore[union-attr]
    assert h200.source.revision == "843c6254ff69b567f772f6a5fd97675af3d04431"  # type: ignore[union-attr]


def test_disaggregated_runs_keep_both_gpu_pools_and_forks_are_unofficial(registry: Path) -> None:
    harvest_inferencex(DUMP, HarvestOptions(registry, today="2026-12-01"))
    gb200 = _results(registry)[0]
    assert gb200.identity.gpu.count == 16
    disaggregated = gb200.identity.serving.disaggregated
    assert disaggregated is not None
    assert (disaggregated.prefill_gpus, disaggregated.decode_gpus) == (8, 8)
    assert (disaggregated.prefill_workers, disaggregated.decode_workers) == (2, 1)
    assert gb200.identity.serving.speculative.method == "mtp"  # type: ignore[union-attr]
    # process_result.py divides output throughput by the decode GPUs only.
    assert gb200.points[0].throughput.output_tokens_per_s == pytest.approx(1000.0 * 8)
    assert gb200.source.unofficial is True  # type: ignore[union-attr]
    assert "Unofficial" in gb200.source.conditions  # type: ignore[union-attr]
    assert gb200.identity.workload.input_len.min == 6553  # type: ignore[union-attr]


def test_failed_rows_and_unknown_models_are_skipped(registry: Path) -> None:
    report = harvest_inferencex(DUMP, HarvestOptions(registry, today="2026-12-01"))
    reasons = [reason for _, reason in report.skipped]
    assert "failed: server crashed: CUDA out of memory" in reasons
    assert any("model 'qwen3.5' has no model catalog id" in reason for reason in reasons)
    again = harvest_inferencex(DUMP, HarvestOptions(registry, today="2027-01-01"))
    assert (again.added, len(again.unchanged)) == ([], 2)


def test_a_dump_without_its_tables_is_one_error(tmp_path: Path, registry: Path) -> None:
    (tmp_path / "dump").mkdir()
    (tmp_path / "dump" / "configs.json").write_text("[]", encoding="utf-8")
    with pytest.raises(HarvestError, match=r"workflow_runs\.json: missing"):
        harvest_inferencex(tmp_path / "dump", HarvestOptions(registry))
    (tmp_path / "dump" / "workflow_runs.json").write_text("{}", encoding="utf-8")
    with pytest.raises(HarvestError, match="expected a JSON array"):
        harvest_inferencex(tmp_path / "dump", HarvestOptions(registry))


def test_cli_dry_run(registry: Path) -> None:
    arguments = ["registry", "harvest", "inferencex", "--from", str(DUMP)]
    outcome = CliRunner().invoke(main, [*arguments, "--registry", str(registry), "--dry-run"])
    assert outcome.exit_code == 0, outcome.output
    assert outcome.output.splitlines()[-1] == "2 added, 0 changed, 0 unchanged, 2 skipped"
    assert not list((registry / "registry" / "results").rglob("*.json"))
    as_json = CliRunner().invoke(
        main, [*arguments, "--registry", str(registry), "--dry-run", "--json"]
    )
    assert len(json.loads(as_json.output)["skipped"]) == 2
