"""A launched run of a model outside the catalog (the STAND-IN vllm serves any model): it is
measured, and the catalog entry the pull request must add is derived from its config.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from bench_helpers import SMALLEST
from click.testing import CliRunner

from infermeter.bench.cli.main import main
from infermeter.bench.result.model_entry import find_config, proposed_entry, proposed_id
from infermeter.registry.models import Result as RegistryResult
from infermeter.registry.models.catalog import ModelEntry

CONFIGS = Path(__file__).resolve().parent.parent / "data" / "configs"
JAMBA = "ai21labs/AI21-Jamba-1.5-Mini"  # tests/data/configs/jamba-1.5-mini.json is its config


def _hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Hugging Face cache holding Jamba's config.json, as vLLM's download leaves it."""
    cache = tmp_path / "hub"
    snapshot = cache / "models--ai21labs--AI21-Jamba-1.5-Mini" / "snapshots" / "1c2f6a7e"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text((CONFIGS / "jamba-1.5-mini.json").read_text())
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    return snapshot / "config.json"


def test_proposed_id_and_config_lookup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert proposed_id(JAMBA) == "ai21-jamba-1.5-mini"
    assert proposed_id("org/Some_Model--v2") == "some-model-v2"
    config = _hub_cache(tmp_path, monkeypatch)
    assert find_config(JAMBA) == config
    assert find_config("nobody/nothing") is None
    folder = tmp_path / "local-model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    assert find_config(str(folder)) == folder / "config.json"


def test_proposed_entry_is_a_valid_catalog_entry_from_the_config() -> None:
    import datetime as dt

    config = json.loads((CONFIGS / "jamba-1.5-mini.json").read_text())
    entry = proposed_entry(JAMBA, config, dt.date(2026, 12, 1))
    model = ModelEntry.model_validate(entry)
    assert model.id == "ai21-jamba-1.5-mini"
    assert model.family == "jamba"
    assert model.context_length == 262144
    assert model.config == config
    assert model.sources[0].url == f"https://huggingface.co/{JAMBA}/blob/main/config.json"
    # Jamba 1.5 Mini: 52B parameters, 12B active (AI21's model card).
    assert model.published_params.total_b == pytest.approx(51.6, abs=1.0)
    assert model.published_params.active_b == pytest.approx(12.1, abs=0.5)


def test_bench_run_launch_measures_a_model_outside_the_catalog_and_proposes_its_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, standin_vllm: Path
) -> None:
    _hub_cache(tmp_path, monkeypatch)
    monkeypatch.setenv("STANDIN_VLLM_ITL_S", "0.03")  # a pace a GPU can keep for this model
    output = tmp_path / "result.json"
    run = CliRunner().invoke(
        main,
        [
            "bench", "run", "--quiet", "--model", JAMBA, "--vllm-executable", str(standin_vllm),
            # 103 GB of bf16 weights: an H200's 141 GB (an H100's 80 GB cannot hold them, which
            # the registry's weight-fit rule refuses).
            "--load-format", "dummy", "--max-model-len", "4096", "--gpu", "h200-sxm",
            "--concurrency", "1", *SMALLEST, "--output", str(output),
        ],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    result = RegistryResult.model_validate_json(output.read_text())
    assert result.identity.model.id == "ai21-jamba-1.5-mini"
    assert result.identity.model.hf_repo == JAMBA
    entry_path = tmp_path / "result.model-entry.yaml"
    assert f"the pull request must add the entry in {entry_path}" in run.stderr
    (entry,) = yaml.safe_load(entry_path.read_text())
    assert ModelEntry.model_validate(entry).id == "ai21-jamba-1.5-mini"
