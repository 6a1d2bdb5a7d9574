"""What was served, how, and on what: a result's identity beyond the workload, for a live run
and for every importer alike.

`Deployment` holds the GPU, engine, model and serving settings; `identity` turns one and a
workload into the result's `Identity`, the one place a result's identity is assembled (a live
run's `bench.result.assemble.build_result` and the importers' `bench.importers.common.assemble` both
call it; `registry.builder` then validates it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from infermeter.registry.builder import unchecked
from infermeter.registry.models import (
    EngineIdentity,
    GpuIdentity,
    Identity,
    ModelIdentity,
    ServingSettings,
    Workload,
)

SERVING_NOT_STATED = frozenset({"speculative", "disaggregated"})
"""The registry's serving settings no deployment states (speculative decoding, disaggregated
prefill and decode pools, known only from harvested reports): a result's identity leaves them
out."""


@dataclass(frozen=True)
class Deployment:
    """What was served, how, and on what: the identity beyond the workload, in the registry's
    own models, built `unchecked`."""

    gpu: GpuIdentity
    engine: EngineIdentity
    model: ModelIdentity
    serving: ServingSettings = field(default_factory=ServingSettings)


def identity(deployment: Deployment, workload: Workload) -> Identity:
    """The result's `identity` of `deployment` serving `workload`, unchecked as its parts are."""
    serving = deployment.serving.model_copy(update=dict.fromkeys(SERVING_NOT_STATED))
    return unchecked(
        Identity,
        gpu=deployment.gpu,
        engine=deployment.engine,
        model=deployment.model,
        serving=serving,
        workload=workload,
    )
