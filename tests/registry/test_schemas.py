"""The exported JSON Schemas: committed, free of drift, and in agreement with the models."""

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from infermeter.bench.cli.main import main
from infermeter.registry.catalog import (
    CATALOGS_DIR,
    GPUS_FILE,
    MODELS_FILE,
    PRICES_FILE,
    read_catalog_data,
)
from infermeter.registry.models import Result
from infermeter.registry.schemas import (
    JSON_SCHEMA_DIALECT,
    SCHEMA_MODELS,
    SCHEMAS_DIR,
    load_schema,
    render_schemas,
    schema_drift,
    write_schemas,
)
from infermeter.registry.store import canonical_json

VALID_EXAMPLES = Path(__file__).parent.parent / "examples" / "valid"
# Which schema each folder of valid examples follows.
SCHEMA_OF_FOLDER = {"results": "result.schema.json"}
VALID_FILES = sorted(
    (path, SCHEMA_OF_FOLDER[folder])
    for folder in SCHEMA_OF_FOLDER
    for path in (VALID_EXAMPLES / folder).glob("*.json")
)
CATALOG_SCHEMAS = {
    GPUS_FILE: "gpu-catalog.schema.json",
    MODELS_FILE: "model-catalog.schema.json",
    PRICES_FILE: "price-catalog.schema.json",
}


def _validator(schema_name: str) -> Draft202012Validator:
    return Draft202012Validator(load_schema(schema_name))


def test_schemas_committed_files_match_the_models() -> None:
    problems = schema_drift()
    assert not problems, (
        "\n".join(str(problem) for problem in problems)
        + "\nrun `infermeter registry schemas` and commit schemas/"
    )


@pytest.mark.parametrize("name", sorted(SCHEMA_MODELS))
def test_schemas_are_valid_draft_2020_12(name: str) -> None:
    schema = load_schema(name)
    assert schema["$schema"] == JSON_SCHEMA_DIALECT
    assert "$id" not in schema
    Draft202012Validator.check_schema(schema)


def test_schemas_render_deterministically(tmp_path: Path) -> None:
    assert render_schemas() == render_schemas()
    written = write_schemas(tmp_path)
    assert sorted(path.name for path in written) == sorted(SCHEMA_MODELS)
    first = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    assert write_schemas(tmp_path) == []
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == first
    for text in first.values():
        assert canonical_json(json.loads(text)).encode("utf-8") == text


def test_schemas_drift_names_each_differing_missing_or_stale_file(tmp_path: Path) -> None:
    write_schemas(tmp_path)
    (tmp_path / "result.schema.json").write_text("{}\n", encoding="utf-8")
    (tmp_path / "gpu-catalog.schema.json").unlink()
    (tmp_path / "old.schema.json").write_text("{}\n", encoding="utf-8")
    messages = sorted(str(problem) for problem in schema_drift(tmp_path))
    assert messages == sorted(
        [
            f"{tmp_path / 'result.schema.json'}: differs from the models",
            f"{tmp_path / 'gpu-catalog.schema.json'}: missing",
            f"{tmp_path / 'old.schema.json'}: no model produces this schema",
        ]
    )
    write_schemas(tmp_path)
    assert schema_drift(tmp_path) == []
    assert not (tmp_path / "old.schema.json").exists()


def test_schemas_cli_check_exits_1_naming_the_file(tmp_path: Path) -> None:
    runner = CliRunner()
    written = runner.invoke(main, ["registry", "schemas", "--dir", str(tmp_path)])
    assert written.exit_code == 0, written.output
    assert (
        runner.invoke(main, ["registry", "schemas", "--check", "--dir", str(tmp_path)]).exit_code
        == 0
    )
    (tmp_path / "price-catalog.schema.json").write_text("{}\n", encoding="utf-8")
    checked = runner.invoke(main, ["registry", "schemas", "--check", "--dir", str(tmp_path)])
    assert checked.exit_code == 1
    assert "price-catalog.schema.json: differs from the models" in checked.output
    assert "infermeter registry schemas" in checked.output
    assert "Traceback" not in checked.output


def test_examples_valid_exist() -> None:
    assert len(VALID_FILES) >= 2


@pytest.mark.parametrize(
    ("path", "schema_name"), VALID_FILES, ids=lambda value: getattr(value, "name", "")
)
def test_schemas_valid_examples_pass_jsonschema_and_pydantic(path: Path, schema_name: str) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    errors = [error.message for error in _validator(schema_name).iter_errors(data)]
    assert errors == []
    SCHEMA_MODELS[schema_name].model_validate(data)


@pytest.mark.parametrize(("file_name", "schema_name"), sorted(CATALOG_SCHEMAS.items()))
def test_schemas_real_catalogs_pass_jsonschema(file_name: str, schema_name: str) -> None:
    path = CATALOGS_DIR / file_name
    data = read_catalog_data(path)
    errors = [
        f"{error.json_path}: {error.message}" for error in _validator(schema_name).iter_errors(data)
    ]
    assert errors == []


def test_schemas_corrections_file_passes_jsonschema() -> None:
    path = CATALOGS_DIR.parent / "corrections.yaml"
    data = read_catalog_data(path)
    errors = [
        f"{error.json_path}: {error.message}"
        for error in _validator("corrections.schema.json").iter_errors(data)
    ]
    assert errors == []
    bad = {**data, "corrections": [{"result_id": "x", "kind": "edit"}]}
    assert list(_validator("corrections.schema.json").iter_errors(bad))


@pytest.mark.parametrize(
    ("mutation", "expected_path"),
    [
        (lambda data: data.update(surprise=1), "$"),
        (lambda data: data["identity"]["gpu"].update(count="1"), "$.identity.gpu.count"),
        (lambda data: data["points"][0]["ttft_ms"].update(p50=-1), "$.points[0].ttft_ms"),
        (lambda data: data.update(schema_version=3), "$.schema_version"),
        (lambda data: data["source"].update(kind="guessed"), "$.source"),
    ],
)
def test_schemas_and_models_both_reject_bad_results(mutation: Any, expected_path: str) -> None:
    path = VALID_EXAMPLES / "results" / "measured-two-points.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    mutation(data)
    paths = [error.json_path for error in _validator("result.schema.json").iter_errors(data)]
    assert expected_path in paths
    with pytest.raises(ValidationError):
        Result.model_validate(data)


def _properties(schema: Any, where: str = "$") -> list[tuple[str, dict[str, Any]]]:
    found = []
    if isinstance(schema, dict):
        for name, value in schema.get("properties", {}).items():
            found.append((f"{where}.{name}", value))
        for key, value in schema.items():
            found.extend(_properties(value, f"{where}.{key}"))
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            found.extend(_properties(value, f"{where}[{index}]"))
    return found


@pytest.mark.parametrize("name", sorted(SCHEMA_MODELS))
def test_schemas_describe_every_property(name: str) -> None:
    undescribed = [
        where
        for where, prop in _properties(load_schema(name))
        if "description" not in prop and "$ref" not in prop
    ]
    assert undescribed == []


def test_schemas_directory_is_the_checkouts() -> None:
    assert (SCHEMAS_DIR / "result.schema.json").is_file()


def test_schemas_cli_writes_into_the_registry_checkout_or_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("INFERMETER_REGISTRY", raising=False)
    runner = CliRunner()
    nowhere = runner.invoke(main, ["registry", "schemas"])
    assert nowhere.exit_code == 2
    assert nowhere.output.count("\n") == 1
    assert "no registry checkout: name one with --registry PATH" in nowhere.output
    checkout = tmp_path / "checkout"
    (checkout / "registry" / "catalogs").mkdir(parents=True)
    refused = runner.invoke(main, ["registry", "schemas", "--registry", str(checkout)])
    assert refused.exit_code == 2
    assert f"{checkout} has no schemas/ folder" in refused.output
    (checkout / "schemas").mkdir()
    monkeypatch.chdir(checkout / "registry")  # found from the current folder upward
    written = runner.invoke(main, ["registry", "schemas"])
    assert written.exit_code == 0, written.output
    assert sorted(path.name for path in (checkout / "schemas").iterdir()) == sorted(SCHEMA_MODELS)
    checked = runner.invoke(main, ["registry", "schemas", "--check"])
    assert checked.output == "schemas are up to date\n"
