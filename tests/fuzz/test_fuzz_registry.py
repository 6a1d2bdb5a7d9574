"""The registry's guard under hostile trees and files: validate and index agree, nothing forges a
CI line, nothing hangs, no markup, control character or secret gets through."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fuzz_helpers import check_cli, count
from registry_checkout import empty_registry

from infermeter.registry.index import write_index
from infermeter.registry.models import Result
from infermeter.registry.result_reader import result_files
from infermeter.registry.secrets import REDACTED, find_secret, redact, redact_text
from infermeter.registry.store import content_id, dumps_result, write_result
from infermeter.registry.submit import SubmitConfig, submit

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = REPOSITORY_ROOT / "tests" / "examples" / "valid" / "results"
MEASURED = EXAMPLES / "measured-two-points.json"


def _result(**source: object) -> Result:
    data = json.loads(MEASURED.read_text(encoding="utf-8"))
    data["source"].update(source)
    result = Result.model_validate(data)
    return result.model_copy(update={"id": content_id(result)})


def _registry(tmp_path: Path) -> tuple[Path, Path]:
    """A registry with one valid result; (root, the folder that result sits in)."""
    root = empty_registry(tmp_path / "checkout")
    path = write_result(_result(), root)
    return root, path.parent


def _validate(root: Path) -> tuple[int, str]:
    result = check_cli(["registry", "validate", "--registry", str(root)], "registry", report=True)
    return result.exit_code, result.output


def _hidden(root: Path, folder: Path) -> str:
    (root / "registry" / "results" / ".hidden").mkdir()
    (root / "registry" / "results" / ".hidden" / "bad.json").write_text("{")
    return "is a hidden folder"


def _folder_named_json(root: Path, folder: Path) -> str:
    (folder / "dir.json").mkdir()
    (folder / "dir.json" / "inner.json").write_text("{")
    return "is a folder named like a result file"


def _symlink(root: Path, folder: Path) -> str:
    outside = root.parent / "outside.json"
    outside.write_text(MEASURED.read_text())
    (folder / "link.json").symlink_to(outside)
    return "is a symbolic link"


def _fifo(root: Path, folder: Path) -> str:
    os.mkfifo(folder / "x.json")
    return "is not a regular file"


TREES = [_hidden, _folder_named_json, _symlink, _fifo]


@pytest.mark.parametrize("make", TREES, ids=[make.__name__.strip("_") for make in TREES])
def test_fuzz_registry_validate_and_index_see_the_same_files(tmp_path: Path, make: object) -> None:
    root, folder = _registry(tmp_path)
    message = make(root, folder)  # type: ignore[operator]
    code, output = _validate(root)
    assert code == 1, output
    assert message in output
    # The index reads exactly the files validate reads: the one good result, no hang.
    assert [path.name for path in result_files(root)] == [next(folder.glob("*-*.json")).name]
    written = write_index(root, tmp_path / "index")
    count("registry", "index ok")
    assert written.results == 1


@pytest.mark.parametrize("loop", [False, True], ids=["link to a folder of results", "link loop"])
def test_fuzz_registry_a_results_folder_that_is_a_link_is_read_by_none(
    tmp_path: Path, loop: bool
) -> None:
    """registry/results itself a link: validate refused it while the index read the results
    through it; a link to itself validated as 'all valid', and named, ended in pathlib's
    RuntimeError ('Symlink loop from …') as a traceback."""
    root, _folder = _registry(tmp_path)
    results = root / "registry" / "results"
    results.rename(tmp_path / "elsewhere")
    results.symlink_to("results" if loop else tmp_path / "elsewhere")
    code, output = _validate(root)
    assert code == 1, output
    assert "registry/results: is a symbolic link" in output
    named = check_cli(["registry", "validate", str(results)], "registry", report=True)
    assert named.exit_code == 1, named.output
    assert f"{results}: is a symbolic link" in named.output
    assert result_files(root) == []
    assert write_index(root, tmp_path / "index").results == 0
    count("registry", "index ok")


def test_fuzz_registry_answer_from_a_registry_of_no_results_says_none(tmp_path: Path) -> None:
    # it ended 'models with results: ' and nothing
    root = empty_registry(tmp_path / "checkout")
    args = ["registry", "answer", "--registry", str(root), "--model", "llama-3.1-8b-instruct"]
    result = check_cli(args, "registry")
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines() == [
        "Error: --model: no result for 'llama-3.1-8b-instruct'; models with results: none"
    ]


def _amd_harvest(root: Path, page: Path) -> list[str]:
    return ["registry", "harvest", "amd", "--from", str(page), "--commit", "f94ec9be",
            "--registry", str(root), "--retrieved", "2026-12-01"]  # fmt: skip


AMD_PAGE = REPOSITORY_ROOT / "tests" / "data" / "harvest" / "amd" / "README-f94ec9be.md"


def _registry_reader(command: str, root: Path, out: Path, page: Path) -> list[str]:
    """The command line of `command` (validate, index, answer or harvest), each of which reads
    `root`'s registry: the index writes to `out`, the harvest reads the AMD page `page`."""
    return {
        "validate": ["registry", "validate", "--registry", str(root)],
        "index": ["registry", "index", "--registry", str(root), "--out", str(out)],
        "answer": ["registry", "answer", "--registry", str(root), "--model", "llama-3.1-8b"],
        "harvest": _amd_harvest(root, page),
    }[command]


def test_fuzz_registry_harvest_reads_the_registry_as_validate_does(tmp_path: Path) -> None:
    """A harvest reads the results already there by the walk validate and the index use: it
    waited forever on a FIFO named x.json, and wrote through a results folder that is a link."""
    root, folder = _registry(tmp_path)
    os.mkfifo(folder / "x.json")
    args = _amd_harvest(root, AMD_PAGE)
    result = check_cli(args, "registry", limit_s=30)
    assert result.exit_code == 0, result.output[-400:]
    assert result.output.splitlines()[-1] == "40 added, 0 changed, 0 unchanged, 0 skipped"
    assert stat.S_ISFIFO((folder / "x.json").lstat().st_mode)
    # registry/results a link, refused by validate: nothing written through it (40 were)
    results = root / "registry" / "results"
    results.rename(tmp_path / "elsewhere")
    results.symlink_to(tmp_path / "elsewhere")
    before = sorted((tmp_path / "elsewhere").rglob("*"))
    result = check_cli(args, "registry", limit_s=30)
    assert result.exit_code == 1, result.output[-400:]
    assert result.stderr.splitlines() == [
        f"Error: {results}: is a symbolic link; registry folders must be real"
    ]
    assert sorted((tmp_path / "elsewhere").rglob("*")) == before


@pytest.mark.parametrize(
    ("corrections", "named"),
    [("FIFO", "is a FIFO (named pipe); a corrections file must be a regular file"),
     ("not UTF-8", "not UTF-8 text (byte 36); a corrections file is UTF-8")],
)  # fmt: skip
@pytest.mark.parametrize("command", ["validate", "index", "answer", "harvest"])
def test_fuzz_registry_a_corrections_file_no_reader_can_read_is_named(
    tmp_path: Path, command: str, corrections: str, named: str
) -> None:
    """registry/corrections.yaml a FIFO: validate, index, answer and a harvest that corrects a
    row waited on it forever; not UTF-8: the harvest ended in a UnicodeDecodeError traceback."""
    root = empty_registry(tmp_path / "checkout")
    assert check_cli(_amd_harvest(root, AMD_PAGE), "registry").exit_code == 0
    changed = tmp_path / "README.md"  # one figure changed: its row's result is corrected
    changed.write_bytes(AMD_PAGE.read_bytes().replace(b"| 12638.9 ", b"| 12000.0 ", 1))
    path = root / "registry" / "corrections.yaml"
    if corrections == "FIFO":
        os.mkfifo(path)
    else:
        path.write_bytes(b"schema_version: 1\ncorrections: []\n# \xff\n")
    args = _registry_reader(command, root, tmp_path / "i", changed)
    before = sorted(root.rglob("*"))
    result = check_cli(args, "registry", report=command == "validate")
    assert result.exit_code == 1, result.output[-400:]
    assert f"corrections.yaml: {named}" in result.output
    assert sorted(root.rglob("*")) == before


@pytest.mark.parametrize(
    ("catalog", "command"),
    [("gpus.yaml", "harvest"), ("models.yaml", "validate"), ("prices.yaml", "index"),
     ("models.yaml", "answer")],
)  # fmt: skip
def test_fuzz_registry_a_catalog_that_is_a_fifo_is_named_not_waited_on(
    tmp_path: Path, catalog: str, command: str
) -> None:
    """A FIFO in a catalog's place: each command that reads the catalog waited on it forever."""
    root = empty_registry(tmp_path / "checkout")
    path = root / "registry" / "catalogs" / catalog
    path.unlink()
    os.mkfifo(path)
    args = _registry_reader(command, root, tmp_path / "i", AMD_PAGE)
    result = check_cli(args, "registry", report=command == "validate")
    assert result.exit_code == 1, result.output[-400:]
    assert f"{catalog}: is a FIFO (named pipe); a registry file must be a regular file" in (
        result.output
    )
    assert stat.S_ISFIFO(path.lstat().st_mode)


def test_fuzz_registry_file_name_cannot_forge_a_workflow_command(tmp_path: Path) -> None:
    root, folder = _registry(tmp_path)
    (folder / "x\n::error file=README.md::forged.json").write_text("{")
    (folder / "::warning::forged.json").write_text("{")
    code, output = _validate(root)
    assert code == 1
    assert not [line for line in output.splitlines() if line.startswith("::")], output
    assert "\\n::error" in output  # the newline is shown, escaped


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ("<img/src=x onerror=alert(1)>", "markup"),
        ("<svg/onload=alert(1)>", "markup"),
        ("<img src=x onerror=alert(1)", "markup"),
        ("nul\x00here", "U+0000"),
        ("escape\x1b[31mred", "U+001B"),
        ("infermeter bench run --vllm-arg '--api-key sk-live-123'", "--api-key"),
        ("HF_TOKEN=hf_aaaaaaaaaaaaaaaaaaaaaaaaaaaa vllm serve m", "HF_TOKEN"),
        ("curl -H 'Authorization: Bearer abc123'", "authorization"),
        ("vllm log: non-default args: {'api_key': ['sk-live-123']}", "api_key"),
    ],
)
def test_fuzz_registry_hostile_strings_are_rejected(tmp_path: Path, value: str, named: str) -> None:
    path = tmp_path / "result.json"
    path.write_text(dumps_result(_result(command=value)))
    result = check_cli(["registry", "validate", str(path)], "registry", report=True)
    assert result.exit_code == 1, result.output
    assert "source.command" in result.output
    assert named in result.output
    if "key" in named or "TOKEN" in named or "auth" in named:
        assert "sk-live-123" not in result.output  # named, never shown
        assert "hf_aaaa" not in result.output


def test_fuzz_registry_redacted_command_passes(tmp_path: Path) -> None:
    command = redact("infermeter bench run --vllm-arg '--api-key sk-live-123' --hf-token t0k")
    assert "sk-live-123" not in command
    assert "t0k" not in command
    assert f"--api-key {REDACTED}" in command
    assert find_secret(command) is None
    path = tmp_path / "result.json"
    path.write_text(dumps_result(_result(command=command)))
    result = check_cli(["registry", "validate", str(path)], "registry", report=True)
    assert result.exit_code == 0, result.output


def test_fuzz_registry_redact_leaves_look_alikes_alone() -> None:
    for text in (
        "vllm serve m --max-num-batched-tokens 8192 --tokenizer t",
        "guidellm benchmark --max-tokens 128",
        "a monkey=3 and a hot-key value",
        "aiperf profile --goodput 'time_to_first_token:1500 inter_token_latency:25.5'",
        "sort_key=3 max_token: 4096",
        '{"workload_key": "e1d802838f", "replicate_key": "0123456789ab"}',
    ):
        assert redact(text) == text or redact(text).split() == text.split()
        assert find_secret(text) is None


@pytest.mark.parametrize(
    "text",
    ["{'password': 1234}", "secret: 99", "token: 1234567890123", "{'api_key': '123'}x"],
)
def test_fuzz_registry_digits_are_a_secret_after_a_password_or_when_long(text: str) -> None:
    # a short number after a name ending in token or key is a figure; not so after "password"
    # or "secret", nor a long run of digits, nor a quoted one after an API key
    assert find_secret(text) is not None
    assert REDACTED in redact_text(text)


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("curl -H 'Authorızation: Bearer abc123'", "an authorization header's value"),
        ("X-Api-\u212aey: abc123 — sent", "an authorization header's value"),
        ('--extra-body "{\\"apiKey\\": \\"abc123\\"}"', "the value of `apiKey`"),
        ("max_tokens: 4096, sort_key=3 — ok", None),
    ],
    ids=["dotless-i", "kelvin-sign", "escaped-json", "look-alike"],
)
def test_fuzz_registry_find_secret_reads_every_case_and_quoting(text: str, named: str) -> None:
    # find_secret passes a text its patterns cannot match without running them; re.I takes
    # 'ı' for 'i' and 'K' (Kelvin) for 'k', and a JSON string's pair has \" after the name.
    found = find_secret(text)
    assert found is None if named is None else found is not None and found.startswith(named)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("null", "holds null"),
        ("[" * 40 + "]" * 40, "nested deeper than"),
        ('{"a": "' + "x" * 900_000 + '"}', ""),
    ],
    ids=["null", "deep", "900k-string"],
)
def test_fuzz_registry_hostile_file_reported_in_short_lines(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "hostile.json"
    path.write_text(text)
    result = check_cli(["registry", "validate", str(path)], "registry", report=True)
    assert result.exit_code == 1
    assert message in result.output
    assert max(len(line) for line in result.output.splitlines()) < 500


def _read_a_file(path: Path, root: Path, out: Path) -> dict[str, list[str]]:
    """Every command that reads result files, given `path` (a file in `root`'s registry)."""
    registry = ["--registry", str(root)]
    return {
        "bench compare": ["bench", "compare", str(path), str(path)],
        "bench report": ["bench", "report", str(path), "--html", str(out / "r.html")],
        "registry validate": ["registry", "validate", str(path)],
        "registry migrate": ["registry", "migrate", *registry, str(path)],
        "registry index": ["registry", "index", *registry, "--out", str(out)],
        "registry answer": ["registry", "answer", *registry, "--model", "llama-3.1-8b-instruct"],
    }


@pytest.mark.parametrize(
    "command",
    ["bench compare", "bench report", "registry validate", "registry migrate", "registry index",
     "registry answer"],
)  # fmt: skip
def test_fuzz_registry_json_deeper_than_the_parser_is_one_line_on_every_reader(
    tmp_path: Path, command: str
) -> None:
    """A file nested 100,000 deep is refused by name, not with the parser's RecursionError
    (every command but `registry validate` ended in a traceback before)."""
    root = empty_registry(tmp_path / "checkout")
    path = root / "registry" / "results" / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    out = tmp_path / "out"
    out.mkdir()
    result = check_cli(_read_a_file(path, root, out)[command], "registry", report=True)
    assert result.exit_code == 1, result.output[-400:]
    assert "deep.json" in result.output
    assert "nested deeper than 32 levels" in result.output
    assert not list(out.iterdir())


def _with_figure(root: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """The measured example with `edit` made to its data, written in `root`'s registry."""
    data = json.loads(MEASURED.read_text(encoding="utf-8"))
    edit(data)
    result = Result.model_validate(data)
    return write_result(result.model_copy(update={"id": content_id(result)}), root)


def _static_batch_in_no_time(data: dict[str, Any]) -> None:
    # 492 requests of 256 tokens in 1e-297 ms: 1.3e+305 tokens/s, worked out, never stated
    point = data["points"][0]
    point["load"] = {"arrival": "static_batch", "concurrency": 492}
    point["throughput"] = {}
    point["e2e_ms"] = {"mean": 1e-297}
    data["identity"]["workload"]["output_len"] = {"kind": "fixed", "value": 256}
    data["points"] = [point]


UNPRICEABLE: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "1e300 tokens/s": (lambda data: data["points"][0]["throughput"].update(
        output_tokens_per_s=1e300), "points[0].throughput.output_tokens_per_s: 1e+300 tokens/s"),
    "1e-12 tokens/s": (lambda data: data["points"][0]["throughput"].update(
        output_tokens_per_s=1e-12), "points[0].throughput.output_tokens_per_s: 1e-12 tokens/s"),
    "a static batch in 1e-297 ms": (_static_batch_in_no_time,
        "points[0].e2e_ms.mean: the static batch's output tokens/s from its time: 1.2595"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(UNPRICEABLE))
@pytest.mark.parametrize("command", ["registry validate", "registry index", "registry answer"])
def test_fuzz_registry_a_rate_no_cost_is_worked_out_from_is_refused_by_name(
    tmp_path: Path, command: str, case: str
) -> None:
    """A schema-valid rate the calculators cannot price (they take 1e-9 to 1e15 tokens/s)
    ended `registry index` and `registry answer` in the calculators' InputError traceback, and
    the gate let it through: a harvested AMD latency of 1e-300 s was written, then broke both."""
    root = empty_registry(tmp_path / "checkout")
    edit, named = UNPRICEABLE[case]
    path = _with_figure(root, edit)
    out = tmp_path / "out"
    out.mkdir()
    result = check_cli(_read_a_file(path, root, out)[command], "registry", report=True)
    assert result.exit_code == 1, result.output[-400:]
    assert f"{path.relative_to(root).as_posix()}: {named}" in result.output
    assert "a cost is worked out from 1e-09 to 1e+15 tokens/s" in result.output
    assert not list(out.iterdir())


@pytest.mark.parametrize("command", ["registry validate", "registry index", "registry answer"])
def test_fuzz_registry_a_count_beyond_a_float_is_refused_by_name(
    tmp_path: Path, command: str
) -> None:
    """A concurrency of 10**308 passed the gate; `registry index` then ended in an
    OverflowError traceback ('int too large to convert to float')."""
    root = empty_registry(tmp_path / "checkout")
    path = _with_figure(root, lambda data: None)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["points"][0]["load"]["concurrency"] = 10**308
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    result = check_cli(_read_a_file(path, root, out)[command], "registry", report=True)
    assert result.exit_code == 1, result.output[-400:]
    assert "points[0].load.concurrency" in result.output
    assert "9007199254740992" in result.output  # the bound, the value cut short
    assert not list(out.iterdir())


def _energy_of_no_joule(data: dict[str, Any]) -> None:
    gpu = data["points"][0]["telemetry"]["gpu"]
    gpu["energy_j"] = 5e-324  # the power is dropped: it would have to agree with the energy
    del gpu["power_w_mean"]


def _tpot_of_no_time(data: dict[str, Any]) -> None:
    data["points"][0]["load"] = {"arrival": "poisson", "request_rate": 5.0}
    data["points"][0]["tpot_ms"]["mean"] = 5e-324


@pytest.mark.parametrize(
    ("edit", "column"),
    [(_energy_of_no_joule, "output_tokens_per_joule"), (_tpot_of_no_time, "tokens_per_s_per_user")],
    ids=["5e-324 J", "5e-324 ms a token"],
)  # fmt: skip
def test_fuzz_registry_index_names_a_figure_that_works_out_beyond_a_float(
    tmp_path: Path, edit: Callable[[dict[str, Any]], None], column: str
) -> None:
    """A schema-valid figure whose derived one is infinite ended `registry index` in
    'ValueError: Out of range float values are not JSON compliant: inf' (a traceback), and
    the gate let the energy through (the TPOT fails its decode bound as well)."""
    root = empty_registry(tmp_path / "checkout")
    path = _with_figure(root, edit)
    out = tmp_path / "out"
    out.mkdir()
    result = check_cli(_read_a_file(path, root, out)["registry index"], "registry")
    assert result.exit_code == 1, result.output[-400:]
    named = f"{path.relative_to(root).as_posix()}: points[0]: its {column} works out beyond any"
    assert result.stderr.splitlines() == [f"Error: {named} number"]
    assert not list(out.iterdir())
    gate = check_cli(["registry", "validate", "--registry", str(root)], "registry", report=True)
    assert gate.exit_code == 1, gate.output
    assert f"{named} number" in gate.output


def _sparse_2_mib(path: Path) -> str:
    with path.open("wb") as stream:
        stream.truncate(2 * 1024 * 1024)
    return "above the limit of 1 MiB"


def _fifo_file(path: Path) -> str:
    os.mkfifo(path)
    return "FIFO"


@pytest.mark.parametrize("make", [_fifo_file, _sparse_2_mib], ids=["FIFO", "2 MiB"])
@pytest.mark.parametrize(
    "command", ["bench compare", "bench report", "registry validate", "registry migrate"]
)
def test_fuzz_registry_a_named_file_no_result_can_be_is_refused_unread(
    tmp_path: Path, command: str, make: Callable[[Path], str]
) -> None:
    """A FIFO is not waited on (nothing writes it), a file above the limit not read into memory
    (/dev/zero would never end)."""
    root = empty_registry(tmp_path / "checkout")
    path = root / "registry" / "results" / "odd.json"
    named = make(path)
    out = tmp_path / "out"
    out.mkdir()
    result = check_cli(_read_a_file(path, root, out)[command], "registry", 20, report=True)
    assert result.exit_code == 1, result.output[-400:]
    assert "odd.json" in result.output
    assert named in result.output
    assert not list(out.iterdir())


def test_fuzz_registry_a_link_planted_in_a_tree_leads_no_write_elsewhere(tmp_path: Path) -> None:
    """A checkout's own files are replaced, never written through: `registry schemas` in a
    clone whose schema file is a link (to a file outside, to a device) leaves both alone."""
    outside = tmp_path / "outside.txt"
    outside.write_text("kept\n")
    schemas = tmp_path / "schemas"
    schemas.mkdir()
    (schemas / "result.schema.json").symlink_to(outside)
    (schemas / "price-catalog.schema.json").symlink_to("/dev/full")
    result = check_cli(["registry", "schemas", "--dir", str(schemas)], "registry")
    assert result.exit_code == 0, result.output
    assert outside.read_text() == "kept\n"
    for name in ("result.schema.json", "price-catalog.schema.json"):
        assert not (schemas / name).is_symlink()
        assert json.loads((schemas / name).read_text())["$schema"]
        # nor its permissions: the one in place of the link to /dev/full was made world-writable
        assert stat.S_IMODE((schemas / name).stat().st_mode) == 0o644


def test_fuzz_registry_validate_a_name_longer_than_the_file_system_takes_is_one_problem() -> None:
    result = check_cli(["registry", "validate", "a" * 300 + ".json"], "registry", report=True)
    assert result.exit_code == 1, result.output
    assert "cannot read: File name too long" in result.output


def _git(checkout: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=checkout, check=True, capture_output=True)


def test_fuzz_registry_submit_accepts_a_tree_whose_only_untracked_file_is_the_result(
    tmp_path: Path,
) -> None:
    checkout = tmp_path / "checkout"
    (checkout / "registry" / "results").mkdir(parents=True)
    (checkout / "registry" / "results" / ".gitkeep").write_text("")
    _git(checkout, "init", "-q", "-b", "main")
    _git(checkout, "-c", "user.name=t", "-c", "user.email=t@e", "add", ".")
    _git(checkout, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "start")
    _git(checkout, "remote", "add", "origin", "https://github.com/someone/infermeter.git")
    for key, value in (("user.name", "t"), ("user.email", "t@e")):  # submit commits as someone
        _git(checkout, "config", key, value)
    result_file = checkout / "infermeter-result.json"
    result_file.write_text(dumps_result(_result()))
    outcome = submit(SubmitConfig(result_file=result_file, checkout=checkout, dry_run=True))
    count("registry", "submit ok")
    assert outcome.branch
    (checkout / "other.txt").write_text("x")  # any other untracked file still counts
    with pytest.raises(Exception, match="uncommitted changes"):
        submit(SubmitConfig(result_file=result_file, checkout=checkout, dry_run=True))


def test_fuzz_registry_token_counts_beyond_the_workload_are_refused(tmp_path: Path) -> None:
    data = json.loads(MEASURED.read_text(encoding="utf-8"))
    data["identity"]["workload"]["output_len"] = {"kind": "fixed", "value": 128}
    # points[0]: 125,440 output tokens from 492 requests of 128 tokens (at most 62,976).
    result = Result.model_validate(data)
    path = tmp_path / "result.json"
    path.write_text(dumps_result(result.model_copy(update={"id": content_id(result)})))
    outcome = check_cli(["registry", "validate", str(path)], "registry", report=True)
    assert outcome.exit_code == 1
    assert "points[0].tokens.output: 125440 output tokens from 492 requests" in outcome.output
    data["identity"]["workload"]["output_len"] = {"kind": "fixed", "value": 256}
    result = Result.model_validate(data)
    path.write_text(dumps_result(result.model_copy(update={"id": content_id(result)})))
    assert check_cli(["registry", "validate", str(path)], "registry", report=True).exit_code == 0
