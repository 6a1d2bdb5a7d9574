"""`bench run --plan FILE.yaml`: a matrix of runs against an in-process STAND-IN vLLM server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from bench_helpers import STANDIN_MODEL, standin_server
from click.testing import CliRunner, Result
from standin_vllm import StandinVllm

from infermeter.bench.cli.main import main
from infermeter.bench.launch.server import free_port
from infermeter.bench.plan.file import PlanError, load_plan
from infermeter.registry.models import Result as RegistryResult

EXAMPLE = Path(__file__).resolve().parents[2] / "bench" / "plans" / "example.yaml"


@pytest.fixture
def standin() -> Iterator[StandinVllm]:
    """The stand-in vLLM's server (`/version`, `/metrics`, streaming) in this process."""
    with standin_server(itl_s=None) as server:
        yield server


def _plan(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "plan.yaml"
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
    return path


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(main, ["bench", "run", *args])


def _defaults(url: str) -> dict[str, object]:
    return {
        "endpoint": url,
        "model": STANDIN_MODEL,
        "gpu": "h100-sxm",
        "num-requests": 4,
        "warmup": 1,
        "input-len": 16,
        "output-len": 8,
    }


def test_plan_two_runs_write_two_results_and_json_summaries(
    tmp_path: Path, standin: StandinVllm
) -> None:
    plan = _plan(
        tmp_path,
        {
            "defaults": _defaults(standin.url),
            "runs": [
                {"name": "closed", "concurrency": [1, 2], "output": str(tmp_path / "a.json")},
                {
                    "name": "prefix",
                    "concurrency": 2,
                    "shared-prefix-tokens": 8,
                    "slo_ttft_ms": 5000,
                    "output": str(tmp_path / "b.json"),
                },
            ],
        },
    )
    run = _invoke("--plan", str(plan), "--json")
    assert run.exit_code == 0, run.output
    summary = json.loads(run.stdout)
    assert [r["name"] for r in summary["runs"]] == ["closed", "prefix"]
    assert [[p["concurrency"] for p in r["points"]] for r in summary["runs"]] == [[1, 2], [2]]
    assert all(r["error"] is None for r in summary["runs"])
    first = RegistryResult.model_validate_json((tmp_path / "a.json").read_text())
    second = RegistryResult.model_validate_json((tmp_path / "b.json").read_text())
    assert first.identity.workload.profile == "custom"  # --input-len overrides the profile
    assert first.identity.workload.dataset is None
    assert second.slo.ttft_ms == 5000
    assert second.identity.workload.dataset is not None
    assert "same 8-token prefix" in second.identity.workload.dataset
    assert second.source.command.startswith(f"infermeter bench run --endpoint {standin.url}")
    assert "--shared-prefix-tokens 8" in second.source.command
    prompts = [body["prompt"].split() for body in standin.stats.bodies[-5:]]
    assert len({tuple(words[:8]) for words in prompts}) == 1
    assert len({tuple(words[8:]) for words in prompts}) == 5
    assert "run 2/2: prefix" in run.stderr


def test_plan_failing_run_is_reported_and_the_next_runs(
    tmp_path: Path, standin: StandinVllm
) -> None:
    defaults = _defaults(standin.url)
    gone = f"http://127.0.0.1:{free_port()}"
    runs = [
        {"name": "gone", "endpoint": gone, "concurrency": 1},
        {"concurrency": 1, "output": str(tmp_path / "ok.json")},
    ]
    run = _invoke("--plan", str(_plan(tmp_path, {"defaults": defaults, "runs": runs})))
    assert run.exit_code == 1
    assert f"gone failed: --endpoint: cannot reach {gone}" in run.stderr
    assert (tmp_path / "ok.json").exists()
    assert run.stderr.strip().splitlines()[-1] == (
        "Error: 1 of 2 runs failed or are incomplete: gone"
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            {"runs": [{"endpoint": "http://h", "concurrncy": [1]}]},
            "runs[0].concurrncy: unknown key 'concurrncy'; closest: concurrency",
        ),
        (
            {"runs": [{"endpoint": "http://h"}, {"endpoint": "http://h", "concurrency": [1, "x"]}]},
            "runs[1].concurrency[1]: Input should be a valid integer",
        ),
        ({"runs": []}, "runs: expected a list of at least one run"),
        ("runs:\n  - {endpoint: http://h\n", "plan.yaml:3:1: not valid YAML"),
        (
            {"defaults": {"max-model-len": "big"}, "runs": [{"model": "m"}]},
            "defaults.max-model-len: Input should be a valid integer",
        ),
        (
            {"runs": [{"endpoint": "http://h", "max-model-len": 4096}]},
            "runs[0].max-model-len: only applies when bench run launches vLLM",
        ),
        ({"runs": [{"concurrency": 4}]}, "runs[0].model: missing"),
        (
            {"runs": [{"model": "m"}, {"model": "m"}]},
            "runs[1].output: infermeter-result.json is also runs[0]'s result file",
        ),
        (
            {"runs": [{"endpoint": "http://h", "input-len": "normal:5"}]},
            "runs[0].input-len: 'normal:5' is not a length",
        ),
        ({"runs": [{"endpoint": "http://h", "profile": "chatty"}]}, "unknown profile 'chatty'"),
        ({"runs": [{"model": "m"}], "run": 1}, "run: unknown key"),
    ],
)
def test_plan_bad_file_exits_1_with_one_line_naming_the_path(
    tmp_path: Path, content: object, message: str
) -> None:
    plan = _plan(tmp_path, content)
    run = _invoke("--plan", str(plan))
    assert run.exit_code == 1
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith(f"Error: {plan}")
    assert message in line


def test_plan_missing_file_exits_1_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.yaml"
    run = _invoke("--plan", str(missing))
    assert run.exit_code == 1
    expected = f"Error: {missing}: cannot read the plan: No such file or directory"
    assert run.stderr.strip() == expected


def test_plan_reports_every_problem_at_once(tmp_path: Path) -> None:
    plan = _plan(tmp_path, {"runs": [{"endpoint": "http://h", "seed": "x"}, {"port": 0}]})
    with pytest.raises(PlanError) as caught:
        load_plan(plan)
    assert len(caught.value.problems) == 2


@pytest.mark.parametrize(
    ("key", "value"),
    [("model", "org/a\0b"), ("vllm-arg", ["--served-model-name a\0b"]), ("output", "r\0.json"),
     ("tokenizer", "t\0"), ("kv-cache-dtype", "fp8\0")],
)  # fmt: skip
def test_plan_refuses_a_nul_in_a_word_of_the_command(
    tmp_path: Path, key: str, value: object
) -> None:
    # Only a plan can give one (a command line cannot); vLLM's, the bench's or a rendered
    # Job's command would end the word at it.
    plan = _plan(tmp_path, {"runs": [{"model": "org/m", key: value}]})
    with pytest.raises(PlanError) as caught:
        load_plan(plan)
    assert caught.value.problems == [
        f"{plan}: runs[0].{key}: holds a NUL character, which no command-line word can hold"
    ]


def test_plan_with_other_run_options_is_a_usage_error(tmp_path: Path) -> None:
    run = _invoke("--plan", str(_plan(tmp_path, {"runs": [{"model": "m"}]})), "--seed", "3")
    assert run.exit_code == 2
    assert "--plan: the plan file holds the run options; drop --seed" in run.stderr


def test_plan_example_is_valid_with_its_commented_run(tmp_path: Path) -> None:
    runs = load_plan(EXAMPLE)
    assert [run.label for run in runs] == ["chat", "rag", "batch"]
    assert [run.options.profile for run in runs] == ["chat", "rag", "batch"]
    assert all(len(run.options.concurrency) > 1 for run in runs)
    text = EXAMPLE.read_text().replace("  # - name", "  - name").replace("  #   ", "    ")
    (extra,) = [run for run in load_plan(_plan(tmp_path, text)) if run.label.endswith("prefix")]
    assert extra.options.shared_prefix_tokens == 1024
    assert extra.options.vllm_args == ("--enable-prefix-caching",)
