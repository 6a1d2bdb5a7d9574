"""MLPerf Inference v5.1 rows added on 2026-12-02 through `registry harvest mlperf`, on a pinned
excerpt.

tests/data/harvest/mlperf-v5.1-added holds two rows of `summary_results.json` of
mlcommons/inference_results_v5.1 at commit 965182b0, copied verbatim: AMD_MangoBoost's open
division 5.1-0102 (llama2-70b-99) and 5.1-0103 (llama2-70b-99.9), Offline on 4 nodes × 8 MI355X,
with their `mlperf_log_summary.txt` and the submission's `code/<benchmark>/README.md` at that
commit. The rows' software is only `PyTorch …, aiter …`; the README runs the benchmark in
MangoBoost's `mb-llmboost-inference` container (built on `llmboost/mb-llmboost`): LLMBoost of an
unstated release, as MangoBoost's v6.0 rows.
"""

from pathlib import Path

from registry_helpers import V51_COMMIT, MlperfExcerpt

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
EXCERPT = MlperfExcerpt(
    REPOSITORY_ROOT / "tests/data/harvest/mlperf-v5.1-added",
    "5.1",
    V51_COMMIT,
    None,
    "3a3e2160b10c2acaecfbac0b551c1a1cbe6a6c0a68be6860c6bee15d32738d7d",
)


def test_an_engine_read_from_the_code_readme(tmp_path: Path) -> None:
    registry, report, results = EXCERPT.harvest_fresh(tmp_path / "checkout")
    EXCERPT.assert_pinned_and_committed(registry, report, 1)
    # One run filed as both 5.1-0102 (-99) and 5.1-0103 (-99.9): one result.
    assert [row for row, _ in report.skipped] == ["mlperf v5.1 5.1-0102 llama2-70b-99 Offline"]
    result = results["5.1-0103"]
    identity = result.identity
    assert (identity.engine.name, identity.engine.version) == ("llmboost", "unstated")
    assert (identity.gpu.id, identity.gpu.count, identity.gpu.nodes) == ("mi355x", 32, 4)
    assert identity.model.quantization == "mxfp4"
    assert result.source.mlperf.division == "open"  # type: ignore[union-attr]
    assert "mb-llmboost-inference:prod-rocm-mlperf-5_1" in result.source.conditions
    (point,) = result.points
    assert point.throughput.output_tokens_per_s == 350820.0
