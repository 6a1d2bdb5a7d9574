"""`registry harvest mlperf` on real excerpts of the MLPerf Inference results repositories.

tests/data/harvest/mlperf-v5.1 and -v4.1 hold rows of `summary_results.json` copied verbatim
from mlcommons/inference_results_v5.1 (commit 965182b0) and v4.1 (commit 4a0c8741, where the
summary still was), with the `mlperf_log_summary.txt` of each row that reaches its log.
"""

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from registry_helpers import V41_COMMIT, V51, V51_COMMIT, git, mlperf_v51_repository

from infermeter.bench.cli.main import main
from infermeter.registry.corrections import load_corrections
from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.harvest.mlperf import harvest_mlperf
from infermeter.registry.harvest.mlperf_citation import submitter_and_system
from infermeter.registry.harvest.mlperf_log import parse_log_summary
from infermeter.registry.harvest.mlperf_names import parse_engine
from infermeter.registry.harvest.options import HarvestOptions
from infermeter.registry.harvest.sources import FileCitation
from infermeter.registry.store import read_result
from infermeter.registry.validate import validate_paths

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
DATA = REPOSITORY_ROOT / "tests" / "data" / "harvest"
V41 = DATA / "mlperf-v4.1"
V41_CITED = FileCitation(commit=V41_COMMIT)
RETRIEVED = "2026-12-01"
AMD_SERVER = "closed/AMD/results/8xMI300X_2xEPYC_9575F/llama2-70b-99.9/Server"
# AMD submitted this one run as its llama2-70b-99 result too (the same logs).
AMD_SERVER_99 = "closed/AMD/results/8xMI300X_2xEPYC_9575F/llama2-70b-99/Server"


@pytest.fixture
def source_repo(tmp_path: Path) -> Path:
    """The v5.1 excerpt as a real git repository."""
    return mlperf_v51_repository(tmp_path)


def _options(root: Path, **changes: object) -> HarvestOptions:
    return HarvestOptions(root, **({"today": RETRIEVED} | changes))  # type: ignore[arg-type]


def _results(root: Path) -> dict[str, object]:
    found = {}
    for path in (root / "registry" / "results").rglob("*.json"):
        result = read_result(path)
        mlperf = result.source.mlperf  # type: ignore[union-attr]
        found[f"{mlperf.result_id} {mlperf.benchmark} {mlperf.scenario}"] = result
    return found


def test_harvest_reads_each_scenario_as_what_it_measured(source_repo: Path, registry: Path) -> None:
    report = harvest_mlperf(source_repo, "5.1", _options(registry))
    results = _results(registry)
    assert len(report.added) == len(results) == 13
    server = results["5.1-0001 llama2-70b-99.9 Server"]
    (point,) = server.points  # type: ignore[attr-defined]
    # Every figure as mlperf_log_summary.txt states it (ns → ms).
    assert point.load.arrival == "poisson"
    assert point.load.request_rate == 83.5
    assert (point.load.rate_search.ttft_ms, point.load.rate_search.tpot_ms) == (2000.0, 200.0)
    assert point.ttft_ms.p99 == pytest.approx(1914.647645)
    assert point.ttft_ms.mean == pytest.approx(918.456323)
    assert point.tpot_ms.p99 == pytest.approx(193.380124)
    assert point.e2e_ms.max == pytest.approx(165057.12734)
    assert point.throughput.output_tokens_per_s == 24593.77
    assert point.throughput.requests_per_s == 81.68
    identity = server.identity  # type: ignore[attr-defined]
    assert (identity.gpu.id, identity.gpu.count, identity.gpu.nodes) == ("mi300x", 8, 1)
    assert identity.engine.name == "vllm"
    assert identity.engine.version == "0.9.0.2.dev108+g71faa1880.d20250730.rocm641"
    assert identity.model.quantization == "fp8"
    offline = results["5.1-0001 llama2-70b-99.9 Offline"].points[0]  # type: ignore[attr-defined]
    assert (offline.load.arrival, offline.requests.sent) == ("offline", 245520)
    assert offline.throughput.output_tokens_per_s == 27803.9
    interactive = results["5.1-0001 llama2-70b-99.9 Interactive"].points[0]  # type: ignore[attr-defined]
    assert (interactive.load.rate_search.ttft_ms, interactive.load.rate_search.tpot_ms) == (
        450.0,
        40.0,
    )
    assert interactive.load.request_rate == 29.5


def test_harvest_keeps_what_mlperf_requires_to_show_a_result(
    source_repo: Path, registry: Path
) -> None:
    harvest_mlperf(source_repo, "5.1", _options(registry))
    source = _results(registry)["5.1-0001 llama2-70b-99.9 Server"].source  # type: ignore[attr-defined]
    commit = git(source_repo, "rev-parse", "HEAD")
    assert source.revision == commit
    assert source.url == (
        f"https://github.com/mlcommons/inference_results_v5.1/tree/{commit}/{AMD_SERVER}"
    )
    entry = source.mlperf
    assert (entry.result_id, entry.submitter, entry.round, entry.division) == (
        "5.1-0001",
        "AMD",
        "v5.1",
        "closed",
    )
    assert entry.system == "Supermicro AS-8125GS-TNMR2"
    assert entry.footnote.startswith("MLPerf® v5.1 Inference Closed llama2-70b-99.9 Server.")
    assert "entry 5.1-0001" in entry.footnote
    assert "registered and unregistered trademarks of MLCommons" in entry.footnote
    assert source.retrieved == RETRIEVED


def test_harvest_skips_what_it_cannot_import_faithfully(source_repo: Path, registry: Path) -> None:
    report = harvest_mlperf(source_repo, "5.1", _options(registry))
    reasons = dict(report.skipped)
    assert len(reasons) == 8  # the ResNet row is not considered
    assert "heterogeneous system" in reasons["mlperf v5.1 5.1-0065 llama2-70b-99 Offline"]
    assert "CPU-only" in reasons["mlperf v5.1 5.1-0017 llama3.1-8b Offline"]
    assert (
        "the same run as llama2-70b-99.9" in reasons["mlperf v5.1 5.1-0085 llama2-70b-99 Offline"]
    )


@pytest.mark.parametrize(
    ("submitter", "system", "title"),
    [
        ("NVIDIA", "NVIDIA Vera Rubin NVL72", "NVIDIA Vera Rubin NVL72"),
        ("Dell", "dell PowerEdge XE9680", "dell PowerEdge XE9680"),
        ("HPE", "HPE", "HPE"),
        # Another word that starts with the submitter's name, or the name later on, is not it.
        ("Dell", "DellEMC XE8545", "Dell DellEMC XE8545"),
        ("AMD", "Supermicro AS-8125GS-TNMR2", "AMD Supermicro AS-8125GS-TNMR2"),
        ("Azure", "Microsoft Azure ND H200 v5", "Azure Microsoft Azure ND H200 v5"),
    ],
)
def test_a_title_names_the_submitter_once(submitter: str, system: str, title: str) -> None:
    assert submitter_and_system(submitter, system) == title


def test_no_stored_title_repeats_its_submitter() -> None:
    titles = 0
    for path in (REPOSITORY_ROOT / "registry" / "results").rglob("*.json"):
        source = json.loads(path.read_text(encoding="utf-8"))["source"]
        if "mlperf" not in source:
            continue
        titles += 1
        submitter = re.escape(source["mlperf"]["submitter"])
        repeated = re.search(rf"(?<!\w){submitter}\s+{submitter}(?!\w)", source["title"], re.I)
        assert repeated is None, f"{path.name}: {source['title']}"
    assert titles > 1000


def test_multi_node_systems_count_every_accelerator(source_repo: Path, registry: Path) -> None:
    harvest_mlperf(source_repo, "5.1", _options(registry))
    nvl72 = _results(registry)["5.1-0071 deepseek-r1 Offline"].identity.gpu  # type: ignore[attr-defined]
    assert (nvl72.id, nvl72.nodes, nvl72.count) == ("gb200", 18, 72)


def test_a_table_unit_that_disagrees_with_the_log_is_said(
    source_repo: Path, registry: Path
) -> None:
    harvest_mlperf(source_repo, "5.1", _options(registry))
    result = _results(registry)["5.1-0069 llama3.1-8b Interactive"]
    log = parse_log_summary(
        (V51 / "closed/NVIDIA/results/B200-SXM-180GBx8_TRT/llama3.1-8b/Interactive"
         / "performance/run_1/mlperf_log_summary.txt").read_text()
    )  # fmt: skip
    point = result.points[0]  # type: ignore[attr-defined]
    assert point.throughput.output_tokens_per_s == float(log["Completed tokens per second"])
    assert "Queries/s" in result.source.conditions  # type: ignore[attr-defined]


def test_harvest_twice_changes_nothing_and_a_new_commit_is_a_correction(
    source_repo: Path, registry: Path
) -> None:
    first = harvest_mlperf(source_repo, "5.1", _options(registry))
    again = harvest_mlperf(source_repo, "5.1", _options(registry, today="2027-03-01"))
    assert (again.added, again.changed, len(again.unchanged)) == ([], [], len(first.added))
    for folder in (AMD_SERVER, AMD_SERVER_99):
        log = source_repo / folder / "performance/run_1/mlperf_log_summary.txt"
        log.write_text(log.read_text().replace("target_qps : 83.5", "target_qps : 83.4"))
    git(source_repo, "commit", "-q", "-am", "a later commit")
    later = harvest_mlperf(source_repo, "5.1", _options(registry, today="2027-03-01"))
    # A new commit changes every row's URL; each replaces its old file with a correction.
    assert len(later.changed) == len(first.added)
    assert later.added == []
    entries = load_corrections(registry / "registry" / "corrections.yaml")
    assert len(entries) == len(first.added)
    assert {entry.kind for entry in entries} == {"correction"}
    server = _results(registry)["5.1-0001 llama2-70b-99.9 Server"]
    assert server.points[0].load.request_rate == 83.4  # type: ignore[attr-defined]
    assert server.source.retrieved == RETRIEVED  # type: ignore[attr-defined]  # first read
    assert validate_paths(registry_root=registry).ok


def test_dry_run_writes_nothing(source_repo: Path, registry: Path) -> None:
    report = harvest_mlperf(source_repo, "5.1", _options(registry, dry_run=True))
    assert len(report.added) == 13
    assert not list((registry / "registry" / "results").rglob("*.json"))


def test_cli_prints_added_skipped_and_a_summary(source_repo: Path, registry: Path) -> None:
    arguments = ["registry", "harvest", "mlperf", "--round", "5.1", "--from", str(source_repo)]
    arguments += ["--registry", str(registry), "--retrieved", RETRIEVED]
    outcome = CliRunner().invoke(main, arguments)
    assert outcome.exit_code == 0, outcome.output
    lines = outcome.output.splitlines()
    assert lines[-1] == "13 added, 0 changed, 0 unchanged, 8 skipped"
    assert sum(line.startswith("added registry/results/") for line in lines) == 13
    assert any(line.startswith("skipped mlperf v5.1 5.1-0065") for line in lines)
    as_json = CliRunner().invoke(main, [*arguments, "--json"])
    assert json.loads(as_json.output)["unchanged"] == 13


@pytest.mark.parametrize(
    ("arguments", "message", "code"),
    [
        # A value --round never takes is a usage error (exit 2), as a bad value of any option.
        (["--round", "five"], "--round: 'five' is not an MLPerf round", 2),
        (
            ["--round", "9.9"],
            "--round: v9.9 is not a round this harvester reads "
            "(the rounds it reads: v4.0, v4.1, v5.1, v6.0, v6.1)",
            2,
        ),
        (["--round", "5.1", "--retrieved", "yesterday"], "--retrieved: 'yesterday' is not a", 2),
        # What the source holds disagrees with the options: bad input (exit 1).
        (["--round", "6.0"], "--round: v6.0, but the results table read is of v5.1 (the rounds", 1),
        (["--round", "5.1", "--commit", "nope"], "--commit: 'nope' names no commit", 1),
    ],
)
def test_cli_bad_input_is_one_line(
    source_repo: Path, registry: Path, arguments: list[str], message: str, code: int
) -> None:
    command = ["registry", "harvest", "mlperf", "--from", str(source_repo)]
    outcome = CliRunner().invoke(main, [*command, "--registry", str(registry), *arguments])
    assert outcome.exit_code == code
    assert message in outcome.output
    assert len(outcome.output.splitlines()) == 1
    assert not list((registry / "registry").rglob("*.json"))


def test_a_plain_folder_needs_its_commit(registry: Path) -> None:
    with pytest.raises(HarvestError, match="name the commit it was copied from"):
        harvest_mlperf(V51, "5.1", _options(registry))


@pytest.mark.parametrize(
    ("software", "engine"),
    [
        # NVIDIA's LLM harness runs TensorRT-LLM; the submission names only TensorRT.
        ("TensorRT 10.11, CUDA 12.9", ("tensorrt-llm", "unstated (TensorRT 10.11)")),
        (
            "TensorRT 10.14, CUDA 13.1, cuDNN 9.17, TensorRT-LLM feat/1.2-mlpinf",
            ("tensorrt-llm", "feat/1.2-mlpinf"),
        ),
        ("Mango LLMBoost AI Enterprise Platform, ROCm 6.12.12", ("llmboost", "unstated")),
        ("vLLM 0.10.0, RHEL 9.6", ("vllm", "0.10.0")),
        (
            "Mango LLMBoost AI Enterprise Platform, vllm-0.9.0.2.dev108+g71faa1880.d20250717."
            "rocm641, ROCm 6.12.12",
            ("vllm", "0.9.0.2.dev108+g71faa1880.d20250717.rocm641"),
        ),
        ("PyTorch", None),
        ("CUDA 12.2", None),
        # RedHat's v6.0 Qwen3-VL rows: components joined by ' + ', vLLM named bare.
        (
            "vLLM  + NVIDIA-dynamo + MLPerf Inference Qwen3-VL harness, RHEL 10.1",
            ("vllm", "unstated"),
        ),
    ],
)
def test_parse_engine(software: str, engine: tuple[str, str] | None) -> None:
    parsed = parse_engine(software)
    assert (parsed[:2] if parsed else None) == engine


@pytest.mark.parametrize(
    ("folder", "round_name", "commit", "expected"),
    [(V51, "5.1", V51_COMMIT, 13), (V41, "4.1", V41_COMMIT, 7)],
)
def test_registry_files_match_the_pinned_excerpts(
    registry: Path, folder: Path, round_name: str, commit: str, expected: int
) -> None:
    """Re-read the cited source (a pinned excerpt) and find every number in the registry.

    The excerpt's rows harvested afresh must equal, byte for byte, the files the registry
    holds for them: every throughput, rate, bound and latency figure of the sample.
    """
    report = harvest_mlperf(
        folder, round_name, _options(registry), cited=FileCitation(commit=commit)
    )
    assert len(report.added) == expected
    numbers = 0
    for relative in report.added:
        fresh = (registry / relative).read_text(encoding="utf-8")
        committed = REPOSITORY_ROOT / relative
        assert committed.is_file(), f"{relative} is not in the registry"
        assert committed.read_text(encoding="utf-8") == fresh
        numbers += fresh.count('": ') - fresh.count('": "') - fresh.count('": {')
    assert numbers >= 20


def test_an_open_division_run_of_its_own_7b_model_is_filed_as_that_model(registry: Path) -> None:
    """NeuralMagic's v4.1-0110 ran its FP8 Llama-2-7b-chat under the llama2-70b-99.9 benchmark
    (open division): filed as that model, in its own lane; its v4.1-0109 row declares fp32
    weights of the 70B benchmark model on 2 × RTX 4090, which cannot fit, and is refused."""
    report = harvest_mlperf(V41, "4.1", _options(registry), cited=V41_CITED)
    results = _results(registry)
    server = results["v4.1-0110 llama2-70b-99.9 Server"]
    identity = server.identity  # type: ignore[attr-defined]
    assert (identity.model.id, identity.model.quantization) == ("llama-2-7b-chat", "fp8")
    engine_version = identity.engine.version
    assert (identity.gpu.id, identity.gpu.count, engine_version) == ("rtx-4090", 2, "0.5.2")
    assert server.source.mlperf.division == "open"  # type: ignore[attr-defined]
    assert "ran its own model neuralmagic_Llama-2-7b-chat-hf-FP8" in server.source.conditions  # type: ignore[attr-defined]
    (point,) = server.points  # type: ignore[attr-defined]
    assert point.ttft_ms.p99 is not None
    assert point.tpot_ms.p99 is not None
    reason = dict(report.skipped)["mlperf v4.1 v4.1-0109 llama2-70b-99.9 Offline"]
    assert "do not fit the 52 GB of 2 × rtx-4090" in reason


def test_one_run_submitted_for_both_accuracy_targets_is_one_result(registry: Path) -> None:
    """v4.1-0021's llama2-70b-99 and -99.9 Server rows have byte-identical logs: one run."""
    report = harvest_mlperf(V41, "4.1", _options(registry), cited=V41_CITED)
    reasons = dict(report.skipped)
    assert (
        "the same run as llama2-70b-99.9" in reasons["mlperf v4.1 v4.1-0021 llama2-70b-99 Server"]
    )
    results = _results(registry)
    assert "v4.1-0021 llama2-70b-99 Server" not in results
    merged = results["v4.1-0021 llama2-70b-99.9 Server"]
    target = merged.identity.workload.accuracy_target  # type: ignore[attr-defined]
    assert "llama2-70b-99.9 and llama2-70b-99" in target


def test_a_run_filed_twice_before_is_corrected_to_one(source_repo: Path, registry: Path) -> None:
    """A registry that holds a -99 result of the same run as a -99.9 result (harvested when
    the logs differed) gets a correction to the one result, and passes `validate --base`."""
    log_99 = source_repo / AMD_SERVER_99 / "performance/run_1/mlperf_log_summary.txt"
    same = log_99.read_text()
    log_99.write_text(same.replace("target_qps : 83.5", "target_qps : 83.0"))
    git(source_repo, "commit", "-q", "-am", "two runs")
    first = harvest_mlperf(source_repo, "5.1", _options(registry))
    assert len(first.added) == 14  # the Server rows are two runs here
    git(registry, "init", "-q", "-b", "main")
    git(registry, "add", ".")
    git(registry, "commit", "-q", "-m", "merged")
    log_99.write_text(same)
    git(source_repo, "commit", "-q", "-am", "one run")
    later = harvest_mlperf(source_repo, "5.1", _options(registry))
    assert later.added == []
    results = _results(registry)
    assert "5.1-0001 llama2-70b-99 Server" not in results
    merged_id = results["5.1-0001 llama2-70b-99.9 Server"].id  # type: ignore[attr-defined]
    entries = load_corrections(registry / "registry" / "corrections.yaml")
    into_one = [e for e in entries if "llama2-70b-99 Server" in e.reason]
    assert [(e.kind, e.replaced_by) for e in into_one] == [("correction", merged_id)]
    assert validate_paths(registry_root=registry, base="main").ok


def test_one_run_filed_under_two_result_ids_is_one_result(
    source_repo: Path, registry: Path
) -> None:
    """AMD's open-division 5.1-0098 (llama2-70b-99) and 5.1-0099 (-99.9) have one log."""
    report = harvest_mlperf(source_repo, "5.1", _options(registry))
    reason = dict(report.skipped)["mlperf v5.1 5.1-0098 llama2-70b-99 Offline"]
    assert "the same run as llama2-70b-99.9 5.1-0099" in reason
    merged = _results(registry)["5.1-0099 llama2-70b-99.9 Offline"]
    assert merged.source.mlperf.division == "open"  # type: ignore[attr-defined]
    assert "and llama2-70b-99" in merged.identity.workload.accuracy_target  # type: ignore[attr-defined]


def test_an_open_division_run_of_the_submitter_s_own_model(
    source_repo: Path, registry: Path
) -> None:
    """Krai's 5.1-0384 ran Llama 3.1 70B FP8 (UsedModel llama3_1-70b-fp8_dyn) under the
    llama2-70b-99.9 benchmark: filed as that model, in the open-division lane."""
    harvest_mlperf(source_repo, "5.1", _options(registry))
    krai = _results(registry)["5.1-0384 llama2-70b-99.9 Server"]
    model = krai.identity.model  # type: ignore[attr-defined]
    assert (model.id, model.quantization) == ("llama-3.1-70b-instruct", "fp8")
    assert krai.identity.engine.version == "0.9.2"  # type: ignore[attr-defined]  # 'vLLM v0.9.2'
    assert krai.source.mlperf.division == "open"  # type: ignore[attr-defined]
    assert "own model llama3_1-70b-fp8_dyn" in krai.source.conditions  # type: ignore[attr-defined]
