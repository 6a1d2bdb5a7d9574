"""`registry harvest inferencex` on a saved response of the InferenceX API, read whole.

tests/data/harvest/inferencex-api/benchmarks.json is
`packages/app/cypress/fixtures/api/benchmarks.json` of SemiAnalysisAI/InferenceX-app as commit
528c4146 (pull request 458, 2026-06-14) left it, byte for byte: the response of
https://inferencex.semianalysis.com/api/v1/benchmarks?model=DeepSeek-R1-0528 that the app's
`scripts/capture-cypress-fixtures.ts` saved, keeping at most 5 concurrencies of each
hardware/framework/precision/ISL/OSL. Its bytes were read from the fork vngcloud/InferenceX-app
(7fe6d62a), which holds that commit; their sha256 is the one the app's own fixture manifest
(`packages/app/cypress/fixtures/api/_manifest.json`, SemiAnalysisAI/InferenceX-app 00550b64)
records for `benchmarks`.
"""

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from registry_checkout import empty_registry
from registry_helpers import REPOSITORY_ROOT, assert_committed

from infermeter.bench.cli.main import main
from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.harvest.inferencex import harvest_inferencex
from infermeter.registry.harvest.options import HarvestOptions
from infermeter.registry.harvest.outcome import HarvestReport
from infermeter.registry.harvest.sources import FileCitation
from infermeter.registry.models import Result
from infermeter.registry.store import read_result

RESPONSE = REPOSITORY_ROOT / "tests/data/harvest/inferencex-api/benchmarks.json"
MANIFEST_SHA256 = "f46823a76cb63248705329f327e1494df02b4dfa4df0898b7ee084c75c20bd52"
COMMIT = "528c4146b8f502fcbce8df7870a935a970cbae25"
URL = (
    f"https://github.com/SemiAnalysisAI/InferenceX-app/blob/{COMMIT}/"
    "packages/app/cypress/fixtures/api/benchmarks.json"
)
READ_FROM = "the fork vngcloud/InferenceX-app at 7fe6d62ad57a3df061be692e86578c7111d880c7"
RETRIEVED = "2026-12-02"
CITED = FileCitation(url=URL, commit=COMMIT, read_from=READ_FROM)


def _harvest(registry: Path, source: Path = RESPONSE, today: str = RETRIEVED) -> HarvestReport:
    return harvest_inferencex(source, HarvestOptions(registry, today=today), cited=CITED)


@pytest.fixture(scope="module")
def harvested(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, HarvestReport]:
    registry = empty_registry(tmp_path_factory.mktemp("inferencex-api") / "checkout")
    return registry, _harvest(registry)


def _result(harvested: tuple[Path, HarvestReport], group: str) -> Result:
    registry, report = harvested
    found = [read_result(registry / path) for path in report.added]
    (result,) = [r for r in found if r.source.conditions.endswith(f"[group: {group}]")]  # type: ignore[union-attr]
    return result


def _rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(RESPONSE.read_text(encoding="utf-8"))
    return rows


def test_the_pinned_response_is_the_one_semianalysis_committed() -> None:
    assert hashlib.sha256(RESPONSE.read_bytes()).hexdigest() == MANIFEST_SHA256
    assert len(_rows()) == 435


def test_the_registry_holds_every_result_of_the_response(
    harvested: tuple[Path, HarvestReport],
) -> None:
    registry, report = harvested
    assert (len(report.added), len(report.skipped)) == (282, 20)
    assert_committed(registry, report.added)
    reasons = {reason.split(" is ")[0] for _, reason in report.skipped}
    assert reasons == {
        "no image recorded (runs before 2025-12-08): the engine version",
        "202 output tok/s at concurrency 512",  # the row its own latencies refuse (below)
    }


def test_twice_changes_nothing(harvested: tuple[Path, HarvestReport]) -> None:
    registry, first = harvested
    again = _harvest(registry, today="2027-01-01")
    assert (again.added, again.changed, sorted(again.unchanged)) == ([], [], sorted(first.added))


def test_a_single_node_row_counts_its_tp_not_tp_times_ep(
    harvested: tuple[Path, HarvestReport],
) -> None:
    # Rows 135-138 of the response: B200, SGLang, FP4, TP 8 and EP 8 on one node, which the
    # app's loader stores as 64 GPUs (tp × ep); process_result.py divided by the 8 of TP.
    rows = _rows()
    assert (rows[138]["num_decode_gpu"], rows[138]["decode_tp"], rows[138]["conc"]) == (64, 8, 64)
    result = _result(
        harvested,
        "inferencex run 26306422380/1 b200 sglang dsr1 fp4 none disagg=False tp=8 ep=8 "
        "dpa=False gpus=64+64 single_turn 1024/1024",
    )
    assert result.identity.gpu.count == 8
    assert result.identity.serving.expert_parallel_size == 8
    top = result.points[-1]
    assert top.load.concurrency == 64
    per_gpu = rows[138]["metrics"]["output_tput_per_gpu"]
    assert top.throughput.output_tokens_per_s == pytest.approx(per_gpu * 8)
    assert top.ttft_ms.p99 == pytest.approx(rows[138]["metrics"]["p99_ttft"] * 1000)  # type: ignore[union-attr]
    assert top.itl_ms is None  # measured between streamed chunks, not tokens


def test_fp4_is_the_vendors_format_and_trt_is_tensorrt_llm(
    harvested: tuple[Path, HarvestReport],
) -> None:
    registry, report = harvested
    results = [read_result(registry / path) for path in report.added]
    formats = {
        (r.identity.gpu.id, r.identity.model.quantization)
        for r in results
        if r.identity.model.quantization != "fp8"
    }
    assert {gpu for gpu, fmt in formats if fmt == "mxfp4"} == {"mi355x"}
    assert "mi355x" not in {gpu for gpu, fmt in formats if fmt == "nvfp4"}
    engines = {r.identity.engine.name for r in results}
    assert {"tensorrt-llm", "dynamo-tensorrt-llm"} <= engines
    assert "trt" not in engines
    assert {r.identity.model.hf_repo for r in results} == {"deepseek-ai/DeepSeek-R1-0528"}


def test_a_disaggregated_run_counts_both_pools_and_is_official(
    harvested: tuple[Path, HarvestReport],
) -> None:
    result = _result(
        harvested,
        "inferencex run 21640109636/1 gb300 dynamo-trt dsr1 fp4 none disagg=True tp=32 ep=32 "
        "dpa=True gpus=2+32 single_turn 1024/8192",
    )
    assert result.identity.gpu.count == 34
    pools = result.identity.serving.disaggregated
    assert pools is not None
    assert (pools.prefill_gpus, pools.decode_gpus) == (2, 32)
    # Row 262: output tokens/s per GPU divided by the 32 decode GPUs.
    per_gpu = _rows()[262]["metrics"]["output_tput_per_gpu"]
    point = {p.load.concurrency: p for p in result.points}[1024]
    assert point.throughput.output_tokens_per_s == pytest.approx(per_gpu * 32)
    source = result.source
    assert source.unofficial is False  # type: ignore[union-attr]
    assert source.url == "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/21640109636"  # type: ignore[union-attr]
    assert source.revision is None  # type: ignore[union-attr]
    assert f"{URL} at commit {COMMIT}" in source.conditions  # type: ignore[union-attr]
    assert f"bytes read from {READ_FROM}." in source.conditions  # type: ignore[union-attr]


def _littles_law_ratio(result: Result, concurrency: int) -> float:
    """Stored output tokens/s against what the point's own latencies give: `concurrency`
    requests in flight, each its mean output length (uniform lengths) per mean E2E."""
    point = {p.load.concurrency: p for p in result.points}[concurrency]
    lengths = result.identity.workload.output_len
    mean_output = (lengths.min + lengths.max) / 2  # type: ignore[union-attr]
    e2e_s = point.e2e_ms.mean / 1000  # type: ignore[union-attr]
    return point.throughput.output_tokens_per_s / (concurrency * mean_output / e2e_s)


def test_every_throughput_agrees_with_its_own_latencies_and_the_row_that_does_not_is_skipped(
    harvested: tuple[Path, HarvestReport],
) -> None:
    # Output tokens/s per GPU × the GPUs it was divided by (decode GPUs when disaggregated)
    # must match concurrency × output length ÷ mean E2E of the same row: a wrong divisor moves
    # the ratio to decode GPUs ÷ all GPUs (0.2 to 0.97 here). All 406 points harvested agree
    # within 0.87 to 1.02.
    registry, report = harvested
    ratios = [
        _littles_law_ratio(result, point.load.concurrency or 0)
        for path in report.added
        for result in [read_result(registry / path)]
        for point in result.points
    ]
    assert len(ratios) == 406
    assert min(ratios) >= 0.85
    assert max(ratios) <= 1.05
    # The one row skipped is what InferenceX published, read right: run 26829715287 (ATOM,
    # FP8, MTP, 8 × MI355X, 1k → 1k) states 25.28 output tok/s per GPU at 512 users, while its
    # own mean E2E of 55.6 s gives some 8,500 tok/s in all (42 times more). InferenceX counts
    # no failed requests: the run lost requests it does not count.
    (row,) = [r for r in _rows() if "/26829715287/" in r["run_url"] and r["conc"] == 512]
    assert row["metrics"]["output_tput_per_gpu"] == pytest.approx(25.2798, abs=1e-4)
    key = f"inferencex result {_rows().index(row)}"
    (reason,) = [reason for skipped, reason in report.skipped if skipped == key]
    assert reason.startswith("202 output tok/s at concurrency 512 is 0.0238× the 8486 tok/s ")
    assert reason.endswith("requests the source does not count failed or stalled")
    # The other concurrencies of its configuration in that run still make their result.
    result = _result(
        harvested,
        "inferencex run 26829715287/1 mi355x atom dsr1 fp8 mtp disagg=False tp=8 ep=1 "
        "dpa=False gpus=8+8 single_turn 1024/1024",
    )
    assert [point.load.concurrency for point in result.points] == [8, 32]


def test_a_disaggregated_row_without_pools_is_skipped(registry: Path, tmp_path: Path) -> None:
    # Row 150: GB200 "disaggregated" on one node, both GPU counts 36 (the TP); given an image
    # so that the pools are what is judged.
    row = _rows()[150] | {"image": "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.5.1-rc0.pre3"}
    assert (row["disagg"], row["is_multinode"], row["num_prefill_gpu"]) == (True, False, 36)
    response = tmp_path / "one-row.json"
    response.write_text(json.dumps([row]), encoding="utf-8")
    report = _harvest(registry, response)
    assert not report.added
    [(_, reason)] = report.skipped
    assert reason.startswith("disaggregated but not multinode: the prefill and decode GPU pools")


def test_a_row_without_a_run_attempt_is_skipped(registry: Path, tmp_path: Path) -> None:
    rows = _rows()[134:136]
    rows[0] = rows[0] | {"run_url": None}
    response = tmp_path / "two-rows.json"
    response.write_text(json.dumps(rows), encoding="utf-8")
    report = _harvest(registry, response)
    assert len(report.added) == 1
    assert report.skipped == [
        ("inferencex api row 0", "run_url None names no workflow run attempt")
    ]


def test_bad_input_is_one_error(registry: Path, tmp_path: Path) -> None:
    with pytest.raises(HarvestError, match="is a file; name where it is published with --url"):
        harvest_inferencex(RESPONSE, HarvestOptions(registry), cited=FileCitation(commit=COMMIT))
    with pytest.raises(HarvestError, match="--commit, --url and --read-from cite a file"):
        harvest_inferencex(tmp_path, HarvestOptions(registry), cited=FileCitation(commit=COMMIT))
    response = tmp_path / "response.json"
    response.write_text('{"error": "Unknown model"}', encoding="utf-8")
    with pytest.raises(HarvestError, match="expected a JSON array of /api/v1/benchmarks rows"):
        _harvest(registry, response)
    response.write_text(json.dumps([{k: v for k, v in _rows()[0].items() if k != "conc"}]))
    with pytest.raises(HarvestError, match=r"row 0: no 'conc'; not an API row"):
        _harvest(registry, response)


def test_cli(registry: Path) -> None:
    arguments = ["registry", "harvest", "inferencex", "--from", str(RESPONSE)]
    cited = ["--commit", COMMIT, "--url", URL, "--read-from", READ_FROM]
    outcome = CliRunner().invoke(
        main, [*arguments, *cited, "--registry", str(registry), "--dry-run"]
    )
    assert outcome.exit_code == 0, outcome.output
    assert outcome.output.splitlines()[-1] == "282 added, 0 changed, 0 unchanged, 20 skipped"
    uncited = CliRunner().invoke(main, [*arguments, "--registry", str(registry)])
    assert uncited.exit_code == 1
    assert uncited.output.strip().splitlines() == [
        f"Error: --from: {RESPONSE} is a file; name where it is published with --url and the "
        "commit it was taken from with --commit"
    ]
