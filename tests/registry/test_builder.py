"""registry.builder: a live run and every importer make their result through the one builder,
validated in memory (nothing written to disk).

The live run is `bench.result.assemble.build_result` on a measured point's summary (real request
records summarised by bench.run.metrics); the import is vLLM's own `--save-result` file excerpt in
tests/data/importers/.
"""

from __future__ import annotations

import ast
import datetime as dt
import json
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from infermeter.bench.importers import FORMATS
from infermeter.bench.result.assemble import ResultError, validate_result
from infermeter.bench.result.model_entry import proposed_entry
from infermeter.bench.run.metrics import summarize_point
from infermeter.registry import builder, store
from infermeter.registry.builder import ResultBuildError
from infermeter.registry.models import Result
from infermeter.registry.store import content_id
from tests.bench.synthetic_run import SYNTHETIC_FACTS, SYNTHETIC_VLLM_FILE
from tests.measured_result import h100_deployment, one_point_result, two_token_records

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
JAMBA = "ai21labs/AI21-Jamba-1.5-Mini"

# Modules that read result files back (parse, check, migrate) rather than make results.
READERS = {"registry/store.py", "registry/checks/structure.py", "registry/builder.py"}
_MAY_MAKE = re.compile(r"\bResult\s*(\(|\.model_)|with_content_id\s*\(")


def _makes_results(tree: ast.AST) -> list[int]:
    """Lines constructing a Result outside the builder: `Result(...)`,
    `Result.model_validate…/model_construct(...)`, `with_content_id(...)`."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        direct = isinstance(function, ast.Name) and function.id in {"Result", "with_content_id"}
        method = (
            isinstance(function, ast.Attribute)
            and isinstance(function.value, ast.Name)
            and function.value.id == "Result"
            and function.attr.startswith(("model_validate", "model_construct"))
        )
        if direct or method:
            lines.append(node.lineno)
    return lines


def test_builder_is_the_only_maker_of_results_in_the_source_tree() -> None:
    bypasses = []
    for folder in ("bench", "registry"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if name in READERS:
                continue
            text = path.read_text(encoding="utf-8")
            if not _MAY_MAKE.search(text):  # parsing only the candidates keeps this fast
                continue
            for line in _makes_results(ast.parse(text)):
                bypasses.append(f"{name}:{line}")
    assert bypasses == []


def test_makes_results_sees_a_bypass() -> None:
    # The check above is only as good as this: each way of making a Result directly is seen.
    source = (
        "a = Result.model_validate(data)\nb = with_content_id(a)\nc = Result(**data)\n"
        "d = Result.model_validate_json(text)\ne = Result.model_construct()\n"
    )
    assert _makes_results(ast.parse(source)) == [1, 2, 3, 4, 5]
    assert all(_MAY_MAKE.search(line) for line in source.splitlines())


def _live_result(model_id: str = "llama-3.1-8b-instruct", gpu_count: int = 1) -> Result:
    second = 1_000_000_000
    records = two_token_records(40, second // 10, second // 5, input_tokens=8)
    point = summarize_point(records, request_rate=10.0)
    return one_point_result(point, h100_deployment(model_id, JAMBA, gpu_count), output_len="2")


IMPORT_FACTS = SYNTHETIC_FACTS.model_copy(
    update={"command": "vllm bench serve --max-concurrency 16", "timezone": "UTC"}
)


def test_live_run_and_importer_make_their_result_through_the_one_builder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[str] = []
    real = store.with_content_id

    def recording(result: Result) -> Result:
        made = real(result)
        built.append(made.id)
        return made

    # The builder's last step: every result it makes passes here, however callers import it.
    monkeypatch.setattr(builder, "with_content_id", recording)
    live = _live_result()
    imported = FORMATS["vllm"].import_files([SYNTHETIC_VLLM_FILE], IMPORT_FACTS)
    assert built == [live.id, imported.id]
    assert live.id == content_id(live)
    assert imported.id == content_id(imported)


def test_builder_sets_version_and_id_and_names_every_failing_field() -> None:
    live = _live_result()
    again = builder.build_from_parts(
        live.identity, live.points, live.source, slo=live.slo, startup=live.startup
    )
    assert again.id == content_id(again)
    assert again == live
    # Parts built unchecked (model_copy does not validate): the builder checks the whole.
    gpu = live.identity.gpu.model_copy(update={"count": 0})
    point = live.points[0]
    ttft = point.ttft_ms.model_copy(update={"n": -1}) if point.ttft_ms else None
    with pytest.raises(ResultBuildError) as caught:
        builder.build_from_parts(
            live.identity.model_copy(update={"gpu": gpu}),
            [point.model_copy(update={"ttft_ms": ttft})],
            live.source,
            file="a file",
        )
    paths = [problem.path for problem in caught.value.problems]
    assert paths == ["identity.gpu.count", "points[0].ttft_ms.n"]
    assert caught.value.first_line().endswith("(and 1 more)")


def test_live_run_result_that_is_no_result_is_a_result_error() -> None:
    with pytest.raises(ResultError, match=r"^the result is not valid: identity\.model\.id: "):
        _live_result(model_id="Not A Slug")


@contextmanager
def _disk_writes() -> Iterator[list[str]]:
    """Every file or folder this process creates, opens for writing, renames or removes while
    the block runs (Python's audit events; the hook stays installed, inert, afterwards)."""
    seen: list[str] = []
    active = [True]
    writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def hook(event: str, arguments: tuple[Any, ...]) -> None:
        if not active[0]:
            return
        if event == "open":
            _, mode, flags = arguments
            if (isinstance(mode, str) and set(mode) & set("wax+")) or (
                isinstance(flags, int) and flags & writing
            ):
                seen.append(f"open {arguments[0]}")
        elif event in {"os.mkdir", "os.rename", "os.remove", "os.rmdir", "shutil.copytree"}:
            seen.append(f"{event} {arguments[0]}")

    sys.addaudithook(hook)
    try:
        yield seen
    finally:
        active[0] = False


def test_live_run_result_is_checked_in_memory_with_a_proposed_model_entry() -> None:
    # 103 GB of Jamba 1.5 Mini weights in bf16: two H100s (one cannot hold them).
    result = _live_result(model_id="ai21-jamba-1.5-mini", gpu_count=2)
    config = json.loads((DATA / "configs" / "jamba-1.5-mini.json").read_text())
    entry = proposed_entry(JAMBA, config, dt.date(2026, 12, 1))
    with _disk_writes() as writes:
        without = validate_result(result)
        with_entry = validate_result(result, entry)
    assert writes == []
    # The registry's checks ran: the model is unknown to the catalog until the entry is added.
    assert any("ai21-jamba-1.5-mini" in problem for problem in without), without
    assert with_entry == []


def test_disk_writes_sees_a_temporary_file() -> None:
    import tempfile

    with _disk_writes() as writes, tempfile.TemporaryDirectory() as folder:
        Path(folder, "x.json").write_text("{}")
    assert any(write.startswith("os.mkdir") for write in writes)
    assert any(write.endswith("x.json") for write in writes)
