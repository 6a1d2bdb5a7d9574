"""A GPU's facts reach the calculators through one projection (`registry.catalog.gpu_traits`,
and its copy in the pages' catalog.json): GPUs with the same facts plan the same, and a GPU
added to the catalog plans by its facts with no change to the code (issue 28)."""

import copy
import json
from pathlib import Path
from typing import Any

import calc_compute
import pytest
import yaml
from catalog_models import catalog_arch
from registry_pages import browser_catalog

from infermeter.calculators.gpu_traits import UNKNOWN_GPU, GpuTraits
from infermeter.calculators.vllm_overheads import (
    NON_TORCH_BYTES,
    NON_TORCH_NVLS_BYTES,
    NON_TORCH_TP_BYTES,
)
from infermeter.calculators.vllm_plan import plan_vllm
from infermeter.calculators.vllm_settings import VllmSettings
from infermeter.registry.catalog import (
    CATALOGS_DIR,
    GPUS_FILE,
    gpu_traits,
    load_gpus,
    load_models,
)
from infermeter.registry.lookup import gpu_memory_bytes
from infermeter.registry.models import GpuEntry

MODELS = load_models()
H200_SXM_VARIANTS = ("h200-sxm-1000w", "h200-sxm-500w", "h200-sxm-350w", "h200-sxm-virtualized")
# Plans that read each fact: NVLink SHARP under tensor parallelism (Llama 70B at TP 4), compute
# capability 10.x (GLM-5's FP8 KV cache from 0.32), and the MoE kernel by compute capability
# (Qwen3-30B-A3B's unquantized experts from 0.22).
CASES = (
    ("llama-3.1-70b-instruct", {"tensor_parallel_size": 4, "max_model_len": 8192}),
    (
        "glm-5.2",
        {
            "tensor_parallel_size": 8,
            "max_model_len": 8192,
            "quantization": "fp8",
            "vllm_version": "0.34",
        },
    ),
    ("qwen3-30b-a3b", {"max_model_len": 8192, "vllm_version": "0.34"}),
)


def _plan(gpu: GpuEntry, model_id: str, traits: GpuTraits | None = None, **settings: Any) -> Any:
    return plan_vllm(
        catalog_arch(model_id),
        VllmSettings(
            gpu_memory_bytes=gpu_memory_bytes(gpu),
            gpu=gpu_traits(gpu) if traits is None else traits,
            **settings,
        ),
    ).as_dict()


@pytest.mark.parametrize("variant", H200_SXM_VARIANTS)
def test_an_h200_sxm_variant_plans_as_the_h200_sxm_under_tensor_parallelism(variant: str) -> None:
    # The same board with the same NVSwitch fabric: NCCL keeps its NVLS buffers on each rank.
    gpus = load_gpus()
    settings = {"tensor_parallel_size": 4, "max_model_len": 8192}
    plan = _plan(gpus[variant], "llama-3.1-70b-instruct", **settings)
    assert plan == _plan(gpus["h200-sxm"], "llama-3.1-70b-instruct", **settings)
    assert plan["non_torch_bytes"] == NON_TORCH_BYTES + NON_TORCH_TP_BYTES + NON_TORCH_NVLS_BYTES


def _catalog_with_a_copy_of_b200(tmp_path: Path) -> dict[str, GpuEntry]:
    data = yaml.safe_load((CATALOGS_DIR / GPUS_FILE).read_text())
    b200 = next(gpu for gpu in data["gpus"] if gpu["id"] == "b200")
    # Another GPU's entry: its own id and name; no harvested source names it yet.
    copied = {**copy.deepcopy(b200), "id": "b300-lite", "name": "NVIDIA B300 Lite"}
    copied["source_names"] = []
    data["gpus"].append(copied)
    (tmp_path / GPUS_FILE).write_text(yaml.safe_dump(data, sort_keys=False))
    return load_gpus(tmp_path)


@pytest.mark.parametrize(("model_id", "settings"), CASES, ids=[case[0] for case in CASES])
def test_a_gpu_added_to_the_catalog_plans_as_the_gpu_it_copies(
    tmp_path: Path, model_id: str, settings: dict[str, Any]
) -> None:
    gpus = _catalog_with_a_copy_of_b200(tmp_path)
    b200 = _plan(gpus["b200"], model_id, **settings)
    assert _plan(gpus["b300-lite"], model_id, **settings) == b200
    # Each case reads a fact of the GPU: without them the plan differs.
    assert _plan(gpus["b200"], model_id, UNKNOWN_GPU, **settings) != b200


@pytest.mark.parametrize(("model_id", "settings"), CASES, ids=[case[0] for case in CASES])
def test_the_pages_plan_a_gpu_added_to_the_catalog_as_the_gpu_it_copies(
    tmp_path: Path, model_id: str, settings: dict[str, Any]
) -> None:
    gpus = _catalog_with_a_copy_of_b200(tmp_path)
    no_prices: dict[str, Any] = {gpu_id: {} for gpu_id in gpus}
    catalog = json.loads(json.dumps(browser_catalog(gpus, MODELS, no_prices)))
    query = {key: str(value) for key, value in settings.items()}

    def page_plan(gpu_id: str) -> Any:
        payload = calc_compute.compute("vram", {"model": model_id, "gpu": gpu_id, **query}, catalog)
        return payload["payload"]["vllm_plan"]

    assert (
        page_plan("b300-lite")
        == page_plan("b200")
        == json.loads(json.dumps(_plan(gpus["b200"], model_id, **settings)))
    )
