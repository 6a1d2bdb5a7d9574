"""`infermeter bench compare` on result files the registry held (and copies turned into
server-at-SLO results): the buyer's table with ratios, and the refusal to rank what differs."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from bench_helpers import PACE_8B_ITL_S
from click.testing import CliRunner, Result
from fake_openai_server import FakeOpenAIServer

from infermeter.bench.cli.main import main
from infermeter.registry.models import Result as RegistryResult
from infermeter.registry.store import dumps_result, with_content_id
from infermeter.registry.workloads import workload_key, workload_label

# Result files as the registry held them (registry/results at commit 4872911), kept here.
RESULTS = Path(__file__).resolve().parents[1] / "data" / "compare"
H100 = RESULTS / "2026-11-30-9cf9af10b033.json"
H200 = RESULTS / "2026-11-30-97b31d32bd49.json"
L40S = RESULTS / "2026-11-30-8f71e79ca5d7.json"
A100_BF16 = RESULTS / "2026-11-30-71b301c0c226.json"
SHAREGPT = Path(__file__).resolve().parents[1] / "data" / "datasets" / "sharegpt-v3-excerpt.json"


def _compare(*args: str | Path) -> Result:
    result = CliRunner().invoke(main, ["bench", "compare", *map(str, args)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def _throughput(path: Path) -> float:
    data = json.loads(path.read_text())
    value: float = data["points"][0]["throughput"]["output_tokens_per_s"]
    return value / data["identity"]["gpu"]["count"]


def test_compare_prints_each_figure_and_its_ratio_to_the_first() -> None:
    run = _compare(H100, H200, L40S)
    assert run.exit_code == 0, run.output
    lines = run.output.splitlines()
    assert lines[0] == f"A = {H100.name}: 1× h100-sxm, tensorrt-llm 0.17"
    assert lines[2].startswith(f"C = {L40S.name}: 1× l40s")
    row = next(line for line in lines if "output tok/s per GPU" in line)
    ratio_b = _throughput(H200) / _throughput(H100)
    ratio_c = _throughput(L40S) / _throughput(H100)
    assert row.split()[-2:] == [f"×{ratio_b:.2f}", f"×{ratio_c:.2f}"]
    assert f"{_throughput(H200):,.1f}" in row
    assert any("$ per 1M output tokens" in line for line in lines)


def test_compare_prices_the_accepted_tokens_beside_the_output(tmp_path: Path) -> None:
    """The buyer's figure is $ per accepted token (requests within the SLO), not per output
    token: the table showed only the latter."""
    measured = (
        Path(__file__).resolve().parents[1] / "examples/valid/results/measured-two-points.json"
    )
    data = json.loads(measured.read_text())
    data["identity"]["gpu"]["id"] = "h200-sxm"
    result = RegistryResult.model_validate(data)
    h200 = tmp_path / "h200.json"
    h200.write_text(dumps_result(with_content_id(result)))
    run = _compare(measured, h200)
    assert run.exit_code == 0, run.output
    rows = {}
    for line in run.output.splitlines():
        for label in ("$ per 1M output tokens", "$ per 1M accepted tokens"):
            if label in line:
                rows.setdefault(label, []).append(line.split(label)[1].split())
    output, accepted = rows["$ per 1M output tokens"][0], rows["$ per 1M accepted tokens"][0]
    # 1,045.33 output and 1,034.67 accepted tokens/s at concurrency 8: 1 % dearer accepted
    assert float(accepted[0]) / float(output[0]) == pytest.approx(1045.33 / 1034.67, rel=1e-3)
    assert accepted[2] == output[2]  # the same ratio between the two GPUs


def test_compare_refuses_to_rank_different_precision_and_workload() -> None:
    run = _compare(H100, A100_BF16)
    assert run.exit_code == 1
    (line,) = run.output.strip().splitlines()
    assert line.startswith("Error: not comparable, so not ranked: ")
    assert f"model.quantization differs ({H100.name} fp8, {A100_BF16.name} None)" in line
    assert line.endswith("; workload.input_len, workload.output_len differ too")
    assert "output tok/s" not in run.output


def test_compare_refusal_of_many_files_stays_one_readable_line() -> None:
    """Eight files of different experiments: every property that differs named, the first three
    with each value once and how many files hold it (every file's every value, 3,000 characters
    in one line, before)."""
    files = sorted((RESULTS.parents[1] / "examples" / "valid" / "results").glob("*.json"))
    run = _compare(*files)
    assert run.exit_code == 1
    (line,) = run.output.strip().splitlines()
    assert line.startswith("Error: not comparable, so not ranked: model.id differs (")
    assert "llama-3.1-70b-instruct in 4 files" in line
    assert line.count(" differs (") == 3
    assert line.endswith(", workload.dataset, workload.api differ too")
    assert len(line) < 600


def _at_slo(path: Path, target: Path, level: float, kind: str = "rate", **bound: float) -> Path:
    data: dict[str, Any] = json.loads(path.read_text())
    point = data["points"][0]
    bounds = {"percentile": 99, "ttft_ms": 500.0, "tpot_ms": 50.0, **bound}
    point["load"] = (
        {"arrival": "poisson", "request_rate": level, "rate_search": bounds}
        if kind == "rate"
        else {"arrival": "closed", "concurrency": int(level), "concurrency_search": bounds}
    )
    target.write_text(json.dumps(data, indent=2))
    return target


@pytest.mark.parametrize(
    ("kind", "levels", "cells"),
    [
        ("rate", (12.5, 20.0), ["12.5", "req/s", "20", "req/s", "×1.60"]),
        ("concurrency", (12, 20), ["12", "20", "×1.67"]),
    ],
)
def test_compare_matches_server_at_slo_points_by_their_bounds(
    tmp_path: Path, kind: str, levels: tuple[float, float], cells: list[str]
) -> None:
    first = _at_slo(H100, tmp_path / "h100-slo.json", levels[0], kind)
    second = _at_slo(H200, tmp_path / "h200-slo.json", levels[1], kind)
    run = _compare(first, second)
    assert run.exit_code == 0, run.output
    row = next(line for line in run.output.splitlines() if f"highest {kind}" in line)
    assert row.startswith(f"at the SLO, {kind} (p99 TTFT ≤ 500 ms, TPOT ≤ 50 ms)")
    assert row.split()[-len(cells) :] == cells


def test_compare_keeps_answers_to_different_e2e_bounds_apart(tmp_path: Path) -> None:
    loose = _at_slo(H100, tmp_path / "h100-e2e.json", 12.5, e2e_ms=1e9)
    tight = _at_slo(H200, tmp_path / "h200-e2e.json", 20.0, e2e_ms=2e9)
    run = _compare(loose, tight)
    assert run.exit_code == 0, run.output
    rows = [line for line in run.output.splitlines() if "highest rate" in line]
    assert [row.split(")")[0] for row in rows] == [
        "at the SLO, rate (p99 TTFT ≤ 500 ms, TPOT ≤ 50 ms, E2E ≤ 1e+09 ms",
        "at the SLO, rate (p99 TTFT ≤ 500 ms, TPOT ≤ 50 ms, E2E ≤ 2e+09 ms",
    ]
    assert rows[0].split()[-4:] == ["12.5", "req/s", "-", "-"]


def test_compare_keeps_a_rate_and_a_concurrency_answer_apart(tmp_path: Path) -> None:
    rate = _at_slo(H100, tmp_path / "h100-rate.json", 12.5)
    concurrency = _at_slo(H200, tmp_path / "h200-concurrency.json", 16, "concurrency")
    run = _compare(rate, concurrency)
    assert run.exit_code == 0, run.output
    rate_row = next(line for line in run.output.splitlines() if "highest rate" in line)
    level_row = next(line for line in run.output.splitlines() if "highest concurrency" in line)
    assert rate_row.split()[-4:] == ["12.5", "req/s", "-", "-"]  # B has no rate answer
    assert level_row.split()[-3:] == ["-", "16", "-"]


def test_compare_names_an_unreadable_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema_version": 2}')
    run = _compare(H100, broken)
    assert run.exit_code == 1
    (line,) = run.output.strip().splitlines()
    # The first problem, and where to see the others (each problem joined in one line before:
    # 14 of them for a file without its fields, 900 characters and more).
    assert line.startswith(f"Error: {broken} is not a valid result: ")
    assert f"more; run `infermeter registry validate {broken}`)" in line
    assert len(line) < 300
    single = _compare(H100)
    assert single.exit_code == 1
    assert "give at least two result files" in single.output


def test_compare_two_dataset_files_of_one_name_are_two_workloads(
    fake_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    """Each run records its --dataset file's SHA-256: the same name, other prompts, another
    workload (for `bench compare`, the index's workload key and its label alike)."""
    fake_server.config.version = "0.9.1"
    fake_server.config.ttft_s = 0.01
    fake_server.config.itl_s = PACE_8B_ITL_S
    conversations = json.loads(SHAREGPT.read_text())
    outputs = []
    for folder, turns in (("a", conversations), ("b", conversations[:1] * 2)):
        dataset = tmp_path / folder / "chat.json"
        dataset.parent.mkdir()
        dataset.write_text(json.dumps(turns))
        output = tmp_path / f"{folder}.json"
        run = CliRunner().invoke(main, [
            "bench", "run", "--endpoint", fake_server.url, "--dataset", str(dataset),
            "--concurrency", "1", "--num-requests", "2", "--warmup", "0", "--output-len", "8",
            "--gpu", "h100-sxm", "--model-id", "llama-3.1-8b-instruct", "--output", str(output),
            "--quiet",
        ])  # fmt: skip
        assert run.exit_code == 0, run.output
        workload = RegistryResult.model_validate_json(output.read_text()).identity.workload
        assert workload.dataset == "sharegpt (chat.json)"
        assert workload.dataset_sha256 == hashlib.sha256(dataset.read_bytes()).hexdigest()
        outputs.append((output, workload))
    (a, workload_a), (b, workload_b) = outputs
    refused = _compare(a, b)
    assert refused.exit_code == 1
    (line,) = refused.output.strip().splitlines()
    assert "workload.dataset_sha256 differs" in line
    assert workload_key(workload_a) != workload_key(workload_b)
    assert workload_label(workload_a) != workload_label(workload_b)
    assert workload_label(workload_a).endswith(f"(sha256 {workload_a.dataset_sha256[:8]})")
    # without the hash (a result from before it was recorded) the key is what it always was
    unhashed = workload_a.model_copy(update={"dataset_sha256": None})
    other = workload_b.model_copy(update={"dataset_sha256": None})
    assert workload_key(unhashed) == workload_key(other)


def test_compare_refuses_a_version_that_would_retitle_the_terminal(tmp_path: Path) -> None:
    """A string the registry refuses (a control character, markup) is refused here too: the
    table printed an engine version's ESC sequences raw (`vllm 0.8.5^[]0;pwned^G`)."""
    data = json.loads(H200.read_text())
    data["identity"]["engine"]["version"] = "0.17\x1b]0;pwned\x07\x1b[2J"
    hostile = tmp_path / "hostile.json"
    hostile.write_text(json.dumps(data))
    run = _compare(H100, hostile)
    assert "\x1b" not in run.output
    assert run.exit_code == 1
    assert run.output == (
        f"Error: {hostile} is not a valid result: identity.engine.version: contains the control "
        "character U+001B\n"
    )
