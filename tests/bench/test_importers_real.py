"""bench.importers on real files the other tools wrote (tests/data/importers/real/README.md says
where each comes from and what was cut). Every figure is checked against the file's own number,
so a field mapped to the wrong place, a unit not converted or a key not read fails here.
"""

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from synthetic_run import IMPORTER_FILES

from infermeter.bench.cli.main import main
from infermeter.bench.importers import (
    ImportFacts,
    MissingFactError,
    ResultImportError,
    detect_format,
    import_files,
)
from infermeter.registry.result_reader import read_valid_result

REAL = IMPORTER_FILES / "real"
VLLM_QPS4 = REAL / "vllm-benchmark-serving-llama-3.3-70b-tp8-qps4.json"
VLLM_QPS_INF = REAL / "vllm-benchmark-serving-llama-3.3-70b-tp8-qps-inf.json"
VLLM_SWEEP = REAL / "vllm-bench-sweep-serve-0.25.1-opt-125m-concurrency2-run0.json"
AIPERF_08 = REAL / "aiperf-0.8.0-mock-server-concurrency4.json"
AIPERF_011 = REAL / "aiperf-0.11.0-qwen3-4b-rtx-pro-4500-concurrency16.json"
AIPERF_01 = REAL / "aiperf-0.1-records-gpt-oss-20b-concurrency100.json"
GUIDELLM_03 = REAL / "guidellm-0.3-benchmarks-stripped.json"
GUIDELLM_05 = REAL / "guidellm-0.5-qwen3-30b-a3b-xpu-tp4-synchronous.json"

# What the files do not say, as their sources describe the runs (README.md).
VLLM_FACTS = ImportFacts(
    gpu="a100-40gb-sxm",
    gpu_count=8,
    model_id="llama-3.3-70b-instruct",
    engine_version="0.8.3",
    command="python3 benchmarks/benchmark_serving.py --backend vllm "
    "--model meta-llama/Llama-3.3-70B-Instruct --dataset-name sharegpt --num-prompts 200",
    submitter="surajssd",
    timezone="UTC",
    input_len="1024",
    output_len="128",
    dataset="sharegpt",
    tensor_parallel_size=8,
)
AIPERF_FACTS = ImportFacts(
    gpu="h100-sxm",
    gpu_count=1,
    model_id="gpt-oss-20b",
    hf_repo="openai/gpt-oss-20b",
    engine_version="0.11.0",
    submitter="aiperf-maintainers",
    timezone="UTC",
    input_len="550",
    output_len="250",
)


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


# --- vLLM benchmarks/benchmark_serving.py ---------------------------------------------------


def test_real_vllm_poisson_run_maps_every_stated_figure() -> None:
    run = _json(VLLM_QPS4)
    (point,) = import_files([VLLM_QPS4], VLLM_FACTS).points
    assert (point.load.arrival, point.load.request_rate, point.load.concurrency) == (
        "poisson",
        run["request_rate"],
        None,
    )
    assert point.duration_s == run["duration"]
    # This vLLM wrote no `failed`; the per-request `errors` (all empty) give 0.
    assert (point.requests.completed, point.requests.failed) == (run["completed"], 0)
    assert (point.tokens.input, point.tokens.output) == (
        run["total_input_tokens"],
        run["total_output_tokens"],
    )
    assert point.throughput.requests_per_s == run["request_throughput"]
    assert point.throughput.output_tokens_per_s == run["output_throughput"]
    assert point.throughput.total_tokens_per_s == run["total_token_throughput"]
    for field, metric in (("ttft_ms", "ttft"), ("tpot_ms", "tpot"), ("itl_ms", "itl")):
        stats = getattr(point, field)
        assert stats is not None, field
        assert stats.mean == run[f"mean_{metric}_ms"]
        assert stats.p50 == run[f"median_{metric}_ms"]
        assert stats.p99 == run[f"p99_{metric}_ms"]
        # --metric-percentiles defaulted to 99: nothing else is stated, nothing is made up.
        assert (stats.p90, stats.p95, stats.max) == (None, None, None)
    assert point.ttft_ms is not None
    assert point.ttft_ms.n == run["completed"]
    assert point.e2e_ms is None  # e2el was not among --percentile-metrics


def test_real_vllm_ttfts_agree_with_the_stated_mean() -> None:
    # The per-request TTFTs (seconds) kept in the excerpt are the ones vLLM averaged.
    run = _json(VLLM_QPS4)
    assert sum(run["ttfts"]) / len(run["ttfts"]) * 1000 == pytest.approx(run["mean_ttft_ms"])


def test_real_vllm_runs_at_two_rates_make_one_result_with_the_window_of_both() -> None:
    first, unlimited = _json(VLLM_QPS4), _json(VLLM_QPS_INF)
    result = import_files([VLLM_QPS4, VLLM_QPS_INF], VLLM_FACTS)
    poisson, offline = result.points
    assert poisson.load.arrival == "poisson"
    # request_rate "inf" with no max_concurrency: every request sent at once.
    assert (offline.load.arrival, offline.load.request_rate) == ("offline", None)
    assert offline.ttft_ms is not None
    assert offline.ttft_ms.p99 == unlimited["p99_ttft_ms"]
    assert offline.throughput.output_tokens_per_s == unlimited["output_throughput"]
    # `date` is when each run ended (local time, here UTC); the first started `duration` before.
    started = dt.datetime.strptime(first["date"], "%Y%m%d-%H%M%S").replace(tzinfo=dt.UTC)
    assert result.source.started_at == started - dt.timedelta(seconds=first["duration"])
    ended = dt.datetime.strptime(unlimited["date"], "%Y%m%d-%H%M%S").replace(tzinfo=dt.UTC)
    assert result.source.finished_at == ended
    assert result.identity.model.hf_repo == first["model_id"]


def _sweep_facts(run: dict[str, Any]) -> ImportFacts:
    return VLLM_FACTS.model_copy(
        update={
            "gpu_count": 1,
            "tensor_parallel_size": 1,
            "model_id": "llama-3.2-1b-instruct",
            "hf_repo": None,
            "engine_version": "0.25.1",
            "command": "vllm bench sweep serve",
            "input_len": "32",
            "output_len": "16",
            "max_num_seqs": run["max_num_seqs"],
        }
    )


def test_real_vllm_025_sweep_run_maps_every_stated_figure() -> None:
    run = _json(VLLM_SWEEP)
    result = import_files([VLLM_SWEEP], _sweep_facts(run))
    (point,) = result.points
    assert (point.load.arrival, point.load.concurrency) == ("closed", run["max_concurrency"])
    assert (point.requests.completed, point.requests.failed, point.requests.sent) == (8, 0, 8)
    assert point.throughput.total_tokens_per_s == run["total_token_throughput"]
    for field, metric in (
        ("ttft_ms", "ttft"),
        ("tpot_ms", "tpot"),
        ("itl_ms", "itl"),
        ("e2e_ms", "e2el"),
    ):
        stats = getattr(point, field)
        assert stats is not None, field
        assert (stats.mean, stats.p50, stats.p99) == (
            run[f"mean_{metric}_ms"],
            run[f"median_{metric}_ms"],
            run[f"p99_{metric}_ms"],
        )
    assert point.e2e_ms is not None
    assert point.e2e_ms.n == run["completed"]
    assert result.identity.model.hf_repo == run["model_id"]
    assert result.identity.workload.api == "completions"  # endpoint_type "openai"


def test_real_vllm_run_imported_with_gpu_cpu_says_it_ran_on_the_cpu() -> None:
    """`--gpu cpu` is taken by bench import as by bench run (a result the registry keeps out of
    the GPU comparison): before, import refused it as an unknown GPU id."""
    facts = _sweep_facts(_json(VLLM_SWEEP)).model_copy(update={"gpu": "cpu"})
    result = import_files([VLLM_SWEEP], facts)
    assert (result.identity.gpu.id, result.identity.gpu.form_factor) == ("cpu", "cpu")
    host = result.source.host
    assert host.form_factor == "cpu"
    assert host.gpu_sku == "none: the engine ran on the CPU, as given with --gpu cpu"


def test_real_vllm_run_of_8_requests_is_too_few_for_the_p99_it_states() -> None:
    """The p99 of 8 requests is their maximum in disguise: the import says so, in the words
    `bench run` gives its own 8 requests, for the percentiles the file states (p99 alone, as
    --metric-percentiles defaults); the 200 requests of the qps4 file are enough."""
    (point,) = import_files([VLLM_SWEEP], _sweep_facts(_json(VLLM_SWEEP))).points
    assert [v.code for v in point.validity] == ["too_few_requests", "itl_per_chunk"]  # see below
    assert point.validity[0].message == "8 completed requests: p99 needs >= 100"
    (enough,) = import_files([VLLM_QPS4], VLLM_FACTS).points
    assert [v.code for v in enough.validity] == ["itl_per_chunk"]


def test_imported_itl_says_it_is_per_chunk_where_it_may_not_be_per_token() -> None:
    """vLLM's and AIPerf's clients time a gap per streamed chunk, bench run a gap per token:
    the import says so where the file's gaps are fewer than its tokens after each request's
    first, or where it does not say how many it timed."""

    def said(point: Any) -> list[str]:
        return [v.message for v in point.validity if v.code == "itl_per_chunk"]

    (aiperf,) = import_files([AIPERF_011], AIPERF_GPU_FACTS).points
    assert said(aiperf) == [
        "itl_ms is aiperf's gap per streamed chunk, not per token as bench run's: 532,759 gaps "
        "for the 535,510 tokens after each request's first, so a chunk of several tokens "
        "counts once"
    ]
    (vllm,) = import_files([VLLM_QPS4], VLLM_FACTS).points
    assert said(vllm)[0].endswith("the file does not say how many it timed, so whether a chunk "
                                  "held several tokens is not known")  # fmt: skip
    detailed = IMPORTER_FILES / "vllm-serve-detailed-goodput.json"
    limits = VLLM_FACTS.model_copy(update={"slo_ttft_ms": 200.0, "slo_tpot_ms": 30.0})
    (one_each,) = import_files([detailed], limits).points  # 441 gaps for 448 - 7 tokens
    assert said(one_each) == []


def _with_goodput(tmp_path: Path, goodput: float) -> tuple[Path, dict[str, Any]]:
    run = _json(VLLM_QPS4)
    assert "request_goodput:" in run  # the key as this vLLM wrote it
    assert "request_goodput" not in run
    run["request_goodput:"] = goodput
    path = tmp_path / "goodput.json"
    path.write_text(json.dumps(run), encoding="utf-8")
    return path, run


def test_real_vllm_goodput_under_its_misspelt_key_is_read(tmp_path: Path) -> None:
    path, run = _with_goodput(tmp_path, 2.5)
    with pytest.raises(MissingFactError) as caught:
        import_files([path], VLLM_FACTS)
    assert caught.value.option == "--slo-ttft-ms"
    with_slo = VLLM_FACTS.model_copy(update={"slo_ttft_ms": 200.0, "slo_tpot_ms": 50.0})
    (point,) = import_files([path], with_slo).points
    assert point.requests.accepted == round(2.5 * run["duration"])


def test_real_vllm_without_goodput_refuses_slo_flags() -> None:
    with pytest.raises(ResultImportError, match="no request_goodput"):
        import_files([VLLM_QPS4], VLLM_FACTS.model_copy(update={"slo_ttft_ms": 200.0}))


# --- AIPerf ---------------------------------------------------------------------------------


def test_real_aiperf_08_maps_every_stated_figure() -> None:
    export = _json(AIPERF_08)
    result = import_files([AIPERF_08], AIPERF_FACTS)
    (point,) = result.points
    assert (point.load.arrival, point.load.concurrency) == ("closed", 4)
    assert point.duration_s == export["benchmark_duration"]["avg"]  # unit "sec"
    assert (point.requests.completed, point.requests.failed, point.requests.sent) == (64, 0, 64)
    assert (point.tokens.input, point.tokens.output) == (
        export["total_isl"]["avg"],
        export["total_osl"]["avg"],
    )
    assert point.throughput.requests_per_s == export["request_throughput"]["avg"]
    assert point.throughput.output_tokens_per_s == export["output_token_throughput"]["avg"]
    assert point.throughput.total_tokens_per_s == export["total_token_throughput"]["avg"]
    latency = export["request_latency"]
    assert point.e2e_ms is not None
    for name, key in (("mean", "avg"), ("p50", "p50"), ("p90", "p90"), ("p99", "p99")):
        assert getattr(point.e2e_ms, name) == pytest.approx(latency[key], abs=1e-9), name
    assert point.e2e_ms.max == latency["max"]
    assert point.e2e_ms.n is None  # AIPerf 0.8 wrote no `count`
    assert point.ttft_ms is None  # a non-streaming run has no first token
    assert result.source.tool.version == export["aiperf_version"]
    assert result.source.command is not None
    assert result.source.command == export["input_config"]["artifacts"]["cli_command"]  # as written
    assert "--concurrency 4" in result.source.command
    assert result.identity.workload.seed == export["input_config"]["random_seed"]
    assert result.identity.workload.api == "chat"
    assert result.source.started_at.isoformat() == "2026-04-30T09:16:38.957302+00:00"


# RTX PRO 4500 and Qwen3-4B are not in the catalogs: GPU and model facts are stand-ins.
AIPERF_GPU_FACTS = AIPERF_FACTS.model_copy(
    update={
        "gpu": "rtx-pro-6000",
        "model_id": "qwen3-8b",
        "hf_repo": "Qwen/Qwen3-4B-Instruct-2507-FP8",
        "engine_version": "0.29.0",
        "submitter": "akamaslabs",
        "input_len": "1024",
        "output_len": "256",
        "dataset": "sharegpt",
        "max_model_len": 4096,
        "max_num_seqs": 256,
    }
)


def _assert_latencies_are_aiperfs(
    point: Any, stated: dict[str, Any], tags: dict[str, str], percentiles: tuple[str, ...]
) -> None:
    """Each latency of the point (field → AIPerf's tag) is the block AIPerf stated under that tag:
    its mean the block's avg, each of the percentiles, its max, and its n the block's count."""
    for field, tag in tags.items():
        stats, block = getattr(point, field), stated[tag]
        assert stats is not None, field
        for name, key in (("mean", "avg"), *((p, p) for p in percentiles)):
            assert getattr(stats, name) == pytest.approx(block[key], abs=1e-9), (field, name)
        assert stats.max == pytest.approx(block["max"], abs=1e-9)
        assert stats.n == block["count"]


def test_real_aiperf_011_gpu_run_maps_every_stated_figure() -> None:
    export = _json(AIPERF_011)
    result = import_files([AIPERF_011], AIPERF_GPU_FACTS)
    (point,) = result.points
    assert (point.load.arrival, point.load.concurrency) == ("closed", 16)
    assert point.duration_s == export["benchmark_duration"]["avg"]
    assert (point.requests.completed, point.requests.failed) == (2044, 0)
    # Goodput under the limits the file states (input_config.slos), no flags needed.
    assert point.requests.accepted == export["good_request_count"]["avg"]
    assert (result.slo.ttft_ms, result.slo.tpot_ms, result.slo.e2e_ms) == (1500.0, 300.0, None)
    assert point.tokens.input is None  # an inputs_json dataset: AIPerf wrote no total_isl
    assert point.tokens.output == export["total_osl"]["avg"]
    assert point.throughput.requests_per_s == export["request_throughput"]["avg"]
    assert point.throughput.output_tokens_per_s == export["output_token_throughput"]["avg"]
    tags = {
        "ttft_ms": "time_to_first_token",
        "tpot_ms": "inter_token_latency",
        "itl_ms": "inter_chunk_latency",
        "e2e_ms": "request_latency",
    }
    _assert_latencies_are_aiperfs(point, export, tags, ("p50", "p90", "p99"))
    assert result.source.command is not None
    # quoted as written
    assert result.source.command.startswith("aiperf profile --model 'qwen3-4b' --tokenizer")
    assert "--benchmark-duration 300" in result.source.command
    assert result.identity.workload.seed == export["run_info"]["random_seed"]
    assert result.source.tool.version == "0.11.0"


def test_real_aiperf_slo_flags_must_agree_with_the_stated_goodput_limits() -> None:
    same = AIPERF_GPU_FACTS.model_copy(update={"slo_ttft_ms": 1500.0, "slo_tpot_ms": 300.0})
    (point,) = import_files([AIPERF_011], same).points
    assert point.requests.accepted == 2044
    for wrong in ({"slo_ttft_ms": 1000.0}, {"slo_e2e_ms": 5000.0}):
        with pytest.raises(ResultImportError, match="contradicts") as caught:
            import_files([AIPERF_011], AIPERF_GPU_FACTS.model_copy(update=dict(**wrong)))
        assert caught.value.option == "--" + next(iter(wrong)).replace("_", "-")


def test_real_aiperf_01_records_layout_is_detected_and_read() -> None:
    export = _json(AIPERF_01)
    records = export["records"]
    assert "time_to_first_token" not in records  # AIPerf 0.1 tags TTFT `ttft`
    assert detect_format(AIPERF_01) == "aiperf"
    result = import_files([AIPERF_01], AIPERF_FACTS.model_copy(update={"tool_version": "0.1.1"}))
    (point,) = result.points
    assert (point.load.arrival, point.load.concurrency) == ("closed", 100)
    assert point.duration_s == records["benchmark_duration"]["avg"]
    # 11 requests cancelled on purpose (--request-cancellation-rate 10) count as failed.
    assert (point.requests.completed, point.requests.failed, point.requests.sent) == (89, 11, 100)
    assert (point.tokens.input, point.tokens.output) == (48950, 21624)
    assert point.throughput.output_tokens_per_s == records["output_token_throughput"]["avg"]
    tags = {
        "ttft_ms": "ttft",
        "e2e_ms": "request_latency",
        "tpot_ms": "inter_token_latency",
        "itl_ms": "inter_chunk_latency",
    }
    _assert_latencies_are_aiperfs(point, records, tags, ("p50", "p95", "p99"))
    assert result.source.command == export["input_config"]["cli_command"]  # quoted as written
    assert result.identity.model.hf_repo == "openai/gpt-oss-20b"


# --- GuideLLM -------------------------------------------------------------------------------

# The run was on Intel XPUs, which the GPU catalog does not list: the GPU fact is a stand-in.
GUIDELLM_FACTS = ImportFacts(
    gpu="h100-sxm",
    gpu_count=4,
    model_id="qwen3-30b-a3b",
    engine_version="0.14.0",
    command="guidellm benchmark --target http://0.0.0.0:8000 --profile synchronous "
    "--max-requests 30 --max-seconds 900",
    submitter="danielkorat",
    input_len="1024",
    output_len="1024",
    dataset="aime_2024",
    tensor_parallel_size=4,
    quantization="fp8",
)


def _successful(benchmark: dict[str, Any], metric: str) -> dict[str, Any]:
    summary: dict[str, Any] = benchmark["metrics"][metric]["successful"]
    return summary


def test_real_guidellm_05_report_maps_every_stated_figure() -> None:
    report = _json(GUIDELLM_05)
    (benchmark,) = report["benchmarks"]
    result = import_files([GUIDELLM_05], GUIDELLM_FACTS)
    (point,) = result.points
    assert (point.load.arrival, point.load.concurrency) == ("closed", 1)  # synchronous
    assert point.duration_s == benchmark["duration"]
    totals = benchmark["metrics"]["request_totals"]
    assert (point.requests.completed, point.requests.failed) == (
        totals["successful"],
        totals["errored"],
    )
    assert point.tokens.input == round(_successful(benchmark, "prompt_token_count")["total_sum"])
    assert point.tokens.output == _successful(benchmark, "output_token_count")["total_sum"]
    assert point.throughput.requests_per_s == _successful(benchmark, "requests_per_second")["mean"]
    assert (
        point.throughput.output_tokens_per_s
        == _successful(benchmark, "output_tokens_per_second")["mean"]
    )
    assert (
        point.throughput.total_tokens_per_s == _successful(benchmark, "tokens_per_second")["mean"]
    )
    for field, metric, scale in (
        ("ttft_ms", "time_to_first_token_ms", 1.0),
        ("e2e_ms", "request_latency", 1000.0),  # GuideLLM states it in seconds
    ):
        stats, summary = getattr(point, field), _successful(benchmark, metric)
        assert stats is not None, field
        assert stats.n == summary["count"]
        assert stats.mean == pytest.approx(summary["mean"] * scale, abs=1e-9)
        for name in ("p50", "p90", "p95", "p99"):
            expected = summary["percentiles"][name] * scale
            assert getattr(stats, name) == pytest.approx(expected, abs=1e-9), (field, name)
        assert stats.max == pytest.approx(summary["max"] * scale, abs=1e-9)
    itl = _successful(benchmark, "inter_token_latency_ms")
    assert point.itl_ms is not None
    assert (point.itl_ms.n, point.itl_ms.p99) == (itl["count"], None)  # percentiles not of gaps
    assert point.itl_ms.mean == pytest.approx(itl["mean"], abs=1e-9)
    assert result.source.tool.version == report["metadata"]["guidellm_version"]
    assert result.source.started_at.timestamp() == pytest.approx(benchmark["start_time"])
    assert result.source.finished_at.timestamp() == pytest.approx(benchmark["end_time"])
    assert result.identity.model.hf_repo == "Qwen/Qwen3-30B-A3B"
    # Report version 1 names the request format in `args`, not in the backend's config.
    assert "request_format" not in benchmark["config"]["backend"]
    assert result.identity.workload.api == "completions"


def test_real_guidellm_03_report_is_refused_naming_the_version() -> None:
    # GuideLLM 0.3 wrote no metadata.version and `run_stats`; its layout is not read.
    assert "metadata" not in _json(GUIDELLM_03)
    with pytest.raises(ResultImportError) as caught:
        import_files([GUIDELLM_03], AIPERF_FACTS)
    message = caught.value.one_line()
    assert str(GUIDELLM_03) in message
    assert "version None is not supported" in message
    assert "\n" not in message


# --- the command ----------------------------------------------------------------------------


def test_real_cli_bench_import_vllm_runs_writes_a_valid_result(tmp_path: Path) -> None:
    facts = [
        "--gpu", "a100-40gb-sxm", "--gpu-count", "8", "--tensor-parallel-size", "8",
        "--model-id", "llama-3.3-70b-instruct", "--engine-version", "0.8.3",
        "--command", VLLM_FACTS.command or "", "--submitter", "surajssd", "--timezone", "UTC",
        # ShareGPT prompts: the dataset's lengths (42,449 output tokens from 200 requests does
        # not fit a fixed 128, and bench import refuses a result the gate would reject).
        "--input-len", "dataset", "--output-len", "dataset",
    ]  # fmt: skip
    outcome = CliRunner().invoke(
        main,
        ["bench", "import", str(VLLM_QPS4), str(VLLM_QPS_INF), *facts,
         "--output", str(tmp_path), "--json"],
    )  # fmt: skip
    assert outcome.exit_code == 0, outcome.output
    report = json.loads(outcome.output)
    assert report["points"] == 2
    path = Path(report["path"])
    written = read_valid_result(path, path.name)
    assert [point.ttft_ms.p99 for point in written.points if point.ttft_ms] == [
        _json(VLLM_QPS4)["p99_ttft_ms"],
        _json(VLLM_QPS_INF)["p99_ttft_ms"],
    ]


def test_real_vllm_run_without_completed_counts_it_from_its_errors_or_is_refused(
    tmp_path: Path,
) -> None:
    """It imported with a failed count alone: no completed, no latencies' n, and so no
    too-few-requests verdict on the sweep's 8 requests."""
    run = _json(VLLM_QPS4)
    path = tmp_path / "qps4.json"
    path.write_text(json.dumps({k: v for k, v in run.items() if k != "completed"}))
    (point,) = import_files([path], VLLM_FACTS).points
    assert (point.requests.completed, point.requests.failed) == (run["completed"], 0)
    assert point.ttft_ms is not None
    assert point.ttft_ms.n == run["completed"]
    sweep = _json(VLLM_SWEEP)
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps({k: v for k, v in sweep.items() if k != "completed"}))
    with pytest.raises(ResultImportError) as refused:
        import_files([path], _sweep_facts(sweep))
    assert str(refused.value) == (
        f"{path}: completed: missing (vllm bench serve writes it in every result; "
        "--save-detailed's errors list would give it too), so the latencies' n is unknown"
    )
