"""A run's workload as the result's `identity.workload` states it.

Lengths: a log-normal (median m, sigma s) is stored by its mean m·e^(s²/2) and standard
deviation mean·√(e^(s²) − 1) in tokens; a run that overrides the profile's lengths, uses a
dataset or shares a prompt prefix is profile `custom`; a shared prompt prefix
(`--shared-prefix-tokens`) is named in `workload.dataset`, the only place the workload identity
has for how prompts were made. A multi-turn run adds its turns and think time.
"""

from __future__ import annotations

from typing import Any

from infermeter.bench.run.config import MULTITURN, RunConfig
from infermeter.bench.workloads.conversation import DEFAULT_THINK_TIME_S, DEFAULT_TURNS
from infermeter.bench.workloads.lengths import (
    DATASET_LENGTH,
    Length,
    LengthDistribution,
    length_model,
)
from infermeter.bench.workloads.profiles import get_profile
from infermeter.bench.workloads.trace_plan import trace_workload
from infermeter.registry.builder import unchecked
from infermeter.registry.models import Workload


def _length(distribution: LengthDistribution) -> Length:
    """A length as `bench.workloads.lengths.length_model` states it; a distribution's bounds
    always, the default ones too, as bench run's results have always stated them."""
    length = length_model(distribution)
    if distribution.kind in ("fixed", "uniform"):
        return length
    return length.model_copy(update={"min": distribution.minimum, "max": distribution.maximum})


def workload(
    config: RunConfig,
    api: str,
    dataset_sha256: str | None = None,
    trace: dict[str, Any] | None = None,
) -> Workload:
    """The result's `identity.workload` for a run configuration, built unchecked (the result's
    builder validates it); `dataset_sha256`: that of the `--dataset` file the run read;
    `trace`: the replayed trace's identity (`bench.workloads.trace_plan.trace_identity`)."""
    if trace is not None:
        return trace_workload(trace, config.seed, api)
    profile = get_profile(config.profile)
    overridden = (config.input_len, config.output_len, config.dataset)
    custom = any(overridden) or config.shared_prefix_tokens > 0
    input_len: Length
    if config.dataset is not None:
        input_len = DATASET_LENGTH
        output_len = _length(config.output_len) if config.output_len else DATASET_LENGTH
    else:
        input_len = _length(config.input_len or profile.input_len)
        output_len = _length(config.output_len or profile.output_len)
    stated: dict[str, Any] = {
        "profile": "custom" if custom else profile.name,
        "input_len": input_len,
        "output_len": output_len,
        "dataset": f"sharegpt ({config.dataset.name})"
        if config.dataset
        else f"random words, every prompt starting with the same "
        f"{config.shared_prefix_tokens}-token prefix"
        if config.shared_prefix_tokens
        else None,
        "dataset_sha256": dataset_sha256 if config.dataset else None,
        "seed": config.seed,
        "api": api,
    }
    return unchecked(Workload, **stated | _multiturn_workload(config))


def _multiturn_workload(config: RunConfig) -> dict[str, Any]:
    """The multi-turn fields of `identity.workload`: what each session sent (none for a
    single-turn profile)."""
    if config.profile != MULTITURN:
        return {}
    fields: dict[str, Any] = {
        "profile": MULTITURN,
        "think_time_s": DEFAULT_THINK_TIME_S
        if config.think_time_s is None
        else config.think_time_s,
    }
    if config.dataset is not None:
        fields["turns"] = DATASET_LENGTH
        fields["dataset"] = (
            f"conversations of {config.dataset.name} (ShareGPT or OpenAI messages), every turn "
            "sending the whole history with the server's own replies"
        )
    else:
        fields["turns"] = _length(config.turns or DEFAULT_TURNS)
        fields["dataset"] = (
            "synthetic sessions of random words, every turn sending the whole history with the "
            "server's own replies"
        )
    return fields
