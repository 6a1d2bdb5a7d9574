"""The GH200 96 GB rows of MLPerf Inference v4.1, now that the catalog has the part.

tests/data/harvest/mlperf-v4.1-gh200-96gb holds the two LLM rows of `summary_results.json` of
mlcommons/inference_results_v4.1 at commit 4a0c8741 whose accelerator is 'NVIDIA GH200 Grace
Hopper Superchip 96GB' and whose tokens/s are counted (Quanta Cloud Technology, llama2-70b-99.9
Offline and Server), copied verbatim, with each row's `mlperf_log_summary.txt`. The part's GPT-J
rows stay skipped: their LoadGen logs infer tokens/s from samples/s.
"""

import shutil
from pathlib import Path

from registry_checkout import empty_registry
from registry_helpers import V41_COMMIT

from infermeter.registry.catalog import load_gpus
from infermeter.registry.harvest.mlperf import harvest_mlperf
from infermeter.registry.harvest.options import HarvestOptions
from infermeter.registry.harvest.sources import FileCitation
from infermeter.registry.location import catalogs_folder
from infermeter.registry.store import read_result

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
EXCERPT = REPOSITORY_ROOT / "tests/data/harvest/mlperf-v4.1-gh200-96gb"
CITED = FileCitation(commit=V41_COMMIT)


def test_the_catalog_states_the_96_gb_part_from_its_sources() -> None:
    gpu = load_gpus(catalogs_folder(REPOSITORY_ROOT))["gh200-96gb"]
    assert (gpu.memory_gb, gpu.memory_type, gpu.memory_bandwidth_gb_s) == (96, "HBM3", 4000)
    assert any("Oracle/systems/GH200" in str(source.url) for source in gpu.sources)


def test_gh200_96gb_rows_are_harvested_and_match_the_registry(tmp_path: Path) -> None:
    registry = empty_registry(tmp_path / "checkout")
    report = harvest_mlperf(
        EXCERPT, "4.1", HarvestOptions(registry, today="2026-12-01"), cited=CITED
    )
    assert (len(report.added), report.skipped) == (2, [])
    by_scenario = {}
    for relative in report.added:
        result = read_result(registry / relative)
        assert (result.identity.gpu.id, result.identity.gpu.count) == ("gh200-96gb", 1)
        by_scenario[result.source.mlperf.scenario] = result  # type: ignore[union-attr]
        committed = REPOSITORY_ROOT / relative
        assert committed.read_text(encoding="utf-8") == (registry / relative).read_text(
            encoding="utf-8"
        )
    offline, server = by_scenario["Offline"].points[0], by_scenario["Server"].points[0]
    assert offline.load.arrival == "offline"
    assert offline.throughput.output_tokens_per_s == 3114.03
    assert (server.load.arrival, server.load.request_rate) == ("poisson", 9.0)
    assert (server.load.rate_search.ttft_ms, server.load.rate_search.tpot_ms) == (2000.0, 200.0)  # type: ignore[union-attr]
    assert server.throughput.output_tokens_per_s == 2619.09
    # The log's p99s, "282792351" and "71380030" ns, in ms.
    assert (server.ttft_ms.p99, server.tpot_ms.p99) == (282.792351, 71.38003)  # type: ignore[union-attr]


def test_the_precision_is_what_ran_not_the_starting_weights(tmp_path: Path) -> None:
    """The rows declare fp16 (the starting weights); their measurement files say the weights
    were quantized and QCT's configurations set use_fp8: FP8 ran. 138 GB of FP16 weights
    cannot fit one GH200 96 GB, which validation refuses when the evidence is not read."""
    registry = empty_registry(tmp_path / "checkout")
    report = harvest_mlperf(
        EXCERPT, "4.1", HarvestOptions(registry, today="2026-12-01"), cited=CITED
    )
    for relative in report.added:
        result = read_result(registry / relative)
        assert (result.identity.model.quantization, result.identity.model.dtype) == ("fp8", None)
        assert "sets use_fp8 = True; stored as fp8" in result.source.conditions  # type: ignore[union-attr]
    without = tmp_path / "without-evidence"
    shutil.copytree(EXCERPT, without)
    for folder in ("measurements", "configs"):
        shutil.rmtree(without / "closed/Quanta_Cloud_Technology" / folder)
    declared = empty_registry(tmp_path / "declared")
    fp16 = harvest_mlperf(without, "4.1", HarvestOptions(declared, today="2026-12-01"), cited=CITED)
    # The harvest's gate is `registry validate`: the declared fp16 cannot fit, nothing is written.
    assert fp16.added == []
    reasons = [reason for _key, reason in fp16.skipped]
    assert len(reasons) == 2
    assert all("in float16 do not fit the 103 GB of 1 × gh200-96gb" in r for r in reasons)
