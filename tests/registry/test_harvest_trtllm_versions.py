"""More versions of TensorRT-LLM's performance overview: the 1.0 layout, and a folder of versions.

tests/data/harvest/trtllm/perf-overview-00f37686.md holds the throughput tables of
docs/source/performance/perf-overview.md at NVIDIA/TensorRT-LLM commit 00f37686 (the 1.0
layout: `####` model headings, RTX PRO 6000 tables labelled by a line above them, and the one
statement "The reported metric is `Total Output Throughput (tokens/sec)`"), verbatim.
"""

import shutil
from pathlib import Path

import pytest
from registry_checkout import empty_registry
from registry_helpers import assert_committed, results_by_marker

from infermeter.registry.corrections import load_corrections
from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.harvest.options import HarvestOptions
from infermeter.registry.harvest.outcome import HarvestReport
from infermeter.registry.harvest.sources import FileCitation
from infermeter.registry.harvest.trtllm import parse_tables
from infermeter.registry.harvest.trtllm_pages import harvest_trtllm, trtllm_result_key
from infermeter.registry.store import read_result
from infermeter.registry.workloads import scenario

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
PAGES = REPOSITORY_ROOT / "tests/data/harvest/trtllm"
PAGE = PAGES / "perf-overview-00f37686.md"
COMMIT = "00f37686aa854010d68bcbd0f4ab000221541ca6"
RETRIEVED = "2026-12-01"


@pytest.fixture(scope="module")
def harvested(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, HarvestReport]:
    registry = empty_registry(tmp_path_factory.mktemp("trtllm-1.0") / "checkout")
    return registry, harvest_trtllm(PAGE, HarvestOptions(registry, today=RETRIEVED))


def test_the_1_0_layout_is_read_table_by_table() -> None:
    cells, requests, refused = parse_tables(PAGE.read_text(encoding="utf-8"))
    assert (len(cells), refused) == (328, [])
    assert not any(cell.per_gpu for cell in cells)
    rtx = [cell for cell in cells if cell.labelled]
    assert len(rtx) == 118
    assert {cell.heading for cell in rtx} == {
        f"{model} - RTX 6000 Pro Blackwell Server Edition"
        for model in (
            "Llama 4 Scout",
            "Llama 3.3 70B",
            "Qwen3-235B-A22B",
            "Qwen3-30B-A3B",
            "Llama 4 Maverick",
            "Llama 3.1 405B",
        )
    }
    assert (requests[(128, 128)], requests[(1000, 2000)], len(requests)) == (30000, 1500, 10)


def test_a_total_is_stored_as_printed_over_the_columns_gpus(
    harvested: tuple[Path, HarvestReport],
) -> None:
    registry, report = harvested
    assert (len(report.added), report.skipped) == (328, [])
    results = results_by_marker(registry, "cell")
    h100 = results["Llama 3.3 70B | H100 TP2 (FP8) | 1000/1000"]
    assert (h100.identity.gpu.id, h100.identity.gpu.count) == ("h100-sxm", 2)
    assert h100.points[0].throughput.output_tokens_per_s == 4205  # not × 2: a total
    assert h100.points[0].requests.sent == 3000
    assert h100.identity.model.hf_repo == "nvidia/Llama-3.3-70B-Instruct-FP8"
    assert "the deployment's total" in h100.source.conditions  # type: ignore[union-attr]
    # The page names its release ("NEW for v1.0"): the engine version is the release.
    assert h100.identity.engine.version == "1.0"
    assert "The page names release v1.0" in h100.source.conditions  # type: ignore[union-attr]
    table = "Llama 3.3 70B - RTX 6000 Pro Blackwell Server Edition"
    rtx = results[f"{table} | 8 GPUs TP1,PP8 (FP4) | 1000/1000"]
    assert (rtx.identity.gpu.id, rtx.identity.gpu.count) == ("rtx-pro-6000", 8)
    serving = rtx.identity.serving
    assert (serving.tensor_parallel_size, serving.pipeline_parallel_size) == (1, 8)
    assert rtx.points[0].throughput.output_tokens_per_s == 8166
    assert "so labelled, under heading 'Llama 3.3 70B'" in rtx.source.conditions  # type: ignore[union-attr]
    assert rtx.source.url == (  # type: ignore[union-attr]
        f"https://github.com/NVIDIA/TensorRT-LLM/blob/{COMMIT}/docs/source/performance/"
        "perf-overview.md"
    )


def test_a_checkpoint_the_page_does_not_list_is_said_to_be_unnamed(
    harvested: tuple[Path, HarvestReport],
) -> None:
    results = results_by_marker(harvested[0], "cell")
    scout = results["Llama 4 Scout | B200 TP1 (FP4) | 128/128"]
    assert scout.points[0].throughput.output_tokens_per_s == 25342
    assert scout.identity.model.quantization == "fp4"
    assert "checkpoint not named by the page for FP4" in scout.source.conditions  # type: ignore[union-attr]
    maverick = results["Llama 4 Maverick | H200 TP8 (FP8) | 5000/500"]
    assert maverick.identity.model.hf_repo == "nvidia/Llama-4-Maverick-17B-128E-Instruct-FP8"
    assert maverick.points[0].throughput.output_tokens_per_s == 8456


def test_registry_files_match_the_pinned_1_0_excerpt(harvested: tuple[Path, HarvestReport]) -> None:
    """Re-read the cited page (the pinned excerpt): every cell's file is in the registry."""
    registry, report = harvested
    assert_committed(registry, report.added)


def test_a_folder_of_versions_twice_changes_nothing(tmp_path: Path) -> None:
    registry = empty_registry(tmp_path / "checkout")
    folder = tmp_path / "versions"
    folder.mkdir()
    for name in ("performance-77d24b5f.md", "perf-overview-03e27c7d.md"):
        shutil.copy(PAGES / name, folder / name)
    first = harvest_trtllm(folder, HarvestOptions(registry, today=RETRIEVED))
    again = harvest_trtllm(folder, HarvestOptions(registry, today="2027-01-01"))
    assert (len(first.added), again.added, again.changed) == (20 + 150, [], [])
    assert len(again.unchanged) == 170


def test_a_folder_page_must_name_its_commit(tmp_path: Path) -> None:
    registry = empty_registry(tmp_path / "checkout")
    folder = tmp_path / "versions"
    folder.mkdir()
    text = PAGE.read_text(encoding="utf-8")
    (folder / "bare.md").write_text(text.split("-->", 1)[1], encoding="utf-8")
    with pytest.raises(HarvestError, match=r"bare\.md does not begin '<!-- Excerpt of PATH"):
        harvest_trtllm(folder, HarvestOptions(registry))
    with pytest.raises(HarvestError, match="is not the commit 00f37686aa85"):
        harvest_trtllm(PAGE, HarvestOptions(registry), cited=FileCitation(commit="03e27c7d"))


STATIC_PAGE = PAGES / "performance-77d24b5f.md"


def test_static_batches_of_0_6_are_static_batch_points_of_their_batch_size(tmp_path: Path) -> None:
    """docs/source/performance.md at 77d24b5f: static batches (not closed loops: the page does
    not say a new request enters as one finishes), per GPU, per-table release."""
    registry = empty_registry(tmp_path / "checkout")
    report = harvest_trtllm(STATIC_PAGE, HarvestOptions(registry, today=RETRIEVED))
    assert len(report.added) == 12 + 8  # 8: LLaMA 7B, the page's Llama2-7b benchmark
    reasons = dict(report.skipped)
    assert "which statistic" in reasons["trtllm 77d24b5fa178 static latency H100 FP8"]
    a100 = "trtllm 77d24b5fa178 static A100 FP16 | GPT-J 6B | batch 512 TP1 | 128/128"
    assert "does not say which A100" in reasons[a100]
    results = results_by_marker(registry, "static cell", report.added)
    assert_committed(registry, report.added)
    llama = results["H100 FP8 | LLaMA 70B | batch 480 TP4 | 128/2048"]
    (point,) = llama.points
    assert (point.load.arrival, point.load.concurrency) == ("static_batch", 480)
    assert scenario(point.load) == "static_batch"
    assert point.load.label() == "static batch of 480 (started together)"
    assert "stored as a static batch of that size" in llama.source.conditions  # type: ignore[union-attr]
    assert point.throughput.output_tokens_per_s == 1486 * 4
    assert (llama.identity.gpu.id, llama.identity.gpu.count) == ("h100-sxm", 4)
    assert (llama.identity.model.quantization, llama.identity.model.kv_cache_dtype) == (
        "fp8",
        "fp8",
    )
    assert llama.identity.engine.version == "0.6.1"
    l40s = results["L40S FP8 | GPT-J 6B | batch 32 TP1 | 2048/2048"]
    assert (l40s.identity.engine.version, l40s.points[0].throughput.output_tokens_per_s) == (
        "0.5",
        757,
    )
    assert l40s.source.url.endswith(
        "/77d24b5fa178f11ed7fafdd9833b7245e075f721/docs/source/performance.md"
    )  # type: ignore[union-attr]


FORK_PAGE = PAGES / "perf-overview-ab4143e1-fork.md"


def test_a_fork_s_copy_of_the_0_20_grids_is_unofficial_and_stored_as_printed(
    tmp_path: Path,
) -> None:
    """The 0.20 layout (a GPU × TP grid per model), read from a fork: unofficial, the fork cited."""
    registry = empty_registry(tmp_path / "checkout")
    report = harvest_trtllm(FORK_PAGE, HarvestOptions(registry, today=RETRIEVED))
    assert (len(report.added), report.skipped) == (180, [])
    results = results_by_marker(registry, "grid cell", report.added)
    assert_committed(registry, report.added)
    h100 = results["Llama 3.3 70B FP8 | H100 80GB HBM3 TP4 | 1000/1000"]
    assert (h100.identity.gpu.id, h100.identity.gpu.count) == ("h100-sxm", 4)
    assert h100.points[0].throughput.output_tokens_per_s == 7435.65  # a total, not × 4
    assert (h100.points[0].load.arrival, h100.points[0].requests.sent) == ("offline", 3000)
    assert h100.identity.engine.version == "0.20"
    b200 = results["Llama 3.3 70B FP4 | B200 TP8 | 20000/2000"]
    assert b200.points[0].throughput.output_tokens_per_s == 3429.03
    assert b200.identity.model.hf_repo == "nvidia/Llama-3.3-70B-Instruct-FP4"
    source = b200.source
    assert source.unofficial is True  # type: ignore[union-attr]
    assert source.url.startswith("https://github.com/dominicshanshan/TensorRT-LLM/blob/ab4143e1")  # type: ignore[union-attr]
    assert source.conditions.startswith("Read from dominicshanshan/TensorRT-LLM")  # type: ignore[union-attr]
    # The cells whose values NVIDIA's own 0.20.0 page prints cite that page, once.
    on_page = results["Llama 3.3 70B FP4 | B200 TP8 | 128/2048"]
    assert on_page.points[0].throughput.output_tokens_per_s == 31174.31
    assert on_page.source.url == (  # type: ignore[union-attr]
        "https://nvidia.github.io/TensorRT-LLM/0.20.0/performance/perf-overview.html"
    )
    assert on_page.source.unofficial is None  # type: ignore[union-attr]
    assert "read in the copy of that page in dominicshanshan" in on_page.source.conditions  # type: ignore[union-attr]


FORK_014_PAGE = PAGES / "perf-overview-e00d4e65-fork.md"


def test_the_0_14_table_tells_a_gpu_s_two_precisions_apart(tmp_path: Path) -> None:
    """The 0.14 variant of the single table (bold headers; model, ISL/OSL, TP), from a fork."""
    registry = empty_registry(tmp_path / "checkout")
    # A cell an earlier transcription (2026-11-30) filed in its own words is the same source row:
    # harvesting replaces it, with a correction.
    early = PAGES / "early-0.14-transcription-34c924569fd9.json"
    folder = registry / "registry/results/a100-80gb-pcie/llama-3.1-8b-instruct"
    folder.mkdir(parents=True)
    shutil.copy(early, folder / "2026-11-30-34c924569fd9.json")
    report = harvest_trtllm(FORK_014_PAGE, HarvestOptions(registry, today=RETRIEVED))
    # 375 cells, and LLaMA v3 70B (147) and Mixtral 8x22B (45) since they joined the catalog.
    assert (len(report.added), len(report.changed)) == (375 + 147 + 45, 1)
    assert report.changed[0][0].endswith("2026-11-30-34c924569fd9.json")
    (entry,) = load_corrections(registry / "registry/corrections.yaml")
    assert (entry.result_id, entry.kind) == ("34c924569fd9", "correction")
    reasons = {reason for _, reason in report.skipped}
    assert reasons == {
        f"model {name!r} has no catalog id (or its version is not stated)"
        for name in ("Mistral 7B",)
    }
    # The registry holds every cell with the same identity, figures and conditions (two cells
    # an earlier transcription had filed on 2026-11-30 keep that date, so their names differ).
    committed = {
        trtllm_result_key(result): result
        for result in (
            read_result(path) for path in (REPOSITORY_ROOT / "registry/results").rglob("*.json")
        )
        if "e00d4e65" in str(getattr(result.source, "url", ""))
    }
    by_row = {}
    for relative in [*report.added, report.changed[0][1]]:
        result = read_result(registry / relative)
        conditions = result.source.conditions  # type: ignore[union-attr]
        by_row[conditions.split("Table row: ")[1].split("; value")[0]] = result
        twin = committed[trtllm_result_key(result)]
        assert (twin.identity, twin.points) == (result.identity, result.points)
        assert twin.source.conditions == conditions  # type: ignore[union-attr]
    row = (
        "model 'LLaMA v3.1 70B', tensor model parallel size 4, GPU column 'H100 80GB HBM3', "
        "precision {}, runtime input/output lengths 128, 2048"
    )
    fp8, fp16 = by_row[row.format("FP8")], by_row[row.format("FP16")]
    assert (fp8.points[0].throughput.output_tokens_per_s, fp8.identity.model.quantization) == (
        9017.4377,
        "fp8",
    )
    assert (fp16.points[0].throughput.output_tokens_per_s, fp16.identity.model.dtype) == (
        4982.6225,
        "float16",
    )
    pcie = by_row[
        "model 'Mixtral 8x7B', tensor model parallel size 8, GPU column 'A100-PCIE-80GB', "
        "precision FP16, runtime input/output lengths 5000, 500"
    ]
    assert (pcie.identity.gpu.id, pcie.identity.gpu.count) == ("a100-80gb-pcie", 8)
    assert pcie.points[0].throughput.output_tokens_per_s == 969.817
    assert (pcie.identity.engine.version, pcie.points[0].requests.sent) == ("0.14.0", 1500)
    assert pcie.source.unofficial is True  # type: ignore[union-attr]


def test_the_0_9_static_page_of_a_fork_is_static_batches_and_says_where_its_fp8_kv_is_stated(
    tmp_path: Path,
) -> None:
    registry = empty_registry(tmp_path / "checkout")
    page = PAGES / "perf-overview-6ad7cf1b-fork.md"
    report = harvest_trtllm(page, HarvestOptions(registry, today=RETRIEVED))
    assert len(report.added) == 24 + 12  # 12: LLaMA 7B, the page's Llama2-7b benchmark
    results = results_by_marker(registry, "static cell", report.added)
    assert_committed(registry, report.added)
    h200 = results["H200 FP8 | LLaMA 70B | batch 512 TP2 | 128/2048"]
    assert (h200.identity.gpu.id, h200.identity.gpu.count) == ("h200-sxm", 2)
    assert h200.points[0].throughput.output_tokens_per_s == 3963 * 2
    load = h200.points[0].load
    assert (load.arrival, load.concurrency, h200.identity.engine.version) == (
        "static_batch",
        512,
        "0.9.0",
    )
    assert {result.points[0].load.arrival for result in results.values()} == {"static_batch"}
    conditions = h200.source.conditions  # type: ignore[union-attr]
    assert '"kv_cache_quant_algo": "FP8"' in conditions
    assert "filed as the SXM part" in conditions
    assert h200.source.unofficial is True  # type: ignore[union-attr]


def test_a_static_table_headed_without_per_gpu_is_skipped(tmp_path: Path) -> None:
    """An earlier copy of the 0.6 page heads its L40S table 'Throughput (out tok/s)' over the
    figures that the later page heads per GPU: such a table is not imported."""
    text = STATIC_PAGE.read_text(encoding="utf-8")
    head, tail = text.split("### L40S GPUs", 1)
    tail = tail.replace("| Throughput (out tok/s/GPU) |", "| Throughput (out tok/s) |", 1)
    page = tmp_path / "relabelled.md"
    page.write_text(head + "### L40S GPUs" + tail, encoding="utf-8")
    report = harvest_trtllm(page, HarvestOptions(empty_registry(tmp_path / "r"), today=RETRIEVED))
    assert len(report.added) == 8 + 4  # the H100 cells only (4 of them LLaMA 7B)
    reason = dict(report.skipped)["trtllm 77d24b5fa178 static table L40S FP8 unit "
                                  "'Throughput (out tok/s)'"]  # fmt: skip
    assert "per GPU or per deployment is not told apart" in reason
