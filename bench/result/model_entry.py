"""The model-catalog entry a result needs when `bench run` served a model the catalog lacks.

A launched vLLM may serve any model it supports. A result names its model by catalog id, so a
model outside the catalog gets a proposed entry, derived from the weights' own `config.json`
(read through `calculators.arch`, which refuses a config it cannot model, so the registry's
memory and physics checks can use the entry):
- `id` from the repository's name (lowercase, `-` between words), `name` the repository's name,
  `family` the config's `model_type`, `context_length` its `max_position_embeddings`;
- `published_params` computed from the config (total, and active for a mixture of experts), with
  a note saying so: the pull request should replace them with the model card's figures;
- `config` the config.json verbatim, `sources` its Hugging Face address, dated today.

`find_config` looks for the config where vLLM leaves it: the model's folder, or the Hugging Face
cache (`HF_HUB_CACHE`, else `HF_HOME/hub`, else `~/.cache/huggingface/hub`).

The registry's checks judge the result with the proposed entry added to the catalog, as the
pull request would make it (`bench.result.assemble.validate_result`, in memory).
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from infermeter.bench.errors import BenchConfigError, BenchError
from infermeter.calculators.json_text import json_loads

# A Hugging Face repository id, `owner/name`.
HF_REPOSITORY_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def is_repository(model: str) -> bool:
    """True when `model` names a Hugging Face repository (`owner/name`) and not a folder."""
    return bool(HF_REPOSITORY_ID.match(model)) and not Path(model).exists()


def catalog_entry_for(repository: str, models: Mapping[str, Any]) -> Any | None:
    """The catalog model whose Hugging Face repository is `repository` (any case), or None."""
    wanted = repository.lower()
    return next((entry for entry in models.values() if entry.hf_repo.lower() == wanted), None)


def proposed_id(repository: str) -> str:
    """The catalog id a repository's model would get, e.g. `ai21-jamba-1.5-mini`."""
    name = repository.split("/")[-1].lower()
    return re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9.]+", "-", name)).strip("-.")


LOCAL_OWNER = "local"
"""The owner in the repository name of a model folder that names no Hugging Face repository."""


def local_repository(model: str) -> str | None:
    """The repository a local model folder stands for: its config.json's `_name_or_path`
    (transformers writes the Hub id there) when that names one, else `local/<folder name>`;
    None when `model` is not a folder with a config.json."""
    folder = Path(model)
    path = folder / "config.json"
    if not path.is_file():
        return None
    named = read_config(path).get("_name_or_path")
    if isinstance(named, str) and HF_REPOSITORY_ID.match(named):
        return named
    return f"{LOCAL_OWNER}/{proposed_id(folder.resolve().name)}"


def repository_of(model: str) -> str | None:
    """`model` when it names a Hugging Face repository, a local folder's `local_repository`,
    else None."""
    return model if is_repository(model) else local_repository(model)


def _hub_cache() -> Path:
    if cache := os.environ.get("HF_HUB_CACHE"):
        return Path(cache)
    if home := os.environ.get("HF_HOME"):
        return Path(home) / "hub"
    return Path.home() / ".cache" / "huggingface" / "hub"


def find_config(model: str) -> Path | None:
    """The model's config.json: in its folder, or in the Hugging Face cache; None if absent."""
    folder = Path(model)
    if folder.is_dir():
        path = folder / "config.json"
        return path if path.is_file() else None
    if not HF_REPOSITORY_ID.match(model):
        return None
    snapshots = _hub_cache() / f"models--{model.replace('/', '--')}" / "snapshots"
    found = sorted(snapshots.glob("*/config.json"), key=lambda path: path.stat().st_mtime)
    return found[-1] if found else None


def _billions(params: int) -> float:
    """Parameters in billions to 2 decimals, or 2 significant digits below 0.01 B (a tiny test
    model's 0.0002 B would round to an invalid 0)."""
    billions = params / 1e9
    return round(billions, 2) if billions >= 0.01 else float(f"{billions:.2g}")


def proposed_entry(repository: str, config: Mapping[str, Any], today: dt.date) -> dict[str, Any]:
    """The catalog entry for `repository` (see the module docstring); raises BenchConfigError
    when the calculators cannot read its config."""
    from infermeter.calculators.config_reader import parse_config
    from infermeter.calculators.errors import ConfigError
    from infermeter.calculators.param_count import param_counts
    from infermeter.registry.models.catalog import ModelEntry

    try:
        arch = parse_config(config)
    except ConfigError as error:
        raise BenchConfigError(
            f"{repository}'s config.json cannot be read by the calculators ({error}); the "
            "catalog entry for it must be written by hand",
            "--model",
        ) from None
    counts = param_counts(arch)
    moe = counts.active != counts.total
    context = arch.max_position_embeddings or config.get("max_position_embeddings")
    entry = {
        "id": proposed_id(repository),
        "name": repository.split("/")[-1],
        "hf_repo": repository,
        "family": arch.model_type,
        "published_params": {
            "total_b": _billions(counts.total),
            "active_b": _billions(counts.active) if moe else None,
            "note": "computed by infermeter from config.json (calculators/arch.py); replace "
            "with the model card's figures",
        },
        "context_length": context,
        "config": dict(config),
        "sources": [
            {
                "url": f"https://huggingface.co/{repository}/blob/main/config.json",
                "title": f"{repository} config.json",
                "date": today.isoformat(),
                "fields": ["config"],
            }
        ],
    }
    try:
        ModelEntry.model_validate(entry)
    except ValueError as error:
        raise BenchConfigError(
            f"the catalog entry derived for {repository} is not valid ({error}); write it by hand",
            "--model",
        ) from None
    return entry


def read_config(path: Path) -> dict[str, Any]:
    """A config.json as a dict; raises BenchConfigError naming the file."""
    try:
        data = json_loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise BenchConfigError(f"{path}: cannot read the model's config.json: {error}") from None
    if not isinstance(data, dict):
        raise BenchConfigError(f"{path}: expected a JSON object")
    return data


def entry_yaml(entry: Mapping[str, Any]) -> str:
    """The entry as the item to add under `models:` in registry/catalogs/models.yaml."""
    body = yaml.safe_dump([dict(entry)], sort_keys=False, allow_unicode=True, width=100)
    return "".join("  " + line if line.strip() else line for line in body.splitlines(True))


def entry_for_run(
    model: str, model_id: str, output: Path
) -> tuple[dict[str, Any] | None, list[str]]:
    """(entry, notes) for a launched run of `model` under `model_id`: None when the catalog
    has the model; else the proposed entry, written beside the result as
    `<stem>.model-entry.yaml`. Never raises (it runs after measuring): without an entry the
    result is kept as rejected (unknown model), and the notes say why."""
    from infermeter.registry.catalog import load_models
    from infermeter.registry.store import beside, write_text_atomic

    if model_id in load_models():
        return None, []
    path = find_config(model)
    if path is None:
        return None, [
            f"note: {model} is not in the model catalog and its config.json is not in the "
            "Hugging Face cache; add its entry to registry/catalogs/models.yaml by hand"
        ]
    repository = repository_of(model) or model
    try:
        entry = proposed_entry(repository, read_config(path), dt.date.today())
    except BenchError as error:
        return None, [f"note: {model} is not in the model catalog: {error.one_line()}"]
    notes = []
    if repository.startswith(LOCAL_OWNER + "/"):
        notes.append(
            f"note: the folder {model} names no Hugging Face repository: the result says "
            f"{repository}; the catalog entry needs the model's public repository and source"
        )
    entry_path = beside(output, ".model-entry.yaml")
    try:
        write_text_atomic(entry_path, entry_yaml(entry))
    except OSError as error:
        notes.append(f"note: cannot write {entry_path}: {error.strerror or error}")
    notes.append(
        f"note: {model} is not in the model catalog: the pull request must add the entry in "
        f"{entry_path} (id {entry['id']}) under models: in registry/catalogs/models.yaml; its "
        "parameter counts are computed from config.json, check them against the model card"
    )
    return entry, notes
