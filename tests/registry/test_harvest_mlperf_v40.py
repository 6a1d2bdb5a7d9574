"""MLPerf Inference v4.0 through `registry harvest mlperf`, on its pinned excerpt.

tests/data/harvest/mlperf-v4.0 holds files of the official mlcommons/inference_results_v4.0,
read one by one (the repository is too large to bring here whole, and no results table of the
round was found): each file whole, checked against its stored length. For NVIDIA's DGX H100 x2
and x8, H200 x8, H200-CTS x1 and x8 (1000 W), H100 NVL x8 and GH200, Dell's XE9680 H100 x8,
XE8640 and XE9640 H100 x4, HPE's Cray XD670, GigaComputing's G593-SD1, Oracle's BM.GPU.H100.8
(H100 x8) and Quanta Cloud Technology's D54U-3U (H100 PCIe x4, read 2026-12-02): the system
description (`systems/<system>.json`) and the llama2-70b-99.9 Offline and
Server run logs at 3c4a1cf1; each submitter's llama2-70b configurations (NVIDIA's as stored at
8121a811, the others' at 3c4a1cf1; Oracle's Server one only), which set `use_fp8 = True`. With no
results table, each row is built from its system description and its log
(`registry.harvest.mlperf_systems`). The excerpt is also the harvest's source: the registry's v4.0
files are what it gives, byte for byte.
"""

from pathlib import Path

from registry_helpers import MlperfExcerpt, MlperfHarvest

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
COMMIT = "3c4a1cf196b70175cfe7c59e067cd1d923aa4f3f"
READ_FROM = (
    "Read file by file from mlcommons/inference_results_v4.0 (the repository, 1.4 GB, is too "
    "large to bring here whole; no results table of the round was read): each system "
    "description and run log at 3c4a1cf1; NVIDIA's configs/llama2-70b/{Offline,Server}/"
    "__init__.py as stored at 8121a811 (whether that commit is in the history of 3c4a1cf1 could "
    "not be checked here)."
)
EXCERPT_SHA256 = "7a614caa2e622364b2c33830b7c27f8abe7cb23aec27e497921d98033ffb388e"
EXCERPT = MlperfExcerpt(
    REPOSITORY_ROOT / "tests/data/harvest/mlperf-v4.0", "4.0", COMMIT, READ_FROM, EXCERPT_SHA256
)
RUN = "closed/{}/results/{}/llama2-70b-99.9/{}/performance/run_1"


harvested = EXCERPT.shared_harvest("v40")


def test_the_excerpt_is_pinned_and_in_the_registry_byte_for_byte(harvested: MlperfHarvest) -> None:
    registry, report, results = harvested
    assert len(results) == 25
    EXCERPT.assert_pinned_and_committed(registry, report, 25)


def test_a_row_built_from_its_system_description_and_log(harvested: MlperfHarvest) -> None:
    _, _, results = harvested
    result = results[RUN.format("NVIDIA", "H200-SXM-141GBx8_TRT", "Server")]
    mlperf = result.source.mlperf  # type: ignore[union-attr]
    assert mlperf is not None
    assert (mlperf.result_id, mlperf.round, mlperf.division, mlperf.availability) == (
        None,
        "v4.0",
        "closed",
        "preview",
    )
    assert (mlperf.submitter, mlperf.system) == (
        "NVIDIA",
        "NVIDIA H200 (8x H200-SXM-141GB, TensorRT)",
    )
    identity = result.identity
    assert (identity.gpu.id, identity.gpu.count) == ("h200-sxm", 8)
    assert (identity.engine.name, identity.engine.version) == (
        "tensorrt-llm",
        "unstated (TensorRT 9.3.0)",
    )
    conditions = result.source.conditions  # type: ignore[union-attr]
    assert "the round's results table, which was not read" in conditions
    assert READ_FROM in conditions
    # The log's "99.00 percentile first token latency (ns)   : 753113481", TPOT 194987874.
    point = result.points[0]
    assert (point.ttft_ms.p99, point.tpot_ms.p99) == (753.113481, 194.987874)  # type: ignore[union-attr]
    assert (point.load.request_rate, point.throughput.output_tokens_per_s) == (91.5, 26485.43)
    search = point.load.rate_search
    assert (search.ttft_ms, search.tpot_ms) == (2000.0, 200.0)  # type: ignore[union-attr]


def test_precision_comes_from_the_configurations_and_unknown_names_are_refused(
    harvested: MlperfHarvest,
) -> None:
    _, report, results = harvested
    dell = results[RUN.format("Dell", "XE9680_H100_SXM_80GBx8_TRT", "Offline")]
    assert dell.identity.model.quantization == "fp8"
    assert (
        "closed/Dell/configs/llama2-70b/Offline/__init__.py sets use_fp8 = True"
        in dell.source.conditions  # type: ignore[union-attr]
    )
    assert {r.identity.model.quantization for r in results.values()} == {"fp8"}
    cts = results[RUN.format("NVIDIA", "H200-SXM-141GB-CTSx8_TRT", "Server")].identity.gpu
    assert cts.id == "h200-sxm-1000w"
    nvl = results[RUN.format("NVIDIA", "H100-NVL-94GBx8_TRT", "Offline")].identity.gpu
    assert nvl.id == "h100-nvl"
    reasons = dict(report.skipped)
    gh200 = RUN.format("NVIDIA", "GH200-GraceHopper-Superchip_GH200-144GB_aarch64x1_TRT", "Server")
    # v4.0 names the superchip without its memory: 96 GB and 144 GB parts share the name.
    assert "no GPU catalog id" in reasons[f"mlperf v4.0 {gh200} llama2-70b-99.9 Server"]
    # Oracle's Offline configuration is not in what was read: no format is stated, so no row.
    oracle = RUN.format("Oracle", "OCI-H100_H100-SXM-80GBx8_TRT", "Offline")
    assert "state none" in reasons[f"mlperf v4.0 {oracle} llama2-70b-99.9 Offline"]
    assert RUN.format("Oracle", "OCI-H100_H100-SXM-80GBx8_TRT", "Server") in results
