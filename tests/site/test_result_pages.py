"""Result pages are written from one rendered shell after the build: each shows every field,
its provenance and the reproduce command, is in the sitemap and out of the search index; the
result files are validated once each, with every problem reported."""

import html
import json
import re
from pathlib import Path

import catalog_pages
import pytest
import result_index
import result_pages
from site_helpers import REPO, build_site, result_data, write_registry

from infermeter.registry.catalog import load_gpus, load_models
from infermeter.registry.errors import InvalidFileError
from infermeter.registry.models import Result
from infermeter.registry.result_reader import load_results, result_files
from infermeter.registry.store import parse_result

pytestmark = pytest.mark.slow


def _registry(root: Path, submitters: list[str]) -> list[Result]:
    variants = []
    for number, submitter in enumerate(submitters):
        data = result_data()
        data["source"]["submitter"] = submitter
        data["identity"]["gpu"]["id"] = ["h100-sxm", "l40s"][number % 2]
        variants.append(data)
    return write_registry(root, variants)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Result]]:
    tmp = tmp_path_factory.mktemp("results")
    results = _registry(tmp / "registry", ["alice", 'bob & co <3 "x"', "carol"])
    # carol's result is withdrawn: it keeps its page, marked, and leaves the comparisons.
    (tmp / "registry" / "registry" / "corrections.yaml").write_text(
        "schema_version: 1\ncorrections:\n"
        f"  - {{result_id: '{results[2].id}', kind: withdrawal, date: '2026-11-30', "
        "reason: 'the <b>server</b> was misconfigured.'}\n"
    )
    out = tmp / "out"
    completed = build_site(out, tmp / "registry", site_url="http://127.0.0.1:8123/")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return out, results


def test_result_pages_show_every_field_provenance_and_command(
    built: tuple[Path, list[Result]],
) -> None:
    out, results = built
    for result in results:
        page = (out / "results" / result.id / "index.html").read_text()
        data = result.model_dump(mode="json", exclude_none=True)
        source = data.pop("source")
        for path, _value in [*result_pages._flatten(data), *result_pages._flatten(source)]:
            assert f"<th>{html.escape(path)}</th>" in page, path
        commands = [source[key] for key in ("server_command", "command") if source.get(key)]
        assert commands
        assert f"<pre><code>{html.escape(chr(10).join(commands))}</code></pre>" in page
        # the model and GPUs by their catalog names (the ids are in the fields below)
        identity = result.identity
        heading = (
            f"{load_models()[identity.model.id].name} on "
            f"{identity.gpu.count} × {load_gpus()[identity.gpu.id].name}"
        )
        assert f"<title>{html.escape(heading)} ({result.id}) - infermeter</title>" in page
        assert f'<h1 id="result">{html.escape(heading)}<a class="headerlink"' in page
        assert f'<link rel="canonical" href="http://127.0.0.1:8123/results/{result.id}/">' in page
        assert page.count('id="result"') == 1
        assert result_pages.TITLE_MARK not in page
        assert result_pages.HEADING_MARK not in page
        assert result_pages.BODY_MARK not in page
        assert '<a href="#provenance" class="md-nav__link">' in page  # the contents sidebar


def test_result_pages_escape_result_strings(built: tuple[Path, list[Result]]) -> None:
    out, results = built
    page = (out / "results" / results[1].id / "index.html").read_text()
    # A tag is refused as the result is read (`registry.checks.strings`); what may be text is
    # escaped.
    assert "bob &amp; co &lt;3 &quot;x&quot;" in page
    assert "<3" not in page


def test_result_pages_in_sitemap_not_in_search(built: tuple[Path, list[Result]]) -> None:
    out, results = built
    sitemap = (out / "sitemap.xml").read_text()
    listed = set(re.findall(r"<loc>http://127.0.0.1:8123/results/([^/<]+)/</loc>", sitemap))
    assert listed == {result.id for result in results}
    assert result_pages.SHELL_DIR not in sitemap
    assert not (out / result_pages.SHELL_DIR).exists()
    search = json.loads((out / "search/search_index.json").read_text())
    # each result is found by its model and GPU through one short entry, never its whole page
    found = {
        doc["location"]: doc for doc in search["docs"] if doc["location"].startswith("results/")
    }
    assert set(found) == {f"results/{result.id}/" for result in results}
    for result in results:
        doc = found[f"results/{result.id}/"]
        assert result.identity.gpu.id in doc["text"]
        assert result.identity.model.id in doc["text"]
        assert len(doc["title"]) + len(doc["text"]) < 200


def test_result_pages_linked_from_compare_tables(built: tuple[Path, list[Result]]) -> None:
    out, results = built
    compare = "".join(path.read_text() for path in (out / "compare").glob("*/index.html"))
    *current, withdrawn = results
    for result in current:
        assert f'href="../../results/{result.id}/"' in compare
    assert withdrawn.id not in compare  # out of the comparisons
    assert '<div data-im-slot="' not in compare


def test_result_pages_withdrawn_result_is_marked_and_out_of_rankings(
    built: tuple[Path, list[Result]],
) -> None:
    out, results = built
    *current, withdrawn = results
    page = (out / "results" / withdrawn.id / "index.html").read_text()
    notice = '<p class="im-correction" data-correction="withdrawal"><strong>Withdrawn</strong>'
    assert notice in page
    assert "the &lt;b&gt;server&lt;/b&gt; was misconfigured." in page
    for result in current:
        assert "im-correction" not in (out / "results" / result.id / "index.html").read_text()
    home = (out / "index.html").read_text()
    assert withdrawn.id not in home
    # The downloads keep every row, the withdrawn one with its correction.
    csv = (out / "data" / "index.csv").read_text().splitlines()
    assert "correction" in csv[0].split(",")
    assert [line for line in csv if withdrawn.id in line and ",withdrawal," in line]


def test_result_index_reports_every_problem_of_every_file(tmp_path: Path) -> None:
    root = tmp_path / "registry"
    _registry(root, ["a", "b", "c", "d"])
    files = result_files(root)
    for broken in (files[0], files[3]):
        data = json.loads(broken.read_text())
        data["identity"]["gpu"]["count"] = "two"
        broken.write_text(json.dumps(data))
    with pytest.raises(InvalidFileError) as in_index:
        result_index.load_index(root)
    with pytest.raises(InvalidFileError) as in_loader:
        load_results(root, files)
    assert in_index.value.problems == in_loader.value.problems
    assert {problem.file for problem in in_index.value.problems} == {
        files[0].relative_to(root).as_posix(),
        files[3].relative_to(root).as_posix(),
    }


def test_result_index_matches_the_registry_loader(tmp_path: Path) -> None:
    root = tmp_path / "registry"
    results = _registry(root, ["a", "b", "c"])
    index = result_index.load_index(root)
    assert set(index.results) == {result.id for result in results}
    assert [file for file, _result in load_results(root, result_files(root))] == sorted(
        {row.file for row in index.rows}
    )


def test_build_fails_on_invalid_result_file(tmp_path: Path) -> None:
    root = tmp_path / "registry"
    _registry(root, ["a"])
    broken = result_files(root)[0]
    broken.write_text(broken.read_text().replace('"count": 1', '"count": -1', 1))
    completed = build_site(tmp_path / "out", root)
    assert completed.returncode != 0
    assert broken.relative_to(root).as_posix() in completed.stdout + completed.stderr


def test_result_pages_reproduce_only_the_sources_own_command() -> None:
    """A reported TensorRT-LLM run shows the commands its source quotes, never a made-up
    `infermeter`/vLLM one; a source that quotes none shows none."""
    paths = sorted(REPO.joinpath("registry", "results").rglob("*.json"))
    results = [parse_result(path.read_text(), str(path)) for path in paths]
    result = next(
        r for r in results if r.source.kind == "reported" and "`trtllm-bench" in r.source.conditions
    )
    commands = result_pages.source_commands(result)
    assert commands
    assert all(
        command.split()[0].startswith(("trtllm-bench", "benchmarks/")) for command in commands
    )
    assert all(command in result.source.conditions for command in commands)
    body = result_pages.result_body(result, [])
    assert "vllm" not in body.split('id="reproduce"', 1)[1].split("<h2", 1)[0].lower()
    silent = result.model_copy(
        update={"source": result.source.model_copy(update={"conditions": "No command given."})}
    )
    assert result_pages.source_commands(silent) == []
    assert "states no command" in result_pages.result_body(silent, [])


@pytest.mark.parametrize(
    "value", [1, -3, 1.5, 1e-7, 1e22, 0.1 + 0.2, 2**70, True, False, None, [1, "<a>"], "a<b&c"]
)
def test_result_page_leaf_text_is_the_escaped_json(value: object) -> None:
    expected = catalog_pages.esc(value if isinstance(value, str) else json.dumps(value))
    assert result_pages._text(value) == expected
