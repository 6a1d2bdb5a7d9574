"""MLPerf Inference v4.1 rows added on 2026-12-02 through `registry harvest mlperf`, on a pinned
excerpt.

tests/data/harvest/mlperf-v4.1-added holds six rows of `summary_results.json` of
mlcommons/inference_results_v4.1 at commit 4a0c8741, copied verbatim, with the files the harvest
reads for them at that commit:

- GPT-J: ASUSTeK's v4.1-0003 gptj-99 and gptj-99.9 Offline on 4 × H100 NVL, NVIDIA's v4.1-0047
  gptj-99 and gptj-99.9 Server on 1 × H200: each run's `mlperf_log_summary.txt`, the measurement
  JSON (the starting weights, transformed by quantization), the Server run's `mlperf.conf` (its
  latency bound's percentile) and the submitters' `configs/gptj` files (`use_fp8 = True`).
  GPT-J's LoadGen logs count no tokens: their tokens per second are "inferred", samples per
  second × `token_latency_scaling_factor` (69 in `mlperf.conf`), and the results table lists that
  product. A result stores the samples per second only; a Server point's bound is the end-to-end
  `target_latency` (20 s) at the percentile `mlperf.conf` sets (99).
- RedHat's v4.1-0058 llama2-70b-99.9 Offline and Server on 4 × L40S, whose `Software` is only
  `CUDA 12.2`: the system description (its `other_software_stack` names vLLM 0.5.1), the
  measurement JSON (fp16, no transformation) and the code README, which converts the model to FP8
  with AutoFP8 before deploying it.
"""

import json
from pathlib import Path

import pytest
from registry_helpers import V41_COMMIT, MlperfExcerpt, MlperfHarvest

from infermeter.registry.harvest.mlperf_setup import engine_from_setup
from infermeter.registry.store import read_result

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
EXCERPT = MlperfExcerpt(
    REPOSITORY_ROOT / "tests/data/harvest/mlperf-v4.1-added",
    "4.1",
    V41_COMMIT,
    None,
    "09f381252609fc8705f0fc93cfe39793b963c9f6af1db276b775af1731ecb2a9",
)


harvested = EXCERPT.shared_harvest("v41")


def test_the_excerpt_is_pinned_and_in_the_registry_byte_for_byte(harvested: MlperfHarvest) -> None:
    registry, report, results = harvested
    # By result ID: RedHat's v4.1-0058 Offline and Server are two results under one ID.
    assert sorted(results) == ["v4.1-0003", "v4.1-0047", "v4.1-0058"]
    EXCERPT.assert_pinned_and_committed(registry, report, 4)
    # Each run was filed as both gptj-99 and gptj-99.9 (the same log): one result each.
    assert [row for row, _ in report.skipped] == [
        "mlperf v4.1 v4.1-0003 gptj-99 Offline",
        "mlperf v4.1 v4.1-0047 gptj-99 Server",
    ]


def test_samples_per_second_are_stored_and_no_inferred_tokens(harvested: MlperfHarvest) -> None:
    _, _, results = harvested
    offline = results["v4.1-0003"]
    (point,) = offline.points
    assert point.load.arrival == "offline"
    # The log's "Samples per second: 101.239"; its 6985.51 tokens/s (inferred) are not stored.
    assert point.throughput.requests_per_s == 101.239
    assert point.throughput.output_tokens_per_s is None
    assert point.throughput.total_tokens_per_s is None
    assert "6985.51 tokens per second (inferred)" in offline.source.conditions
    identity = offline.identity
    assert (identity.gpu.id, identity.gpu.count, identity.model.id) == ("h100-nvl", 4, "gpt-j-6b")
    assert identity.model.quantization == "fp8"
    assert "configs/gptj/Offline/__init__.py sets use_fp8 = True" in offline.source.conditions


def test_a_server_run_is_bounded_end_to_end_at_the_percentile_its_conf_sets(
    harvested: MlperfHarvest,
) -> None:
    _, _, results = harvested
    (point,) = results["v4.1-0047"].points
    assert (point.load.arrival, point.load.request_rate) == ("poisson", 34.92)
    bound = point.load.rate_search
    assert bound is not None
    assert (bound.percentile, bound.e2e_ms, bound.ttft_ms, bound.tpot_ms) == (
        99.0,
        20000.0,
        None,
        None,
    )
    assert point.throughput.requests_per_s == 34.87
    assert point.throughput.output_tokens_per_s is None
    # "99.00 percentile latency (ns) : 8401601862": within the bound, as validation requires.
    assert point.e2e_ms is not None
    assert point.e2e_ms.p99 == 8401.601862
    assert point.ttft_ms is None


def test_an_engine_named_only_by_the_system_description(harvested: MlperfHarvest) -> None:
    """RedHat's Software is `CUDA 12.2`; its system description's other_software_stack says
    `"vllm": "0.5.1"`, and its README converts Llama 2 70B to FP8 with AutoFP8 although the
    measurement file declares fp16 with no transformation."""
    registry, _, _ = harvested
    found = {}
    for path in (registry / "registry/results/l40s").rglob("*.json"):
        result = read_result(path)
        found[result.source.mlperf.scenario] = result  # type: ignore[union-attr]
    assert sorted(found) == ["Offline", "Server"]
    server = found["Server"]
    identity = server.identity
    assert (identity.engine.name, identity.engine.version) == ("vllm", "0.5.1")
    assert (identity.gpu.id, identity.gpu.count, identity.model.quantization) == ("l40s", 4, "fp8")
    assert identity.model.dtype is None
    conditions = server.source.conditions
    assert "other_software_stack names vllm 0.5.1" in conditions
    assert "converts the model to FP8 with AutoFP8" in conditions
    (point,) = server.points
    assert (point.load.request_rate, point.ttft_ms is not None, point.tpot_ms is not None) == (
        5.0,
        True,
        True,
    )


@pytest.mark.parametrize(
    ("stack", "engine"),
    [
        ({"vllm": "0.14.1", "cuda_version": "12.2"}, ("vllm", "0.14.1")),
        # Two engines, or one without its release: the description does not say which ran.
        ({"vllm": "0.5.1", "sglang": "0.4.9"}, None),
        ({"vllm": "N/A"}, None),
    ],
)
def test_the_system_description_names_one_engine_with_its_release(
    stack: dict[str, str], engine: tuple[str, str] | None
) -> None:
    path = "closed/X/systems/S.json"
    found = engine_from_setup({path: json.dumps({"other_software_stack": stack})})
    assert (found[:2] if found else None) == engine
