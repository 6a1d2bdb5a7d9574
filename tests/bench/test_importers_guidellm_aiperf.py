"""bench.importers: GuideLLM and AIPerf reports become valid registry results; formats detected.

The GuideLLM and AIPerf files in tests/data/importers/ hold synthetic numbers in each tool's
exact layout (see the README there for the source files followed).
"""

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator
from synthetic_run import IMPORTER_FILES, SYNTHETIC_FACTS, SYNTHETIC_VLLM_FILE

from infermeter.bench.cli.main import main
from infermeter.bench.importers import (
    AIPERF_TOOL,
    FORMATS,
    MissingFactError,
    ResultImportError,
    detect_format,
    import_files,
)
from infermeter.registry.models import Result
from infermeter.registry.models.provenance import GUIDELLM_TOOL
from infermeter.registry.schemas import load_schema
from infermeter.registry.store import dumps_result, write_result
from infermeter.registry.validate import validate_paths

import_guidellm = FORMATS["guidellm"].import_files
import_aiperf = FORMATS["aiperf"].import_files
SWEEP = IMPORTER_FILES / "guidellm-sweep-poisson.json"
CONCURRENT = IMPORTER_FILES / "guidellm-concurrent16.json"
AIPERF = IMPORTER_FILES / "aiperf-concurrency32.json"
AIPERF_LEGACY = IMPORTER_FILES / "aiperf-v0.2-request-rate8.json"

GUIDELLM_FACTS = SYNTHETIC_FACTS.model_copy(
    update={"command": "guidellm benchmark --target http://localhost:8000 --profile sweep"}
)
AIPERF_FACTS = SYNTHETIC_FACTS.model_copy(update={"timezone": "UTC"})
LEGACY_FACTS = AIPERF_FACTS.model_copy(update={"tool_version": "0.1.1"})
CASES = {
    "guidellm-sweep": (SWEEP, GUIDELLM_FACTS),
    "guidellm-concurrent": (CONCURRENT, GUIDELLM_FACTS),
    "aiperf": (AIPERF, AIPERF_FACTS),
    "aiperf-legacy": (AIPERF_LEGACY, LEGACY_FACTS),
}
CLI_FACTS = [
    "--gpu", "h100-sxm", "--gpu-count", "1", "--model-id", "llama-3.1-8b-instruct",
    "--engine-version", "0.9.1", "--submitter", "example-contributor",
    "--input-len", "1024", "--output-len", "128", "--timezone", "UTC",
]  # fmt: skip


def _json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _write(tmp_path: Path, data: Any, name: str = "report.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _successful(benchmark: dict[str, Any], metric: str) -> dict[str, Any]:
    summary: dict[str, Any] = benchmark["metrics"][metric]["successful"]
    return summary


# --- every format yields a valid result ---------------------------------------------------------


@pytest.mark.parametrize("case", sorted(CASES))
def test_import_result_passes_model_schema_and_registry_validation(
    case: str, tmp_path: Path
) -> None:
    path, facts = CASES[case]
    result = import_files([path], facts)
    data = json.loads(dumps_result(result))
    schema = load_schema("result.schema.json")
    errors = [f"{e.json_path}: {e.message}" for e in Draft202012Validator(schema).iter_errors(data)]
    assert errors == []
    assert Result.model_validate(data) == result
    (tmp_path / "registry" / "results").mkdir(parents=True)
    written = write_result(result, tmp_path)
    report = validate_paths([written], registry_root=tmp_path)
    assert report.ok, [str(problem) for problem in report.problems]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (SWEEP, "guidellm"),
        (CONCURRENT, "guidellm"),
        (AIPERF, "aiperf"),
        (AIPERF_LEGACY, "aiperf"),
        (SYNTHETIC_VLLM_FILE, "vllm"),
        (IMPORTER_FILES / "vllm-serve-append-rates.json", "vllm"),
        (IMPORTER_FILES / "vllm-serve-detailed-goodput.json", "vllm"),
    ],
)
def test_detect_format_picks_the_tool_by_shape(path: Path, expected: str) -> None:
    assert detect_format(path) == expected


def test_import_files_of_different_formats_are_refused() -> None:
    with pytest.raises(ResultImportError, match="different formats"):
        import_files([SWEEP, AIPERF], AIPERF_FACTS)


@pytest.mark.parametrize(
    ("path", "named", "expected"),
    [
        (
            SWEEP,
            "aiperf",
            "an AIPerf profile_export_aiperf.json (an object of metric blocks with `unit`)",
        ),
        (
            AIPERF,
            "guidellm",
            "a GuideLLM benchmarks.json report (an object with `metadata` and `benchmarks`)",
        ),
        (
            SWEEP,
            "vllm",
            "a `vllm bench serve --save-result` file (JSON objects with `output_throughput`)",
        ),
    ],
)
def test_import_named_format_that_does_not_match_names_the_file(
    path: Path, named: str, expected: str
) -> None:
    with pytest.raises(ResultImportError) as caught:
        import_files([path], AIPERF_FACTS, named)
    assert caught.value.one_line() == f"{path}: not {expected}"


# --- GuideLLM ----------------------------------------------------------------------------------


def test_guidellm_sweep_benchmarks_become_points_with_their_loads() -> None:
    result = import_guidellm([SWEEP], GUIDELLM_FACTS)
    loads = [(p.load.arrival, p.load.concurrency, p.load.request_rate) for p in result.points]
    assert loads == [
        ("closed", 1, None),
        ("closed", 512, None),
        ("poisson", 512, 4.0),
        ("poisson", 512, 12.0),
    ]
    assert result.source.tool.name == GUIDELLM_TOOL
    assert result.source.tool.version == "0.7.3"
    assert result.identity.model.hf_repo == "meta-llama/Llama-3.1-8B-Instruct"
    assert result.identity.workload.api == "chat"
    report = _json(SWEEP)
    first, last = report["benchmarks"][0], report["benchmarks"][-1]
    assert result.source.started_at.timestamp() == pytest.approx(first["start_time"])
    assert result.source.finished_at.timestamp() == pytest.approx(last["end_time"])


def test_guidellm_maps_successful_statistics_and_converts_seconds() -> None:
    result = import_guidellm([SWEEP], GUIDELLM_FACTS)
    benchmark = _json(SWEEP)["benchmarks"][3]
    point = result.points[3]
    ttft = _successful(benchmark, "time_to_first_token_ms")
    assert point.ttft_ms is not None
    assert point.ttft_ms.mean == ttft["mean"] == 57.0913
    assert point.ttft_ms.p50 == ttft["percentiles"]["p50"]
    assert point.ttft_ms.p90 == ttft["percentiles"]["p90"]
    assert point.ttft_ms.p99 == ttft["percentiles"]["p99"] == 100.424
    assert point.ttft_ms.max == ttft["max"]
    assert point.ttft_ms.n == ttft["count"] == 1420
    # request_latency is in seconds: 1.6046 s → 1604.6 ms, exactly.
    latency = _successful(benchmark, "request_latency")
    assert latency["percentiles"]["p99"] == 1.6046
    assert point.e2e_ms is not None
    assert point.e2e_ms.p99 == 1604.6
    assert point.e2e_ms.mean == round(latency["mean"] * 1000, 9)
    assert point.e2e_ms.n == latency["count"]
    # ITL: the gap-weighted mean and the gap count only; no per-request TPOT.
    itl = _successful(benchmark, "inter_token_latency_ms")
    assert point.itl_ms is not None
    assert (point.itl_ms.mean, point.itl_ms.n) == (itl["mean"], itl["count"])
    assert (point.itl_ms.p50, point.itl_ms.p99, point.itl_ms.max) == (None, None, None)
    assert itl["count"] == 1420 * 127
    assert point.tpot_ms is None


def test_guidellm_counts_tokens_and_throughput() -> None:
    result = import_guidellm([CONCURRENT], GUIDELLM_FACTS)
    benchmark = _json(CONCURRENT)["benchmarks"][0]
    (point,) = result.points
    assert (point.load.arrival, point.load.concurrency) == ("closed", 16)
    assert (point.requests.completed, point.requests.failed, point.requests.sent) == (799, 1, 800)
    assert point.requests.accepted == 799
    assert point.tokens.input == 799 * 1024
    assert point.tokens.output == 799 * 128 == point.tokens.accepted_output
    metrics = benchmark["metrics"]
    assert point.throughput.requests_per_s == metrics["requests_per_second"]["successful"]["mean"]
    assert (
        point.throughput.output_tokens_per_s
        == metrics["output_tokens_per_second"]["successful"]["mean"]
    )
    assert point.throughput.total_tokens_per_s == metrics["tokens_per_second"]["successful"]["mean"]
    assert point.duration_s == benchmark["duration"]
    assert [v.code for v in point.validity] == ["incomplete-requests"]
    assert "16 requests" in point.validity[0].message


def test_guidellm_needs_no_timezone_but_a_command() -> None:
    result = import_guidellm([CONCURRENT], GUIDELLM_FACTS.model_copy(update={"timezone": None}))
    assert result.source.started_at.isoformat() == "2026-01-01T11:00:00+00:00"
    with pytest.raises(MissingFactError) as caught:
        import_guidellm([CONCURRENT], GUIDELLM_FACTS.model_copy(update={"command": None}))
    assert caught.value.option == "--command"
    assert "guidellm benchmark" in caught.value.one_line()


@pytest.mark.parametrize(
    ("strategy", "message"),
    [
        ({"type_": "constant", "rate": 0}, "a constant strategy needs a rate above 0"),
        ({"type_": "throughput", "max_concurrency": None}, "without max_concurrency"),
        ({"type_": "replay"}, "unknown strategy 'replay'"),
        ({"type_": "concurrent", "streams": 0}, "streams"),
        ({"type_": "poisson", "rate": "fast"}, "rate: expected a number"),
    ],
)
def test_guidellm_unimportable_strategies_are_refused(
    tmp_path: Path, strategy: dict[str, Any], message: str
) -> None:
    report = _json(CONCURRENT)
    report["benchmarks"][0]["config"]["strategy"] = strategy
    with pytest.raises(ResultImportError, match=message) as caught:
        import_guidellm([_write(tmp_path, report)], GUIDELLM_FACTS)
    assert "benchmarks[0].config.strategy" in str(caught.value)


@pytest.mark.parametrize("kind", ["constant", "poisson"])
def test_guidellm_rate_strategies_keep_their_arrival(tmp_path: Path, kind: str) -> None:
    report = _json(CONCURRENT)
    report["benchmarks"][0]["config"]["strategy"] = {
        "type_": kind,
        "rate": 4.0,
        "max_concurrency": 32,
    }
    (point,) = import_guidellm([_write(tmp_path, report)], GUIDELLM_FACTS).points
    assert (point.load.arrival, point.load.request_rate, point.load.concurrency) == (kind, 4.0, 32)


def test_guidellm_slo_flags_are_refused() -> None:
    with pytest.raises(ResultImportError, match="--slo-"):
        import_guidellm([CONCURRENT], GUIDELLM_FACTS.model_copy(update={"slo_ttft_ms": 200.0}))


def test_guidellm_old_report_version_is_refused(tmp_path: Path) -> None:
    report = _json(CONCURRENT)
    del report["metadata"]["version"]
    with pytest.raises(ResultImportError, match="report version None is not supported"):
        import_guidellm([_write(tmp_path, report)], GUIDELLM_FACTS)


def test_guidellm_two_reports_of_one_deployment_make_one_result() -> None:
    result = import_guidellm([CONCURRENT, SWEEP], GUIDELLM_FACTS)
    assert len(result.points) == 5


# --- AIPerf ------------------------------------------------------------------------------------


def test_aiperf_maps_metric_blocks_to_latencies() -> None:
    result = import_aiperf([AIPERF], AIPERF_FACTS)
    export = _json(AIPERF)
    (point,) = result.points
    assert (point.load.arrival, point.load.concurrency) == ("closed", 32)
    ttft, itl, icl = (
        export["time_to_first_token"],
        export["inter_token_latency"],
        export["inter_chunk_latency"],
    )
    assert point.ttft_ms is not None
    assert point.tpot_ms is not None
    assert point.itl_ms is not None
    assert (point.ttft_ms.mean, point.ttft_ms.p95, point.ttft_ms.n) == (
        ttft["avg"],
        ttft["p95"],
        640,
    )
    assert point.ttft_ms.p99 == 178.9456
    # AIPerf's inter_token_latency is per request: the registry's TPOT.
    assert (point.tpot_ms.mean, point.tpot_ms.p50, point.tpot_ms.max) == (
        itl["avg"],
        itl["p50"],
        itl["max"],
    )
    # inter_chunk_latency is every gap: the registry's ITL, n = gaps.
    assert (point.itl_ms.mean, point.itl_ms.n) == (icl["avg"], 640 * 127)
    assert point.duration_s == export["benchmark_duration"]["avg"]
    assert (point.requests.completed, point.requests.failed, point.requests.sent) == (640, 0, 640)
    assert (point.tokens.input, point.tokens.output) == (640 * 1024, 640 * 128)
    assert point.throughput.requests_per_s == export["request_throughput"]["avg"]
    assert point.throughput.output_tokens_per_s == export["output_token_throughput"]["avg"]
    assert point.throughput.total_tokens_per_s is None


def test_aiperf_provenance_comes_from_the_file() -> None:
    result = import_aiperf([AIPERF], AIPERF_FACTS.model_copy(update={"timezone": "+02:00"}))
    export = _json(AIPERF)
    assert result.source.command == export["run_info"]["cli_command"]
    assert (result.source.tool.name, result.source.tool.version) == (AIPERF_TOOL, "0.7.0")
    assert result.identity.workload.seed == 42
    assert result.identity.workload.api == "chat"
    assert result.source.started_at.isoformat() == "2026-01-01T11:00:00.120000+00:00"


def test_aiperf_converts_units_stated_in_each_block(tmp_path: Path) -> None:
    export = _json(AIPERF)
    for name, factor in (("time_to_first_token", 1e6), ("request_latency", 1e-3)):
        block = export[name]
        block["unit"] = "ns" if factor > 1 else "sec"
        for key in ("avg", "p50", "p90", "p95", "p99", "max", "min", "std", "sum"):
            block[key] = block[key] * factor
    export["benchmark_duration"] = {"unit": "ms", "avg": 31058.2}
    converted = import_aiperf([_write(tmp_path, export)], AIPERF_FACTS).points[0]
    original = import_aiperf([AIPERF], AIPERF_FACTS).points[0]
    assert converted.ttft_ms is not None
    assert original.ttft_ms is not None
    assert converted.ttft_ms.p99 == pytest.approx(original.ttft_ms.p99, rel=1e-12)
    assert converted.ttft_ms.p99 == pytest.approx(178.9456)
    assert converted.e2e_ms == original.e2e_ms
    assert converted.duration_s == 31.0582


def test_aiperf_legacy_export_with_request_rate_and_errors() -> None:
    with pytest.raises(MissingFactError) as caught:
        import_aiperf([AIPERF_LEGACY], AIPERF_FACTS)
    assert caught.value.option == "--tool-version"
    result = import_aiperf([AIPERF_LEGACY], LEGACY_FACTS)
    (point,) = result.points
    assert (point.load.arrival, point.load.request_rate, point.load.concurrency) == (
        "poisson",
        8.0,
        None,
    )
    assert (point.requests.completed, point.requests.failed, point.requests.sent) == (478, 2, 480)
    assert point.ttft_ms is not None
    assert point.ttft_ms.n is None  # schema 1.0 has no count
    assert result.identity.workload.api == "completions"
    assert result.source.command.startswith("aiperf profile -m meta-llama/Llama-3.1-8B-Instruct")


def test_aiperf_command_flag_overrides_the_redacted_one() -> None:
    result = import_aiperf(
        [AIPERF], AIPERF_FACTS.model_copy(update={"command": "aiperf profile x"})
    )
    assert result.source.command == "aiperf profile x"


def test_aiperf_local_times_need_the_timezone(tmp_path: Path) -> None:
    with pytest.raises(MissingFactError) as caught:
        import_aiperf([AIPERF], AIPERF_FACTS.model_copy(update={"timezone": None}))
    assert caught.value.option == "--timezone"
    export = _json(AIPERF)
    export["start_time"] += "+01:00"
    export["end_time"] += "+01:00"
    result = import_aiperf(
        [_write(tmp_path, export)], SYNTHETIC_FACTS.model_copy(update={"timezone": None})
    )
    assert result.source.started_at.isoformat() == "2026-01-01T12:00:00.120000+00:00"


def test_cli_aiperf_local_times_named_with_every_other_missing_flag(tmp_path: Path) -> None:
    # --timezone was refused alone while the file was read; the other flags took a second try.
    outcome = CliRunner().invoke(
        main, ["bench", "import", str(AIPERF), "--gpu", "h100-sxm", "--output", str(tmp_path)]
    )
    assert outcome.exit_code == 1
    assert outcome.output == (
        "Error: --gpu-count: missing; how many GPUs served the model (and --model-id, "
        "--engine-version, --input-len, --output-len, --submitter, --timezone: missing too)\n"
    )
    assert not list(tmp_path.iterdir())


def test_aiperf_goodput_needs_and_uses_the_slo(tmp_path: Path) -> None:
    export = _json(AIPERF)
    export["good_request_count"] = {"unit": "requests", "avg": 601.0}
    path = _write(tmp_path, export)
    with pytest.raises(MissingFactError) as caught:
        import_aiperf([path], AIPERF_FACTS)
    assert caught.value.option == "--slo-ttft-ms"
    result = import_aiperf([path], AIPERF_FACTS.model_copy(update={"slo_ttft_ms": 150.0}))
    assert result.points[0].requests.accepted == 601
    with pytest.raises(ResultImportError, match="no good_request_count"):
        import_aiperf([AIPERF], AIPERF_FACTS.model_copy(update={"slo_ttft_ms": 150.0}))


@pytest.mark.parametrize(
    ("phases", "load"),
    [
        ({"profiling": {"type": "concurrency"}}, ("closed", 1, None, None)),
        ([{"name": "profiling", "type": "poisson", "rate": 6.0}], ("poisson", None, 6.0, None)),
        ({"profiling": {"type": "constant", "rate": 5.0}}, ("constant", None, 5.0, None)),
        (
            {"p": {"kind": "profiling", "type": "gamma", "rate": 6.0, "smoothness": 0.5,
                   "concurrency": 64}},
            ("gamma", 64, 6.0, 0.5),
        ),
    ],
)  # fmt: skip
def test_aiperf_profiling_phase_gives_the_load(
    tmp_path: Path, phases: Any, load: tuple[Any, ...]
) -> None:
    export = _json(AIPERF)
    export["input_config"]["phases"] = phases
    point = import_aiperf([_write(tmp_path, export)], AIPERF_FACTS).points[0]
    got = point.load
    assert (got.arrival, got.concurrency, got.request_rate, got.burstiness) == load


@pytest.mark.parametrize(
    ("phases", "message"),
    [
        ({"profiling": {"type": "user_centric", "rate": 5.0}}, "'user_centric' phases cannot"),
        ({"profiling": {"type": "fixed_schedule"}}, "'fixed_schedule' phases cannot"),
        ({"warmup": {"type": "concurrency"}}, "expected one profiling phase, found 0"),
        ("profiling", "expected an object or a list"),
    ],
)
def test_aiperf_unimportable_phases_are_refused(tmp_path: Path, phases: Any, message: str) -> None:
    export = _json(AIPERF)
    export["input_config"]["phases"] = phases
    with pytest.raises(ResultImportError, match=message):
        import_aiperf([_write(tmp_path, export)], AIPERF_FACTS)


# --- required facts ----------------------------------------------------------------------------

REQUIRED = {
    "gpu": "--gpu",
    "gpu_count": "--gpu-count",
    "model_id": "--model-id",
    "engine_version": "--engine-version",
    "submitter": "--submitter",
    "input_len": "--input-len",
    "output_len": "--output-len",
}


@pytest.mark.parametrize("case", ["guidellm-sweep", "aiperf"])
@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_import_missing_required_fact_names_its_flag(case: str, name: str) -> None:
    path, facts = CASES[case]
    with pytest.raises(MissingFactError) as caught:
        import_files([path], facts.model_copy(update=dict(**{name: None})))
    assert caught.value.option == REQUIRED[name]
    assert caught.value.one_line().startswith(f"{REQUIRED[name]}: missing")


@pytest.mark.parametrize("case", ["guidellm-sweep", "aiperf"])
def test_import_names_every_missing_required_fact_at_once(case: str) -> None:
    path, facts = CASES[case]
    bare = facts.model_copy(update=dict.fromkeys(REQUIRED))
    with pytest.raises(MissingFactError) as caught:
        import_files([path], bare)
    assert caught.value.option == "--gpu"
    assert caught.value.one_line().endswith(
        " (and --gpu-count, --model-id, --engine-version, --input-len, --output-len, --submitter: "
        "missing too)"
    )


def test_import_local_model_path_needs_hf_repo(tmp_path: Path) -> None:
    report = _json(CONCURRENT)
    report["benchmarks"][0]["config"]["backend"]["model"] = "/models/llama"
    path = _write(tmp_path, report)
    with pytest.raises(MissingFactError) as caught:
        import_guidellm([path], GUIDELLM_FACTS)
    assert caught.value.option == "--hf-repo"
    facts = GUIDELLM_FACTS.model_copy(update={"hf_repo": "meta-llama/Llama-3.1-8B-Instruct"})
    assert import_guidellm([path], facts).identity.model.hf_repo == facts.hf_repo


# --- malformed files ---------------------------------------------------------------------------


def _guidellm_with(change: Any) -> Any:
    report = _json(CONCURRENT)
    change(report)
    return report


def _aiperf_with(change: Any) -> Any:
    export = _json(AIPERF)
    change(export)
    return export


MALFORMED = {
    "empty": "",
    "truncated": '{"benchmarks": [',
    "nan": '{"metadata": {"guidellm_version": "0.7.3"}, "benchmarks": [NaN]}',
    "list": "[1, 2]",
    "null": "null",
    "unknown-object": '{"hello": "world"}',
    "benchmarks-empty": _guidellm_with(lambda r: r.update(benchmarks=[])),
    "benchmark-not-object": _guidellm_with(lambda r: r.update(benchmarks=[1])),
    "metrics-list": _guidellm_with(lambda r: r["benchmarks"][0].update(metrics=[])),
    "no-strategy": _guidellm_with(lambda r: r["benchmarks"][0]["config"].pop("strategy")),
    "totals-text": _guidellm_with(
        lambda r: r["benchmarks"][0]["metrics"]["request_totals"].update(successful="many")
    ),
    "percentile-text": _guidellm_with(
        lambda r: r["benchmarks"][0]["metrics"]["time_to_first_token_ms"]["successful"][
            "percentiles"
        ].update(p99="slow")
    ),
    "start-huge": _guidellm_with(lambda r: r["benchmarks"][0].update(start_time=1e300)),
    "version-3": _guidellm_with(lambda r: r["metadata"].update(version=3)),
    "unit-unknown": _aiperf_with(lambda e: e["time_to_first_token"].update(unit="parsecs")),
    "count-fraction": _aiperf_with(lambda e: e["request_count"].update(avg=1.5)),
    "time-text": _aiperf_with(lambda e: e.update(start_time="yesterday")),
    "block-list": _aiperf_with(lambda e: e.update(request_latency=[1, 2])),
    "no-load": _aiperf_with(lambda e: e.update(input_config={})),
    "two-models": _aiperf_with(
        lambda e: e["input_config"].update(models={"items": [{"name": "a/b"}, {"name": "c/d"}]})
    ),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_file_fails_with_one_line_naming_it(tmp_path: Path, name: str) -> None:
    content = MALFORMED[name]
    path = tmp_path / f"{name}.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content), "utf-8")
    with pytest.raises(ResultImportError) as caught:
        import_files([path], LEGACY_FACTS)
    line = caught.value.one_line()
    assert "\n" not in line
    assert str(path) in line
    outcome = CliRunner().invoke(
        main, ["bench", "import", str(path), *CLI_FACTS, "--output", str(tmp_path)]
    )
    assert outcome.exit_code == 1, outcome.output
    assert outcome.output.startswith("Error: ")
    assert outcome.output.count("\n") == 1
    assert "Traceback" not in outcome.output


def _mutations(data: Any, rng: random.Random) -> Any:
    """A copy of `data` with one random leaf replaced by a value of the wrong kind."""
    mutated = copy.deepcopy(data)
    node, parent, key = mutated, None, None
    while isinstance(node, dict | list) and node:
        parent = node
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        node = node[key]
        if rng.random() < 0.2:
            break
    if parent is not None:
        parent[key] = rng.choice([None, "x", [], {}, -1, 0, 1.5, True, 10**30, {"unit": "ms"}])
    return mutated


@pytest.mark.parametrize("path", [CONCURRENT, AIPERF, AIPERF_LEGACY], ids=lambda p: p.name)
def test_fuzzed_files_give_a_result_or_one_import_error(tmp_path: Path, path: Path) -> None:
    rng = random.Random(path.name)
    data = _json(path)
    lines = []
    for trial in range(60):
        target = _write(tmp_path, _mutations(data, rng), f"fuzz{trial}.json")
        try:
            import_files([target], LEGACY_FACTS.model_copy(update={"command": "x"}))
        except ResultImportError as error:
            lines.append(error.one_line())
    assert lines  # the mutations do break files
    assert all("\n" not in line for line in lines)


# --- the command --------------------------------------------------------------------------------


def test_cli_bench_import_guidellm_sweep(tmp_path: Path) -> None:
    outcome = CliRunner().invoke(
        main,
        ["bench", "import", str(SWEEP), *CLI_FACTS, "--command", "guidellm benchmark",
         "--output", str(tmp_path), "--json"],
    )  # fmt: skip
    assert outcome.exit_code == 0, outcome.output
    report = json.loads(outcome.output)
    assert report["points"] == 4
    written = json.loads(Path(report["path"]).read_text(encoding="utf-8"))
    assert written["source"]["tool"] == {"name": "guidellm", "version": "0.7.3"}


def test_cli_bench_import_aiperf_takes_the_command_from_the_file(tmp_path: Path) -> None:
    outcome = CliRunner().invoke(
        main, ["bench", "import", str(AIPERF), *CLI_FACTS, "--output", str(tmp_path), "--json"]
    )
    assert outcome.exit_code == 0, outcome.output
    written = json.loads(Path(json.loads(outcome.output)["path"]).read_text(encoding="utf-8"))
    assert written["source"]["command"].startswith("aiperf profile")


def test_cli_bench_import_wrong_format_exits_1_naming_the_file(tmp_path: Path) -> None:
    outcome = CliRunner().invoke(
        main,
        ["bench", "import", str(AIPERF), *CLI_FACTS, "--format", "guidellm",
         "--output", str(tmp_path)],
    )  # fmt: skip
    assert outcome.exit_code == 1
    assert outcome.output == (
        f"Error: {AIPERF}: not a GuideLLM benchmarks.json report (an object "
        "with `metadata` and `benchmarks`)\n"
    )
    assert not list(tmp_path.iterdir())


def test_cli_bench_import_missing_fact_exits_1_naming_the_flag(tmp_path: Path) -> None:
    outcome = CliRunner().invoke(
        main, ["bench", "import", str(SWEEP), *CLI_FACTS, "--output", str(tmp_path)]
    )
    assert outcome.exit_code == 1
    assert outcome.output.startswith("Error: --command: missing;")
