"""Site performance figures (printed, not asserted): calculator timings in headless Chromium and
the build time of synthetic registries of several sizes.

    .venv/bin/python benchmarks/site_perf.py [--sizes 1000,5000,10000] [--cold-runs 5]
                                             [--plain] [--skip-browser] [--skip-build]

Targets (issues 5 and 10): first calculator result < 2.5 s after a cold page load (quiet
machine); recompute < 50 ms; second visit in the same tab < 0.5 s; 10,000-result build < 60 s,
linear; search index < 2 MB. The cold loads say how Python started: restored from the site's
memory snapshot (`calc_snapshot`) or, where that failed, from scratch.

Build time per result is (build time - the build time of an empty registry) / results; the
linearity ratio divides it by the same figure at the smallest size (1.0 = linear). Wall times
move with whatever else the machine runs: the load average is printed beside them, and CPU time
(this build and its worker processes) is the steadier figure.
"""

import argparse
import collections
import functools
import http.server
import itertools
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from records import write_record  # noqa: E402

from infermeter.registry.location import catalogs_folder  # noqa: E402
from infermeter.registry.store import parse_result, with_content_id, write_result  # noqa: E402

# Every figure printed, by name, for `--record` (benchmarks/records/site_perf.json).
FIGURES: dict[str, Any] = {}

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
SNAPSHOT = "**/assets/calculators-snapshot.bin"
READY = "() => document.querySelector('.im-calc')?.dataset.state === 'ready'"
PHASES = (
    ("worker", "worker created"),
    ("snapshot", "memory snapshot fetched"),
    ("runtime", "wasm runtime ready"),
    ("pyodide", "Python ready"),
    ("imported", "calculators imported"),
    ("first", "first result computed"),
)


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def build(
    out: Path, registry: Path | None = None, site_url: str | None = None
) -> tuple[float, float]:
    """`mkdocs build --strict` into `out`: (wall seconds, CPU seconds of it and its workers)."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    if registry is not None:
        env["INFERMETER_REGISTRY"] = str(registry)
    if site_url is not None:
        env["INFERMETER_SITE_URL"] = site_url
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(out)],
        cwd=REPO,
        env=env,
        check=True,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


class _QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A download the browser drops (the worker cancels one it does not need) is no error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _serve(site: Path, port: int) -> http.server.ThreadingHTTPServer:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.func.log_message = lambda *args: None  # type: ignore[attr-defined]
    server = _QuietServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _cold_load(browser: Any, base: str, plain: bool = False) -> tuple[float, dict[str, float], str]:
    """One cold load's first result (ms), phases and how Python started; `plain` withholds the
    memory snapshot (HTTP 404), so that Python starts from scratch."""
    context = browser.new_context()  # a fresh context: empty HTTP cache
    if plain:
        context.route(SNAPSHOT, lambda route: route.fulfill(status=404, body=""))
    page = context.new_page()
    page.goto(f"{base}/calculators/vram/?tensor_parallel_size=2", wait_until="commit")
    page.wait_for_function(READY, timeout=180_000, polling=20)
    first_ms: float = page.evaluate("window.__imFirstResult")
    timings: dict[str, float] = page.evaluate("window.__imTimings || {}")
    started_from: str = page.evaluate("window.__imStartedFrom") or "unknown"
    page.context.close()
    return first_ms, timings, started_from


def _plain_figures(browser: Any, base: str, cold_runs: int) -> None:
    """Cold loads alternating with and without the snapshot: both under the same load."""
    pairs = [(_cold_load(browser, base), _cold_load(browser, base, True)) for _ in range(cold_runs)]
    restored = statistics.median(pair[0][0] for pair in pairs) / 1000
    plain = statistics.median(pair[1][0] for pair in pairs) / 1000
    FIGURES["cold_load_alternated_snapshot_median_s"] = round(restored, 2)
    FIGURES["cold_load_alternated_from_scratch_median_s"] = round(plain, 2)
    froms = collections.Counter(f"{pair[0][2]}/{pair[1][2]}" for pair in pairs)
    print(
        f"the same alternated ({cold_runs} pairs, started from {dict(froms)}): median "
        f"{restored:.2f} s from the snapshot, {plain:.2f} s with Python started from scratch "
        f"({load()})"
    )


def browser_figures(tmp: Path, cold_runs: int, plain: bool) -> None:
    from playwright.sync_api import sync_playwright

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    site = tmp / "site"
    build(site, site_url=f"http://127.0.0.1:{port}/")
    server = _serve(site, port)
    base = f"http://127.0.0.1:{port}"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        runs = [_cold_load(browser, base) for _ in range(cold_runs)]
        firsts = sorted(first for first, _timings, _from in runs)
        FIGURES["cold_load_first_result_median_s"] = round(statistics.median(firsts) / 1000, 2)
        FIGURES["cold_load_first_result_max_s"] = round(firsts[-1] / 1000, 2)
        starts = ", ".join(
            f"{count} from {name}"
            for name, count in sorted(collections.Counter(run[2] for run in runs).items())
        )
        print(
            f"first calculator result after a cold load ({cold_runs} fresh contexts; Python "
            f"{starts}): median {statistics.median(firsts) / 1000:.2f} s, "
            f"max {firsts[-1] / 1000:.2f} s (target < 2.5 s; {load()})"
        )
        for key, label in PHASES:
            marks = [timings[key] for _first, timings, _from in runs if key in timings]
            if marks:
                median_s = statistics.median(marks) / 1000
                FIGURES[f"cold_load_phase_{key}_median_s"] = round(median_s, 2)
                print(f"  {label:>24}: median {median_s:.2f} s after navigation")
        if plain:
            _plain_figures(browser, base, cold_runs)
        page = browser.new_context().new_page()
        page.goto(f"{base}/calculators/vram/?tensor_parallel_size=2", wait_until="commit")
        page.wait_for_function(READY, timeout=60_000, polling=20)
        samples = []
        for value in itertools.islice(itertools.cycle(["1", "2", "4", "8"]), 20):
            page.fill('input[name="tensor_parallel_size"]', value)
            page.wait_for_function(READY, polling=5)
            samples.append(float(page.eval_on_selector(".im-calc", "e => e.dataset.ms")))
        samples.sort()
        FIGURES["recompute_median_ms"] = round(samples[len(samples) // 2], 1)
        FIGURES["recompute_max_ms"] = round(samples[-1], 1)
        print(
            "recompute (input → result, worker round trip): "
            f"median {samples[len(samples) // 2]:.1f} ms, max {samples[-1]:.1f} ms (target < 50 ms)"
        )
        started = time.perf_counter()
        page.click('a[href$="calculators/fit/"]')
        page.wait_for_function(
            "() => document.querySelector('.im-calc[data-calc=\"fit\"]')"
            "?.dataset.state === 'ready'",
            polling=5,
        )
        FIGURES["second_visit_s"] = round(time.perf_counter() - started, 2)
        print(
            f"second visit in the same tab (fit page, instant navigation): "
            f"{time.perf_counter() - started:.2f} s (target < 0.5 s)"
        )
        browser.close()
    server.shutdown()


def synthetic_registry(root: Path, count: int) -> None:
    shutil.copytree(catalogs_folder(REPO), catalogs_folder(root))
    (root / "registry" / "results").mkdir(parents=True)
    template = json.loads(
        (REPO / "tests/examples/valid/results/measured-two-points.json").read_text()
    )
    gpus = ["h100-sxm", "a100-80gb-sxm", "l40s", "h200-sxm", "l4", "b200"]
    models = [
        "llama-3.1-8b-instruct",
        "llama-3.1-70b-instruct",
        "qwen3-8b",
        "mistral-7b-instruct-v0.3",
    ]
    for number in range(count):
        data = json.loads(json.dumps(template))
        data["identity"]["gpu"]["id"] = gpus[number % len(gpus)]
        data["identity"]["model"]["id"] = models[(number // len(gpus)) % len(models)]
        data["source"]["submitter"] = f"synthetic-{number}"
        write_result(
            with_content_id(parse_result(json.dumps(data), f"synthetic-{number}.json")), root
        )


def build_figures(tmp: Path, sizes: list[int]) -> None:
    empty = tmp / "registry-0"
    synthetic_registry(empty, 0)
    base_wall, base_cpu = build(tmp / "out-0", registry=empty)
    print(f"build with no results: {base_wall:.1f} s wall, {base_cpu:.1f} s CPU ({load()})")
    FIGURES["build_0_results_wall_s"] = round(base_wall, 1)
    first_per_result = None
    for size in (size for size in sizes if size > 0):  # the empty build is the baseline above
        root = tmp / f"registry-{size}"
        synthetic_registry(root, size)
        out = tmp / f"out-{size}"
        wall, cpu = build(out, registry=root)
        per_result_ms = (wall - base_wall) / size * 1000
        first_per_result = first_per_result or per_result_ms
        index = out / "search" / "search_index.json"
        FIGURES[f"build_{size}_results_wall_s"] = round(wall, 1)
        FIGURES[f"build_{size}_results_cpu_s"] = round(cpu, 1)
        FIGURES[f"build_{size}_results_ms_per_result"] = round(per_result_ms, 2)
        FIGURES[f"build_{size}_results_linearity"] = round(per_result_ms / first_per_result, 2)
        FIGURES[f"build_{size}_results_search_index_mb"] = round(index.stat().st_size / 1e6, 2)
        print(
            f"build with {size:>6,} synthetic results: {wall:5.1f} s wall, {cpu:5.1f} s CPU; "
            f"{per_result_ms:.2f} ms per result (linearity ratio "
            f"{per_result_ms / first_per_result:.2f}); search index "
            f"{index.stat().st_size / 1e6:.2f} MB ({load()})"
        )
        shutil.rmtree(out)
        shutil.rmtree(root)
    print("targets: 10,000 results in < 60 s, ratio ~1 (linear), search index < 2 MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,5000,10000", help="result counts, comma-separated")
    parser.add_argument("--cold-runs", type=int, default=5, help="cold page loads to time")
    parser.add_argument(
        "--plain",
        action="store_true",
        help="also alternate cold loads with and without the memory snapshot",
    )
    parser.add_argument("--skip-browser", action="store_true")
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument(
        "--record", action="store_true", help="write benchmarks/records/site_perf.json (site)"
    )
    options = parser.parse_args()
    load_at_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        wall, cpu = build(tmp / "real")
        print(f"site build of the real registry: {wall:.1f} s wall, {cpu:.1f} s CPU")
        FIGURES["real_registry_build_wall_s"] = round(wall, 1)
        FIGURES["real_registry_build_cpu_s"] = round(cpu, 1)
        if not options.skip_browser:
            browser_figures(tmp, options.cold_runs, options.plain)
        if not options.skip_build:
            build_figures(tmp, [int(size) for size in options.sizes.split(",")])
    if options.record:
        print(f"recorded in {write_record('site_perf', FIGURES, load_at_start)}")


if __name__ == "__main__":
    main()
