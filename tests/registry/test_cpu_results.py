"""A result of a run without a GPU (`identity.gpu.id` `cpu`, what `bench run --gpu cpu` writes):
valid, never passed off as a GPU, and kept out of the GPU comparison with one line saying so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from infermeter.bench.cli.main import main
from infermeter.registry.catalog import PRICES_FILE
from infermeter.registry.index import build_index_counted
from infermeter.registry.location import catalogs_folder
from infermeter.registry.models import Result
from infermeter.registry.store import content_id, read_result, result_path, write_result
from infermeter.registry.validate import validate_paths

EXAMPLES = Path(__file__).parent.parent / "examples/valid/results"
MEASURED = EXAMPLES / "measured-two-points.json"  # h100-sxm × 1, two closed-loop points


def _on_cpu(**gpu: Any) -> Result:
    data = json.loads(MEASURED.read_text(encoding="utf-8"))
    data["identity"]["gpu"] = {"id": "cpu", "count": 1, "form_factor": "cpu", **gpu}
    host = data["source"]["host"]
    host.update(form_factor=gpu.get("form_factor", "cpu"), gpu_sku="none: ran on the CPU")
    result = Result.model_validate(data)
    return result.model_copy(update={"id": content_id(result)})


def _registry(root: Path, *results: Result) -> Path:
    for result in results:
        write_result(result, root)
    gpu_result = root / result_path(read_result(MEASURED)).as_posix()
    gpu_result.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(MEASURED, gpu_result)
    catalogs = catalogs_folder(root)
    catalogs.mkdir(parents=True, exist_ok=True)
    (catalogs / PRICES_FILE).write_text("schema_version: 1\nprices: []\n", encoding="utf-8")
    return root


def test_cpu_result_is_valid_with_no_gpu_in_the_catalog(tmp_path: Path) -> None:
    path = write_result(_on_cpu(), tmp_path)
    report = validate_paths([path])
    assert report.ok, "\n".join(str(problem) for problem in report.problems)


@pytest.mark.parametrize(
    ("gpu_id", "form_factor"), [("cpu", "pcie"), ("h100-sxm", "cpu")], ids=["cpu-as-board", "gpu"]
)
def test_cpu_is_both_the_id_and_the_form_factor_or_neither(gpu_id: str, form_factor: str) -> None:
    with pytest.raises(ValidationError, match="a run on the CPU has both 'cpu'"):
        _on_cpu(id=gpu_id, form_factor=form_factor)


def test_index_keeps_cpu_results_out_of_the_gpu_comparison_and_says_so(tmp_path: Path) -> None:
    root = _registry(tmp_path / "registry", _on_cpu())
    rows, results, cpu_results = build_index_counted(root)
    assert (results, cpu_results) == (2, 1)
    assert {row.gpu for row in rows} == {"h100-sxm"}
    assert len(rows) == 2  # the GPU result's two points, none of the CPU one's
    run = CliRunner().invoke(
        main, ["registry", "index", "--registry", str(root), "--out", str(tmp_path / "out")]
    )
    assert run.exit_code == 0, run.output
    notes = [line for line in run.output.splitlines() if "ran on the CPU" in line]
    assert notes == [
        "note: 1 result ran on the CPU (identity.gpu.id cpu): kept out of the GPU comparison, "
        "without rows"
    ]  # it said "1 results"
    assert "indexed 2 results, 2 rows" in run.output
