"""Meta-tests for the hand-edited catalogs in registry/catalogs/.

Every fact carries a source and a date; ids are unique slugs; cross-references resolve;
numbers pass plausibility checks that catch the usual copy errors (sparse TFLOPS quoted as
dense, marketed GB confused with what the driver reports).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from infermeter.calculators.config_aliases import CONFIG_KEY_ALIASES

CATALOG_DIR = Path(__file__).resolve().parent.parent / "registry" / "catalogs"
SLUG = re.compile(r"^[a-z0-9]+(?:[-.][a-z0-9]+)*$")
DATE = re.compile(r"^\d{4}(?:-\d{2}(?:-\d{2})?)?$")

# Descriptive labels, and the entry's id and sources: not checked against the sources here
# (the labels are, below: GPU_LABEL_FIELDS_CITED).
GPU_UNSOURCED_KEYS = (
    "id",
    "name",
    "vendor",
    "architecture",
    "form_factor",
    "segment",
    "launch",
    "interconnect",
    "sources",
)
# Facts that must be traceable to a source when not null.
GPU_SOURCED_FIELDS = (
    "memory_gb",
    "memory_type",
    "memory_reported_mib",
    "memory_bandwidth_gb_s",
    "tflops_dense",
    "tdp_w",
    "interconnect_links",
    "compute_capability",
    "nvlink_sharp",  # true needs a source; false is where none read states it
)
GPU_REQUIRED_KEYS = GPU_UNSOURCED_KEYS + GPU_SOURCED_FIELDS
TFLOPS_KEYS = ("fp32", "bf16", "fp16", "fp8", "int8", "fp4")
REQUIRED_GPU_IDS = (
    "rtx-3090",
    "rtx-4090",
    "rtx-5090",
    "rtx-6000-ada",
    "rtx-pro-6000",
    "l4",
    "a10g",
    "l40s",
    "a100-40gb-sxm",
    "a100-80gb-pcie",
    "a100-80gb-sxm",
    "h100-pcie",
    "h100-sxm",
    "h100-nvl",
    "h200-sxm",
    "b200",
    "mi300x",
)
REQUIRED_MODEL_IDS = (
    "llama-3.2-1b-instruct",
    "llama-3.2-3b-instruct",
    "llama-3.1-8b-instruct",
    "llama-3.1-70b-instruct",
    "llama-3.3-70b-instruct",
    "llama-3.1-405b-instruct",
    "qwen2.5-7b-instruct",
    "qwen2.5-32b-instruct",
    "qwen2.5-72b-instruct",
    "qwen3-8b",
    "qwen3-14b",
    "qwen3-32b",
    "qwen3-30b-a3b",
    "qwen3-235b-a22b",
    "mistral-7b-instruct-v0.3",
    "mistral-7b-v0.1",
    "mistral-small-24b-instruct-2501",
    "mixtral-8x7b-instruct-v0.1",
    "deepseek-v3",
    "deepseek-r1",
    "gpt-oss-20b",
    "gpt-oss-120b",
    "gemma-2-9b-it",
    "gemma-2-27b-it",
    "gemma-3-12b-it",
    "gemma-3-27b-it",
    "phi-4",
)
PRICE_TIERS = ("on_demand", "interruptible", "reserved")


def _load(name: str) -> dict[str, Any]:
    with (CATALOG_DIR / f"{name}.yaml").open(encoding="utf-8") as handle:
        data = yaml.safe_load(handle)
    assert isinstance(data, dict)
    return data


GPUS: list[dict[str, Any]] = _load("gpus")["gpus"]
MODELS: list[dict[str, Any]] = _load("models")["models"]
PRICES: list[dict[str, Any]] = _load("prices")["prices"]
GPU_BY_ID = {gpu["id"]: gpu for gpu in GPUS}


def _entry_id(entry: dict[str, Any]) -> str:
    return str(entry.get("id"))


def _check_source(source: dict[str, Any]) -> None:
    assert str(source.get("url", "")).startswith("https://"), source
    assert source.get("title"), source
    assert DATE.match(str(source.get("date", ""))), source


@pytest.mark.parametrize("name", ["gpus", "models", "prices"])
def test_catalog_has_schema_version_one(name: str) -> None:
    assert _load(name)["schema_version"] == 1


@pytest.mark.parametrize(
    ("name", "entries"), [("gpus", GPUS), ("models", MODELS), ("prices", PRICES)]
)
def test_catalog_ids_are_unique_slugs(name: str, entries: list[dict[str, Any]]) -> None:
    ids = [entry["id"] for entry in entries]
    assert len(ids) == len(set(ids)), f"{name}: duplicate ids"
    bad = [entry_id for entry_id in ids if not SLUG.match(entry_id)]
    assert not bad, f"{name}: ids not slugs: {bad}"


@pytest.mark.parametrize(
    "entry",
    [
        pytest.param(entry, id=f"{name}:{_entry_id(entry)}")
        for name, entries in (("gpus", GPUS), ("models", MODELS))
        for entry in entries
    ],
)
def test_gpu_and_model_sources_have_https_url_title_and_date(entry: dict[str, Any]) -> None:
    assert entry["sources"], "no sources"
    for source in entry["sources"]:
        _check_source(source)
        assert source["fields"], source


@pytest.mark.parametrize("price", PRICES, ids=_entry_id)
def test_price_source_has_https_url_title_and_date(price: dict[str, Any]) -> None:
    source = price["source"]
    if source["url"] is None:
        # The seed prices come from a stored page whose URL was not kept; the title
        # must then name the stored reference file.
        assert source["title"].startswith("reference/"), source
        assert DATE.match(str(source["date"])), source
        return
    _check_source(source)


@pytest.mark.parametrize("gpu_id", REQUIRED_GPU_IDS)
def test_gpu_catalog_has_required_gpu(gpu_id: str) -> None:
    assert gpu_id in GPU_BY_ID


@pytest.mark.parametrize("gpu", GPUS, ids=_entry_id)
def test_gpu_has_every_required_key(gpu: dict[str, Any]) -> None:
    missing = [key for key in GPU_REQUIRED_KEYS if key not in gpu]
    assert not missing
    assert set(gpu["tflops_dense"]) == set(TFLOPS_KEYS)
    assert gpu["vendor"] in ("nvidia", "amd")
    assert gpu["form_factor"] in ("pcie", "sxm", "oam", "superchip")
    assert gpu["segment"] in ("consumer", "workstation", "datacenter")
    assert DATE.match(str(gpu["launch"]))


@pytest.mark.parametrize("gpu", GPUS, ids=_entry_id)
def test_gpu_every_non_null_fact_is_sourced(gpu: dict[str, Any]) -> None:
    sourced = {field for source in gpu["sources"] for field in source["fields"]}
    unknown = sourced - set(GPU_REQUIRED_KEYS)
    assert not unknown, f"sources name unknown fields {unknown}"
    for field in GPU_SOURCED_FIELDS:
        value = gpu[field]
        has_value = (
            any(v is not None for v in value.values())
            if field == "tflops_dense"
            else (bool(value) if isinstance(value, list | bool) else value is not None)
        )
        if has_value:
            assert field in sourced, f"{field} has a value but no source lists it"


@pytest.mark.parametrize("gpu", GPUS, ids=_entry_id)
def test_gpu_tflops_are_dense_plausible(gpu: dict[str, Any]) -> None:
    rates = gpu["tflops_dense"]
    chain = [rates[key] for key in ("bf16", "fp8", "fp4") if rates[key] is not None]
    assert chain == sorted(chain), f"expected bf16 <= fp8 <= fp4, got {rates}"
    if rates["fp32"] is not None and rates["bf16"] is not None:
        assert rates["fp32"] < rates["bf16"]
    for value in rates.values():
        assert value is None or value > 0


def test_gpu_h100_sxm_bf16_is_the_dense_figure() -> None:
    # NVIDIA's headline 1,979 TFLOPS is with 2:4 sparsity; the dense figure is ~989.
    assert GPU_BY_ID["h100-sxm"]["tflops_dense"]["bf16"] < 1000


@pytest.mark.parametrize("gpu_id", ["rtx-3090", "rtx-4090"])
def test_gpu_geforce_bf16_is_fp32_accumulate_rate(gpu_id: str) -> None:
    # GeForce FP32-accumulate tensor math runs at half the FP16-accumulate rate.
    rates = GPU_BY_ID[gpu_id]["tflops_dense"]
    assert rates["bf16"] in (71, 165.2)


@pytest.mark.parametrize(
    "gpu", [gpu for gpu in GPUS if gpu["memory_reported_mib"] is not None], ids=_entry_id
)
def test_gpu_reported_memory_is_below_marketed(gpu: dict[str, Any]) -> None:
    # Vendors' marketed "GB" for GPU memory is binary-sized (an 80 GB H100 reports
    # 81559 MiB = 85.5e9 bytes), so the ceiling is memory_gb GiB plus 1 %; the floor
    # catches a value copied from the wrong card.
    reported = gpu["memory_reported_mib"]
    assert reported <= gpu["memory_gb"] * 1024 * 1.01
    assert reported >= gpu["memory_gb"] * 1024 * 0.9


# Without memory_reported_mib a memory plan takes the marketed GB as decimal bytes: ~11 GiB short
# on the B200, ~0.4 GiB over on the L4. These GPUs have no citable source for the driver's total
# yet (each entry's notes say what was seen); a GPU added without one must be named here.
GPUS_WITHOUT_REPORTED_MEMORY = {
    "l40",
    "h200-nvl",
    "gh200-144gb",
    "vera-rubin",  # not shipping
    "mi325x",
    "mi350x",
    "mi355x",
    "mi355x-1000w",
}


def test_gpu_reported_memory_is_known_but_for_the_named_gaps() -> None:
    missing = {gpu["id"] for gpu in GPUS if gpu["memory_reported_mib"] is None}
    assert missing == GPUS_WITHOUT_REPORTED_MEMORY, (
        f"newly without: {sorted(missing - GPUS_WITHOUT_REPORTED_MEMORY)}; now sourced, drop "
        f"from GPUS_WITHOUT_REPORTED_MEMORY: {sorted(GPUS_WITHOUT_REPORTED_MEMORY - missing)}"
    )


@pytest.mark.parametrize("model_id", REQUIRED_MODEL_IDS)
def test_model_catalog_has_required_model(model_id: str) -> None:
    assert model_id in {model["id"] for model in MODELS}


@pytest.mark.parametrize("model", MODELS, ids=_entry_id)
def test_model_config_has_basic_fields(model: dict[str, Any]) -> None:
    config = model["config"]
    text_config = config.get("text_config", config)
    # GPT-2-style configs (GPT-J) name them n_embd, n_layer: the calculators read both.
    aliases = CONFIG_KEY_ALIASES.get(text_config.get("model_type", ""), {})
    names = {canonical: alias for alias, canonical in aliases.items()}
    for key in ("hidden_size", "num_hidden_layers", "vocab_size"):
        value = text_config.get(key, text_config.get(names.get(key, key)))
        assert isinstance(value, int), key
    assert config["architectures"]
    assert config["model_type"]


@pytest.mark.parametrize("model", MODELS, ids=_entry_id)
def test_model_config_and_params_are_sourced(model: dict[str, Any]) -> None:
    sourced = {field for source in model["sources"] for field in source["fields"]}
    assert "config" in sourced
    assert "published_params" in sourced
    assert "context_length" in sourced
    params = model["published_params"]
    assert params["total_b"] is None or params["total_b"] > 0
    if params["active_b"] is not None:
        assert params["active_b"] < params["total_b"]


@pytest.mark.parametrize("price", PRICES, ids=_entry_id)
def test_price_gpu_exists_in_gpu_catalog(price: dict[str, Any]) -> None:
    assert price["gpu"] in GPU_BY_ID


@pytest.mark.parametrize("price", PRICES, ids=_entry_id)
def test_price_fields_are_well_formed(price: dict[str, Any]) -> None:
    assert price["tier"] in PRICE_TIERS
    assert isinstance(price["gpus_per_instance"], int)
    assert price["gpus_per_instance"] >= 1
    assert 0 < price["usd_per_gpu_hour"] < 100
    assert price["provider"]
    assert price["as_of"]


def test_price_catalog_covers_each_tier() -> None:
    assert {price["tier"] for price in PRICES} == set(PRICE_TIERS)


# Descriptive GPU fields: what the GPU is (vendor, architecture with its die or CUDA target,
# form factor) and those that hold numbers (link generations and bandwidths, dates, memory
# generations). Each non-null value must be listed in some source's `fields`, except the
# known gaps below: no public source read so far states these values, and the model does not
# allow null for them. A new uncited value fails; cite it, or add it here with the reason.
# (`segment` is the catalog's own classification, which its field declares, not a cited fact.)
GPU_LABEL_FIELDS_CITED = (
    "vendor",
    "architecture",
    "form_factor",
    "interconnect",
    "launch",
    "memory_type",
)
GPU_UNCITED_LABELS = {
    # AWS-only part with no NVIDIA datasheet: no source read states its die (GA102) or its
    # board's form factor.
    ("a10g", "architecture"),
    ("a10g", "form_factor"),
    # Sources read give Blackwell Ultra and compute capability 10.3 (NVIDIA's CUDA GPUs page),
    # none the CUDA target's name sm_103.
    ("b300", "architecture"),
    ("gb300", "architecture"),
    # No source read states the Server Edition's board (the Workstation Edition's is cited).
    ("rtx-pro-6000", "form_factor"),
    # PCIe 4.0 x16 and the 2-way bridge: no source read states them for the RTX 3090.
    ("rtx-3090", "interconnect"),
    # Retail date (October 2022); the source read gives only the September 2022 unveiling.
    ("rtx-4090", "launch"),
    # No source read states the Server Edition's host interface.
    ("rtx-pro-6000", "interconnect"),
    # AWS-only part: no datasheet; the EC2 G5 general-availability date was not found.
    ("a10g", "interconnect"),
    ("a10g", "launch"),
    # No source read states the L40's launch month.
    ("l40", "launch"),
    # The 600 GB/s NVLink bridge figure is not stated by a source read.
    ("h100-nvl", "interconnect"),
    # No source read gives the B200 announcement month.
    ("b200", "launch"),
}


def test_gpu_label_fields_are_cited_or_known_gaps() -> None:
    uncited = set()
    for gpu in GPUS:
        sourced = {field for source in gpu["sources"] for field in source["fields"]}
        for field in GPU_LABEL_FIELDS_CITED:
            if gpu[field] is not None and field not in sourced:
                uncited.add((gpu["id"], field))
    assert uncited == GPU_UNCITED_LABELS, (
        f"newly uncited: {sorted(uncited - GPU_UNCITED_LABELS)}; "
        f"now cited or gone, drop from GPU_UNCITED_LABELS: {sorted(GPU_UNCITED_LABELS - uncited)}"
    )


@pytest.mark.parametrize("gpu", [g for g in GPUS if g["interconnect_links"]], ids=_entry_id)
def test_gpu_links_are_the_cited_interconnect(gpu: dict[str, Any]) -> None:
    # A link's bandwidth bounds tensor-parallel decoding: it must be the link the cited
    # interconnect names, one way (vendors' NVLink and xGMI figures sum both directions).
    sourced = {field for source in gpu["sources"] for field in source["fields"]}
    assert "interconnect" in sourced
    for link in gpu["interconnect_links"]:
        family = link["name"].split()[0]
        assert family.lower() in gpu["interconnect"].lower(), (link, gpu["interconnect"])
        if link["name"] in ("PCIe 4.0 x16", "PCIe 5.0 x16"):
            assert link["gb_s_per_direction"] == {"4": 31.5, "5": 63}[link["name"][5]]
            assert link["max_gpus"] is None
        elif family in ("NVLink", "Infinity"):
            stated = max(
                float(n.replace(",", ""))
                for n in re.findall(r"[\d,.]+(?= ?[GT]B/s)", gpu["interconnect"])
            )
            stated *= 1000 if "TB/s" in gpu["interconnect"] else 1
            assert link["gb_s_per_direction"] <= stated / 2  # one direction of a two-way sum
