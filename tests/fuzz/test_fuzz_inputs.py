"""Hostile input files on every surface that reads one: refused in one line, never a hang, a
traceback or an unbounded read, and nothing written that the gate rejects.

Surfaces: plans (`bench plan matrix`, both renders, `bench run --plan`), `bench import`,
`registry harvest` (TensorRT-LLM pages and folders, AMD's README, MLPerf, InferenceX tables,
the price sources' excerpts: SkyPilot's, Google Cloud's, Azure's).
Inputs: FIFOs, devices, folders named like a file, files above their kind's limit (sparse, so
cheap), non-UTF-8 text, deep nesting, YAML alias bombs, non-ASCII digits, thousands of digits, huge
tables, 1e308, source rows a price entry cannot hold (empty or 10,000-character names, names
holding NUL or ESC, dates no calendar has, rows cut short, a price of 1e300 $/GPU-hour, one thing
priced twice, differently), and rows each source skips whose key or reason holds a terminal escape,
a newline, U+2028, NUL or 10,000 characters (printed escaped and cut, one line each, text and
--json).
Seeded: the random bytes and shapes come from `random.Random(SEED)`.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from fuzz_helpers import check_cli, check_gate_accepts
from registry_checkout import empty_registry

from infermeter.calculators.json_text import TOO_DEEP
from tests.bench.synthetic_run import SYNTHETIC_VLLM_FILE

SEED = 20261201
REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
DATA = REPOSITORY_ROOT / "tests" / "data"
IMPORT_FACTS = [
    "--gpu", "h100-sxm", "--gpu-count", "1", "--model-id", "llama-3.1-8b-instruct",
    "--engine-version", "0.9.1", "--command", "vllm bench serve --max-concurrency 16",
    "--submitter", "someone", "--timezone", "UTC", "--input-len", "1024", "--output-len", "128",
]  # fmt: skip
PLAN_RUN = (
    "{name: chat, model: meta-llama/Llama-3.1-8B-Instruct, gpus: [h100-sxm], concurrency: [1]}"
)


def _fifo(folder: Path, name: str) -> Path:
    path = folder / name
    os.mkfifo(path)
    return path


def _loop(folder: Path) -> Path:
    """A symbolic link to itself."""
    path = folder / "loop"
    path.symlink_to("loop")
    return path


def _folder(folder: Path, name: str) -> Path:
    """A folder where a source's file is expected (named like one)."""
    path = folder / name
    path.mkdir(parents=True)
    return path


def _sparse(folder: Path, name: str, size: int) -> Path:
    path = folder / name
    with path.open("wb") as stream:
        stream.truncate(size)
    return path


def _plan_commands(plan: Path) -> list[list[str]]:
    return [
        ["bench", "plan", "matrix", str(plan)],
        ["bench", "plan", "render", str(plan), "--kubernetes"],
        ["bench", "run", "--plan", str(plan)],
    ]


def _write(folder: Path, name: str, text: str | bytes) -> Path:
    path = folder / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


# --- plans ---------------------------------------------------------------------------------

PLANS: dict[str, Callable[[Path], tuple[Path, str]]] = {
    "fifo": lambda d: (_fifo(d, "plan.yaml"), "FIFO"),
    "device": lambda d: (Path("/dev/zero"), "device"),
    "too large": lambda d: (_sparse(d, "plan.yaml", 3 * 1024**3), "limit of 0.25 MiB"),
    "not UTF-8": lambda d: (_write(d, "plan.yaml", b"runs: [\xff\xfe]\n"), "not UTF-8"),
    "deep nesting": lambda d: (_write(d, "plan.yaml", "runs: " + "[" * 5000 + "]" * 5000),
                               "nest"),
    "alias bomb": lambda d: (_write(d, "plan.yaml", "\n".join(
        ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
        + [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, "
           f"*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]" for i in range(1, 9)]
        + ["runs: [{model: m, gpus: [h100-sxm], extra-body: {x: *a8}}]"])), "aliases expanded"),
    "superscript count": lambda d: (_write(d, "plan.yaml", PLAN_RUN.replace(
        "[h100-sxm]", '["h100-sxm:²"]').join(["runs: [", "]"])), "ID:COUNT"),
    "5,000-digit count": lambda d: (_write(d, "plan.yaml", PLAN_RUN.replace(
        "[h100-sxm]", f'["h100-sxm:{"9" * 5000}"]').join(["runs: [", "]"])), "at most 9 digits"),
    "200,000 runs": lambda d: (_write(d, "plan.yaml", "runs:\n" + "- {}\n" * 200_000),
                               "limit of 0.25 MiB"),
    "key given twice": lambda d: (_write(d, "plan.yaml", PLAN_RUN.replace(
        "name: chat", "name: chat, name: chat2").join(["runs: [", "]"])),
        "plan.yaml:1:21: not valid YAML: duplicate key 'name', first given at line 1"),
    "runs given twice": lambda d: (_write(d, "plan.yaml", PLAN_RUN.join(
        ["runs: [", "]\nruns: []"])), "duplicate key 'runs'"),
    "2,000 runs": lambda d: (_write(d, "plan.yaml", "runs:\n" + "- {}\n" * 2_000),
                             "at most 1,000"),
    "300,000 points": lambda d: (_write(d, "plan.yaml", PLAN_RUN.replace(
        "[1]", "[" + ", ".join(str(i + 1) for i in range(300_000)) + "]").join(
        ["runs: [", "]"])), "limit of 0.25 MiB"),
    "5,000 points": lambda d: (_write(d, "plan.yaml", PLAN_RUN.replace(
        "[1]", "[" + ", ".join(str(i + 1) for i in range(5_000)) + "]").join(
        ["runs: [", "]"])), "at most 1,000"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(PLANS))
def test_fuzz_inputs_plans(tmp_path: Path, case: str) -> None:
    plan, named = PLANS[case](tmp_path)
    for args in _plan_commands(plan):
        result = check_cli(args, "plans", limit_s=30)
        assert result.exit_code == 1, (case, args[:3], result.output[-400:])
        assert named in result.stderr, (case, args[:3], result.stderr[-400:])


def test_fuzz_inputs_gpus_per_node_digits(tmp_path: Path) -> None:
    plan = _write(tmp_path, "plan.yaml", PLAN_RUN.join(["runs: [", "]"]))
    for value in ("9" * 5000, "h100-sxm=" + "9" * 5000, "²", "h100-sxm=٣"):
        result = check_cli(
            ["bench", "plan", "render", str(plan), "--kubernetes", "--gpus-per-node", value],
            "plans",
        )
        assert result.exit_code == 2, result.output
        assert "--gpus-per-node" in result.stderr


# --- bench import --------------------------------------------------------------------------


def _vllm_with(value: float) -> bytes:
    data = json.loads(SYNTHETIC_VLLM_FILE.read_text(encoding="utf-8"))
    for key in ("duration", "mean_ttft_ms", "request_throughput", "total_output_tokens"):
        data[key] = value
    return json.dumps(data).encode()


def _vllm_twice(key: bytes) -> bytes:
    """The vLLM file with `key` given twice, first with another value."""
    return SYNTHETIC_VLLM_FILE.read_bytes().replace(
        b'"' + key + b'": ', b'"' + key + b'": 5, "' + key + b'": '
    )


IMPORTS: dict[str, Callable[[Path], tuple[Path, str]]] = {
    "fifo": lambda d: (_fifo(d, "r.json"), "FIFO"),
    "/dev/zero": lambda d: (Path("/dev/zero"), "device"),
    "/dev/urandom": lambda d: (Path("/dev/urandom"), "device"),
    "3 GB": lambda d: (_sparse(d, "r.json", 3 * 1024**3), "limit of 256 MiB"),
    "not UTF-8": lambda d: (_write(d, "r.json", random.Random(SEED).randbytes(4096)), "UTF-8"),
    "deep JSON": lambda d: (_write(d, "r.json", "[" * 100_000 + "]" * 100_000), "JSON"),
    "1e308": lambda d: (_write(d, "r.json", _vllm_with(1e308)), "r.json"),
    "1e30": lambda d: (_write(d, "r.json", _vllm_with(1e30)), "r.json"),
    "key given twice": lambda d: (
        _write(d, "r.json", _vllm_twice(b"completed")),
        "r.json: invalid JSON: duplicate key 'completed'",
    ),
}


@pytest.mark.parametrize("case", list(IMPORTS))
def test_fuzz_inputs_bench_import(tmp_path: Path, case: str) -> None:
    path, named = IMPORTS[case](tmp_path)
    output = tmp_path / "out"
    output.mkdir()
    result = check_cli(["bench", "import", str(path), *IMPORT_FACTS, "--output", str(output)],
                       "import", limit_s=60)  # fmt: skip
    assert result.exit_code == 1, (case, result.output[-400:])
    assert named in result.stderr, (case, result.stderr[-400:])
    check_gate_accepts("import", sorted(output.glob("*.json")))  # none, or only valid ones


@pytest.mark.parametrize("engine_version", ["<script>alert(1)</script>", "\u202eevil", "=1+1"])
def test_fuzz_inputs_bench_import_never_writes_what_the_gate_rejects(
    tmp_path: Path, engine_version: str
) -> None:
    facts = list(IMPORT_FACTS)
    facts[facts.index("0.9.1")] = engine_version
    result = check_cli(["bench", "import", str(SYNTHETIC_VLLM_FILE), *facts,
                        "--output", str(tmp_path)], "import")  # fmt: skip
    written = sorted(tmp_path.glob("*.json"))
    check_gate_accepts("import", written)
    assert result.exit_code == (0 if written else 1), result.output


# --- harvests ------------------------------------------------------------------------------


def _trtllm_table(rows: int) -> str:
    header = (DATA / "harvest" / "trtllm" / "perf-overview-03e27c7d.md").read_text()
    line = "| 128 | 128 | 1000.5 |\n"
    return header + "\n| ISL | OSL | Throughput |\n|---|---|---|\n" + line * rows


def _git_repo(folder: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    for command in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "x"]):
        identity = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
        subprocess.run(
            ["git", "-C", str(folder), *identity, *command], check=True, capture_output=True
        )
    return folder


def _empty_repository(folder: Path) -> Path:
    """A git repository of no commits."""
    folder.mkdir()
    subprocess.run(["git", "-C", str(folder), "init", "-q"], check=True, capture_output=True)
    return folder


def _inferencex_with(folder: Path, table: str, data: bytes | None) -> Path:
    dump = folder / "dump"
    shutil.copytree(DATA / "harvest" / "inferencex-dump", dump)
    (dump / f"{table}.json").unlink()
    if data is None:
        os.mkfifo(dump / f"{table}.json")
    else:
        (dump / f"{table}.json").write_bytes(data)
    return dump


def _inferencex_folder(folder: Path, table: str) -> Path:
    """The pinned InferenceX dump with a folder where `table` is."""
    dump = _inferencex_with(folder, table, b"")
    (dump / f"{table}.json").unlink()
    (dump / f"{table}.json").mkdir()
    return dump


PINNED_PRICES = {
    "skypilot": DATA / "harvest" / "skypilot" / "verda-vms-000c1d0b.csv",
    "gcp-pricing": DATA / "harvest" / "gcp-pricing" / "pricing-fd66b26f.yml",
    "azure-retail": DATA / "harvest" / "azure-retail" / "vm-francecentral-cf741f25.txt",
}
VERDA_ROW = b"1B300.30V,1B300.30V,30.0,275.0,B300,1.0,"
AZURE_SPOT = b'"DZH318Z08MBM/005M|'  # the francecentral excerpt's first item, a Spot price
LONG_NAME = b"x" * 10_000


def _price_source(folder: Path, source: str, edit: Callable[[bytes], bytes]) -> list[str]:
    """`SOURCE --from` a copy of the source's pinned excerpt, edited."""
    pinned = PINNED_PRICES[source]
    data = pinned.read_bytes()
    edited = edit(data)
    assert edited != data, source
    return [source, "--from", str(_write(folder, pinned.name, edited))]


def _swap(old: bytes, new: bytes) -> Callable[[bytes], bytes]:
    def edit(data: bytes) -> bytes:
        assert old in data
        return data.replace(old, new, 1)

    return edit


def _again(start: bytes, end: bytes, edits: dict[bytes, bytes]) -> Callable[[bytes], bytes]:
    """The row (or item) from `start` to `end` given a second time after itself, `edits` made
    to the copy: one thing priced twice."""

    def edit(data: bytes) -> bytes:
        first = data.index(start)
        after = data.index(end, first) + len(end)
        copy = data[first:after]
        for old, new in edits.items():
            assert old in copy
            copy = copy.replace(old, new, 1)
        return data[:after] + copy + data[after:]

    return edit


def _inferencex_row(folder: Path, table: str, column: str, value: object = None) -> Path:
    """The pinned InferenceX dump with `column` of `table`'s first row set to `value` (None:
    removed)."""
    rows = json.loads((DATA / "harvest" / "inferencex-dump" / f"{table}.json").read_text())
    rows[0].pop(column) if value is None else rows[0].update({column: value})
    return _inferencex_with(folder, table, json.dumps(rows).encode())


def _inferencex_api_row(folder: Path, column: str, value: object) -> list[str]:
    """`--from` a copy of the pinned InferenceX API response whose first row has `value` in
    `column`, cited as the real one is."""
    rows = json.loads((DATA / "harvest" / "inferencex-api" / "benchmarks.json").read_text())
    rows[0][column] = value
    path = _write(folder, "benchmarks.json", json.dumps(rows).encode())
    return ["--from", str(path), "--commit", "528c4146", "--url", "https://github.com/o/r/b.json"]


HARVESTS: dict[str, Callable[[Path], tuple[list[str], str]]] = {
    "trtllm fifo file": lambda d: (["trtllm", "--from", str(_fifo(d, "p.md")), "--commit",
                                    "03e27c7d"], "FIFO"),
    "trtllm fifo in a folder": lambda d: (["trtllm", "--from", str(_fifo(d, "p.md").parent)],
                                          "FIFO"),
    # A folder named like a page, a table or an excerpt: named, not "[Errno 21] Is a
    # directory: 3" (the descriptor's number), as each of these printed before.
    "trtllm folder named .md in a folder": lambda d: (["trtllm", "--from", str(_folder(
        d, "pages/d.md").parent)], "d.md: is a folder; a source page must be a regular file"),
    # a link to itself was "no such file or folder" (trtllm, mlperf) or "a file" to cite
    "trtllm link loop": lambda d: (["trtllm", "--from", str(_loop(d))],
                                   "loop: a symbolic link that leads to no file or folder"),
    "inferencex link loop": lambda d: (["inferencex", "--from", str(_loop(d))],
                                       "loop: a symbolic link that leads to no file or folder"),
    "trtllm folder of no page": lambda d: (["trtllm", "--from", str(_folder(d, "pages"))],
        "pages is no git repository and holds no .md page of a version"),  # "… and no folder"
    "skypilot folder named .csv in a folder": lambda d: (["skypilot", "--from", str(_folder(
        d, "excerpts/x.csv").parent)], "x.csv: is a folder; a source page must be a regular file"),
    "inferencex table a folder": lambda d: (["inferencex", "--from", str(_inferencex_folder(
        d, "configs"))], "configs.json: is a folder; a source table must be a regular file"),
    "trtllm 200,000 rows": lambda d: (["trtllm", "--from", str(_write(
        d, "p.md", _trtllm_table(200_000))), "--commit", "03e27c7d"], "limit of 4 MiB"),
    "amd fifo": lambda d: (["amd", "--from", str(_fifo(d, "fifo.md")), "--commit", "f94ec9be"],
                           "FIFO"),
    "amd not UTF-8": lambda d: (["amd", "--from", str(_write(
        d, "README.md", b"# vLLM \xff\xfe\n")), "--commit", "f94ec9be"], "UTF-8"),
    "amd git not UTF-8": lambda d: (["amd", "--from", str(_git_repo(d / "vllm", {
        "docs/dev-docker/README.md": b"# \xff\xfe\n"}))], "UTF-8"),
    "mlperf not UTF-8": lambda d: (["mlperf", "--round", "5.1", "--from", str(_git_repo(
        d / "results", {"summary_results.json": b"[\xff\xfe]"}))], "UTF-8"),
    # it said "--commit: 'HEAD' names no commit", of an option not given
    "mlperf repository with no commits": lambda d: (["mlperf", "--round", "5.1", "--from", str(
        _empty_repository(d / "results"))], "results is a git repository with no commit at HEAD"),
    "mlperf deep JSON": lambda d: (["mlperf", "--round", "5.1", "--from", str(_git_repo(
        d / "results", {"summary_results.json": b"[" * 100_000 + b"]" * 100_000}))],
        f"summary_results.json: not JSON ({TOO_DEEP}"),
    "inferencex fifo": lambda d: (["inferencex", "--from", str(_inferencex_with(
        d, "benchmark_results", None))], "FIFO"),
    "inferencex deep JSON": lambda d: (["inferencex", "--from", str(_inferencex_with(
        d, "configs", b"[" * 100_000 + b"]" * 100_000))], "not a JSON table"),
    "inferencex two rows, one 10,000-character key": lambda d: (["inferencex", "--from", str(
        _inferencex_failed(d, "x" * 10_000, "failed", count=2))],
        "the same source key 'inferencex result " + "x" * 181 + "… (10018 characters)"),
    # Quoted whole, to find the row by: it was cut at 40 characters, before the lengths
    "amd row twice": lambda d: (["amd", "--commit", "f94ec9be", "--from", str(_write(d,
        "README.md", _again(b"| Llama 3.1 70B (amd/Llama-3.1-70B-Instruct-FP8-KV) | FP8 | 8 "
        b"| 128 | 2048 | 3200", b"\n", {})((DATA / "harvest" / "amd" / "README-f94ec9be.md")
        .read_bytes())))], "two rows have the same source key 'amd f94ec9be throughput | Llama "
        "3.1 70B (amd/Llama-3.1-70B-Instruct-FP8-KV) | TP8 | 128/2048 | prompts 3200'"),
    "inferencex dump configuration without hardware": lambda d: (["inferencex", "--from", str(
        _inferencex_row(d, "configs", "hardware"))], "configs.json: row 0: no 'hardware'"),
    "inferencex dump hardware a list": lambda d: (["inferencex", "--from", str(_inferencex_row(
        d, "configs", "hardware", ["B200"]))], "row 0: hardware is ['B200']; expected a string"),
    "inferencex dump config_id an object": lambda d: (["inferencex", "--from", str(
        _inferencex_row(d, "benchmark_results", "config_id", {"id": 1}))],
        "row 0: config_id is {'id': 1}; expected a string"),
    "inferencex api image a list": lambda d: (["inferencex", *_inferencex_api_row(
        d, "image", ["x"])], "row 0: image is ['x']; expected a string"),
    "inferencex range-ratio nan": lambda d: (["inferencex", "--from", str(
        DATA / "harvest" / "inferencex-dump"), "--range-ratio", "nan"], "--range-ratio"),
    "inferencex range-ratio 1e308": lambda d: (["inferencex", "--from", str(
        DATA / "harvest" / "inferencex-dump"), "--range-ratio", "1e308"], "--range-ratio"),
    "inferencex range-ratio -1": lambda d: (["inferencex", "--from", str(
        DATA / "harvest" / "inferencex-dump"), "--range-ratio", "-1"], "--range-ratio"),
    # Price sources: a row the price schema refuses is named by file, row and field.
    "skypilot empty instance": lambda d: (_price_source(d, "skypilot", _swap(
        VERDA_ROW, VERDA_ROW.replace(b"1B300.30V,", b",", 1))),
        "row 'verda//FIN-03': id: String should match pattern"),
    "skypilot 10,000-character region": lambda d: (_price_source(d, "skypilot", _swap(
        b"FIN-03,6.99,", LONG_NAME + b",6.99,")),
        "region: String should have at most 2000 characters"),
    "skypilot GPU count 1e300": lambda d: (_price_source(d, "skypilot", _swap(
        VERDA_ROW, VERDA_ROW.replace(b",1.0,", b",1e300,"))), "usd_per_gpu_hour"),
    "skypilot date 2026-02-30": lambda d: (_price_source(d, "skypilot", _swap(
        b"# date: unknown: ", b"# date: 2026-02-30 (stated): ")),
        "'# date:' 2026-02-30 is not a calendar date"),
    "skypilot row cut short": lambda d: (_price_source(d, "skypilot", lambda data: data[
        : data.index(VERDA_ROW) + len(VERDA_ROW) + 20]), "does not have the header's 10 fields"),
    "skypilot header, no rows": lambda d: (_price_source(d, "skypilot", lambda data: b"\n".join(
        data.split(b"\n")[:5])), "no rows below the CSV header"),
    "skypilot not UTF-8": lambda d: (_price_source(d, "skypilot", _swap(
        b"FIN-03,6.99", b"FIN-03\xff,6.99")), "not UTF-8"),
    "skypilot fifo in a folder": lambda d: (["skypilot", "--from", str(_fifo(d, "v.csv").parent)],
                                            "FIFO"),
    "skypilot row twice, other price": lambda d: (_price_source(d, "skypilot", _again(
        VERDA_ROW, b"\n", {b"FIN-03,6.99,": b"FIN-03,5.99,"})), "CSV row 1 and CSV row 2 give "
        "the on_demand price of '1B300.30V' in 'FIN-03' differently (6.99 and 5.99)"),
    "skypilot price 1e300": lambda d: (_price_source(d, "skypilot", _swap(
        b"FIN-03,6.99,", b"FIN-03,1e300,")),
        "usd_per_gpu_hour: Input should be less than or equal to 1000 (read 1e+300)"),
    "skypilot NUL in a region": lambda d: (_price_source(d, "skypilot", _swap(
        b"FIN-03,6.99,", b"FIN\x00-03,6.99,")),
        "row 'verda/1B300.30V/FIN\\x00-03': region: contains the control character U+0000"),
    "skypilot ESC in an instance": lambda d: (_price_source(d, "skypilot", _swap(
        VERDA_ROW, VERDA_ROW.replace(b"1B300.30V,", b"1B300\x1b[2J.30V,", 1))),
        "instance: contains the control character U+001B"),
    "gcp-pricing empty region": lambda d: (_price_source(d, "gcp-pricing", lambda data: data
        .replace(b"        us-central1:", b"        '':")), "region '', hour: region: String"),
    "gcp-pricing 10,000-character machine type": lambda d: (_price_source(d, "gcp-pricing",
        _swap(b"    a3-highgpu-8g:", b"    " + LONG_NAME + b":")), "are not YAML"),
    "gcp-pricing machine type named by a number": lambda d: (_price_source(d, "gcp-pricing",
        _swap(b"    a3-highgpu-8g:", b"    123:")), "a machine type is named by text"),
    "gcp-pricing machine type not a mapping": lambda d: (_price_source(d, "gcp-pricing", _swap(
        b"    g4-standard-384:\n", b"    g4-standard-384: 5\n    g4-standard-384-old:\n")),
        "compute.instance.'g4-standard-384': expected a mapping"),
    "gcp-pricing cost not a mapping": lambda d: (_price_source(d, "gcp-pricing", _swap(
        b"        us-central1:\n          hour: 88.4899999025753",
        b"        us-central1: 5\n        old:\n          hour: 88.4899999025753")),
        ".cost.'us-central1': expected"),
    "gcp-pricing empty file": lambda d: (_price_source(d, "gcp-pricing", lambda data: b""),
                                         "expected '# ' provenance lines"),
    "gcp-pricing machine type twice": lambda d: (_price_source(d, "gcp-pricing", _swap(
        b"    a3-highgpu-8g:\n", b"    a3-highgpu-8g:\n      h100-80gb: 8\n    a3-highgpu-8g:\n")),
        "duplicate key 'a3-highgpu-8g', first given at line 19 (line 21, column 5"),
    "gcp-pricing region twice, other price": lambda d: (_price_source(d, "gcp-pricing", _swap(
        b"        us-central1:\n          hour: 88.4899999025753", b"        us-central1:\n"
        b"          hour: 77.0\n        us-central1:\n          hour: 88.4899999025753")),
        "duplicate key 'us-central1', first given at line 21"),
    "gcp-pricing 1,000-character machine type twice": lambda d: (_price_source(d, "gcp-pricing",
        _swap(b"    a3-highgpu-8g:\n", b"    " + LONG_NAME[:1000] + b":\n      h100-80gb: 8\n    "
        + LONG_NAME[:1000] + b":\n    a3-highgpu-8g:\n")),  # YAML's longest simple key: 1024
        "duplicate key '" + "x" * 39 + "… (1000 characters), first given at line 19"),
    "gcp-pricing price 1e300": lambda d: (_price_source(d, "gcp-pricing", _swap(
        b"hour: 88.4899999025753", b"hour: 1.0e+300")),
        "'a3-highgpu-8g', region 'us-central1', hour: usd_per_gpu_hour: Input should be less than "
        "or equal to 1000 (read 1.25e+299)"),
    "gcp-pricing NUL in a region": lambda d: (_price_source(d, "gcp-pricing", _swap(
        b"        us-central1:\n          hour: 88.4899999025753",
        b'        "us-\\0central1":\n          hour: 88.4899999025753')),
        "hour: region: contains the control character U+0000"),
    "azure-retail empty region": lambda d: (_price_source(d, "azure-retail", lambda data: data
        .replace(b'"armRegionName": "francecentral"', b'"armRegionName": ""')),
        "region '', on_demand: region: String"),
    "azure-retail 10,000-character region": lambda d: (_price_source(d, "azure-retail",
        lambda data: data.replace(b'"francecentral"', b'"' + LONG_NAME + b'"')),
        "(10000 characters)"),
    "azure-retail date not a date": lambda d: (_price_source(d, "azure-retail", _swap(
        b"# date: 2026-08-22 (stated)", b"# date: 2026-13-45 (stated)")), "not a calendar date"),
    "azure-retail fifo": lambda d: (["azure-retail", "--from", str(_fifo(d, "vm.txt"))], "FIFO"),
    "azure-retail item twice, other price": lambda d: (_price_source(d, "azure-retail", _again(
        AZURE_SPOT, b"},\n", {b"005M|": b"005N|", b"10.65012": b"9.5"})), "item 1 and item 2 give "
        "the interruptible price of Standard_ND96amsr_A100_v4 in 'francecentral' differently"),
    "azure-retail key twice, other price": lambda d: (_price_source(d, "azure-retail", _again(
        AZURE_SPOT, b"},\n", {b"10.65012": b"9.5"})), "not items: duplicate key 'DZH318Z08MBM"),
    "azure-retail 10,000-character key twice": lambda d: (_price_source(d, "azure-retail",
        lambda data: _again(b'"' + LONG_NAME, b"},\n", {})(_swap(AZURE_SPOT, b'"' + LONG_NAME)(
        data))), "not items: duplicate key '" + "x" * 39 + "… (10049 characters)"),
    "azure-retail price 1e300": lambda d: (_price_source(d, "azure-retail", _swap(
        b'"retailPrice": 40.962', b'"retailPrice": 1e300')),
        "usd_per_gpu_hour: Input should be less than or equal to 1000 (read 1.25e+299)"),
    "azure-retail NUL in a region": lambda d: (_price_source(d, "azure-retail", lambda data: data
        .replace(b'"francecentral"', b'"france\\u0000central"')),
        "on_demand: region: contains the control character U+0000"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(HARVESTS))
def test_fuzz_inputs_harvests(tmp_path: Path, case: str) -> None:
    args, named = HARVESTS[case](tmp_path)
    root = empty_registry(tmp_path / "checkout")
    before = _tree(root)
    result = check_cli(
        ["registry", "harvest", *args, "--registry", str(root), "--retrieved", "2026-12-01"],
        "harvests", limit_s=60,
    )  # fmt: skip
    # A case naming an option is a usage error (2); any other, a bad source (1).
    assert result.exit_code == (2 if named.startswith("--") else 1), (case, result.output[-400:])
    assert named in result.stderr, (case, result.stderr[-400:])
    assert _tree(root) == before  # nothing written, nothing rewritten (a price file, in place)


# A file saved with a byte order mark (Excel, Notepad) is the same source: the price excerpts
# were refused as having no '# ' provenance lines and a TensorRT-LLM page as having no header.
BOM_SOURCES = {
    "trtllm": (DATA / "harvest" / "trtllm" / "perf-overview-03e27c7d.md", []),
    "amd": (DATA / "harvest" / "amd" / "README-f94ec9be.md", ["--commit", "f94ec9be"]),
    **{source: (pinned, []) for source, pinned in PINNED_PRICES.items()},
}


@pytest.mark.parametrize("source", list(BOM_SOURCES))
def test_fuzz_inputs_harvest_of_a_file_with_a_byte_order_mark(tmp_path: Path, source: str) -> None:
    pinned, extra = BOM_SOURCES[source]
    marked = _write(tmp_path, pinned.name, b"\xef\xbb\xbf" + pinned.read_bytes())
    trees = []
    for name, path in (("pinned", pinned), ("marked", marked)):
        root = empty_registry(tmp_path / name)
        result = check_cli(
            ["registry", "harvest", source, "--from", str(path), *extra, "--registry", str(root),
             "--retrieved", "2026-12-01"], "harvests", limit_s=60,
        )  # fmt: skip
        assert result.exit_code == 0, (name, result.output[-400:])
        trees.append({path.relative_to(root): data for path, data in _tree(root).items()})
    assert trees[0] == trees[1]


def test_fuzz_inputs_harvest_of_a_git_file_with_a_byte_order_mark(tmp_path: Path) -> None:
    # A repository's file is read from git as a folder's is: "not JSON (Unexpected UTF-8 BOM …)"
    summaries = []
    for name, mark in (("pinned", b""), ("marked", b"\xef\xbb\xbf")):
        repo = tmp_path / name / "results"
        shutil.copytree(DATA / "harvest" / "mlperf-v5.1", repo)
        summary = (repo / "summary_results.json").read_bytes()
        _git_repo(repo, {"summary_results.json": mark + summary})
        root = empty_registry(tmp_path / name / "checkout")
        result = check_cli(
            ["registry", "harvest", "mlperf", "--round", "5.1", "--from", str(repo), "--registry",
             str(root), "--retrieved", "2026-12-01", "--dry-run"], "harvests", limit_s=60,
        )  # fmt: skip
        assert result.exit_code == 0, (name, result.output[-400:])
        summaries.append(result.output.splitlines()[-1])
    assert summaries[0] == summaries[1]


# A row the harvest skips is printed with its key and reason, which hold what the source wrote:
# each control character in them escaped (an OSC sequence would retitle the terminal, a newline
# or U+2028 forge a line; click strips only CSI sequences), each part cut, text and --json alike.
OSC = "\x1b]0;title\x07"


def _mlperf_row(folder: Path, row: int = 0, **fields: object) -> Path:
    """A git copy of the pinned MLPerf v5.1 results whose summary row `row` has `fields`."""
    repo = folder / "results"
    shutil.copytree(DATA / "harvest" / "mlperf-v5.1", repo)
    summary = repo / "summary_results.json"
    rows = json.loads(summary.read_text(encoding="utf-8"))
    rows[row].update(fields)
    return _git_repo(repo, {"summary_results.json": json.dumps(rows).encode()})


def _inferencex_failed(folder: Path, row_id: str, error: str, count: int = 1) -> Path:
    """The pinned InferenceX dump with its first `count` benchmark results failed, each under
    `row_id`."""
    rows = json.loads((DATA / "harvest" / "inferencex-dump" / "benchmark_results.json").read_text())
    for row in rows[:count]:
        row.update(id=row_id, error=error)
    return _inferencex_with(folder, "benchmark_results", json.dumps(rows).encode())


def _item_key(key: bytes) -> Callable[[bytes], bytes]:
    """The Azure excerpt with its first item's key begun with `key`, and its unit not an hour
    (so the item is skipped)."""

    def edit(data: bytes) -> bytes:
        return _swap(b'"1 Hour"', b'"1 Day"')(_swap(AZURE_SPOT, key)(data))

    return edit


SKIPPED_ROWS: dict[str, Callable[[Path], tuple[list[str], str]]] = {
    "mlperf result ID": lambda d: (["mlperf", "--round", "5.1", "--from", str(_mlperf_row(d,
        ID=f"5.1-{OSC}\n\u2028"))], "mlperf v5.1 5.1-\\x1b]0;title\\x07\\n\\u2028 llama2-70b-99 "),
    # NaN is within no tolerance: it was taken as the log's figure (the row filed, unchecked)
    "mlperf table's figure NaN": lambda d: (["mlperf", "--round", "5.1", "--from", str(
        _mlperf_row(d, 1, Performance_Result=float("nan")))], "llama2-70b-99.9 Interactive: "
        "closed/AMD/results/8xMI300X_2xEPYC_9575F/llama2-70b-99.9/Interactive/performance/run_1/"
        "mlperf_log_summary.txt: the table's nan Tokens/s disagrees with the log's 8840.42"),
    "trtllm table heading": lambda d: (["trtllm", "--commit", "03e27c7d", "--from", str(_write(
        d, "p.md", _swap(b"# GPT-OSS 20B", f"# GPT-OSS{OSC} 20B".encode())((
        DATA / "harvest" / "trtllm" / "perf-overview-03e27c7d.md").read_bytes())))],
        "GPT-OSS\\x1b]0;title\\x07 20B | B200 TP1 (FP4) | 1000/1000: "),
    # A page cut mid-row: its '1,4' was read as 14 tokens/s (and a 0 filed as a result)
    "trtllm row cut short": lambda d: (["trtllm", "--commit", "03e27c7d", "--from", str(_write(
        d, "p.md", _swap(b"| 1024/32768 | 1,451 | 1,465 | 438 |\n", b"| 1024/32768 | 1,451 | 1,4")(
        (DATA / "harvest" / "trtllm" / "perf-overview-03e27c7d.md").read_bytes())))],
        "GB200 DEP4 (FP4) | 1024/32768: value '1,4' is not a number as a table prints one"),
    "trtllm figure 0": lambda d: (["trtllm", "--commit", "03e27c7d", "--from", str(_write(
        d, "p.md", _swap(b"| 1024/32768 | 1,451 | 1,465 |", b"| 1024/32768 | 1,451 | 0 |")((
        DATA / "harvest" / "trtllm" / "perf-overview-03e27c7d.md").read_bytes())))],
        "GB200 DEP4 (FP4) | 1024/32768: value '0' is not a positive figure"),
    "amd model": lambda d: (["amd", "--commit", "f94ec9be", "--from", str(_write(d, "README.md",
        _swap(b"| Llama 3.1 70B (amd/", f"| Llama{OSC} 3.1 70B (amd/".encode())((
        DATA / "harvest" / "amd" / "README-f94ec9be.md").read_bytes())))],
        "throughput | Llama\\x1b]0;title\\x07 3.1 70B (amd/"),
    # A row whose figure prices at no rate (2,048 tokens in 1e-15 ms) is skipped by the gate,
    # never written to break `registry index` and `registry answer` (it was, before).
    "amd latency of 1e-18 s": lambda d: (["amd", "--commit", "f94ec9be", "--from", str(_write(
        d, "README.md", _swap(b"| 17.236 |", b"| 0.000000000000000001 |")((
        DATA / "harvest" / "amd" / "README-f94ec9be.md").read_bytes())))],
        "batch 1: registry validate would reject its file: points[0].e2e_ms.mean: the static "
        "batch's output tokens/s from its time: 2.048e+21 tokens/s"),
    "inferencex failed result": lambda d: (["inferencex", "--from", str(_inferencex_failed(
        d, f"x{OSC}\n\u2028", "boom\x00" + "e" * 10_000))],
        "inferencex result x\\x1b]0;title\\x07\\n\\u2028: failed: boom\\x00eee"),
    "inferencex dump decode_tp a word": lambda d: (["inferencex", "--from", str(
        _inferencex_row(d, "configs", "decode_tp", "two"))],
        "decode_tp is 'two', not a positive whole number"),
    # filed as a concurrency of 10**308, which ended `registry index` in an OverflowError
    "inferencex dump conc 1e308": lambda d: (["inferencex", "--from", str(_inferencex_row(
        d, "benchmark_results", "conc", 1e308))], "not a valid result: Load.concurrency: Input "
        "should be less than or equal to 9007199254740992"),
    "inferencex api conc null": lambda d: (["inferencex", *_inferencex_api_row(d, "conc", None)],
        ": conc is None, not a positive whole number"),
    "skypilot instance": lambda d: (_price_source(d, "skypilot", _swap(
        b"1B300.30V,1B300.30V,30.0,275.0,B300,",
        f'"1B{OSC}\nforged",1B300.30V,30.0,275.0,Z80,'.encode())),
        "verda/1B\\x1b]0;title\\x07\\nforged/FIN-03: accelerator 'Z80'"),
    "gcp-pricing region": lambda d: (_price_source(d, "gcp-pricing", _swap(
        b"        us-central1:\n", b'        "us-\\e]0;title\\a\\N":\n          hour: -1\n'
        b"        us-central1:\n")), "gcp/a2-ultragpu-8g/us-\\x1b]0;title\\x07\\x85/hour: "),
    "azure-retail item key": lambda d: (_price_source(d, "azure-retail", _item_key(
        b'"DZH\\u001b]0;title\\u0007\\n\\u2028|')),
        "azure/DZH\\x1b]0;title\\x07\\n\\u2028|14bf561c-12b1-5a70-89ce-b9e38c15c94f|"),
    "azure-retail 10,000-character item key": lambda d: (_price_source(d, "azure-retail",
        _item_key(b'"' + LONG_NAME)), "x…: unitOfMeasure '1 Day' is not '1 Hour'"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(SKIPPED_ROWS))
def test_fuzz_inputs_harvest_skipped_rows(tmp_path: Path, case: str) -> None:
    args, shown = SKIPPED_ROWS[case](tmp_path)
    root = empty_registry(tmp_path / "checkout")
    command = ["registry", "harvest", *args, "--registry", str(root), "--dry-run"]
    text = check_cli(command, "harvests", limit_s=60, report=True)
    assert text.exit_code == 0, (case, text.output[-400:])
    lines = text.stdout.split("\n")
    assert all(line.isprintable() for line in lines), (case, ascii(text.stdout)[-400:])
    assert any(line.startswith("skipped ") and shown in line for line in lines), (case, lines)
    as_json = check_cli([*command, "--json"], "harvests", limit_s=60)
    assert as_json.stdout.replace("\n", "").isprintable(), (case, ascii(as_json.stdout)[-400:])
    skipped = json.loads(as_json.stdout)["skipped"]
    assert any(shown in f"{row['row']}: {row['reason']}" for row in skipped), (case, skipped)


def _tree(root: Path) -> dict[Path, bytes | None]:
    """Every path under `root`, with a file's bytes."""
    return {path: path.read_bytes() if path.is_file() else None for path in root.rglob("*")}


# --- bench run's dataset -------------------------------------------------------------------

DATASETS: dict[str, Callable[[Path], tuple[Path, str]]] = {
    "fifo": lambda d: (_fifo(d, "d.jsonl"), "FIFO"),
    "/dev/zero": lambda d: (Path("/dev/zero"), "device"),
    "deep JSON": lambda d: (_write(d, "d.json", "[" * 100_000 + "]" * 100_000), "not JSON"),
    "deep JSON line": lambda d: (
        _write(d, "d.jsonl", "{}\n" + "[" * 100_000 + "]" * 100_000),
        "d.jsonl:2: not a JSON line: nested deeper",
    ),
    "not UTF-8": lambda d: (_write(d, "d.jsonl", b'{"a": "\xff"}\n'), "UTF-8"),
}


@pytest.mark.parametrize("case", list(DATASETS))
def test_fuzz_inputs_bench_run_dataset(tmp_path: Path, case: str) -> None:
    path, named = DATASETS[case](tmp_path)
    result = check_cli(["bench", "run", "--endpoint", "http://127.0.0.1:9", "--dataset",
                        str(path), "--concurrency", "1"], "datasets", limit_s=30)  # fmt: skip
    assert result.exit_code in (1, 2), (case, result.output[-400:])
    assert named in result.stderr, (case, result.stderr[-400:])
