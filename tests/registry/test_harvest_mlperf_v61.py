"""MLPerf Inference v6.1 through `registry harvest mlperf`, on its pinned excerpt.

tests/data/harvest/mlperf-v6.1 holds 251 rows of `summary.json` of the official
mlcommons/inference_results_v6.1 at 10ecdffd, in the file's own layout, and each row's
`performance/run_1/mlperf_log_summary.txt`. Neither repository could be brought here whole: the
table was read from the official repository page by page, the logs (which the official copy
here lacks) from the fork intel-ai-tce/inference_results_v6.1 at 5174fca8, whose `summary.json`
has the same 670,139 characters. The logs of the first 124 rows are whole, each checked against
its stored length. Of the 127 rows added on 2026-12-02 (every Offline LLM row and the Server
rows whose log the fork holds), two logs are whole and checked the same way (Azure's GB200 x288
deepseek-r1 Server, ASUSTeK's B300 deepseek-r1 Offline); the other 125 keep only the LoadGen
lines the harvest reads, each line as the log prints it. AMD's setup configuration
`closed/AMD/setup/llama2-70b-99/vllm_gfx942.config` (whole, 729 characters, read from the fork
on 2026-12-02) says what serves AMD's 8 x MI355X llama2-70b rows, whose software names only
PyTorch and ROCm: vLLM (`VLLM_URL`), release unstated. NVIDIA's Vera Rubin NVL72 preview rows
(deepseek-r1 Offline, Server, Interactive) were measured with the endpoints harness: their
`performance/result_summary.json` files (7,853, 15,263 and 15,245 characters) were read on
2026-12-02 from the official repository, whose stored index holds one version of each (seen at
e777c7be for Offline and Interactive, at 10ecdffd for Server), and are kept whole, each checked
against its stored length, its histogram counts summing to its samples and its bucket edges
meeting; each file's `tps` is the table's `Result`. Row "325" (their Offline row) joined the
excerpt's `summary.json` as the official file prints it. NVIDIA's Qwen3-VL Offline rows of the
B300 x8, the GB300 NVL72 x72 and the Vera Rubin NVL72 (rows "292", "313", "328") were measured the
same way: their `result_summary.json` (7,720, 7,769 and 7,779 characters; the first two from the
fork, the third from the official repository) are kept whole and checked the same way, with the
endpoints harness's `config.yaml` of the first two (2,017 and 2,034 characters, from the fork)
and the third's `measurements.json` (307 characters), which say that the checkpoint served is
NVIDIA's NVFP4 one although the table declares bf16. Naeem Khoshnevis's research/development
(`rdi`) rows "330" and "331" (llama3.1-8b Offline and Server on 1 H200, TensorRT-LLM 1.0.0) were
measured with the endpoints harness too: their `result_summary.json` (7,990 and 15,281
characters, from the fork) are kept whole and checked the same way. Google's GB200 NVL72
deepseek-r1 Server row ("197") has no mlperf_log_summary.txt in the fork, but its
`mlperf_log_detail.txt` (58,304 characters, read from the fork on 2026-12-02): the excerpt keeps
the 27 lines the harvest reads, each as the log prints it. The excerpt is also the
harvest's source: the registry's v6.1 files are what it gives, byte for byte.
"""

import json
import math
import re
from pathlib import Path

import pytest
from registry_checkout import empty_registry
from registry_helpers import MlperfExcerpt, MlperfHarvest

from infermeter.registry.harvest.errors import HarvestError, RowSkipped
from infermeter.registry.harvest.mlperf import harvest_mlperf
from infermeter.registry.harvest.mlperf_detail_log import detail_summary
from infermeter.registry.harvest.mlperf_endpoints import endpoints_point, read_run
from infermeter.registry.harvest.mlperf_setup import engine_of_build_tag
from infermeter.registry.harvest.options import HarvestOptions
from infermeter.registry.harvest.sources import FileCitation
from infermeter.registry.models import RateSearch

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
COMMIT = "10ecdffda3bb94d71f0203a6ca8e20c17943f27c"
READ_FROM = (
    "summary.json read from mlcommons/inference_results_v6.1 at 10ecdffd; each run's "
    "mlperf_log_summary.txt from the fork intel-ai-tce/inference_results_v6.1 at 5174fca8 (its "
    "summary.json has the same 670,139 characters; whether its history holds upstream commit "
    "10ecdffd could not be checked here)."
)
EXCERPT_SHA256 = "679e4aec9bafad21f6ff921fce65d0de1e5fdda07ea34da7e13c97d2d443d4d8"
EXCERPT = MlperfExcerpt(
    REPOSITORY_ROOT / "tests/data/harvest/mlperf-v6.1", "6.1", COMMIT, READ_FROM, EXCERPT_SHA256
)
AZURE = "closed/Azure/results/Azure-GB300-NVL72_288GBx72/deepseek-r1"
RUBIN = "closed/NVIDIA/results/VR-NVL72_VR-288GB_aarch64x72_TRT/deepseek-r1"


harvested = EXCERPT.shared_harvest("v61")


def test_the_excerpt_is_pinned_and_in_the_registry_byte_for_byte(harvested: MlperfHarvest) -> None:
    registry, report, results = harvested
    assert len(results) == 255
    EXCERPT.assert_pinned_and_committed(registry, report, 255)


def test_a_row_without_result_id_is_cited_by_submitter_system_and_path(
    harvested: MlperfHarvest,
) -> None:
    _, _, results = harvested
    interactive = results[f"{AZURE}/Interactive/performance/run_1"]
    mlperf = interactive.source.mlperf  # type: ignore[union-attr]
    assert mlperf is not None
    assert (mlperf.result_id, mlperf.round, mlperf.division, mlperf.availability) == (
        None,
        "v6.1",
        "closed",
        "available",
    )
    assert (mlperf.submitter, mlperf.system) == (
        "Azure",
        "Azure GB300 NVL72 (72x GB300-288GB_aarch64 TensorRT)",
    )
    assert interactive.source.url.endswith(f"/tree/{COMMIT}/{AZURE}/Interactive/performance/run_1")  # type: ignore[union-attr]
    conditions = interactive.source.conditions  # type: ignore[union-attr]
    assert "gives no result ID" in conditions
    assert READ_FROM in conditions
    assert "marks this row inferred" in conditions
    server = results[f"{AZURE}/Server/performance/run_1"].source.conditions  # type: ignore[union-attr]
    assert "marks this row inferred" not in server


def test_server_points_keep_their_bounds_and_p99s(harvested: MlperfHarvest) -> None:
    _, _, results = harvested
    point = results[f"{AZURE}/Interactive/performance/run_1"].points[0]
    search = point.load.rate_search
    assert (search.ttft_ms, search.tpot_ms, point.load.request_rate) == (1500.0, 15.0, 69.5)  # type: ignore[union-attr]
    # The log's "99.00 percentile first token latency (ns)   : 491473705" and TPOT 14951623.
    assert (point.ttft_ms.p99, point.tpot_ms.p99) == (491.473705, 14.951623)  # type: ignore[union-attr]
    assert point.throughput.output_tokens_per_s == 260098.15
    gpu = results[f"{AZURE}/Interactive/performance/run_1"].identity.gpu
    assert (gpu.id, gpu.nodes, gpu.count) == ("gb300", 18, 72)
    with_p99 = [
        r
        for r in results.values()
        if r.points[0].ttft_ms is not None
        and r.points[0].ttft_ms.p99 is not None
        and r.points[0].tpot_ms is not None
        and r.points[0].tpot_ms.p99 is not None
    ]
    assert len(with_p99) == 136


def test_engines_precisions_and_skips(harvested: MlperfHarvest) -> None:
    _, report, results = harvested
    cisco = results[
        "closed/Cisco/results/Cisco_UCS_B300x16_G200_4x2_RO/gpt-oss-120b/Server/performance/run_1"
    ].identity
    # 'TensorRT 10.14.1.48; TensorRT-LLM 1.3.0rc0': the components split at ';' too.
    assert (cisco.engine.name, cisco.engine.version) == ("tensorrt-llm", "1.3.0rc0")
    assert (cisco.gpu.id, cisco.gpu.count, cisco.model.quantization) == ("b300", 16, "fp4")
    crusoe = results[
        "closed/Crusoe/results/512xMI355X_Crusoe_GPT/gpt-oss-120b/Server/performance/run_1"
    ].identity
    assert (crusoe.engine.name, crusoe.engine.version, crusoe.gpu.count) == ("vllm", "0.22.1", 512)
    reasons = dict(report.skipped)
    amd = (
        "mlperf v6.1 closed/AMD/results/8xMI355X_2xEPYC_9575F/gpt-oss-120b/Server/performance/run_1"
    )
    assert "names no inference engine" in reasons[f"{amd} gpt-oss-120b Server"]
    mixed = (
        "mlperf v6.1 closed/Cisco/results/Cisco_UCS_H200x8_MI350Xx8_G200_2x2_TOR/gpt-oss-120b/"
        "Server/performance/run_1 gpt-oss-120b Server"
    )
    assert "heterogeneous system" in reasons[mixed]
    # Precision is what ran: RedHat_Supermicro's GB200 NVL4 gpt-oss-120b ran fp8 weights on vLLM.
    redhat = results[
        "closed/RedHat_Supermicro/results/GB200-NVL4_186GB_Openshift_VLLM/gpt-oss-120b/Server/"
        "performance/run_1"
    ].identity
    assert (redhat.gpu.id, redhat.gpu.count, redhat.model.quantization) == ("gb200", 4, "fp8")
    assert (redhat.engine.name, redhat.engine.version) == ("vllm", "0.24.0")
    # An open-division row is cited as open: conditions, footnote and division agree.
    scitix = results[
        "open/ScitiX/results/B200-SXM-180GBx8_TRT/deepseek-r1/Server/performance/run_1"
    ]
    mlperf = scitix.source.mlperf  # type: ignore[union-attr]
    assert mlperf.division == "open"
    assert mlperf.footnote.startswith("MLPerf® v6.1 Inference Open deepseek-r1 Server.")
    assert scitix.source.conditions.startswith("MLPerf Inference v6.1 open division,")


def test_offline_rows_and_the_added_server_points(harvested: MlperfHarvest) -> None:
    _, _, results = harvested
    cisco = results[
        "closed/Cisco/results/Cisco_UCS_B300x16_G200_4x2_RO/deepseek-r1/Offline/performance/run_1"
    ]
    point = cisco.points[0]
    # The log's "Tokens per second: 137067" and "samples_per_query : 105312".
    assert (point.load.arrival, point.requests.sent) == ("offline", 105312)
    assert point.throughput.output_tokens_per_s == 137067.0
    assert (cisco.identity.gpu.id, cisco.identity.gpu.count) == ("b300", 16)
    # LoadGen prints large rates in exponent form: "Tokens per second: 1.0399e+06".
    amd = results[
        "closed/AMD/results/9x8xMI355X_2xEPYC_9575F/gpt-oss-120b/Offline/performance/run_1"
    ]
    assert amd.points[0].throughput.output_tokens_per_s == 1039900.0
    server = results[
        "closed/CoreWeave/results/B200-SXM-180GBx8_TRT/deepseek-r1/Server/performance/run_1"
    ].points[0]
    assert server.load.request_rate == 15.0
    assert (server.ttft_ms.p99, server.tpot_ms.p99) == (805.524387, 63.345952)  # type: ignore[union-attr]


def test_an_engine_read_from_the_setup_configuration(harvested: MlperfHarvest) -> None:
    """AMD's 8 x MI355X llama2-70b Server and Interactive rows state `PyTorch …, ROCm …`; the
    only configuration of its llama2-70b setup folder builds vLLM: vLLM of an unstated release
    (its gpt-oss-120b rows, with no configuration in what was read, stay skipped: see above)."""
    _, _, results = harvested
    run = "closed/AMD/results/8xMI355X_2xEPYC_9575F/{}/{}/performance/run_1"
    for scenario in ("Server", "Interactive"):
        identity = results[run.format("llama2-70b-99.9", scenario)].identity
        assert (identity.engine.name, identity.engine.version) == ("vllm", "unstated")
        assert (identity.gpu.id, identity.gpu.count) == ("mi355x", 8)


def test_the_vera_rubin_preview_rows_are_read_from_the_endpoints_harness(
    harvested: MlperfHarvest,
) -> None:
    """NVIDIA's Vera Rubin NVL72 rows have no LoadGen log: their figures are the endpoints
    harness's `result_summary.json`, their bounds the round's LoadGen logs' for deepseek-r1,
    their category preview, and the table marks them inferred, which they say."""
    _, _, results = harvested
    server = results[f"{RUBIN}/Server/performance/run_1"]
    mlperf = server.source.mlperf  # type: ignore[union-attr]
    assert (mlperf.availability, mlperf.path) == ("preview", f"{RUBIN}/Server/performance/run_1")  # type: ignore[union-attr]
    identity = server.identity
    assert (identity.gpu.id, identity.gpu.nodes, identity.gpu.count) == ("vera-rubin", 18, 72)
    assert (identity.engine.name, identity.engine.version) == ("tensorrt-llm", "unstated")
    assert identity.model.quantization == "fp4"
    point = server.points[0]
    # The file's "tps": 1175890.2208168241, "target_qps": 325.0 and ttft/tpot "99.0" in ns.
    assert point.throughput.output_tokens_per_s == 1175890.2208168241
    assert point.load.request_rate == 325.0
    assert (point.ttft_ms.p99, point.tpot_ms.p99) == (303.546985, 48.215361468697125)  # type: ignore[union-attr]
    assert point.ttft_ms.n == 600000  # type: ignore[union-attr]
    search = point.load.rate_search
    assert (search.ttft_ms, search.tpot_ms) == (2000.0, 80.0)  # type: ignore[union-attr]
    interactive = results[f"{RUBIN}/Interactive/performance/run_1"].points[0].load.rate_search
    assert (interactive.ttft_ms, interactive.tpot_ms) == (1500.0, 15.0)  # type: ignore[union-attr]
    offline = results[f"{RUBIN}/Offline/performance/run_1"]
    assert offline.points[0].requests.sent == 1600000
    assert offline.points[0].ttft_ms is None
    for result in (server, offline):
        conditions = result.source.conditions  # type: ignore[union-attr]
        assert "never as measured" in conditions
        assert "endpoints harness" in conditions
        assert "performance/result_summary.json" in conditions
        assert result.source.kind == "reported"


def _rubin_run(scenario: str, **changes: object) -> tuple[dict[str, object], str]:
    """The pinned Vera Rubin row of `scenario` and its result_summary.json, with `changes`."""
    table = json.loads((EXCERPT.folder / "summary.json").read_text())
    row = next(
        r for r in table.values() if r["Location"] == f"./{RUBIN}/{scenario}/performance/run_1"
    )
    path = EXCERPT.folder / RUBIN / scenario / "performance/result_summary.json"
    summary = json.loads(path.read_text()) | changes
    earlier = {"Model": row["Model"], "Scenario": row["Scenario"], "Location": row["Location"]}
    earlier |= {"Performance_Result": row["Result"], "Performance_Units": row["Units"]}
    return earlier, json.dumps(summary)


BOUNDS = {
    ("deepseek-r1", "Server"): RateSearch(percentile=99.0, ttft_ms=2000.0, tpot_ms=80.0),
    ("deepseek-r1", "Interactive"): RateSearch(percentile=99.0, ttft_ms=1500.0, tpot_ms=15.0),
}


def test_an_endpoints_run_that_fails_a_rule_is_refused() -> None:
    row, text = _rubin_run("Server")
    point = endpoints_point(row, read_run(text, "s.json"), BOUNDS)
    assert point.load.rate_search == BOUNDS[("deepseek-r1", "Server")]
    _, failed = _rubin_run("Server", n_samples_failed=1)
    with pytest.raises(RowSkipped, match="1 failed"):
        read_run(failed, "s.json")
    _, partial = _rubin_run("Server", complete=False)
    with pytest.raises(RowSkipped, match="not complete"):
        read_run(partial, "s.json")
    # Interactive's tighter TPOT bound (15 ms) is not met by the Server run (p99 48.2 ms).
    with pytest.raises(RowSkipped, match="TPOT"):
        endpoints_point(row | {"Scenario": "Interactive"}, read_run(text, "s.json"), BOUNDS)
    # No bounds in the round's logs for the benchmark: no point at an SLO.
    with pytest.raises(RowSkipped, match="no target_qps, or no TTFT/TPOT bounds"):
        endpoints_point(row, read_run(text, "s.json"), {})
    # A table figure that is not the file's tps.
    with pytest.raises(RowSkipped, match="disagrees"):
        endpoints_point(row | {"Performance_Result": 1.1e6}, read_run(text, "s.json"), BOUNDS)
    # Nor is NaN (no farther than any tolerance: it passed for the file's figure before).
    with pytest.raises(RowSkipped, match="the table's nan Tokens/s disagrees"):
        endpoints_point(row | {"Performance_Result": math.nan}, read_run(text, "s.json"), BOUNDS)


def test_qwen3_vl_offline_rows_of_the_endpoints_harness(harvested: MlperfHarvest) -> None:
    """NVIDIA's v6.1 Qwen3-VL Offline rows declare bf16 weights and name TensorRT-LLM first; the
    checkpoint they served is NVIDIA's NVFP4 one (the harness's config.yaml, or the measurement
    file), and the engine the vLLM build the submission tags for the benchmark."""
    _, _, results = harvested
    run = "closed/NVIDIA/results/{}/qwen3-vl-235b-a22b/Offline/performance/run_1"
    b300 = results[run.format("B300-SXM-270GBx8_TRT")]
    assert (b300.identity.engine.name, b300.identity.engine.version) == ("vllm", "unstated")
    assert (b300.identity.gpu.id, b300.identity.gpu.count) == ("b300", 8)
    assert b300.identity.model.quantization == "nvfp4"
    conditions = b300.source.conditions  # type: ignore[union-attr]
    assert "Qwen3-VL-235B-A22B-Instruct-NVFP4-MLPerf-Inference-Closed-V6.1-FP8-KV" in conditions
    assert "vLLM CentML:mlperf-inf-mm-q3vl-v6.1" in conditions
    # The file's "qps": 129.35839172137014 (the table's 129.3583917214 Samples/s), "tps" beside.
    point = b300.points[0]
    assert (point.throughput.requests_per_s, point.throughput.output_tokens_per_s) == (
        129.35839172137014,
        5552.114731476078,
    )
    assert (point.load.arrival, point.requests.sent) == ("offline", 96578)
    rubin = results[run.format("VR-NVL72_VR-288GB_aarch64x72_TRT")]
    assert (rubin.identity.gpu.id, rubin.identity.model.quantization) == ("vera-rubin", "nvfp4")
    assert rubin.source.mlperf.availability == "preview"  # type: ignore[union-attr]
    gb300 = results[run.format("GB300-NVL72_GB300-288GB_aarch64x72_TRT")]
    assert (gb300.identity.gpu.count, gb300.points[0].throughput.requests_per_s) == (
        72,
        1304.9852625797478,
    )


def test_a_build_tag_names_the_engine_only_for_its_own_benchmark() -> None:
    software = "TensorRT-LLM feat/1.2-mlpinf, NVIDIA Dynamo x, vLLM CentML:mlperf-inf-mm-q3vl-v6.1"
    trt = ("tensorrt-llm", "feat/1.2-mlpinf", "TensorRT-LLM feat/1.2-mlpinf")
    qwen = {"Model": "qwen3-vl-235b-a22b", "Software": software}
    assert engine_of_build_tag(trt, qwen)[:2] == ("vllm", "unstated")  # type: ignore[index]
    assert engine_of_build_tag(trt, qwen | {"Model": "deepseek-r1"}) == trt
    untagged = qwen | {"Software": "TensorRT-LLM feat/1.2-mlpinf, vLLM CentML:other-build"}
    assert engine_of_build_tag(trt, untagged) == trt


def test_a_research_row_of_a_submitter_named_in_words(harvested: MlperfHarvest) -> None:
    """Naeem Khoshnevis's rows: category rdi, a run path with a space (percent-encoded in the
    address), weights 'fp8 (static per-tensor PTQ, NVIDIA ModelOpt)' read as fp8, and the
    Server point at the round's llama3.1-8b bounds (2 s, 100 ms)."""
    _, _, results = harvested
    run = "closed/Naeem Khoshnevis/results/H200/llama3.1-8b/{}/performance/run_1"
    server = results[run.format("Server")]
    mlperf = server.source.mlperf  # type: ignore[union-attr]
    assert (mlperf.availability, mlperf.submitter) == ("rdi", "Naeem Khoshnevis")  # type: ignore[union-attr]
    encoded = "/closed/Naeem%20Khoshnevis/results/H200/llama3.1-8b/Server/performance/run_1"
    assert server.source.url.endswith(encoded)  # type: ignore[union-attr]
    identity = server.identity
    assert (identity.gpu.id, identity.gpu.count) == ("h200-sxm", 1)
    assert identity.model.quantization == "fp8"
    assert (identity.engine.name, identity.engine.version) == ("tensorrt-llm", "1.0.0")
    point = server.points[0]
    search = point.load.rate_search
    assert (search.ttft_ms, search.tpot_ms, point.load.request_rate) == (2000.0, 100.0, 58.0)  # type: ignore[union-attr]
    # The file's ttft/tpot "99.0": 1463201521.0 and 61114790.08661418 ns; "tps" 7376.597666232419.
    assert (point.ttft_ms.p99, point.tpot_ms.p99) == (1463.201521, 61.11479008661418)  # type: ignore[union-attr]
    assert point.throughput.output_tokens_per_s == 7376.597666232419
    assert "fp8 (static per-tensor PTQ, NVIDIA ModelOpt)" in server.source.conditions  # type: ignore[union-attr]
    assert results[run.format("Offline")].points[0].requests.sent == 40104


GOOGLE = "closed/Google/results/GB200-NVL72_GB200-186GB_aarch64x72_TRT/deepseek-r1/Server"


def test_a_run_read_from_loadgens_detail_log(harvested: MlperfHarvest) -> None:
    """Google's GB200 NVL72 deepseek-r1 Server run: its detail log's lines under the summary
    log's names (result_completed_tokens_per_second 388590, the table's 388590.0 Tokens/s)."""
    _, _, results = harvested
    result = results[f"{GOOGLE}/performance/run_1"]
    point = result.points[0]
    assert point.throughput.output_tokens_per_s == 388590.0
    assert (point.ttft_ms.p99, point.tpot_ms.p99) == (1160.616621, 74.035538)  # type: ignore[union-attr]
    search = point.load.rate_search
    assert (search.ttft_ms, search.tpot_ms, point.load.request_rate) == (2000.0, 80.0, 110.0)  # type: ignore[union-attr]
    assert (result.identity.gpu.id, result.identity.gpu.count) == ("gb200", 72)
    assert "mlperf_log_detail.txt" in result.source.conditions  # type: ignore[union-attr]


def test_a_detail_log_that_counts_an_error_is_refused() -> None:
    path = EXCERPT.folder / GOOGLE / "performance/run_1/mlperf_log_detail.txt"
    text = path.read_text()
    assert detail_summary(text, "d.txt")["Result is"] == "VALID"
    failed = text.replace('"key": "num_errors", "value": 0,', '"key": "num_errors", "value": 1,')
    assert failed != text
    with pytest.raises(RowSkipped, match="num_errors is 1"):
        detail_summary(failed, "d.txt")


@pytest.mark.parametrize(
    ("round_text", "message"),
    [
        ("9.9", "--round: v9.9 is not a round this harvester reads"),
        ("6.0", "--round: v6.0, but the results table read is of v6.1"),
    ],
)
def test_the_excerpt_read_as_another_round_is_refused(
    tmp_path: Path, round_text: str, message: str
) -> None:
    registry = empty_registry(tmp_path)
    with pytest.raises(HarvestError, match=re.escape(message)):
        harvest_mlperf(
            EXCERPT.folder,
            round_text,
            HarvestOptions(registry),
            cited=FileCitation(commit=COMMIT, read_from=READ_FROM),
        )
    assert not list((registry / "registry/results").iterdir())
    assert not (registry / "registry/corrections.yaml").exists()
