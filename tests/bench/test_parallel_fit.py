"""`bench.launch.parallel_fit`: a tensor or pipeline parallel size the model cannot take is refused
before vLLM is launched, where the model's architecture is known (catalog or config.json)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from infermeter.bench.errors import BenchConfigError
from infermeter.bench.fleet.matrix import load_matrix
from infermeter.bench.launch.parallel_fit import check_parallel_fit
from infermeter.bench.plan.file import PlanError
from infermeter.bench.plan.options import RunOptions
from infermeter.registry.catalog import load_models

LLAMA_1B = "meta-llama/Llama-3.2-1B-Instruct"  # the catalog's: 32 heads, 8 KV heads, 16 layers


def _refusal(**options: object) -> tuple[str, str | None]:
    with pytest.raises(BenchConfigError) as caught:
        check_parallel_fit(RunOptions.model_validate(options))
    return caught.value.one_line(), caught.value.option


@pytest.mark.parametrize(
    ("options", "option", "text"),
    [
        ({"tensor_parallel_size": 3}, "--tensor-parallel-size",
         "3 does not divide the model's 32 attention heads"),
        ({"tensor_parallel_size": 64}, "--tensor-parallel-size",
         "64 does not divide the model's 32 attention heads"),
        ({"pipeline_parallel_size": 17}, "--pipeline-parallel-size",
         "17 stages for the 16 layers of meta-llama/Llama-3.2-1B-Instruct"),
        ({"vllm_args": ("--pipeline-parallel-size", "17")}, "--pipeline-parallel-size",
         "17 stages for the 16 layers"),
    ],
    ids=["tp-3", "tp-64", "pp-17", "pp-17-as-vllm-arg"],
)  # fmt: skip
def test_parallel_fit_refuses_what_the_catalog_model_cannot_split_naming_the_option(
    options: dict[str, object], option: str, text: str
) -> None:
    line, named = _refusal(model=LLAMA_1B, **options)
    assert named == option
    assert text in line


@pytest.mark.parametrize(
    "options",
    [
        {"model": LLAMA_1B, "tensor_parallel_size": 16, "pipeline_parallel_size": 16},
        {"model": LLAMA_1B, "tensor_parallel_size": 32},  # KV heads replicated: 32 % 8 == 0
        {"model": "some-org/not-in-the-catalog", "tensor_parallel_size": 3},  # vLLM judges
        {"model": LLAMA_1B, "model_id": "no-such-id", "tensor_parallel_size": 2},
    ],
    ids=["tp16-pp16", "tp32", "unknown-model", "unknown-model-id-falls-back"],
)
def test_parallel_fit_accepts_what_splits_and_leaves_unknown_models_to_vllm(
    options: dict[str, object],
) -> None:
    check_parallel_fit(RunOptions.model_validate(options))


def test_parallel_fit_reads_the_config_json_of_a_model_folder(tmp_path: Path) -> None:
    (entry,) = [model for model in load_models().values() if model.hf_repo == LLAMA_1B]
    config = dict(entry.config)
    config["num_attention_heads"] = 24  # as a local fine-tune might say
    config["num_key_value_heads"] = 8
    folder = tmp_path / "my-model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    line, option = _refusal(model=str(folder), tensor_parallel_size=16)
    assert option == "--tensor-parallel-size"
    assert "16 does not divide the model's 24 attention heads" in line


def test_plan_matrix_refuses_a_gpu_count_the_model_cannot_split(tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"defaults: {{model: {LLAMA_1B}}}\n"
        "runs:\n  - {name: a, gpus: [h100-sxm, 'h100-sxm:96']}\n"
    )
    with pytest.raises(PlanError) as caught:
        load_matrix(plan)
    (problem,) = caught.value.problems
    assert problem == (
        f"{plan}: runs[0].gpus[1]: --tensor-parallel-size: 96 does not "
        f"divide the model's 32 attention heads ({LLAMA_1B})"
    )


def test_plan_matrix_refuses_a_gpu_count_of_more_than_nine_digits(tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text("runs:\n  - {name: a, gpus: ['h100-sxm:99999999999999999999']}\n")
    with pytest.raises(PlanError) as caught:
        load_matrix(plan)
    (problem,) = caught.value.problems
    assert problem == (
        f"{plan}: runs[0].gpus[0]: a GPU count is at most 9 digits, got "
        "'h100-sxm:99999999999999999999'"
    )


def test_bench_run_refuses_before_launching_anything(tmp_path: Path) -> None:
    never = tmp_path / "vllm"
    never.write_text("#!/bin/sh\ntouch launched\n")
    never.chmod(0o755)
    run = subprocess.run(
        [sys.executable, "-c", "from infermeter.bench.cli.main import main; main()", "bench", "run",
         "--model", LLAMA_1B, "--gpu", "h100-sxm", "--tensor-parallel-size", "3",
         "--vllm-executable", str(never), "--output", str(tmp_path / "r.json")],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip().splitlines() == [
        "Error: --tensor-parallel-size: 3 does not divide the model's 32 attention heads "
        f"({LLAMA_1B})"
    ]
    assert not (tmp_path / "launched").exists()
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["-tp", "3"], "Error: --tensor-parallel-size: 3 does not divide the model's 32 attention "
         f"heads ({LLAMA_1B})"),
        (["-pp", "17"], "Error: --pipeline-parallel-size: 17 stages for the 16 layers of "
         f"{LLAMA_1B}; every stage needs at least one layer"),
    ],
    ids=["tp", "pp"],
)  # fmt: skip
def test_bench_run_takes_vllms_short_tp_and_pp(tmp_path: Path, args: list[str], line: str) -> None:
    from click.testing import CliRunner

    from infermeter.bench.cli.main import main

    run = CliRunner().invoke(
        main, ["bench", "run", "--model", LLAMA_1B, "--gpu", "h100-sxm", *args,
               "--output", str(tmp_path / "r.json")],
    )  # fmt: skip
    assert run.exit_code == 2, run.output
    assert run.stderr.strip().splitlines() == [line]
