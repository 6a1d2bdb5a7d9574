"""Each harvest source is declared once (`registry/harvest/sources.py`): the CLI has one command
per declaration, each declaration's function takes the options it declares, and the Downloads
page's licences name each source's terms."""

import inspect
from pathlib import Path

import pytest
from click.testing import CliRunner
from registry_checkout import empty_registry

from infermeter.bench.cli.harvest import harvest_group
from infermeter.registry.harvest.sources import (
    MLPERF,
    NOT_CITED,
    SKYPILOT,
    SOURCES,
    TRTLLM,
    FileCitation,
    HarvestSource,
    sources_markdown,
)
from infermeter.registry.licences import LICENCES


def test_the_cli_has_one_command_per_declared_source() -> None:
    assert list(harvest_group.commands) == [source.name for source in SOURCES]
    assert len({source.gpu_names for source in SOURCES}) == len(SOURCES)


@pytest.mark.parametrize("source", SOURCES, ids=lambda source: source.name)
def test_a_declared_function_takes_the_declared_options(source: HarvestSource) -> None:
    module, name = source.harvest.split(":")
    function = getattr(__import__(module, fromlist=[name]), name)
    values = {option.keyword: None for option in source.options}
    inspect.signature(function).bind(Path("x"), options=None, **source.arguments(values))


def test_the_citing_options_reach_the_function_as_one_citation() -> None:
    values = {"round_text": "5.1", "commit": "ab33b214", "url": None, "read_from": "a fork"}
    assert MLPERF.arguments(values) == {
        "round_text": "5.1",
        "cited": FileCitation(commit="ab33b214", read_from="a fork"),
    }
    assert TRTLLM.arguments({"commit": None, "url": None, "engine_version": "1.0"}) == {
        "cited": NOT_CITED,
        "engine_version": "1.0",
    }
    assert SKYPILOT.arguments({}) == {}


def test_each_source_states_its_terms_on_the_downloads_page() -> None:
    stated = {(licence.data, licence.where) for licence in LICENCES}
    assert {(source.data, source.terms_url) for source in SOURCES} <= stated


def test_an_option_a_source_does_not_declare_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        harvest_group, ["amd", "--from", str(tmp_path), "--range-ratio", "0.5"]
    )
    assert result.exit_code == 2
    assert "No such option '--range-ratio'" in result.output


@pytest.mark.parametrize("source", SOURCES, ids=lambda source: source.name)
def test_each_source_has_its_test_and_a_pinned_excerpt(source: HarvestSource) -> None:
    # A source is its module, its declaration, and a test that harvests a pinned excerpt
    # (tests/data/harvest/<name>…) and compares the files with the registry's.
    tests = Path(__file__).parent
    stem = source.name.replace("-", "_")
    assert (tests / f"test_harvest_{stem}.py").is_file()
    excerpts = tests.parent / "data" / "harvest"
    assert any(path.name.startswith(source.name) for path in excerpts.iterdir())


def test_the_registry_reference_page_lists_every_source() -> None:
    page = Path(__file__).parents[2] / "site" / "reference" / "registry.md"
    assert "<!-- harvest sources -->" in page.read_text(encoding="utf-8")
    listed = sources_markdown()
    for source in SOURCES:
        assert f"- `{source.name}`: " in listed
        assert f"infermeter registry harvest {source.name} " in listed
    assert "inference_results_v&lt;round&gt;" in listed  # text, not an HTML tag


DATA = Path(__file__).resolve().parents[1] / "data" / "harvest"
INFERENCEX_FILE = DATA / "inferencex-api" / "benchmarks.json"
AMD_FILE = DATA / "amd" / "README-f94ec9be.md"


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        (
            ["inferencex", "--from", str(INFERENCEX_FILE), "--commit", "zz", "--url",
             "https://github.com/SemiAnalysisAI/InferenceX-app"],
            "--commit: 'zz' is not a commit id (7 to 40 lowercase hex digits)",
        ),
        (
            ["amd", "--from", str(AMD_FILE), "--commit", "main"],
            "--commit: 'main' is not a commit id",
        ),
        (
            ["inferencex", "--from", str(INFERENCEX_FILE), "--commit", "528c4146", "--url",
             "javascript:alert(1)"],
            "--url: expected an http:// or https:// address, got 'javascript:alert(1)'",
        ),
        (
            ["amd", "--from", str(AMD_FILE), "--commit", "f94ec9be", "--url", "not a url"],
            "--url: expected an http:// or https:// address",
        ),
        (
            ["mlperf", "--round", "6.1", "--from", str(DATA / "mlperf-v6.1"),
             "--repository-url", "ftp://example.org/x"],
            "--repository-url: expected an http:// or https:// address",
        ),
    ],
    ids=["inferencex commit", "amd commit", "inferencex url", "amd url", "mlperf url"],
)  # fmt: skip
def test_a_citation_that_is_no_commit_or_address_is_one_line_naming_the_option(
    tmp_path: Path, arguments: list[str], error: str
) -> None:
    # before this check, a file's --commit and an API response's --url were taken as text: every
    # result 'changed' to cite them (inferencex), or every row was skipped (amd)
    registry = empty_registry(tmp_path / "checkout")
    result = CliRunner().invoke(harvest_group, [*arguments, "--registry", str(registry)])
    assert result.exit_code == 2, result.output  # a bad option value is a usage error
    assert result.stderr.startswith(f"Error: {error}")
    assert len(result.stderr.strip().splitlines()) == 1
    assert list((registry / "registry" / "results").iterdir()) == []  # nothing written
