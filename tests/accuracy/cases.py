"""Load the public vLLM startup logs (tests/data/vllm_startup_logs.yaml) as calculator inputs."""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from calculators.arch import ModelArch, parse_config
from calculators.vllm_plan import VllmPlan, VllmSettings, gpu_total_bytes, plan_vllm
from registry.catalog import load_gpus, load_models

GIB = 1024**3
CASES_FILE = Path(__file__).parent.parent / "data" / "vllm_startup_logs.yaml"
# vLLM's V0 engine (before 0.8) profiled differently; its logs check weights only.
V0_DEFAULT = "0.7"


@dataclass(frozen=True)
class Case:
    id: str
    source: str
    raw: dict[str, Any]
    arch: ModelArch
    settings: VllmSettings

    @property
    def observed(self) -> dict[str, Any]:
        return {k: v for k, v in self.raw["observed"].items() if v is not None}

    @property
    def is_v0(self) -> bool:
        return self.raw.get("vllm_version") is None

    def plan(self) -> VllmPlan:
        return plan_vllm(self.arch, self.settings)


def _config(raw: dict[str, Any]) -> dict[str, Any]:
    catalog_config = raw.get("config") or load_models()[raw["model"]].config
    config = dict(catalog_config)
    if raw.get("quantization_config"):
        config["quantization_config"] = raw["quantization_config"]
    config.update(raw.get("config_overrides") or {})
    return config


def _gpu_memory_bytes(raw: dict[str, Any]) -> int:
    if raw.get("total_gpu_memory_gib"):
        return int(raw["total_gpu_memory_gib"] * GIB)
    gpu = load_gpus()[raw["gpu"]]
    return gpu_total_bytes(gpu.memory_reported_mib, gpu.memory_gb)


def load_cases() -> list[Case]:
    data = yaml.safe_load(CASES_FILE.read_text())
    cases = []
    for raw in data["cases"]:
        flags = raw["flags"]
        settings = VllmSettings(
            gpu_memory_bytes=_gpu_memory_bytes(raw),
            gpu_memory_utilization=flags.get("gpu_memory_utilization"),
            tensor_parallel_size=flags.get("tensor_parallel_size") or 1,
            pipeline_parallel_size=flags.get("pipeline_parallel_size") or 1,
            max_model_len=flags.get("max_model_len"),
            max_num_seqs=flags.get("max_num_seqs"),
            max_num_batched_tokens=flags.get("max_num_batched_tokens"),
            kv_cache_dtype=flags.get("kv_cache_dtype"),
            quantization=flags.get("quantization"),
            dtype=flags.get("dtype"),
            enforce_eager=bool(flags.get("enforce_eager")),
            gpu_name=raw["gpu"],
            vllm_version=raw.get("vllm_version") or V0_DEFAULT,
        )
        cases.append(Case(raw["id"], raw["source"], raw, parse_config(_config(raw)), settings))
    return cases
