"""`bench plan matrix`: a plan's runs × GPU kinds, each with its exact `bench run` command."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from infermeter.bench.cli.bench_run import run_command
from infermeter.bench.cli.main import main
from infermeter.bench.fleet.matrix import load_matrix
from infermeter.bench.plan.file import PlanError, load_plan
from infermeter.bench.plan.options import RunOptions

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]

FLEET_EXAMPLE = REPOSITORY_ROOT / "bench" / "plans" / "fleet.yaml"
MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def _plan(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _matrix(*args: str) -> Result:
    return CliRunner().invoke(main, ["bench", "plan", "matrix", *args])


def _two_runs(tmp_path: Path) -> Path:
    return _plan(
        tmp_path,
        {
            "defaults": {"model": MODEL, "max-model-len": 8192, "gpus": ["h100-sxm", "mi300x"]},
            "runs": [
                {"name": "chat", "concurrency": [1, 4], "output": "results/chat.json"},
                {
                    "name": "Big Batch",
                    "profile": "batch",
                    "gpus": ["h200-sxm:2", {"gpu": "l40s", "count": 4}],
                },
            ],
        },
    )


def _parsed_options(command: str) -> RunOptions:
    """The options `bench run` itself parses from a command line."""
    words = shlex.split(command)
    assert words[:3] == ["infermeter", "bench", "run"]
    context = run_command.make_context("run", words[3:])
    params = {k: v for k, v in context.params.items() if k not in ("plan_path", "quiet", "as_json")}
    return RunOptions.model_validate(params)


def test_matrix_is_one_entry_per_run_and_gpu_kind_with_its_command(tmp_path: Path) -> None:
    run = _matrix(str(_two_runs(tmp_path)))
    assert run.exit_code == 0, run.output
    entries = json.loads(run.stdout)["include"]
    assert [e["id"] for e in entries] == [
        "chat--h100-sxm-x1",
        "chat--mi300x-x1",
        "big-batch--h200-sxm-x2",
        "big-batch--l40s-x4",
    ]
    first, amd, pair, four = entries
    assert first == {
        "id": "chat--h100-sxm-x1",
        "run": "chat",
        "gpu": "h100-sxm",
        "gpu_count": 1,
        "vendor": "nvidia",
        "resource": "gpu_h100-sxm",
        "runner_label": "h100-sxm",
        "output": "results/chat.h100-sxm-x1.json",
        "log": "results/chat.h100-sxm-x1.vllm.log",
        "command": f"infermeter bench run --model {MODEL} --max-model-len 8192 "
        "--output results/chat.h100-sxm-x1.json --gpu h100-sxm --concurrency 1,4",
        "multinode": False,
    }
    assert amd["vendor"] == "amd"
    assert pair["output"] == "results/big-batch.h200-sxm-x2.json"
    assert "--tensor-parallel-size 2" in pair["command"]
    assert "--tensor-parallel-size 4" in four["command"]
    assert all(isinstance(value, str | int) for e in entries for value in e.values())


def test_matrix_commands_are_what_bench_run_parses(tmp_path: Path) -> None:
    matrix = load_matrix(_two_runs(tmp_path))
    for entry in matrix.entries:
        options = _parsed_options(entry.command)
        assert options.model_dump(exclude={"name"}) == entry.options.model_dump(exclude={"name"})
        assert options.gpu_id == entry.gpu
        assert str(options.output) == entry.output
        assert (options.tensor_parallel_size or 1) == entry.gpu_count


def test_matrix_is_deterministic(tmp_path: Path) -> None:
    plan = str(_two_runs(tmp_path))
    assert _matrix(plan).stdout == _matrix(plan).stdout
    compact = _matrix(plan, "--compact").stdout
    assert compact.count("\n") == 1
    assert json.loads(compact) == json.loads(_matrix(plan).stdout)


def test_matrix_canary_is_the_first_entry_of_each_gpu_kind(tmp_path: Path) -> None:
    data = yaml.safe_load(_two_runs(tmp_path).read_text())
    data["runs"][1]["gpus"] = ["h100-sxm", "h200-sxm:2"]
    canary = json.loads(_matrix(str(_plan(tmp_path, data)), "--canary").stdout)["include"]
    assert [e["id"] for e in canary] == [
        "chat--h100-sxm-x1",
        "chat--mi300x-x1",
        "big-batch--h200-sxm-x2",
    ]


def test_matrix_pipeline_stages_split_the_count(tmp_path: Path) -> None:
    plan = _plan(
        tmp_path,
        {
            "runs": [
                {
                    "model": MODEL,
                    "vllm-arg": ["--pipeline-parallel-size 2"],
                    "gpus": ["h100-sxm:8"],
                }
            ]
        },
    )
    (entry,) = load_matrix(plan).entries
    assert entry.gpu_count == 8
    assert entry.options.tensor_parallel_size == 4


def test_matrix_single_gpu_run_from_its_gpu_option() -> None:
    matrix = load_matrix(REPOSITORY_ROOT / "bench" / "plans" / "example.yaml")
    assert [e.id for e in matrix.entries] == [
        "chat--h100-sxm-x1",
        "rag--h100-sxm-x1",
        "batch--h100-sxm-x1",
    ]


def test_matrix_fleet_example_covers_four_gpu_kinds() -> None:
    matrix = load_matrix(FLEET_EXAMPLE)
    assert len(matrix.entries) == 8
    assert {e.gpu for e in matrix.entries} == {"h100-sxm", "h200-sxm", "l40s", "mi300x"}
    assert [r.label for r in load_plan(FLEET_EXAMPLE)] == ["chat", "batch"]


@pytest.mark.parametrize(
    ("run", "message"),
    [
        (
            {"model": MODEL, "gpus": ["h100-sxn"]},
            "runs[0].gpus[0]: unknown GPU id 'h100-sxn'; closest: h100-sxm",
        ),
        ({"model": MODEL}, "runs[0].gpus: missing; list the GPU kinds the run needs"),
        (
            {"model": MODEL, "gpu": "h100-sxm", "gpus": ["l40s"]},
            "runs[0].gpu: give the GPU kinds in gpus: only",
        ),
        (
            {"endpoint": "http://127.0.0.1:9", "gpus": ["l40s"]},
            "runs[0].endpoint: a fleet entry launches vLLM on its own node",
        ),
        (
            {"model": MODEL, "tensor-parallel-size": 2, "gpus": ["h100-sxm:4"]},
            "runs[0].gpus[0]: 4 GPUs, but the run serves on tensor × pipeline parallel = 2 × 1",
        ),
        (
            {"model": MODEL, "vllm-arg": ["--pipeline-parallel-size 2"], "gpus": ["l40s:3"]},
            "runs[0].gpus[0]: 3 GPUs do not split into 2 pipeline stages",
        ),
        ({"model": MODEL, "gpus": ["h100-sxm:x"]}, "runs[0].gpus[0]: expected ID or ID:COUNT"),
        ({"model": MODEL, "gpus": ["h100-sxm:0"]}, "runs[0].gpus[0]: expected a whole number"),
        ({"model": MODEL, "gpus": [{"gpu": "l40s", "n": 2}]}, "runs[0].gpus[0].n: unknown key"),
        ({"model": MODEL, "gpus": [{"gpu": "l40s", "count": True}]}, "runs[0].gpus[0].count"),
        (
            {"model": MODEL, "gpus": ["l40s", "l40s"]},
            "runs[0].gpus[1]: l40s is also runs[0].gpus[0]",
        ),
        ({"model": MODEL, "gpus": []}, "runs[0].gpus: expected at least one GPU kind"),
        (
            {"model": MODEL, "gpus": ["H100 SXM"]},
            "runs[0].gpus[0]: 'H100 SXM' is not a GPU catalog id",
        ),
        (
            {"model": MODEL, "gpus": ["l40s"], "output": "r.json\n/home/runner/.ssh/*"},
            "runs[0].output: 'r.json\\n/home/runner/.ssh/*' holds a line break or control "
            "character; a fleet entry's result file is named on one line",
        ),
        (
            {"model": MODEL, "gpus": ["l40s"], "output": "r\u2028.json"},
            "runs[0].output: holds the character U+2028, which no result may hold",
        ),
        (
            {"model": MODEL, "gpus": ["l40s"], "output": "run[1].json"},
            "runs[0].output: 'run[1].json' holds a wildcard (* ? [ ]) or starts with ! or #; a "
            "workflow uploads a fleet entry's result by its path, which upload-artifact reads "
            "as a pattern",
        ),
        ({"model": MODEL, "gpus": ["l40s"], "output": "*.json"}, "'*.json' holds a wildcard"),
        ({"model": MODEL, "gpus": ["l40s"], "output": "!r.json"}, "'!r.json' holds a wildcard"),
    ],
)
def test_matrix_bad_placement_exits_1_naming_file_and_field(
    tmp_path: Path, run: dict[str, object], message: str
) -> None:
    plan = _plan(tmp_path, {"runs": [run]})
    result = _matrix(str(plan))
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"Error: {plan}: ")
    assert message in line
    assert result.stdout == ""


def test_matrix_reports_every_problem_at_once(tmp_path: Path) -> None:
    plan = _plan(
        tmp_path,
        {"runs": [{"name": "a", "model": MODEL, "gpus": ["nope"]}, {"name": "b", "model": MODEL}]},
    )
    with pytest.raises(PlanError) as caught:
        load_matrix(plan)
    assert len(caught.value.problems) == 2


def test_matrix_two_runs_with_one_name_collide(tmp_path: Path) -> None:
    runs = [
        {"name": "chat", "model": MODEL, "gpus": ["l40s"], "output": "a/r.json"},
        {"name": "chat", "model": MODEL, "gpus": ["l40s"], "output": "b/r.json"},
    ]
    result = _matrix(str(_plan(tmp_path, {"runs": runs})))
    assert result.exit_code == 1
    assert "runs[1].gpus[0]: entry chat--l40s-x1 is also runs[0].gpus[0]'s" in result.stderr


def test_plan_run_ignores_gpus_on_one_host(tmp_path: Path) -> None:
    (run,) = load_plan(_plan(tmp_path, {"runs": [{"model": MODEL, "gpus": ["l40s:2"]}]}))
    assert [g.describe() for g in run.gpus] == ["l40s:2"]
    assert run.options.tensor_parallel_size is None


def test_matrix_runs_without_outputs_get_one_each(tmp_path: Path) -> None:
    runs = [{"name": "a", "model": MODEL}, {"name": "b", "model": MODEL}]
    matrix = load_matrix(_plan(tmp_path, {"defaults": {"gpus": ["l40s"]}, "runs": runs}))
    assert [e.output for e in matrix.entries] == [
        "results/a.l40s-x1.json",
        "results/b.l40s-x1.json",
    ]


def test_fleet_unreachable_ray_cluster_exits_1_at_once(tmp_path: Path) -> None:
    plan = _two_runs(tmp_path)
    run = CliRunner().invoke(main, ["bench", "fleet", str(plan), "--ray", "127.0.0.1:1"])
    assert run.exit_code == 1
    assert run.stderr.strip() == (
        "Error: --ray: cannot connect to the Ray cluster at 127.0.0.1:1: Connection refused"
    )


def test_fleet_refuses_to_overwrite_an_earlier_fleets_results(tmp_path: Path) -> None:
    plan = _two_runs(tmp_path)
    earlier = tmp_path / "out" / "chat--mi300x-x1.json"
    earlier.parent.mkdir()
    earlier.write_text("{}")
    run = CliRunner().invoke(
        main,
        ["bench", "fleet", str(plan), "--ray", "127.0.0.1:1", "--results-dir", str(earlier.parent)],
    )
    assert run.exit_code == 1
    assert f"--results-dir: {earlier} exists from an earlier fleet run" in run.stderr
    assert earlier.read_text() == "{}"


def test_matrix_run_with_a_ray_address_is_one_multinode_entry(tmp_path: Path) -> None:
    run = {
        "model": MODEL, "name": "r1", "tensor-parallel-size": 8, "pipeline-parallel-size": 2,
        "ray-address": "auto", "gpus": ["h100-sxm", "h200-sxm:16"],
    }  # fmt: skip
    matrix = load_matrix(_plan(tmp_path, {"runs": [run]}))
    assert [(e.id, e.gpu_count, e.multinode) for e in matrix.entries] == [
        ("r1--h100-sxm-x16", 16, True),
        ("r1--h200-sxm-x16", 16, True),
    ]
    entry = matrix.entries[0]
    assert entry.as_json()["multinode"] is True
    assert "--ray-address auto" in entry.command
    assert "--pipeline-parallel-size 2" in entry.command
    assert _parsed_options(entry.command).ray_address == "auto"
