"""MLPerf Inference v6.0 through `registry harvest mlperf`, on a pinned excerpt.

tests/data/harvest/mlperf-v6.0 holds rows of `summary_results.json` of the official
mlcommons/inference_results_v6.0 as of upstream commit ab33b214 ("Publishing Results",
2026-03-26), copied verbatim with each row's `mlperf_log_summary.txt`. The official repository is
too large to bring here; the bytes were read from the fork gbeezybez/inference_results_v6.0
(HEAD 232fbf90), whose history holds that upstream commit unchanged. Results cite the official
repository at ab33b214 and say where the bytes were read.
"""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from registry_helpers import V60_COMMIT, V60_READ_FROM, assert_committed

from infermeter.bench.cli.main import main
from infermeter.registry.harvest.errors import RowSkipped
from infermeter.registry.harvest.mlperf import harvest_mlperf
from infermeter.registry.harvest.mlperf_log import conf_percentile
from infermeter.registry.harvest.mlperf_precision import Evidence, ran_precision
from infermeter.registry.harvest.mlperf_setup import engine_from_setup, engine_of_backend
from infermeter.registry.harvest.options import HarvestOptions
from infermeter.registry.harvest.sources import FileCitation
from infermeter.registry.models import Result
from infermeter.registry.store import read_result

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
EXCERPT = REPOSITORY_ROOT / "tests/data/harvest/mlperf-v6.0"
CITED = FileCitation(commit=V60_COMMIT, read_from=V60_READ_FROM)
RETRIEVED = "2026-12-02"


def _harvest(root: Path, today: str = RETRIEVED) -> tuple[object, dict[str, Result]]:
    report = harvest_mlperf(EXCERPT, "6.0", HarvestOptions(root, today=today), cited=CITED)
    found = {}
    for path in (root / "registry/results").rglob("*.json"):
        result = read_result(path)
        mlperf = result.source.mlperf  # type: ignore[union-attr]
        found[f"{mlperf.result_id} {mlperf.benchmark} {mlperf.scenario}"] = result
    return report, found


def test_the_excerpt_is_in_the_registry_byte_for_byte(registry: Path) -> None:
    report, results = _harvest(registry)
    assert len(report.added) == len(results) == 13  # type: ignore[attr-defined]
    assert_committed(registry, report.added)  # type: ignore[attr-defined]
    again, _ = _harvest(registry, today="2027-01-01")
    assert (again.added, again.changed) == ([], [])  # type: ignore[attr-defined]


def test_new_benchmarks_keep_their_bounds_and_p99s(registry: Path) -> None:
    _, results = _harvest(registry)
    bounds = {
        key: (r.points[0].load.rate_search.ttft_ms, r.points[0].load.rate_search.tpot_ms)  # type: ignore[union-attr]
        for key, r in results.items()
        if r.points[0].load.rate_search is not None
    }
    assert bounds["6.0-0006 gpt-oss-120b Server"] == (3000.0, 80.0)
    assert bounds["6.0-0006 gpt-oss-120b Interactive"] == (2000.0, 15.0)
    assert bounds["6.0-0078 deepseek-r1 Server"] == (2000.0, 80.0)
    assert bounds["6.0-0078 deepseek-r1 Interactive"] == (1500.0, 15.0)
    interactive = results["6.0-0006 gpt-oss-120b Interactive"]
    point = interactive.points[0]
    # The log's "99.00 percentile first token latency (ns) : 129782186" and TPOT 13994790.
    assert (point.ttft_ms.p99, point.tpot_ms.p99) == (129.782186, 13.99479)  # type: ignore[union-attr]
    assert point.throughput.output_tokens_per_s == 26005.77
    assert (interactive.identity.gpu.id, interactive.identity.gpu.count) == ("b300", 8)
    nvl72 = results["6.0-0078 deepseek-r1 Server"].identity.gpu
    assert (nvl72.id, nvl72.nodes, nvl72.count) == ("gb300", 18, 72)


def test_citation_inferred_rows_and_skips(registry: Path) -> None:
    report, results = _harvest(registry)
    source = results["6.0-0006 gpt-oss-120b Interactive"].source
    assert source.url.startswith(  # type: ignore[union-attr]
        f"https://github.com/mlcommons/inference_results_v6.0/tree/{V60_COMMIT}/closed/ASUSTeK/"
    )
    assert V60_READ_FROM in source.conditions  # type: ignore[union-attr]
    assert "marks this row inferred" in source.conditions  # type: ignore[union-attr]
    offline = results["6.0-0006 gpt-oss-120b Offline"].source
    assert "marks this row inferred" not in offline.conditions  # type: ignore[union-attr]
    bare = results["6.0-0049 gpt-oss-120b Server"].identity.engine
    assert (bare.name, bare.version) == ("vllm", "unstated")
    reasons = dict(report.skipped)  # type: ignore[attr-defined]
    assert "the same run as llama2-70b-99.9" in reasons["mlperf v6.0 6.0-0020 llama2-70b-99 Server"]
    assert (
        "counts 87, but Nodes × a# is 88"
        in reasons["mlperf v6.0 6.0-0001 llama2-70b-99 Interactive"]
    )


def test_an_engine_the_software_does_not_name_is_read_from_the_build_setup(
    registry: Path,
) -> None:
    """AMD's 6.0-0002 states 'PyTorch …, ROCm …'; both configurations of its
    setup/llama2-70b-99 build vLLM (VLLM_URL), so the run is vLLM of an unstated release.
    MangoBoost's 6.0-0069 states 'ROCm 6.10.5' only; its src/llama2-70b-99.9/README.md serves
    the benchmark from its LLMBoost container, so the run is LLMBoost of an unstated release."""
    report, results = _harvest(registry)
    amd = results["6.0-0002 llama2-70b-99.9 Server"]
    engine = amd.identity.engine
    assert (engine.name, engine.version) == ("vllm", "unstated")
    conditions = amd.source.conditions  # type: ignore[union-attr]
    assert "Software as submitted: PyTorch 2.9.1+git8907517, ROCm 7.0.0" in conditions
    assert "closed/AMD/setup/llama2-70b-99/*.config: every configuration builds vLLM" in conditions
    (point,) = amd.points
    assert point.ttft_ms is not None
    assert point.ttft_ms.p99 is not None
    reasons = dict(report.skipped)  # type: ignore[attr-defined]
    assert "the same run as llama2-70b-99.9" in reasons["mlperf v6.0 6.0-0002 llama2-70b-99 Server"]
    mango = results["6.0-0069 llama2-70b-99.9 Server"]
    assert (mango.identity.engine.name, mango.identity.engine.version) == ("llmboost", "unstated")
    assert "LLMBoost container llmboost/mb-llmboost:mlperf-6.0" in mango.source.conditions  # type: ignore[union-attr]


def test_a_setup_that_builds_another_engine_or_none_names_no_engine() -> None:
    vllm = 'export VLLM_URL="https://github.com/vllm-project/vllm.git"\n'
    assert engine_from_setup({"s/a.config": vllm, "s/b.config": vllm}) is not None
    assert engine_from_setup({"s/a.config": vllm, "s/b.config": "export X=1\n"}) is None
    sglang = vllm + 'export SGLANG_URL="https://github.com/sgl-project/sglang.git"\n'
    assert engine_from_setup({"s/a.config": sglang}) is None
    assert engine_from_setup({}) is None


def test_a_benchmark_measured_in_samples_keeps_samples_and_its_end_to_end_bound(
    registry: Path,
) -> None:
    """qwen3-vl-235b-a22b counts no tokens: RedHat's 6.0-0095 on 8 × H200 is stored as samples
    per second, its Server point bounded end to end at the percentile its mlperf.conf sets (99).
    NVIDIA's 6.0-0077 declares fp32 weights, but its measurements.json says 'quantization' from
    the checkpoint nvidia/Qwen3-VL-235B-A22B-Instruct-NVFP4-…: NVFP4, not fp32; and its Software
    names TensorRT for the whole submission while the benchmark's only implementation in its code
    is `code/qwen3-vl-235b-a22b/vllm/` (the excerpt holds its README): vLLM, release unstated."""
    _, results = _harvest(registry)
    server = results["6.0-0095 qwen3-vl-235b-a22b Server"]
    assert server.identity.model.id == "qwen3-vl-235b-a22b-instruct"
    assert (server.identity.model.quantization, server.identity.engine.version) == ("fp8", "0.10.0")
    (point,) = server.points
    search = point.load.rate_search
    assert search is not None
    assert (search.percentile, search.e2e_ms, search.ttft_ms) == (99.0, 12000.0, None)
    assert (point.throughput.requests_per_s, point.throughput.output_tokens_per_s) == (11.05, None)
    assert point.e2e_ms is not None
    assert point.e2e_ms.p99 == 11118.210726
    offline = results["6.0-0095 qwen3-vl-235b-a22b Offline"].points[0].throughput
    assert offline.requests_per_s == 18.218
    nvidia = results["6.0-0077 qwen3-vl-235b-a22b Server"]
    identity = nvidia.identity
    assert (identity.model.quantization, identity.model.dtype) == ("nvfp4", None)
    assert (identity.engine.name, identity.engine.version) == ("vllm", "unstated")
    assert "whose name states NVFP4" in nvidia.source.conditions  # type: ignore[union-attr]
    assert "only implementation of this benchmark is its vLLM" in nvidia.source.conditions  # type: ignore[union-attr]


def test_a_conf_percentile_prefers_the_benchmark_and_scenario_lines() -> None:
    conf = (
        "*.Server.target_latency_percentile = 99\n"
        "*.Offline.target_latency_percentile = 90\n"
        "qwen3-vl-235b-a22b.Server.target_latency_percentile = 97 # own line\n"
    )
    assert conf_percentile(conf, "qwen3-vl-235b-a22b", "Server") == 97.0
    assert conf_percentile(conf, "llama2-70b-99", "Server") == 99.0
    assert conf_percentile(conf, "llama2-70b-99", "Interactive") is None
    assert conf_percentile(None, "llama2-70b-99", "Server") is None


def test_a_benchmark_implemented_only_as_a_vllm_backend_ran_vllm() -> None:
    tensorrt = ("tensorrt-llm", "unstated (TensorRT 10.14)", "TensorRT 10.14")
    root = "closed/NVIDIA/code/qwen3-vl-235b-a22b"
    vllm = engine_of_backend(tensorrt, frozenset({"vllm"}), root)
    assert vllm is not None
    assert vllm[:2] == ("vllm", "unstated")
    # A TensorRT backend beside it, or none at all: the Software line stands.
    assert engine_of_backend(tensorrt, frozenset({"vllm", "tensorrt"}), root) == tensorrt
    assert engine_of_backend(tensorrt, frozenset(), root) == tensorrt


def test_weights_declared_as_tensor_dtypes_take_the_checkpoints_format() -> None:
    """Nebius's 6.0-0084 Qwen3-VL rows declare `BF16/F32/F8_E4M3/U8` (the checkpoint's tensor
    dtypes); their measurements.json starts from NVIDIA's NVFP4 checkpoint."""
    row = {"weight_data_types": "BF16/F32/F8_E4M3/U8", "Software": "TensorRT 10.14"}
    start = "https://huggingface.co/nvidia/Qwen3-VL-235B-A22B-Instruct-NVFP4-MLPerf-Inference"
    named = Evidence({"m/measurements.json": json.dumps({"starting_weights_filename": start})}, {})
    found, note = ran_precision(row, named)
    assert (found.quantization, found.dtype) == ("nvfp4", None)
    assert note is not None
    assert "lists the checkpoint's tensor dtypes" in note
    unnamed = Evidence({"m/measurements.json": json.dumps({"starting_weights_filename": "x"})}, {})
    with pytest.raises(RowSkipped, match="lists tensor dtypes, not a format"):
        ran_precision(row, unnamed)


def test_the_cli_cites_the_repository_commit_and_reader_it_is_given(registry: Path) -> None:
    """`--commit`, `--repository-url` and `--read-from` reach every result as one citation."""
    fork = "https://github.com/gbeezybez/inference_results_v6.0"
    arguments = ["registry", "harvest", "mlperf", "--round", "6.0", "--from", str(EXCERPT)]
    cited = ["--commit", V60_COMMIT, "--repository-url", fork, "--read-from", V60_READ_FROM]
    into = ["--registry", str(registry), "--retrieved", RETRIEVED]
    outcome = CliRunner().invoke(main, [*arguments, *cited, *into])
    assert outcome.exit_code == 0, outcome.output
    assert outcome.output.splitlines()[-1].startswith("13 added, 0 changed, 0 unchanged")
    sources = [read_result(path).source for path in (registry / "registry/results").rglob("*.json")]
    assert len(sources) == 13
    for source in sources:
        assert source.url.startswith(f"{fork}/tree/{V60_COMMIT}/")  # type: ignore[union-attr]
        assert V60_READ_FROM in source.conditions  # type: ignore[union-attr]
