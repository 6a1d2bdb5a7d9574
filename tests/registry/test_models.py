"""The registry's models and store: strictness, the comparability key, the deterministic writer."""

import json
import os
import typing
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from infermeter.registry import models
from infermeter.registry.errors import ContentIdError, InvalidFileError
from infermeter.registry.models import (
    COMPARABLE_PROPERTIES,
    LOAD_PROPERTIES,
    NOT_COMPARABLE_PROPERTIES,
    RUN_OWNER_PROPERTIES,
    GpuCatalog,
    Identity,
    LatencyStats,
    ModelCatalog,
    PriceCatalog,
    Result,
    comparability_key,
    load_point_key,
)
from infermeter.registry.store import (
    check_writable,
    content_id,
    dumps_result,
    parse_result,
    read_result,
    result_path,
    with_content_id,
    write_output,
    write_result,
    write_text_atomic,
)

VALID_RESULTS = sorted((Path(__file__).parent.parent / "examples/valid/results").glob("*.json"))
MEASURED = Path(__file__).parent.parent / "examples/valid/results/measured-two-points.json"
REPORTED = Path(__file__).parent.parent / "examples/valid/results/reported-throughput-only.json"


def _data(path: Path = MEASURED) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _error_locations(data: dict[str, Any]) -> list[tuple[int | str, ...]]:
    with pytest.raises(ValidationError) as caught:
        Result.model_validate(data)
    return [error["loc"] for error in caught.value.errors()]


def test_examples_exist() -> None:
    assert len(VALID_RESULTS) >= 2


@pytest.mark.parametrize("path", VALID_RESULTS, ids=lambda path: path.name)
def test_result_valid_examples_validate(path: Path) -> None:
    result = Result.model_validate(_data(path))
    assert result.id == content_id(result)


@pytest.mark.parametrize(
    "location",
    [(), ("identity", "gpu"), ("points", 0, "ttft_ms"), ("points", 1, "load"), ("source",)],
)
def test_result_rejects_unknown_field(location: tuple[str | int, ...]) -> None:
    data = _data()
    target: Any = data
    for key in location:
        target = target[key]
    target["surprise"] = 1
    assert (*location, "surprise") in [
        tuple(part for part in loc if part != "measured") for loc in _error_locations(data)
    ]


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("identity", "gpu", "count"), "1"),
        (("identity", "serving", "enable_prefix_caching"), 0),
        (("points", 0, "requests", "sent"), 492.5),
        (("points", 0, "ttft_ms", "p50"), "38.5"),
    ],
)
def test_result_rejects_coerced_types(path: tuple[str | int, ...], value: object) -> None:
    data = _data()
    target: Any = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    assert path in _error_locations(data)


@pytest.mark.parametrize("value", [-1.0, float("nan"), float("inf")])
def test_latency_stats_rejects_negative_and_non_finite(value: float) -> None:
    with pytest.raises(ValidationError):
        LatencyStats.model_validate({"n": 3, "p50": value})


def test_latency_stats_stores_percentiles_as_given() -> None:
    given = {"p50": 23.87, "p99": 41.000001, "max": 41.000001}
    stats = LatencyStats.model_validate(given)
    assert stats.model_dump(exclude_none=True) == given


@pytest.mark.parametrize(
    "stats",
    [
        {"p50": 10.0, "p90": 9.0},
        {"p95": 10.0, "p99": 20.0, "max": 15.0},
        {"p50": 30.0, "p99": 20.0},
        {"mean": 50.0, "max": 40.0},
        {"n": 0, "mean": 1.0},
    ],
)
def test_latency_stats_rejects_inconsistent_statistics(stats: dict[str, float]) -> None:
    with pytest.raises(ValidationError):
        LatencyStats.model_validate(stats)


@pytest.mark.parametrize(
    "load",
    [
        {"arrival": "closed"},
        {"arrival": "closed", "concurrency": 8, "request_rate": 2.0},
        {"arrival": "poisson", "concurrency": 8},
        {"arrival": "poisson", "request_rate": 2.0, "burstiness": 0.5},
        {"arrival": "closed", "concurrency": 0},
        {"arrival": "gamma", "request_rate": -1.0},
    ],
)
def test_load_rejects_parameters_that_do_not_fit_its_arrival(load: dict[str, Any]) -> None:
    data = _data()
    data["points"][0]["load"] = load
    assert any(loc[:3] == ("points", 0, "load") for loc in _error_locations(data))


def test_result_needs_at_least_one_point() -> None:
    data = _data()
    data["points"] = []
    assert ("points",) in _error_locations(data)


def test_source_fields_follow_its_kind() -> None:
    data = _data()
    data["source"]["url"] = "https://example.com"
    assert ("source", "measured", "url") in _error_locations(data)
    data = _data(REPORTED)
    data["source"]["kind"] = "guessed"
    assert ("source",) in _error_locations(data)


@pytest.mark.parametrize("gpu_id", ["H100", "h100 sxm", "h100--sxm", "-h100", "h100_sxm", ""])
def test_result_ids_are_slugs(gpu_id: str) -> None:
    data = _data()
    data["identity"]["gpu"]["id"] = gpu_id
    assert ("identity", "gpu", "id") in _error_locations(data)


@pytest.mark.parametrize("date", ["2025", "2025-02", "2024-02-29"])
def test_partial_date_accepts_year_month_or_day(date: str) -> None:
    data = _data(REPORTED)
    data["source"]["published"] = date
    assert Result.model_validate(data).source.published == date  # type: ignore[union-attr]


@pytest.mark.parametrize("date", ["2025-13", "2025-02-30", "25-01-01", "2025-1-1", "2025/01/01"])
def test_partial_date_rejects_impossible_dates(date: str) -> None:
    data = _data(REPORTED)
    data["source"]["published"] = date
    assert ("source", "reported", "published") in _error_locations(data)


@pytest.mark.parametrize("instant", ["2025-05-12T09:30:00", 1747042200, "yesterday"])
def test_timestamp_requires_rfc3339_with_time_zone(instant: object) -> None:
    data = _data()
    data["source"]["started_at"] = instant
    assert ("source", "measured", "started_at") in _error_locations(data)


def _model_classes(model: type[BaseModel]) -> set[type[BaseModel]]:
    found = {model}
    for field in model.model_fields.values():
        for candidate in _types_in(field.annotation):
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                found |= _model_classes(candidate)
    return found


def _types_in(annotation: Any) -> list[Any]:
    arguments = typing.get_args(annotation)
    if not arguments:
        return [annotation]
    if typing.get_origin(annotation) is typing.Literal:
        return []
    return [inner for argument in arguments for inner in _types_in(argument)]


ALL_MODELS = sorted(
    set().union(*(_model_classes(m) for m in (Result, GpuCatalog, ModelCatalog, PriceCatalog))),
    key=lambda model: model.__name__,
)


@pytest.mark.parametrize("model", ALL_MODELS, ids=lambda model: model.__name__)
def test_models_describe_every_field_and_forbid_extras(model: type[BaseModel]) -> None:
    assert model.__doc__, f"{model.__name__} has no docstring"
    undescribed = [name for name, field in model.model_fields.items() if not field.description]
    assert not undescribed, f"{model.__name__}: fields without description: {undescribed}"
    assert model.model_config.get("extra") == "forbid"
    assert model.model_config.get("frozen") is True


@pytest.mark.parametrize("model", [Result, GpuCatalog, ModelCatalog, PriceCatalog])
def test_models_top_level_files_carry_schema_version(model: type[BaseModel]) -> None:
    assert "schema_version" in model.model_fields


def test_models_facade_publishes_each_name_once() -> None:
    # The facade republishes each submodule's `__all__` by wildcard, where a name a later
    # submodule also exports would silently replace the earlier one (no linter sees it).
    assert len(models.__all__) == len(set(models.__all__))
    assert {"Result", "LoadPoint", "GpuCatalog", "StrictModel"} <= set(models.__all__)


def test_result_stores_no_derived_figures() -> None:
    names = {name for model in _model_classes(Result) for name in model.model_fields}
    derived = [n for n in names if any(w in n for w in ("usd", "per_gpu", "per_j", "dollar"))]
    assert not derived


# --- comparability ----------------------------------------------------------------------------


def _leaf_paths(model: type[BaseModel], prefix: str) -> list[str]:
    paths = []
    for name, field in model.model_fields.items():
        nested = [
            candidate
            for candidate in _types_in(field.annotation)
            if isinstance(candidate, type) and issubclass(candidate, BaseModel)
        ]
        # A union of models (a length distribution) compares as one value.
        if len(nested) == 1:
            paths.extend(_leaf_paths(nested[0], f"{prefix}.{name}"))
        else:
            paths.append(f"{prefix}.{name}")
    return paths


def test_comparable_properties_cover_every_identity_field_once() -> None:
    listed = COMPARABLE_PROPERTIES + NOT_COMPARABLE_PROPERTIES
    assert sorted(listed) == sorted(_leaf_paths(Identity, "identity"))
    assert len(set(listed)) == len(listed)


def test_comparability_key_equal_for_runs_differing_only_in_measurements() -> None:
    first = Result.model_validate(_data())
    changed = _data()
    changed["points"][0]["ttft_ms"]["p99"] = 99.9
    changed["points"].pop()
    changed["source"]["started_at"] = "2025-06-01T00:00:00Z"
    changed["source"]["submitter"] = "someone-else"
    changed["identity"]["workload"]["seed"] = 7
    second = with_content_id(Result.model_validate(changed))
    assert second.id != first.id
    assert comparability_key(first) == comparability_key(second)
    assert hash(comparability_key(first)) == hash(comparability_key(second))


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("gpu", "count"), 2),
        (("engine", "version"), "0.9.0"),
        (("model", "quantization"), "fp8"),
        (("serving", "max_num_seqs"), 128),
        (("workload", "input_len"), {"kind": "fixed", "value": 1024}),
    ],
)
def test_comparability_key_differs_when_identity_differs(
    path: tuple[str, str], value: object
) -> None:
    data = _data()
    first = Result.model_validate(data)
    data["identity"][path[0]][path[1]] = value
    assert comparability_key(first) != comparability_key(Result.model_validate(data))


def test_load_point_key_separates_load_levels() -> None:
    result = Result.model_validate(_data())
    low, high = (load_point_key(result, point) for point in result.points)
    assert low != high
    assert low[: len(COMPARABLE_PROPERTIES)] == high[: len(COMPARABLE_PROPERTIES)]
    assert len(low) == len(COMPARABLE_PROPERTIES) + len(RUN_OWNER_PROPERTIES) + len(LOAD_PROPERTIES)


# --- store ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", VALID_RESULTS, ids=lambda path: path.name)
def test_store_round_trip_is_byte_identical(path: Path, tmp_path: Path) -> None:
    result = read_result(path)
    assert dumps_result(result).encode("utf-8") == path.read_bytes()
    written = write_result(result, tmp_path)
    assert written.read_bytes() == path.read_bytes()
    assert read_result(written) == result


def test_store_write_is_deterministic(tmp_path: Path) -> None:
    result = read_result(MEASURED)
    first = write_result(result, tmp_path / "a").read_bytes()
    rebuilt = Result.model_validate(json.loads(first))
    second = write_result(rebuilt, tmp_path / "b").read_bytes()
    assert first == second


def test_store_text_has_sorted_keys_indent_2_and_trailing_newline() -> None:
    text = dumps_result(read_result(MEASURED))
    assert text.endswith("}\n")
    assert not text.endswith("\n\n")
    assert text.splitlines()[1].startswith('  "')

    def check_sorted(value: Any) -> None:
        if isinstance(value, dict):
            assert list(value) == sorted(value)
            for inner in value.values():
                check_sorted(inner)
        elif isinstance(value, list):
            for inner in value:
                check_sorted(inner)

    check_sorted(json.loads(text))


def test_store_key_order_does_not_depend_on_input_order() -> None:
    data = _data()
    reordered = dict(reversed(list(data.items())))
    reordered["identity"] = dict(reversed(list(data["identity"].items())))
    assert dumps_result(Result.model_validate(reordered)) == dumps_result(
        Result.model_validate(data)
    )


def test_store_id_is_derived_from_content() -> None:
    result = read_result(MEASURED)
    assert content_id(result) == result.id
    assert with_content_id(result) == result
    data = _data()
    data["points"][1]["e2e_ms"]["max"] = 7021.0
    changed = Result.model_validate(data)
    assert content_id(changed) != result.id
    # The id does not feed itself.
    assert content_id(changed.model_copy(update={"id": "ffffffffffff"})) == content_id(changed)


def test_store_path_is_built_from_identity_date_and_id() -> None:
    measured = read_result(MEASURED)
    assert result_path(measured) == PurePosixPath(
        f"registry/results/h100-sxm/llama-3.1-8b-instruct/2025-05-12-{measured.id}.json"
    )
    reported = read_result(REPORTED)
    assert result_path(reported).name == f"2025-06-01-{reported.id}.json"


def test_store_path_date_is_utc() -> None:
    data = _data()
    data["source"]["started_at"] = "2025-05-12T23:30:00-05:00"
    result = with_content_id(Result.model_validate(data))
    assert result_path(result).name.startswith("2025-05-13-")


def test_store_write_result_refuses_a_wrong_id(tmp_path: Path) -> None:
    result = read_result(MEASURED).model_copy(update={"id": "0123456789ab"})
    with pytest.raises(ContentIdError, match="0123456789ab"):
        write_result(result, tmp_path)
    assert not any(tmp_path.iterdir())


def test_store_write_leaves_old_file_when_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "result.json"
    target.write_text("old\n", encoding="utf-8")

    def failing_replace(source: str, destination: Path) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk gone"):
        write_text_atomic(target, "new\n")
    assert target.read_text(encoding="utf-8") == "old\n"
    assert [path.name for path in tmp_path.iterdir()] == ["result.json"]


def test_store_check_writable_takes_a_pipe_named_in_a_folder_no_file_can_be_made_in() -> None:
    # /proc/self/fd/N names a pipe (as /dev/stdout may); no temporary file can be made beside
    # it, not even by root, but the pipe itself takes the write.
    reading, writing = os.pipe()
    try:
        check_writable(Path(f"/proc/self/fd/{writing}"))
        write_output(Path(f"/proc/self/fd/{writing}"), "through\n")
        assert os.read(reading, 100) == b"through\n"
    finally:
        os.close(reading)
        os.close(writing)


def test_store_read_result_names_file_and_every_field(tmp_path: Path) -> None:
    data = _data()
    data["points"][0]["ttft_ms"]["p50"] = -1
    data["source"]["host"]["gpu_count"] = 0
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InvalidFileError) as caught:
        read_result(path)
    lines = str(caught.value).splitlines()
    assert f"{path}: points[0].ttft_ms.p50: Input should be greater than or equal to 0" in lines
    assert any(line.startswith(f"{path}: source.host.gpu_count: ") for line in lines)
    assert len(caught.value.problems) == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1, "a": 2}', "duplicate key 'a'"),
        (f'{{"{"a" * 10_000}": 1, "{"a" * 10_000}": 2}}', r"duplicate key 'a{39}… \(10000 char"),
        ('{"a": NaN}', "NaN is not a JSON number"),
        ("{", "invalid JSON at line 1 column 2"),
    ],
)
def test_store_parse_result_rejects_bad_json(text: str, message: str) -> None:
    with pytest.raises(InvalidFileError, match=message):
        parse_result(text, "x.json")


def test_store_read_result_reports_missing_and_non_utf8_files(tmp_path: Path) -> None:
    with pytest.raises(InvalidFileError, match="no such file"):
        read_result(tmp_path / "absent.json")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe")
    with pytest.raises(InvalidFileError, match="not UTF-8"):
        read_result(binary)


def test_result_models_are_frozen() -> None:
    result = read_result(MEASURED)
    with pytest.raises(ValidationError):
        result.id = "0"
