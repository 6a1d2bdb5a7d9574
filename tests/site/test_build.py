"""The site builds strictly from the registry, self-contained, and fails on invalid data."""

import gzip
import json
import re
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import calc_snapshot
import pytest
from click.testing import CliRunner
from registry_checkout import empty_registry
from site_helpers import REPO, build_site

from infermeter.bench.cli.main import main
from infermeter.registry.catalog import GPUS_FILE
from infermeter.registry.location import catalogs_folder
from infermeter.registry.store import parse_result, with_content_id, write_result

pytestmark = pytest.mark.slow

KEY_PAGES = [
    "index.html",
    "compare/index.html",
    "calculators/vram/index.html",
    "calculators/cost/index.html",
    "calculators/fit/index.html",
    "calculators/accuracy/index.html",
    "calculators/perf/index.html",
    "prediction-error/index.html",
    "gpus/index.html",
    "gpus/h100-sxm/index.html",
    "models/index.html",
    "models/llama-3.1-8b-instruct/index.html",
    "methodology/index.html",
    "contribute/index.html",
    "downloads/index.html",
    "data/index.json",
    "data/index.csv",
    "assets/catalog.json",
    "assets/calculators.zip",
    "assets/calculators-snapshot.bin",
    "assets/calc-worker.js",
    "assets/pyodide/pyodide.mjs",
    "assets/pyodide/pyodide.asm.wasm",
    "assets/pyodide/python_stdlib.zip",
    "assets/vendor/uplot.esm.js",
    "search/search_index.json",
]
# Anything that makes the browser fetch from another origin: scripts, styles, fonts, imports.
EXTERNAL = [
    re.compile(r"<script[^>]*\bsrc=[\"']?(?:https?:)?//", re.I),
    re.compile(r"<link[^>]*\bhref=[\"']?(?:https?:)?//[^>]*>", re.I),
    re.compile(r"@import\s+(?:url\()?[\"']?(?:https?:)?//", re.I),
    re.compile(r"url\(\s*[\"']?(?:https?:)?//", re.I),
    re.compile(r"\bimport\s*(?:\(|[^;]*?\bfrom)\s*[\"'](?:https?:)?//", re.I),
    re.compile(r"importScripts\(\s*[\"'](?:https?:)?//", re.I),
]


@pytest.mark.parametrize("page", KEY_PAGES)
def test_build_key_page_exists(built_site: Path, page: str) -> None:
    assert (built_site / page).is_file()


def test_build_every_catalog_entry_has_a_page(built_site: Path) -> None:
    catalog = json.loads((built_site / "assets/catalog.json").read_text())
    for gpu in catalog["gpus"]:
        assert (built_site / "gpus" / gpu / "index.html").is_file(), gpu
    for model in catalog["models"]:
        assert (built_site / "models" / model / "index.html").is_file(), model


def test_build_no_file_loads_from_another_origin(built_site: Path) -> None:
    offenders = []
    for path in built_site.rglob("*"):
        if path.suffix not in (".html", ".css", ".js", ".mjs") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for pattern in EXTERNAL:
            for match in pattern.finditer(text):
                link = match.group(0)
                if "<link" in link and not re.search(
                    r"stylesheet|preload|modulepreload|icon|font", link
                ):
                    continue  # canonical and similar links load nothing
                offenders.append(f"{path.relative_to(built_site)}: {link[:120]}")
    assert offenders == []


def test_build_calculator_pages_carry_inputs_and_outputs(built_site: Path) -> None:
    page = (built_site / "calculators/vram/index.html").read_text()
    for name in (
        "model",
        "gpu",
        "max_model_len",
        "tensor_parallel_size",
        "kv_cache_dtype",
        "config",
    ):
        assert f'name="{name}"' in page
    values = dict(re.findall(r'data-output="([^"]+)" data-value="([^"]*)"', page))
    assert int(values["weights_bytes"]) > 0
    assert "NaN" not in page


def test_build_default_result_matches_cli(built_site: Path) -> None:
    page = (built_site / "calculators/vram/index.html").read_text()
    values = dict(re.findall(r'data-output="([^"]+)" data-value="([^"]*)"', page))
    args = [
        "calc",
        "vram",
        "--model",
        "llama-3.1-8b-instruct",
        "--gpu",
        "h100-sxm",
        "--json",
    ]
    expected = json.loads(CliRunner().invoke(main, args).output)
    # Every figure the page shows before its calculator runs is the command line's (a page that
    # filled an input the command line leaves out, such as max_model_len, showed its own).
    assert len(values) > 30, values
    for path, shown in values.items():
        value: object = expected
        for key in path.split("."):
            assert isinstance(value, dict), path
            assert key in value, f"{path}: not in calc vram --json"
            value = value[key]
        assert shown == (value if isinstance(value, str) else json.dumps(value)), path


def test_build_calculators_archive_runs_standalone(built_site: Path) -> None:
    archive = built_site / "assets/calculators.zip"
    names = zipfile.ZipFile(archive).namelist()
    assert "calc_api.py" in names
    assert "infermeter/calculators/memory.py" in names
    # The archive alone (as in Pyodide) computes the default cost: stdlib + calculators only.
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import calc_api; "
        "catalog = json.load(open(sys.argv[2])); "
        "query = {'price_per_hour': '2', 'tokens_per_second': '1000'}; "
        "print(json.dumps(calc_api.compute('cost', query, catalog)))"
    )
    completed = subprocess.run(
        [sys.executable, "-I", "-c", code, str(archive), str(built_site / "assets/catalog.json")],
        capture_output=True,
        text=True,
        check=True,
        cwd=built_site,
    )
    payload = json.loads(completed.stdout)["payload"]
    assert payload["usd_per_million_tokens"] == pytest.approx(2 / (1000 * 3600) * 1e6)


def test_build_snapshot_is_of_the_served_runtime_and_archive(
    built_site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker restores the snapshot only into the Pyodide build that made it: its header
    names the served runtime's build id, and it is the one made for the served archive."""
    served = (built_site / "assets/calculators-snapshot.bin").read_bytes()
    snapshot = gzip.decompress(served)
    header = struct.unpack("<12I", snapshot[:48])
    runtime_js = (built_site / "assets/pyodide/pyodide.mjs").read_text(encoding="utf-8")
    build_id = re.search(r'BUILD_ID:"([0-9a-f]{64})"', runtime_js)
    assert build_id is not None
    assert "".join(f"{word:08x}" for word in header[4:12]) == build_id.group(1)
    assert header[1] + 2**20 < len(snapshot)  # a heap follows the header (its end: header[1])
    assert b"calc_api" in snapshot[header[1] :]  # imported: in the interpreter's memory
    # The cached one for exactly these files (no Node on PATH: it may not make another).
    monkeypatch.setenv("PATH", "")
    archive = (built_site / "assets/calculators.zip").read_bytes()
    cached = calc_snapshot.cached_snapshot(
        REPO / "node_modules/pyodide", archive, REPO / "node_modules/.cache/infermeter"
    )
    assert cached == served


def test_build_search_finds_gpus_and_models_and_stays_small(built_site: Path) -> None:
    index_file = built_site / "search/search_index.json"
    assert index_file.stat().st_size < 2_000_000
    titles = {doc["title"] for doc in json.loads(index_file.read_text())["docs"]}
    assert any("H100" in title for title in titles)
    assert any("Llama 3.1 8B" in title for title in titles)


def test_build_fails_on_invalid_catalog(tmp_path: Path) -> None:
    root = empty_registry(tmp_path / "registry-checkout")
    gpus = catalogs_folder(root) / GPUS_FILE
    gpus.write_text(gpus.read_text().replace("memory_gb: 24\n", "memory_gb: -24\n", 1))
    completed = build_site(tmp_path / "out", root)
    assert completed.returncode != 0
    assert "memory_gb" in completed.stdout + completed.stderr


def test_build_shows_result_strings_as_text(tmp_path: Path) -> None:
    root = empty_registry(tmp_path / "registry-checkout")
    text = (REPO / "tests/examples/valid/results/measured-two-points.json").read_text()
    data = json.loads(text)
    data["source"]["submitter"] = "<script>alert('x')</script><b>bold</b>"
    refused = write_result(with_content_id(parse_result(json.dumps(data), "example.json")), root)
    completed = build_site(tmp_path / "refused", root)  # markup is refused, as validate does
    assert completed.returncode != 0
    assert "source.submitter: contains markup '<script>'" in completed.stdout + completed.stderr
    refused.unlink()
    data["source"]["submitter"] = "a <= 2 & \"c\" > 'd'"  # text that must be escaped
    result = with_content_id(parse_result(json.dumps(data), "example.json"))
    write_result(result, root)
    out = tmp_path / "out"
    completed = build_site(out, root)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    page = (out / "results" / result.id / "index.html").read_text()
    assert "a &lt;= 2 &amp; &quot;c&quot; &gt; &#x27;d&#x27;" in page
    assert "a <= 2" not in page
    compare = next((out / "compare").glob("llama-3.1-8b-instruct--*/index.html")).read_text()
    assert f"results/{result.id}/" in compare
