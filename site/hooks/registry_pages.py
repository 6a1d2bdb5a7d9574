"""mkdocs hook: generate the site's data-driven pages and assets inside `mkdocs build`.

- `on_config` loads and validates the catalogs (and the result index, when the registry has
  one); any invalid file stops the build with every problem listed.
- `on_files` adds the generated pages (calculators, a page per GPU and per model, compare pages,
  downloads, the shell of the result pages) and assets: the Pyodide runtime copied from
  `node_modules/pyodide`, our `calculators` package plus `calc_api.py` as a zip archive, a
  memory snapshot of Python with that archive imported (`calc_snapshot`, cached), and
  `catalog.json`, the catalog data the calculators need in the browser.
- `on_post_page` puts the big generated HTML (compare tables, chart data) into its page after
  the template; `on_post_build` writes a page per result from the rendered shell
  (`result_pages`). Both keep the build linear and fast in the number of results.

Plain Python on mkdocs' hook API, no third-party plugin. The registry root defaults to this
repository; `INFERMETER_REGISTRY` points the build at another checkout (used by the benchmarks).
"""

import ast
import io
import json
import os
import sys
import zipfile
from pathlib import Path
from typing import Any

# The browser runtime (site/browser: calc_api and its parts, answer_render), which the
# calculator and answer pages render with at build time too. mkdocs puts this folder
# on the path while it loads the hook.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "browser"))

import accuracy_page
import answer_render
import answer_site
import calc_pages
import calc_snapshot
import catalog_pages
import compare_pages
import downloads_page
import gpu_labels
import page_links
import perf_pages
import performance_page
import repository
import result_index
import result_pages
import row_groups
import site_search
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from infermeter.calculators.answer import PRESETS
from infermeter.calculators.vllm_settings import gpu_total_bytes
from infermeter.registry.answers import answers_json
from infermeter.registry.catalog import (
    GPUS_FILE,
    PRICES_FILE,
    gpu_traits,
    load_gpus,
    load_models,
    load_prices,
)
from infermeter.registry.errors import RegistryError
from infermeter.registry.harvest.sources import sources_markdown
from infermeter.registry.location import catalogs_folder
from infermeter.registry.lookup import cheapest_prices
from infermeter.registry.models import GpuEntry, ModelEntry, PriceEntry
from infermeter.registry.plan_accuracy import load_cases
from infermeter.registry.prices import TIERS, shown_as_of

REPO = Path(__file__).resolve().parents[2]
BROWSER = Path(__file__).resolve().parents[1] / "browser"
PYODIDE_FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)
SNAPSHOT_CACHE = REPO / "node_modules" / ".cache" / "infermeter"
HARVEST_SOURCES_MARKER = "<!-- harvest sources -->"
"""Where the registry reference page lists the harvest sources (`sources_markdown`)."""
_state: dict[str, Any] = {}


def registry_root() -> Path:
    return Path(os.environ.get("INFERMETER_REGISTRY", REPO)).resolve()


def _imported_modules(source: str) -> set[str]:
    """The modules a Python source imports, by their full dotted names."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def _imported(source: str) -> tuple[set[str], set[str]]:
    """The browser runtime's modules a Python source imports (`calc_html` → "calc_html") and
    the `calculators` modules it imports (`infermeter.calculators.x` → "x"), from one parse."""
    names = _imported_modules(source)
    hooks = {name for name in names if (BROWSER / f"{name}.py").is_file()}
    calculators = {
        name.split(".")[2] for name in names if name.startswith("infermeter.calculators.")
    }
    return hooks, calculators


def calculators_archive() -> bytes:
    """`calc_api.py`, the browser runtime's modules it imports (its calc_* parts) and the
    `calculators` modules they need, as a zip the browser imports from; byte-for-byte
    reproducible."""
    import infermeter.calculators

    package = Path(infermeter.calculators.__file__).resolve().parent
    # calc_api for the calculator pages, answer_render for the answer page
    entries = ("calc_api", "answer_render")
    hooks = set(entries)
    queue = [(BROWSER / f"{name}.py").read_text(encoding="utf-8") for name in entries]
    needed: set[str] = {"__init__"}
    while queue:
        imported_hooks, imported_calculators = _imported(queue.pop())
        for name in imported_hooks - hooks:
            hooks.add(name)
            queue.append((BROWSER / f"{name}.py").read_text(encoding="utf-8"))
        for name in imported_calculators - needed:
            needed.add(name)
            queue.append((package / f"{name}.py").read_text(encoding="utf-8"))
    members = [
        (f"infermeter/calculators/{name}.py", package / f"{name}.py") for name in sorted(needed)
    ]
    members += [(f"{name}.py", BROWSER / f"{name}.py") for name in sorted(hooks)]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        # `infermeter` is a namespace package (as installed): a folder entry, no file.
        folder = zipfile.ZipInfo("infermeter/", date_time=(1980, 1, 1, 0, 0, 0))
        folder.external_attr = 0o40755 << 16
        archive.writestr(folder, b"")
        for name, path in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, path.read_bytes(), compresslevel=9)
    return buffer.getvalue()


def pyodide_lock(source: Path) -> str:
    """Pyodide's lock file without its package list: the calculators use the stdlib only, and
    Pyodide reads the whole file before it starts (the list is 120 kB; `info` carries the ABI
    version Pyodide checks)."""
    info = json.loads(source.read_text(encoding="utf-8"))["info"]
    return json.dumps({"info": info, "packages": {}}, sort_keys=True) + "\n"


def browser_catalog(
    gpus: dict[str, GpuEntry],
    models: dict[str, ModelEntry],
    cheapest_entries: dict[str, dict[str, PriceEntry]],
) -> dict[str, Any]:
    """What the in-browser calculators read (`assets/catalog.json`): model configs, GPU
    memory, rates, links and traits (`registry.catalog.gpu_traits`), the cheapest price per
    tier and which catalog price it is."""
    cheapest = {
        gpu_id: {tier: price.usd_per_gpu_hour for tier, price in entries.items()}
        for gpu_id, entries in cheapest_entries.items()
    }
    return {
        "models": {
            model.id: {
                "name": model.name,
                "context_length": model.context_length,
                "config": model.config,
            }
            for model in models.values()
        },
        "gpus": {
            gpu.id: {
                "name": gpu.name,
                "architecture": gpu.architecture,
                "memory_gb": gpu.memory_gb,
                "memory_reported_mib": gpu.memory_reported_mib,
                "memory_bytes": gpu_total_bytes(gpu.memory_reported_mib, gpu.memory_gb),
                "memory_bandwidth_gb_s": gpu.memory_bandwidth_gb_s,
                "tflops_dense": gpu.tflops_dense.model_dump(),
                "interconnect_links": [link.model_dump() for link in gpu.interconnect_links],
                "traits": gpu_traits(gpu).as_dict(),
                "prices": {
                    tier: cheapest[gpu.id][tier] for tier in TIERS if tier in cheapest[gpu.id]
                },
                # Which catalog price each of those is, for the cost page to name and link.
                "price_sources": {
                    tier: {
                        "id": price.id,
                        "as_of": shown_as_of(price),
                        "source_url": price.source.url,
                    }
                    for tier, price in cheapest_entries[gpu.id].items()
                },
            }
            for gpu in gpus.values()
        },
    }


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    root = registry_root()
    links = repository.repository_links(Path(__file__).resolve().parents[2] / "pyproject.toml")
    config.repo_url, config.repo_name = links.repo_url, links.repo_name
    config.edit_uri = links.edit_uri
    catalogs = catalogs_folder(root)
    try:
        gpus = load_gpus(catalogs)
        models = load_models(catalogs)
        prices = load_prices(catalogs)
        index = result_index.load_index(root)
    except RegistryError as error:
        raise PluginError(f"invalid registry data:\n{error}") from None
    unknown = sorted({p.id for p in prices.values() if p.gpu not in gpus})
    if unknown:
        names = ", ".join(unknown)
        raise PluginError(f"{PRICES_FILE}: prices name GPUs not in {GPUS_FILE}: {names}")
    price_list = list(prices.values())
    cheapest_entries = {gpu_id: cheapest_prices(gpu_id, price_list) for gpu_id in gpus}
    _state.update(
        gpus=gpus,
        models=models,
        prices=prices,
        cheapest=cheapest_entries,
        index=index,
        catalog=browser_catalog(gpus, models, cheapest_entries),
    )
    return config


def _page(files: Files, config: MkDocsConfig, uri: str, content: str | bytes) -> None:
    existing = files.get_file_from_path(uri)
    if existing is not None:
        files.remove(existing)
    files.append(File.generated(config, uri, content=content))


def _catalog_pages(files: Files, config: MkDocsConfig, groups: page_links.ResultGroups) -> None:
    """The GPU list and a page per GPU (specifications, prices, results), the model list."""
    gpus, models, prices = _state["gpus"], _state["models"], _state["prices"]
    _page(files, config, "gpus/index.md", catalog_pages.gpus_index(gpus, _state["cheapest"]))
    for gpu in gpus.values():
        gpu_prices = [price for price in prices.values() if price.gpu == gpu.id]
        results = page_links.gpu_results_table(
            groups.by_gpu.get(gpu.id, []), gpu.id, models, gpu.name
        )
        _page(files, config, f"gpus/{gpu.id}.md", catalog_pages.gpu_page(gpu, gpu_prices, results))
    _page(files, config, "models/index.md", catalog_pages.models_index(models))


def _model_pages(files: Files, config: MkDocsConfig, groups: page_links.ResultGroups) -> None:
    """A page per model with its compare pages, then its answers or estimates; the answer
    pages; the compare pages."""
    gpus, models, prices = _state["gpus"], _state["models"], _state["prices"]
    gpu_names = gpu_labels.names_of(gpus)
    site = _answer_pages(files, config)
    for model in models.values():
        by_profile = groups.result_ids_by_model.get(model.id, {})
        links = page_links.compare_links(model.id, by_profile)
        links += answer_site.model_section(site, model.id)
        _page(files, config, f"models/{model.id}.md", catalog_pages.model_page(model, links))
    flagged = {price.gpu for price in prices.values() if price.caution is not None}
    pages, slots = compare_pages.pages(_state["index"], models, flagged, gpu_names)
    for uri, content in pages.items():
        _page(files, config, uri, content)
    _state["slots"] = slots


def _data_files(files: Files, config: MkDocsConfig, archive: bytes) -> None:
    """The calculators' archive and catalog, and every file the Downloads page lists."""
    _page(files, config, "assets/calculators.zip", archive)
    catalog_text = json.dumps(_state["catalog"], sort_keys=True, separators=(",", ":"))
    _page(files, config, "assets/catalog.json", catalog_text)
    site = _state["answer_site"]
    more = {
        "data/answers.json": (
            answers_json(site.answers),
            "Every answer the site shows: per preset question, model, workload, weight "
            "precision, scenario and lane, the deployments ranked by $ per 1M accepted output "
            "tokens with their evidence and prices.",
        ),
        "data/evidence.json": (
            answer_render.evidence_json(site.data),
            "What the answer page recomputes from in your browser: every current load point as "
            "evidence, the prices figures use, and the estimates.",
        ),
    }
    gpus, models, prices = _state["gpus"], _state["models"], _state["prices"]
    downloads = downloads_page.downloads(_state["index"], gpus, models, prices, more)
    for uri, content in downloads.items():
        _page(files, config, uri, content)


def _vendored_assets(files: Files, config: MkDocsConfig, archive: bytes) -> None:
    """Pyodide, the calculators' Python snapshot and uPlot, from node_modules."""
    runtime = REPO / "node_modules" / "pyodide"
    for name in PYODIDE_FILES:
        source = runtime / name
        if not source.is_file():
            raise PluginError(f"{source}: missing; run `npm ci` first (it installs Pyodide)")
        uri = f"assets/pyodide/{name}"
        if name == "pyodide-lock.json":
            files.append(File.generated(config, uri, content=pyodide_lock(source)))
        else:
            files.append(File.generated(config, uri, abs_src_path=str(source)))
    try:
        snapshot = calc_snapshot.cached_snapshot(runtime, archive, SNAPSHOT_CACHE)
    except calc_snapshot.SnapshotError as error:
        raise PluginError(f"cannot make the calculators' Python snapshot: {error}") from None
    _page(files, config, "assets/calculators-snapshot.bin", snapshot)
    uplot = REPO / "node_modules" / "uplot" / "dist"
    for name, uri in (
        ("uPlot.esm.js", "assets/vendor/uplot.esm.js"),
        ("uPlot.min.css", "assets/vendor/uplot.min.css"),
    ):
        if not (uplot / name).is_file():
            raise PluginError(f"{uplot / name}: missing; run `npm ci` first (it installs uPlot)")
        files.append(File.generated(config, uri, abs_src_path=str(uplot / name)))


def on_files(files: Files, config: MkDocsConfig) -> Files:
    try:
        for kind in calc_pages.PAGES:
            page = calc_pages.calculator_page(kind, _state["catalog"])
            _page(files, config, f"calculators/{kind}.md", page)
        groups = page_links.group_results(_state["index"].rows)
        _catalog_pages(files, config, groups)
        _model_pages(files, config, groups)
        _page(files, config, result_pages.SHELL_URI, result_pages.SHELL_MARKDOWN)
        _page(files, config, accuracy_page.URI, accuracy_page.accuracy_page(load_cases()))
        _page(files, config, perf_pages.URI, perf_pages.error_page(perf_pages.load_held_out(REPO)))
    except (ValueError, KeyError) as error:  # the calculators' errors are ValueErrors
        raise PluginError(f"cannot generate pages: {error}") from None
    archive = calculators_archive()
    _data_files(files, config, archive)
    _vendored_assets(files, config, archive)
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    if page.file.src_uri == "performance.md":
        return performance_page.fill(
            markdown, Path(__file__).resolve().parents[2] / "benchmarks" / "records"
        )
    if page.file.src_uri == "reference/registry.md":
        return markdown.replace(HARVEST_SOURCES_MARKER, sources_markdown())
    return markdown


def _answer_pages(files: Files, config: MkDocsConfig) -> answer_site.Site:
    """Home, the answer page, one page per preset and the GPU comparisons (`answer_site`)."""
    index = _state["index"]
    site = answer_site.build(
        index.rows, index.results, _state["gpus"], _state["models"], _state["prices"]
    )
    _state["answer_site"] = site
    default = answer_render.render(
        {"model": site.default_model, "percentile": "99", "tier": "on_demand"},
        site.data,
        answer_site.ANSWER_BASE,
    )
    if "errors" in default:  # the default question is ours: a failure is a bug in the build
        raise ValueError(f"answer page: default question fails: {default['errors']}")
    _page(files, config, "index.md", answer_site.home_page(site))
    _page(files, config, "answer/index.md", answer_site.answer_page(site, default["html"]))
    for preset in PRESETS:
        _page(files, config, f"answer/{preset.id}.md", answer_site.preset_page(site, preset))
    _page(files, config, "answer/comparisons.md", answer_site.comparisons_page(site))
    return site


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    if page.file.src_uri == result_pages.SHELL_URI:
        html = result_pages.shell_content()  # the headings stay in the table of contents
    return site_search.cells_apart(html)


# Calculator pages start the Pyodide worker from <head>, before the theme's CSS and scripts: the
# 13 MB of runtime download and compile while the page loads (calculators.js adopts the worker).
# Not a <link rel=preload>: a worker's fetches do not use the page's preloads. An error before
# calculators.js takes the worker over is kept in `failed`.
WORKER_START = (
    '<script>window.__imWorker = new Worker("{base}assets/calc-worker.js", {{type: "module"}});'
    "window.__imWorker.onerror = (e) => "
    '{{ window.__imWorker.failed = e.message || "worker error"; }};'
    # Start-up progress that arrives before calculators.js takes the worker over.
    "window.__imProgress = [];"
    "window.__imWorker.onmessage = (e) => "
    "{{ if (e.data.progress) window.__imProgress.push(e.data.progress); }};"
    # The theme's search index waits for the first live result (calculators.js calls
    # __imSearchGo; 10 s at most): parsing and indexing it took CPU the cold start needs (on
    # this 2-core machine, 1.5 s of a 5 s cold start). Material requests it by XMLHttpRequest.
    "window.__imSearchWait = new Promise((go) => "
    "{{ window.__imSearchGo = go; setTimeout(go, 10000); }});"
    "(() => {{ const open = XMLHttpRequest.prototype.open, send = XMLHttpRequest.prototype.send;"
    "XMLHttpRequest.prototype.open = function (method, url, ...rest) "
    "{{ this.__imWait = /search[/]search_index[.]json$/.test(String(url));"
    " return open.call(this, method, url, ...rest); }};"
    "XMLHttpRequest.prototype.send = function (...args) "
    "{{ if (!this.__imWait) return send.apply(this, args);"
    " window.__imSearchWait.then(() => send.apply(this, args)); }}; }})();"
    "</script>"
)


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    uri = page.file.src_uri
    if uri.startswith("calculators/") or uri == "answer/index.md":
        base = "../" * page.url.count("/")
        charset = '<meta charset="utf-8">'
        if charset not in output:
            raise PluginError(f"{uri}: no {charset} to start the calculator worker after")
        output = output.replace(charset, charset + WORKER_START.format(base=base), 1)
    if uri == result_pages.SHELL_URI:
        _state["shell"] = output
    for marker, html in _state["slots"].get(uri, {}).items():
        if output.count(marker) != 1:
            raise PluginError(f"{uri}: expected one {marker} in the rendered page")
        output = output.replace(marker, html)
    return output


def on_post_build(config: MkDocsConfig) -> None:
    index = _state["index"]
    rows = dict(row_groups.rows_by(index.rows, lambda row: row.result_id))
    replicates = {
        key: group
        for key, group in row_groups.rows_by(index.rows, lambda row: row.replicate_key)
        if len(group) > 1
    }
    try:
        result_pages.write_pages(
            Path(config.site_dir),
            _state["shell"],
            index.results,
            rows,
            replicates,
            gpu_labels.names_of(_state["gpus"]),
            {model_id: model.name for model_id, model in _state["models"].items()},
        )
    except ValueError as error:
        raise PluginError(f"cannot write the result pages: {error}") from None
    _extend_search(Path(config.site_dir), index)
    try:
        site_search.mend_search_worker(Path(config.site_dir))
    except site_search.SearchWorkerError as error:
        raise PluginError(f"cannot mend the search worker: {error}") from None


def _extend_search(site_dir: Path, index: result_index.Index) -> None:
    """Add the compare and result pages to the search index the search plugin wrote."""
    search = site_dir / "search" / "search_index.json"
    if not search.is_file():
        return
    data = json.loads(search.read_text(encoding="utf-8"))
    # A compare page's sections (its workload × scenario headings) are found through the page:
    # their words join its entry's text. As entries of their own, the rare words of MLPerf's
    # data set names ("llama2-70b") outranked the pages of the models searched for, since
    # Material matches a word's prefix ("llama" finds "llama2").
    sections: dict[str, list[str]] = {}
    kept = []
    for doc in data["docs"]:
        page, anchor, _rest = doc["location"].partition("#")
        if page.startswith("compare/") and anchor:
            sections.setdefault(page, []).append(doc["title"])
        else:
            kept.append(doc)
    data["docs"] = kept
    # A page the plugin indexed already (a compare page's heading) takes our title and text:
    # Material keys its results by location, so a second entry would hide one of the two.
    docs = {doc["location"]: doc for doc in kept}
    for entry in page_links.search_entries(index.rows, _state["gpus"], _state["models"]):
        known = docs.get(entry["location"])
        if known is None:
            data["docs"].append(entry)
        else:
            known["title"] = entry["title"]
            headings = " ".join(sections.get(entry["location"], []))
            known["text"] = f"{entry['text']} {known['text']} {headings}".strip()
    search.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
