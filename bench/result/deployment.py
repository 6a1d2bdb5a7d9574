"""What was served, how, and on what: a result's identity beyond the workload, for a live run
and for every importer alike.

`Deployment` holds the GPU, engine, model and serving settings; `identity_data` turns one and a
workload into the result's `identity`, the one place a result's identity is assembled (a live
run's `bench.result.assemble.build_result` and the importers' `bench.importers.common.assemble` both
call it; `registry.builder` then validates it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from infermeter.registry.models import ServingSettings

SERVING_NOT_STATED = frozenset({"speculative", "disaggregated"})
"""The registry's serving settings no deployment states (speculative decoding, disaggregated
prefill and decode pools, known only from harvested reports): a result's identity leaves them
out."""


@dataclass(frozen=True)
class Deployment:
    """What was served, how, and on what: the identity beyond the workload. `serving` is the
    registry's own model, built unchecked (`ServingSettings.model_construct`): `registry.builder`
    checks the whole result once, and names the field it refuses."""

    gpu_id: str
    gpu_count: int
    form_factor: str
    engine_version: str
    model_id: str
    hf_repo: str
    revision: str | None = None
    quantization: str | None = None
    dtype: str | None = None
    kv_cache_dtype: str | None = None
    serving: ServingSettings = field(default_factory=ServingSettings)
    engine_name: str = "vllm"
    nodes: int | None = None  # hosts vLLM spread over (Ray); None on one host
    gpus_per_node: int | None = None


def identity_data(deployment: Deployment, workload: Mapping[str, Any]) -> dict[str, Any]:
    """The result's `identity` of `deployment` serving `workload` (the workload's data)."""
    return {
        "gpu": {
            "id": deployment.gpu_id,
            "count": deployment.gpu_count,
            "form_factor": deployment.form_factor,
            "nodes": deployment.nodes,
            "gpus_per_node": deployment.gpus_per_node,
        },
        "engine": {"name": deployment.engine_name, "version": deployment.engine_version},
        "model": {
            "id": deployment.model_id,
            "hf_repo": deployment.hf_repo,
            "revision": deployment.revision,
            "quantization": deployment.quantization,
            "dtype": deployment.dtype,
            "kv_cache_dtype": deployment.kv_cache_dtype,
        },
        "serving": deployment.serving.model_dump(exclude=set(SERVING_NOT_STATED)),
        "workload": dict(workload),
    }
