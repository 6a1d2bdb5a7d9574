"""bench.importers: `vllm bench serve --save-result` JSON becomes a valid registry result.

The vLLM files in tests/data/importers/ hold synthetic numbers in vLLM's exact key layout.
"""

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from synthetic_run import IMPORTER_FILES, SYNTHETIC_FACTS
from synthetic_run import SYNTHETIC_VLLM_FILE as CONCURRENCY

from infermeter.bench.cli.main import main
from infermeter.bench.importers import (
    FORMATS,
    VLLM_TOOL,
    ImportConfig,
    MissingFactError,
    ResultImportError,
    import_result,
    read_vllm_objects,
)
from infermeter.registry.result_reader import read_valid_result
from infermeter.registry.store import content_id, result_path

import_vllm_bench_serve = FORMATS["vllm"].import_files
APPENDED = IMPORTER_FILES / "vllm-serve-append-rates.json"
DETAILED = IMPORTER_FILES / "vllm-serve-detailed-goodput.json"

FACTS = SYNTHETIC_FACTS.model_copy(
    update={
        "command": "vllm bench serve --model meta-llama/Llama-3.1-8B-Instruct --max-concurrency 16",
        "timezone": "UTC",
        "tensor_parallel_size": 1,
    }
)
REQUIRED_FLAGS = {
    "gpu": "--gpu",
    "gpu_count": "--gpu-count",
    "model_id": "--model-id",
    "engine_version": "--engine-version",
    "command": "--command",
    "submitter": "--submitter",
    "timezone": "--timezone",
    "input_len": "--input-len",
    "output_len": "--output-len",
}
CLI_FACTS = [
    "--gpu", "h100-sxm", "--gpu-count", "1", "--model-id", "llama-3.1-8b-instruct",
    "--engine-version", "0.9.1", "--command", "vllm bench serve --max-concurrency 16",
    "--submitter", "example-contributor", "--timezone", "UTC",
    "--input-len", "1024", "--output-len", "128",
]  # fmt: skip


def _vllm(path: Path = CONCURRENCY) -> dict[str, Any]:
    (run,) = read_vllm_objects(path)
    return run


def _edited_vllm(path: Path, **changes: Any) -> Path:
    """The concurrency run's file with `changes` to its fields, written to `path`."""
    path.write_text(json.dumps({**_vllm(), **changes}), encoding="utf-8")
    return path


def test_import_concurrency_run_maps_every_stated_figure() -> None:
    result = import_vllm_bench_serve([CONCURRENCY], FACTS)
    run = _vllm()
    (point,) = result.points
    assert (point.load.arrival, point.load.concurrency, point.load.request_rate) == (
        "closed",
        16,
        None,
    )
    assert point.duration_s == run["duration"]
    assert (point.requests.completed, point.requests.failed, point.requests.sent) == (199, 1, 200)
    assert (point.tokens.input, point.tokens.output) == (203776, 25472)
    assert point.throughput.output_tokens_per_s == run["output_throughput"]
    assert point.throughput.requests_per_s == run["request_throughput"]
    assert point.throughput.total_tokens_per_s == run["total_token_throughput"]
    assert point.ttft_ms is not None
    assert point.e2e_ms is not None
    assert point.ttft_ms.mean == run["mean_ttft_ms"]
    assert point.ttft_ms.p50 == run["median_ttft_ms"]
    assert point.ttft_ms.p90 == run["p90_ttft_ms"]
    assert point.ttft_ms.p95 == run["p95_ttft_ms"]
    assert point.ttft_ms.p99 == run["p99_ttft_ms"]
    assert point.ttft_ms.max is None  # vLLM states no maximum here
    assert point.ttft_ms.n == 199
    assert point.e2e_ms.p99 == run["p99_e2el_ms"]
    # Without per-request data the number of TPOT and ITL samples is unknown.
    assert point.tpot_ms is not None
    assert point.tpot_ms.n is None
    assert point.itl_ms is not None
    assert point.itl_ms.n is None


def test_import_result_identity_and_provenance() -> None:
    result = import_vllm_bench_serve([CONCURRENCY], FACTS)
    identity = result.identity
    assert (identity.gpu.id, identity.gpu.count, identity.gpu.form_factor) == ("h100-sxm", 1, "sxm")
    assert (identity.engine.name, identity.engine.version) == ("vllm", "0.9.1")
    assert identity.model.hf_repo == "meta-llama/Llama-3.1-8B-Instruct"  # the file's model_id
    assert identity.model.quantization is None
    assert identity.serving.tensor_parallel_size == 1
    assert identity.workload.api == "completions"
    assert identity.workload.input_len.model_dump() == {"kind": "fixed", "value": 1024}
    source = result.source
    assert source.kind == "measured"
    assert source.tool.name == VLLM_TOOL
    assert source.command == FACTS.command
    # vLLM's date is when the run ended; it started `duration` seconds earlier.
    assert source.finished_at.isoformat() == "2025-06-12T14:15:03+00:00"
    assert (source.finished_at - source.started_at).total_seconds() == pytest.approx(41.372915)
    assert result.id == content_id(result)


def test_import_no_slo_accepts_every_completed_request() -> None:
    (point,) = import_vllm_bench_serve([CONCURRENCY], FACTS).points
    assert point.requests.accepted == 199
    assert point.tokens.accepted_output == 25472
    assert point.throughput.accepted_output_tokens_per_s == point.throughput.output_tokens_per_s


def test_import_appended_runs_become_points_with_only_stated_percentiles() -> None:
    result = import_vllm_bench_serve([APPENDED], FACTS)
    first, second = result.points
    assert (first.load.arrival, first.load.request_rate, first.load.burstiness) == (
        "poisson",
        2.0,
        None,
    )
    assert (second.load.arrival, second.load.request_rate, second.load.burstiness) == (
        "gamma",
        8.0,
        0.5,
    )
    for point in result.points:
        assert point.ttft_ms is not None
        assert point.ttft_ms.p99 is not None
        assert (point.ttft_ms.p90, point.ttft_ms.p95) == (None, None)
        assert point.e2e_ms is None  # e2el was not among vLLM's percentile metrics
        assert point.requests.failed is None  # older vLLM: no `failed` key
        assert point.requests.sent is None
    assert result.source.started_at.isoformat() == "2025-06-12T15:00:28.166580+00:00"
    assert result.source.finished_at.isoformat() == "2025-06-12T15:04:12+00:00"


def test_import_detailed_run_with_goodput_needs_and_uses_the_slo() -> None:
    facts = FACTS.model_copy(update={"slo_ttft_ms": 200.0, "slo_tpot_ms": 30.0})
    (point,) = import_vllm_bench_serve([DETAILED], facts).points
    run = _vllm(DETAILED)
    assert point.requests.accepted == 6  # request_goodput × duration
    assert point.requests.failed == 1
    assert point.tokens.accepted_output is None  # not in the file: left out, not estimated
    assert point.throughput.accepted_output_tokens_per_s is None
    assert point.tpot_ms is not None
    assert point.tpot_ms.n == 7
    assert point.itl_ms is not None
    assert point.itl_ms.n == sum(len(gaps) for gaps in run["itls"])


def test_import_goodput_without_slo_names_the_flag() -> None:
    with pytest.raises(MissingFactError) as caught:
        import_vllm_bench_serve([DETAILED], FACTS)
    assert caught.value.one_line().startswith("--slo-ttft-ms: missing;")


def test_import_slo_without_goodput_is_refused() -> None:
    with pytest.raises(ResultImportError, match="no request_goodput"):
        import_vllm_bench_serve([CONCURRENCY], FACTS.model_copy(update={"slo_ttft_ms": 200.0}))


@pytest.mark.parametrize("name", sorted(REQUIRED_FLAGS))
def test_import_missing_required_fact_names_its_flag(name: str) -> None:
    with pytest.raises(MissingFactError) as caught:
        import_vllm_bench_serve([CONCURRENCY], FACTS.model_copy(update=dict(**{name: None})))
    assert caught.value.option == REQUIRED_FLAGS[name]
    assert caught.value.one_line().startswith(f"{REQUIRED_FLAGS[name]}: missing")


def test_cli_bench_import_names_every_missing_flag_in_one_line(tmp_path: Path) -> None:
    """A first try with only the file shows every flag the import needs, not one per try (it
    took nine tries to learn the eight)."""
    outcome = CliRunner().invoke(
        main, ["bench", "import", str(CONCURRENCY), "--gpu", "h100-sxm", "--output", str(tmp_path)]
    )
    assert outcome.exit_code == 1
    assert outcome.output == (
        "Error: --gpu-count: missing; how many GPUs served the model (and --model-id, "
        "--engine-version, --command, --submitter, --timezone, --input-len, --output-len: "
        "missing too)\n"
    )
    assert not list(tmp_path.iterdir())


def test_import_local_model_path_needs_hf_repo(tmp_path: Path) -> None:
    local = _edited_vllm(tmp_path / "local.json", model_id="/models/llama-3.1-8b")
    with pytest.raises(MissingFactError) as caught:
        import_vllm_bench_serve([local], FACTS)
    assert caught.value.option == "--hf-repo"
    facts = FACTS.model_copy(update={"hf_repo": "meta-llama/Llama-3.1-8B-Instruct"})
    assert import_vllm_bench_serve([local], facts).identity.model.hf_repo == facts.hf_repo


@pytest.mark.parametrize(
    ("field", "value", "option"),
    [("gpu", "h100-sxn", "--gpu"), ("model_id", "llama-9", "--model-id")],
)
def test_import_unknown_catalog_id_names_the_flag(field: str, value: str, option: str) -> None:
    with pytest.raises(ResultImportError) as caught:
        import_vllm_bench_serve([CONCURRENCY], FACTS.model_copy(update=dict(**{field: value})))
    assert caught.value.option == option
    assert "unknown" in str(caught.value)


def test_import_all_at_once_run_is_offline(tmp_path: Path) -> None:
    burst = _edited_vllm(tmp_path / "burst.json", max_concurrency=None)
    (point,) = import_vllm_bench_serve([burst], FACTS).points
    assert (point.load.arrival, point.load.concurrency, point.load.request_rate) == (
        "offline",
        None,
        None,
    )
    assert point.requests.sent == 200


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("512", {"kind": "fixed", "value": 512}),
        ("uniform:100:200", {"kind": "uniform", "min": 100, "max": 200}),
        ("normal:1024:256", {"kind": "normal", "mean": 1024.0, "stddev": 256.0}),
        ("dataset", {"kind": "dataset"}),
        ("dataset:1024", {"kind": "dataset", "max": 1024}),
    ],
)
def test_import_length_specs(spec: str, expected: dict[str, Any]) -> None:
    facts = FACTS.model_copy(update={"output_len": spec})
    result = import_vllm_bench_serve([CONCURRENCY], facts)
    assert result.identity.workload.output_len.model_dump(exclude_none=True) == expected


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "invalid JSON at line 1"),
        ('{"output_throughput": NaN}', "invalid JSON: NaN is not a number"),
        ('{"duration": 1.0}', "not a `vllm bench serve --save-result` file"),
        ("[1, 2]", "not a `vllm bench serve --save-result` file"),
        ("", "empty file"),
    ],
)
def test_import_bad_files_fail_with_one_line(tmp_path: Path, content: str, message: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    with pytest.raises(ResultImportError) as caught:
        import_vllm_bench_serve([bad], FACTS)
    assert message in str(caught.value)
    assert "\n" not in caught.value.one_line()


def test_import_files_of_different_models_are_refused(tmp_path: Path) -> None:
    other = _edited_vllm(tmp_path / "other.json", model_id="Qwen/Qwen2.5-7B-Instruct")
    with pytest.raises(ResultImportError, match="the files disagree on model_id"):
        import_vllm_bench_serve([CONCURRENCY, other], FACTS)


def test_import_ramp_up_is_refused(tmp_path: Path) -> None:
    ramp = _edited_vllm(tmp_path / "ramp.json", ramp_up_strategy="linear")
    with pytest.raises(ResultImportError, match="ramp-up"):
        import_vllm_bench_serve([ramp], FACTS)


def test_import_percentiles_out_of_order_fail_validation(tmp_path: Path) -> None:
    bad = _edited_vllm(tmp_path / "bad.json", p99_ttft_ms=1.0)
    with pytest.raises(ResultImportError, match=r"points\[0\]\.ttft_ms"):
        import_vllm_bench_serve([bad], FACTS)


def test_import_timezone_offset_and_bad_name() -> None:
    result = import_vllm_bench_serve([CONCURRENCY], FACTS.model_copy(update={"timezone": "+02:00"}))
    assert result.source.finished_at.isoformat() == "2025-06-12T12:15:03+00:00"
    with pytest.raises(ResultImportError) as caught:
        import_vllm_bench_serve(
            [CONCURRENCY], FACTS.model_copy(update={"timezone": "Mars/Olympus"})
        )
    assert caught.value.option == "--timezone"


def test_import_result_writes_a_valid_registry_file(tmp_path: Path) -> None:
    result, path = import_result(ImportConfig(files=(CONCURRENCY,), facts=FACTS, output=tmp_path))
    assert path == tmp_path / result_path(result).name
    again = read_valid_result(path, path.name)
    assert again == result


def test_cli_bench_import_writes_the_result(tmp_path: Path) -> None:
    outcome = CliRunner().invoke(
        main, ["bench", "import", str(APPENDED), *CLI_FACTS, "--output", str(tmp_path), "--json"]
    )
    assert outcome.exit_code == 0, outcome.output
    report = json.loads(outcome.output)
    assert report["points"] == 2
    written = json.loads(Path(report["path"]).read_text(encoding="utf-8"))
    assert written["id"] == report["id"]
    assert written["source"]["tool"]["name"] == VLLM_TOOL


def test_cli_bench_import_says_one_load_point_as_one(tmp_path: Path) -> None:
    # It said "(1 load points, id …)".
    outcome = CliRunner().invoke(
        main, ["bench", "import", str(CONCURRENCY), *CLI_FACTS, "--output", str(tmp_path)]
    )
    assert outcome.exit_code == 0, outcome.output
    assert re.fullmatch(r"wrote \S+ \(1 load point, id \S+\)\n", outcome.output)


def test_cli_bench_import_missing_fact_exits_1_naming_the_flag(tmp_path: Path) -> None:
    arguments = [a for a in CLI_FACTS if a not in ("--engine-version", "0.9.1")]
    outcome = CliRunner().invoke(
        main, ["bench", "import", str(CONCURRENCY), *arguments, "--output", str(tmp_path)]
    )
    assert outcome.exit_code == 1
    assert outcome.output.startswith("Error: --engine-version: missing;")
    assert outcome.output.count("\n") == 1
    assert not list(tmp_path.iterdir())


def test_cli_bench_import_refuses_a_line_separator_in_a_text_option(tmp_path: Path) -> None:
    # U+2028 breaks the line in a browser's text and a terminal as a line feed does.
    dataset = "sharegpt\u2028  1. 1 × b200: $0.0001/1M"
    arguments = [str(CONCURRENCY), *CLI_FACTS, "--dataset", dataset, "--output", str(tmp_path)]
    outcome = CliRunner().invoke(main, ["bench", "import", *arguments])
    assert outcome.exit_code == 1
    assert outcome.output.endswith(
        "identity.workload.dataset: contains the line-breaking character U+2028\n"
    )
    assert outcome.output.count("\n") == 1
    assert not list(tmp_path.iterdir())


def test_cli_bench_import_usage_error_exits_2(tmp_path: Path) -> None:
    outcome = CliRunner().invoke(
        main, ["bench", "import", str(CONCURRENCY), *CLI_FACTS, "--gpu-count", "zero"]
    )
    assert outcome.exit_code == 2
    assert "Traceback" not in outcome.output
