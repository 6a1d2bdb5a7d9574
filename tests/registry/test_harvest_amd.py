"""`registry harvest amd` on real excerpts of ROCm/vllm's docs/dev-docker/README.md.

tests/data/harvest/amd/README-f94ec9be.md holds the title, image components and performance
tables of the README at ROCm/vllm commit f94ec9be (image release 20250715_aiter), verbatim;
README-46476bdd.md the same part at 46476bdd (20250207_aiter: latency in ms, whole-number
throughput, and 405B latency rows that name the 70B checkpoint).
"""

import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from registry_helpers import assert_committed, results_by_marker

from infermeter.bench.cli.main import main
from infermeter.registry.harvest.amd import harvest_amd, parse_tables
from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.harvest.options import HarvestOptions
from infermeter.registry.harvest.sources import FileCitation
from infermeter.registry.index_rows import index_rows
from infermeter.registry.models import Result
from infermeter.registry.prices import PriceBook
from infermeter.registry.store import read_result

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
DATA = REPOSITORY_ROOT / "tests/data/harvest/amd"
PAGE = DATA / "README-f94ec9be.md"
COMMIT = "f94ec9beeca1071cc34f9d1e206d8c7f3ac76129"
CITED = FileCitation(commit=COMMIT)
EARLY_PAGE = DATA / "README-46476bdd.md"
EARLY_COMMIT = "46476bdd0b131264379c633883ba7bf0833c7cde"
RETRIEVED = "2026-12-01"


def _harvest(registry: Path, page: Path = PAGE, commit: str = COMMIT) -> dict[str, Result]:
    harvest_amd(page, HarvestOptions(registry, today=RETRIEVED), cited=FileCitation(commit=commit))
    return results_by_marker(registry, "row")


def test_every_row_of_both_tables_is_read() -> None:
    rows = parse_tables(PAGE.read_text(encoding="utf-8"))
    assert [row.table for row in rows].count("throughput") == 8
    assert [row.table for row in rows].count("latency") == 32
    assert {row.unit for row in rows} == {"tokens/s", "sec"}
    last = rows[-1]
    assert (last.model, last.size, last.input_len, last.printed) == (
        "Llama 3.1 405B (amd/Llama-3.1-405B-Instruct-FP8-KV)",
        128,
        2048,
        "125.471",
    )


def test_a_throughput_row_is_an_offline_total_token_rate(registry: Path) -> None:
    results = _harvest(registry)
    result = results[
        "throughput | Llama 3.1 70B (amd/Llama-3.1-70B-Instruct-FP8-KV) | TP8 | 128/2048 | "
        "prompts 3200"
    ]
    (point,) = result.points
    assert point.load.arrival == "offline"
    assert point.throughput.total_tokens_per_s == 12638.9
    assert point.throughput.output_tokens_per_s is None  # never derived from the total
    assert point.requests.sent == 3200
    assert [verdict.code for verdict in point.validity] == ["token-kind-inferred"]
    identity = result.identity
    assert (identity.gpu.id, identity.gpu.count, identity.serving.tensor_parallel_size) == (
        "mi300x",
        8,
        8,
    )
    assert identity.serving.max_num_seqs == 3200
    assert identity.model.hf_repo == "amd/Llama-3.1-70B-Instruct-FP8-KV"
    assert identity.model.quantization == "fp8"
    assert identity.engine.version == "0.9.1 (ROCm image 20250715_aiter)"
    conditions = result.source.conditions  # type: ignore[union-attr]
    assert "tokens_per_second = (prompt + output tokens) / elapsed time" in conditions
    assert "ROCm 6.4.1" in conditions


def test_a_latency_row_is_a_static_batch_and_stays_apart(registry: Path) -> None:
    results = _harvest(registry)
    result = results[
        "latency | Llama 3.1 405B (amd/Llama-3.1-405B-Instruct-FP8-KV) | TP8 | 128/2048 | batch 32"
    ]
    (point,) = result.points
    assert (point.load.arrival, point.load.concurrency) == ("static_batch", 32)
    assert point.e2e_ms is not None
    assert point.e2e_ms.mean == 68901.0  # 68.901 s as printed
    assert point.throughput.model_dump(exclude_none=True) == {}
    (row,) = index_rows(result, "f.json", PriceBook([]))
    assert (row.scenario, row.arrival, row.concurrency) == ("static_batch", "static_batch", 32)
    assert row.tokens_per_s_per_user is None
    assert row.load_label == "static batch of 32 (started together)"
    conditions = result.source.conditions  # type: ignore[union-attr]
    assert "under the table): Supermicro AS-8125GS-TNMR2 with 2x AMD EPYC 9554" in conditions


def test_early_units_and_mislabelled_rows(registry: Path) -> None:
    report = harvest_amd(
        EARLY_PAGE,
        HarvestOptions(registry, today=RETRIEVED),
        cited=FileCitation(commit=EARLY_COMMIT),
    )
    assert len(report.added) == 24
    assert len(report.skipped) == 16
    assert {reason for _, reason in report.skipped} == {
        "the row names Llama 3.1 405B but the checkpoint amd/Llama-3.1-70B-Instruct-FP8-KV: "
        "not guessed"
    }
    results = _harvest(registry, EARLY_PAGE, EARLY_COMMIT)
    latency = results[
        "latency | Llama 3.1 70B (amd/Llama-3.1-70B-Instruct-FP8-KV) | TP8 | 128/2048 | batch 1"
    ]
    assert latency.points[0].e2e_ms.mean == 19088.59  # type: ignore[union-attr]  # ms as printed
    throughput = results[
        "throughput | Llama 3.1 405B (amd/Llama-3.1-405B-Instruct-FP8-KV) | TP8 | 2048/2048 | "
        "prompts 500"
    ]
    assert throughput.points[0].throughput.total_tokens_per_s == 1999
    assert throughput.identity.engine.version == "0.6.6 (ROCm image 20250207_aiter)"
    assert "System (as printed" not in throughput.source.conditions  # type: ignore[union-attr]


def test_twice_changes_nothing(registry: Path) -> None:
    first = harvest_amd(PAGE, HarvestOptions(registry, today=RETRIEVED), cited=CITED)
    again = harvest_amd(PAGE, HarvestOptions(registry, today="2027-01-01"), cited=CITED)
    assert (len(first.added), again.added, again.changed, len(again.unchanged)) == (
        40,
        [],
        [],
        40,
    )


def test_a_page_with_crlf_line_ends_is_the_same_page(registry: Path, tmp_path: Path) -> None:
    # A README saved on Windows: its scripts note ('*Note Benchmarks were run with …*\r') was
    # lost, so all 40 rows came out as other results (the same rows, changed).
    first = harvest_amd(PAGE, HarvestOptions(registry, today=RETRIEVED), cited=CITED)
    crlf = tmp_path / "README.md"
    crlf.write_bytes(PAGE.read_bytes().replace(b"\n", b"\r\n"))
    again = harvest_amd(crlf, HarvestOptions(registry, today=RETRIEVED), cited=CITED)
    assert (len(first.added), again.added, again.changed, len(again.unchanged)) == (40, [], [], 40)


def test_a_checkout_is_read_at_its_commit(registry: Path, tmp_path: Path) -> None:
    checkout = tmp_path / "vllm"
    (checkout / "docs/dev-docker").mkdir(parents=True)
    shutil.copy(EARLY_PAGE, checkout / "docs/dev-docker/README.md")

    def git(*arguments: str) -> str:
        return subprocess.run(
            ["git", "-C", str(checkout), "-c", "user.name=t", "-c", "user.email=t@t", *arguments],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()

    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "early")
    early = git("rev-parse", "HEAD")
    shutil.copy(PAGE, checkout / "docs/dev-docker/README.md")  # the working file is not read
    report = harvest_amd(checkout, HarvestOptions(registry, today=RETRIEVED))
    assert len(report.added) == 24
    result = read_result(registry / report.added[0])
    assert result.source.revision == early  # type: ignore[union-attr]
    assert result.source.url.endswith(f"/blob/{early}/docs/dev-docker/README.md")  # type: ignore[union-attr]


def test_bad_input_is_one_line(registry: Path, tmp_path: Path) -> None:
    with pytest.raises(HarvestError, match="name the commit it was taken from"):
        harvest_amd(PAGE, HarvestOptions(registry))
    page = tmp_path / "README.md"
    page.write_text("# notes\n\nno tables here\n", encoding="utf-8")
    with pytest.raises(HarvestError, match="the title names no AMD Instinct GPU"):
        harvest_amd(page, HarvestOptions(registry), cited=CITED)


def test_cli(registry: Path) -> None:
    arguments = ["registry", "harvest", "amd", "--from", str(PAGE), "--commit", COMMIT]
    outcome = CliRunner().invoke(
        main, [*arguments, "--registry", str(registry), "--retrieved", RETRIEVED]
    )
    assert outcome.exit_code == 0, outcome.output
    assert outcome.output.splitlines()[-1] == "40 added, 0 changed, 0 unchanged, 0 skipped"
    missing = CliRunner().invoke(main, [*arguments[:5], "--registry", str(registry)])
    assert missing.exit_code == 1
    assert missing.output.strip().splitlines() == [
        f"Error: --from: {PAGE} is a file; name the commit it was taken from with --commit"
    ]


@pytest.mark.parametrize(("page", "commit"), [(PAGE, COMMIT), (EARLY_PAGE, EARLY_COMMIT)])
def test_registry_files_match_the_pinned_excerpt(registry: Path, page: Path, commit: str) -> None:
    """Re-read the cited README (the pinned excerpt): every row's file is in the registry."""
    report = harvest_amd(
        page, HarvestOptions(registry, today=RETRIEVED), cited=FileCitation(commit=commit)
    )
    assert report.added
    assert_committed(registry, report.added)
