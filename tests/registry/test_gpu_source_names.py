"""The names harvested sources give GPUs live in the GPU catalog (`source_names`), read through
`registry.catalog.gpu_named`: adding a GPU a source names is its catalog entry, nothing else."""

import importlib
import pkgutil
from pathlib import Path

import pytest
import yaml

from infermeter.registry import harvest
from infermeter.registry.catalog import CATALOGS_DIR, GPUS_FILE, gpu_named, load_gpus
from infermeter.registry.errors import InvalidFileError
from infermeter.registry.harvest import skypilot, trtllm_names

GPUS = load_gpus()


def _read_by_a_harvester() -> set[str]:
    """Each harvester module's `GPU_NAMES` (found, not listed here), and SkyPilot's clouds."""
    modules = [
        importlib.import_module(f"{harvest.__name__}.{module.name}")
        for module in pkgutil.iter_modules(harvest.__path__)
    ]
    named = {module.GPU_NAMES for module in modules if hasattr(module, "GPU_NAMES")}
    return named | {skypilot.gpu_names_source(cloud) for cloud in skypilot.OFFERINGS}


def test_every_source_of_a_name_is_read_by_a_harvester() -> None:
    sources = {alias.source for gpu in GPUS.values() for alias in gpu.source_names}
    read = _read_by_a_harvester()
    assert {"mlperf", "tensorrt-llm", "rocm-vllm", "inferencex", "skypilot-oci"} <= read
    assert sources <= read, f"names of sources no harvester reads: {sorted(sources - read)}"


def test_a_name_is_matched_exactly_and_per_source() -> None:
    h100 = gpu_named(GPUS, "mlperf", "NVIDIA H100-SXM-80GB")
    assert h100 is not None
    assert h100.id == "h100-sxm"
    assert gpu_named(GPUS, "inferencex", "NVIDIA H100-SXM-80GB") is None
    assert gpu_named(GPUS, "mlperf", "nvidia h100-sxm-80gb") is None
    rtx = gpu_named(GPUS, "tensorrt-llm", trtllm_names.RTX_LABEL)
    assert rtx is not None
    assert rtx.id == "rtx-pro-6000"


def test_a_name_one_source_gives_two_gpus_is_a_problem(tmp_path: Path) -> None:
    data = yaml.safe_load((CATALOGS_DIR / GPUS_FILE).read_text(encoding="utf-8"))
    by_id = {gpu["id"]: index for index, gpu in enumerate(data["gpus"])}
    data["gpus"][by_id["h200-sxm"]]["source_names"].append(
        {"source": "mlperf", "name": "NVIDIA H100-SXM-80GB"}
    )
    (tmp_path / GPUS_FILE).write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(InvalidFileError) as caught:
        load_gpus(tmp_path)
    (problem,) = caught.value.problems
    assert problem.path.startswith(f"gpus[{by_id['h200-sxm']}].source_names[")
    assert problem.message == "mlperf name 'NVIDIA H100-SXM-80GB' is already h100-sxm's"


def test_a_name_of_a_source_no_harvest_declares_is_a_problem(tmp_path: Path) -> None:
    data = yaml.safe_load((CATALOGS_DIR / GPUS_FILE).read_text(encoding="utf-8"))
    data["gpus"][0]["source_names"] = [
        {"source": "mlperf-v9", "name": "A"},
        {"source": "skypilot-oci", "name": "A"},
        {"source": "skypilot-oci-eu", "name": "B"},
    ]
    (tmp_path / GPUS_FILE).write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(InvalidFileError) as caught:
        load_gpus(tmp_path)
    problems = [(problem.path, problem.message.split(";")[0]) for problem in caught.value.problems]
    assert problems == [
        ("gpus[0].source_names[0].source", "'mlperf-v9' is no harvest source's"),
        ("gpus[0].source_names[2].source", "'skypilot-oci-eu' is no harvest source's"),
    ]
