"""`registry harvest trtllm` on a real excerpt of TensorRT-LLM's performance overview.

tests/data/harvest/trtllm/perf-overview-03e27c7d.md holds the throughput tables of
docs/source/developer-guide/perf-overview.md at NVIDIA/TensorRT-LLM commit 03e27c7d, verbatim.
"""

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from registry_helpers import assert_committed, results_by_marker

from infermeter.bench.cli.main import main
from infermeter.registry.corrections import load_corrections
from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.harvest.options import HarvestOptions
from infermeter.registry.harvest.sources import FileCitation
from infermeter.registry.harvest.trtllm import parse_tables
from infermeter.registry.harvest.trtllm_legacy import parse_table as parse_legacy_table
from infermeter.registry.harvest.trtllm_pages import harvest_trtllm, trtllm_result_key
from infermeter.registry.migrate import migrate_paths
from infermeter.registry.models import Result
from infermeter.registry.store import read_result
from infermeter.registry.validate import validate_paths

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
PAGE = REPOSITORY_ROOT / "tests/data/harvest/trtllm/perf-overview-03e27c7d.md"
COMMIT = "03e27c7d5ff0c6e89f8328838c0a8e64f1b34f9d"
CITED = FileCitation(commit=COMMIT)
RETRIEVED = "2026-12-01"


def _harvest(registry: Path, page: Path = PAGE) -> dict[str, Result]:
    harvest_trtllm(page, HarvestOptions(registry, today=RETRIEVED), cited=CITED)
    return results_by_marker(registry, "cell")


def test_every_cell_of_every_per_gpu_table_is_read() -> None:
    cells, requests, refused = parse_tables(PAGE.read_text(encoding="utf-8"))
    assert len(cells) == 150
    assert refused == []
    assert requests == {
        (1024, 1024): 3000,
        (8192, 1024): 1500,
        (1024, 8192): 1500,
        (32768, 1024): 1000,
        (1024, 32768): 1000,
    }
    assert {cell.heading for cell in cells} >= {"GPT-OSS 120B", "Qwen3 30B A3B"}


def test_a_cell_becomes_an_offline_deployment_of_its_gpus(registry: Path) -> None:
    results = _harvest(registry)
    h100 = results["GPT-OSS 120B | H100 DEP4 (FP8) | 1000/1000"]
    assert (h100.identity.gpu.id, h100.identity.gpu.count) == ("h100-sxm", 4)
    serving = h100.identity.serving
    assert (serving.data_parallel_size, serving.expert_parallel_size) == (4, 4)
    assert serving.tensor_parallel_size is None
    (point,) = h100.points
    assert point.load.arrival == "offline"
    # 4,685 output tokens/s per GPU as printed, for 4 GPUs.
    assert point.throughput.output_tokens_per_s == 4685 * 4
    assert point.requests.sent is None  # the page gives no request count for 1000/1000
    # The column says FP8, the run's precision; gpt-oss's own checkpoint stores MXFP4 weights.
    assert h100.identity.model.quantization == "mxfp4"
    assert "the weights are filed as mxfp4" in h100.source.conditions  # type: ignore[union-attr]
    llama = results["LLaMA v3.3 70B | H200 TP2 (FP8) | 1024/8192"]
    assert (llama.identity.serving.tensor_parallel_size, llama.identity.gpu.count) == (2, 2)
    assert llama.points[0].throughput.output_tokens_per_s == 2009 * 2
    assert llama.points[0].requests.sent == 1500
    assert llama.identity.model.hf_repo == "nvidia/Llama-3.3-70B-Instruct-FP8"
    assert (llama.identity.workload.input_len.value, llama.identity.workload.output_len.value) == (  # type: ignore[union-attr]
        1024,
        8192,
    )


def test_rtx_tables_name_their_gpu_count_and_pipeline(registry: Path) -> None:
    results = _harvest(registry)
    table = "Qwen3 235B A22B - RTX 6000 Pro Blackwell Server Edition"
    rtx = results[f"{table} | 4 GPUs DEP2,PP2 (FP4) | 1024/8192"]
    assert (rtx.identity.gpu.id, rtx.identity.gpu.count) == ("rtx-pro-6000", 4)
    assert rtx.identity.serving.pipeline_parallel_size == 2
    assert rtx.identity.serving.data_parallel_size == 2
    assert rtx.points[0].throughput.output_tokens_per_s == 644 * 4


def test_source_names_the_commit_and_the_page(registry: Path) -> None:
    result = next(iter(_harvest(registry).values()))
    source = result.source
    assert source.revision == COMMIT  # type: ignore[union-attr]
    assert source.url == (  # type: ignore[union-attr]
        f"https://github.com/NVIDIA/TensorRT-LLM/blob/{COMMIT}/docs/source/developer-guide/"
        "perf-overview.md"
    )
    assert result.identity.engine.version == "docs@03e27c7d5ff0"
    assert "does not name the TensorRT-LLM release" in source.conditions  # type: ignore[union-attr]


def test_twice_changes_nothing(registry: Path) -> None:
    first = harvest_trtllm(PAGE, HarvestOptions(registry, today=RETRIEVED), cited=CITED)
    again = harvest_trtllm(PAGE, HarvestOptions(registry, today="2027-01-01"), cited=CITED)
    assert (len(first.added), again.added, len(again.unchanged)) == (150, [], 150)


def test_tables_in_another_unit_and_odd_columns_are_skipped(registry: Path, tmp_path: Path) -> None:
    qwen_header = "GB200<br/>TP1 (FP4) |\n|---|---|---|\n| 1000/1000 | 26,971"
    text = PAGE.read_text(encoding="utf-8")
    assert qwen_header in text
    text = text.replace(qwen_header, qwen_header.replace("TP1", "XP1"))
    head, tail = text.split("# GPT-OSS 20B", 1)
    tail = tail.replace("unit: `output tokens per second per GPU`", "unit: `tokens per second`", 1)
    page = tmp_path / "page.md"
    page.write_text(head + "# GPT-OSS 20B" + tail, encoding="utf-8")
    report = harvest_trtllm(page, HarvestOptions(registry, today=RETRIEVED), cited=CITED)
    reasons = dict(report.skipped)
    assert reasons[f"trtllm {COMMIT[:12]} GPT-OSS 20B"] == (
        "unit is neither output tokens/s per GPU nor the page's stated total"
    )
    odd = [reason for key, reason in reasons.items() if "Qwen3 30B A3B | GB200 XP1" in key]
    assert odd
    assert all("is not TPn, DEPn" in reason for reason in odd)


def test_a_file_needs_its_commit(registry: Path, tmp_path: Path) -> None:
    """A page without the header that names its commit needs --commit."""
    page = tmp_path / "page.md"
    page.write_text(PAGE.read_text(encoding="utf-8").split("-->", 1)[1], encoding="utf-8")
    with pytest.raises(HarvestError, match="name the commit it was taken from"):
        harvest_trtllm(page, HarvestOptions(registry))


def test_cli(registry: Path) -> None:
    arguments = ["registry", "harvest", "trtllm", "--from", str(PAGE), "--commit", COMMIT]
    outcome = CliRunner().invoke(
        main, [*arguments, "--registry", str(registry), "--retrieved", RETRIEVED]
    )
    assert outcome.exit_code == 0, outcome.output
    assert outcome.output.splitlines()[-1] == "150 added, 0 changed, 0 unchanged, 0 skipped"


def test_registry_files_match_the_pinned_excerpt(registry: Path) -> None:
    """Re-read the cited page (the pinned excerpt): every cell's file is in the registry."""
    report = harvest_trtllm(PAGE, HarvestOptions(registry, today=RETRIEVED), cited=CITED)
    assert len(report.added) == 150
    assert_committed(registry, report.added)


LEGACY_PAGE = REPOSITORY_ROOT / "tests/data/harvest/trtllm/perf-overview-258c7540.md"
LEGACY_COMMIT = "258c7540c03517def55d9a5aadfa9288af474e1b"
LEGACY_CITED = FileCitation(commit=LEGACY_COMMIT)


def test_the_0_17_table_is_read_cell_by_cell(registry: Path) -> None:
    cells, requests, version = parse_legacy_table(LEGACY_PAGE.read_text(encoding="utf-8"))
    assert version == "0.17"
    assert len(cells) == 373
    assert requests[(128, 128)] == 30000
    report = harvest_trtllm(
        LEGACY_PAGE, HarvestOptions(registry, today=RETRIEVED), cited=LEGACY_CITED
    )
    # 275 cells, and the 27 of Mixtral 8x22B since it joined the catalog (its base checkpoint).
    assert len(report.added) == 302
    reasons = {reason for _, reason in report.skipped}
    assert "GPU column 'GH200 480GB' has no catalog id" in reasons
    assert "model 'Mistral 7B' has no catalog id (or its version is not stated)" in reasons
    by_cell = {
        result.source.conditions.split("Table row: ")[1].split("; value")[0]: result  # type: ignore[union-attr]
        for result in (
            read_result(path) for path in (registry / "registry" / "results").rglob("*.json")
        )
    }
    a100 = by_cell[
        "model 'Mixtral 8x7B', tensor model parallel size 8, GPU column 'A100-SXM4-80GB', "
        "precision FP16, runtime input/output lengths 20000, 2000"
    ]
    assert a100.points[0].throughput.output_tokens_per_s == 1592.53
    assert (a100.identity.gpu.id, a100.identity.gpu.count) == ("a100-80gb-sxm", 8)
    assert (a100.identity.model.dtype, a100.identity.model.quantization) == ("float16", None)
    assert a100.points[0].requests.sent == 1000
    assert a100.identity.engine.version == "0.17"
    moe = by_cell[
        "model 'Mixtral 8x22B', tensor model parallel size 8, GPU column 'H200 141GB HBM3', "
        "precision FP8, runtime input/output lengths 128, 128"
    ]
    assert moe.identity.model.id == "mixtral-8x22b-v0.1"
    assert moe.points[0].throughput.output_tokens_per_s == 22948.57
    assert "filed under the catalog's base id" in moe.source.conditions  # type: ignore[union-attr]


def test_an_earlier_transcription_of_a_cell_is_replaced_by_a_correction(registry: Path) -> None:
    old = REPOSITORY_ROOT / "tests/data/results-v1/2026-11-30-e6f5f462d3f3.json"
    folder = registry / "registry/results/h200-sxm/llama-3.1-70b-instruct"
    folder.mkdir(parents=True)
    shutil.copy(old, folder / old.name)
    migrate_paths([], registry)
    (migrated,) = folder.glob("*.json")
    report = harvest_trtllm(
        LEGACY_PAGE, HarvestOptions(registry, today=RETRIEVED), cited=LEGACY_CITED
    )
    assert [old_path for old_path, _ in report.changed] == [
        migrated.relative_to(registry).as_posix()
    ]
    (entry,) = load_corrections(registry / "registry" / "corrections.yaml")
    assert entry.result_id == migrated.stem[-12:]
    assert entry.kind == "correction"
    assert validate_paths(registry_root=registry).ok


def test_registry_files_match_the_pinned_0_17_excerpt(registry: Path) -> None:
    """Every cell of the 0.17 table re-read from the pinned excerpt is in the registry with the
    same identity, figures and conditions (a cell an earlier importer had filed keeps the date
    it was first read, so the file names may differ)."""
    report = harvest_trtllm(
        LEGACY_PAGE, HarvestOptions(registry, today=RETRIEVED), cited=LEGACY_CITED
    )
    committed = {
        trtllm_result_key(result): result
        for result in (
            read_result(path) for path in (REPOSITORY_ROOT / "registry/results").rglob("*.json")
        )
        if trtllm_result_key(result) is not None
    }
    assert len(report.added) == 302
    for relative in report.added:
        fresh = read_result(registry / relative)
        twin = committed[trtllm_result_key(fresh)]
        assert (twin.identity, twin.points) == (fresh.identity, fresh.points)
        assert twin.source.conditions == fresh.source.conditions  # type: ignore[union-attr]
